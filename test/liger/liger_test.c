/*
 * liger_test.c: the Liger CSV mapping against the published expectation.
 *
 *   liger_test CSV EXPECTED_JSONL SEEDS_DIR
 *
 * Maps every row of Liger-Kernel's all_benchmark_data.csv and compares each
 * imported row, manifest by manifest, with the JSON line the KernelIndex
 * project published for it (csv_line, digests, six full manifests).  The
 * expected file is test data only: the importer never reads it.  Prints TAP.
 */
#define _POSIX_C_SOURCE 200809L
#include "../../src/liger/liger_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int	test_no = 0;
static ki_arena *str_arena;		/* where str_at copies strings */
static int	failures = 0;

static void
tap(bool ok, const char *fmt,...)
{
	va_list		ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	long		n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t) n + 1);
	if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
	{
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t) n;
	return buf;
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *
canon(ki_arena *a, const ki_value *v)
{
	ki_buf		b;

	ki_buf_init(&b, a, 4096);
	ki_canonical(v, &b);
	return ki_buf_cstr(&b);
}

/* Normalize a manifest from the expected file the way ours are. */
static const ki_value *
normalized(ki_arena *a, ki_value *doc)
{
	ki_errors	errs;
	ki_kind		kind;

	ki_errors_init(&errs, a);
	return doc ? ki_manifest_normalize(a, doc, &kind, &errs) : NULL;
}

static void
diff_hint(const char *ours, const char *theirs)
{
	size_t		i = 0;
	size_t		from;

	while (ours[i] && ours[i] == theirs[i])
		i++;
	from = i > 60 ? i - 60 : 0;
	fprintf(stderr, "      first difference at byte %zu\n", i);
	fprintf(stderr, "      ours:     ...%.140s\n", ours + from);
	fprintf(stderr, "      expected: ...%.140s\n", theirs + from);
}

/* ---------------------------------------------------------------- expected */

typedef struct expected_line
{
	const char *text;
	size_t		len;
} expected_line;

/* Index the JSON lines by csv_line (each line starts {"csv_line": N, ...). */
static expected_line *
index_expected(char *buf, size_t len, long max_line, long *count)
{
	expected_line *idx = calloc((size_t) max_line + 1, sizeof(expected_line));
	char	   *p = buf;

	*count = 0;
	while (p < buf + len)
	{
		char	   *nl = memchr(p, '\n', (size_t) (buf + len - p));
		size_t		n = nl ? (size_t) (nl - p) : (size_t) (buf + len - p);
		char	   *k = strstr(p, "\"csv_line\"");

		if (n > 0 && k != NULL && k < p + n)
		{
			long		line = strtol(strchr(k, ':') + 1, NULL, 10);

			if (line > 0 && line <= max_line)
			{
				idx[line].text = p;
				idx[line].len = n;
				(*count)++;
			}
		}
		p += n + 1;
	}
	return idx;
}

/* ---------------------------------------------------------------- seeds */

/*
 * The seed documents: a composite {run, protocol, environment}, either bare
 * JSON (NAME.json) or after a title line (NAME.txt).
 */
typedef struct seed
{
	const char *file;
	long		line;
} seed;

static const seed seeds[] = {
	{"000_04bb0f8f111ec531", 2293},
	{"002_72c93d8bf667ae74", 607},
	{"004_5d22a04506fce857", 1363},
};

static char *
read_seed(const char *dir, const char *name, size_t *len, const char **json)
{
	static const char *const ext[] = {".json", ".txt"};

	for (int i = 0; i < 2; i++)
	{
		char		path[4096];
		char	   *text;

		snprintf(path, sizeof path, "%s/%s%s", dir, name, ext[i]);
		text = read_file(path, len);
		if (text == NULL)
			continue;
		if (text[0] == '{')
			*json = text;
		else
		{
			*json = strstr(text, "\n{");
			if (*json)
				(*json)++;
		}
		return text;
	}
	*json = NULL;
	return NULL;
}

/* ---------------------------------------------------------------- helpers */

static ki_liger_row
row_from(const char *const v[KI_LIGER_NCOLUMNS], long line)
{
	ki_liger_row r;

	r.kernel_name = v[0];
	r.kernel_provider = v[1];
	r.kernel_operation_mode = v[2];
	r.metric_name = v[3];
	r.metric_unit = v[4];
	r.x_name = v[5];
	r.x_label = v[6];
	r.x_value = v[7];
	r.y_value_50 = v[8];
	r.y_value_20 = v[9];
	r.y_value_80 = v[10];
	r.extra_benchmark_config_str = v[11];
	r.gpu_name = v[12];
	r.timestamp = v[13];
	r.liger_version = v[14];
	r.line = line;
	return r;
}

static const char *
str_at(const ki_value *v, const char *path)
{
	char		key[64];

	while (v && *path)
	{
		const char *dot = strchr(path, '.');
		size_t		n = dot ? (size_t) (dot - path) : strlen(path);

		memcpy(key, path, n);
		key[n] = '\0';
		v = ki_get(v, key);
		path += n + (dot ? 1 : 0);
	}
	/* parsed strings need not be NUL-terminated: copy */
	return v && v->type == KI_STRING ? ki_strndup(str_arena, v->u.str.ptr, v->u.str.len) : NULL;
}

static double
num_at(const ki_value *v, const char *path, double dflt)
{
	char		key[64];

	while (v && *path)
	{
		const char *dot = strchr(path, '.');
		size_t		n = dot ? (size_t) (dot - path) : strlen(path);

		memcpy(key, path, n);
		key[n] = '\0';
		v = ki_get(v, key);
		path += n + (dot ? 1 : 0);
	}
	return v && v->type == KI_NUMBER ? v->u.num : dflt;
}

static bool
streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---------------------------------------------------------------- twins */

/*
 * The speed row of the same kernel, provider, pass, sizes and GPU as a
 * memory row (its "twin"): what the memory row's digests must equal.
 */
typedef struct twin
{
	char	   *key;
	char		digest[KI_LIGER_NPARTS][KI_DIGEST_LEN + 1];
} twin;

static twin twins[4096];
static long ntwins = 0;

static char *
twin_key(const ki_liger_row *r)
{
	size_t		n = strlen(r->kernel_name) + strlen(r->kernel_provider) + strlen(r->kernel_operation_mode) +
		strlen(r->x_name) + strlen(r->x_value) + strlen(r->extra_benchmark_config_str) + strlen(r->gpu_name) + 8;
	char	   *k = malloc(n);

	snprintf(k, n, "%s|%s|%s|%s|%s|%s|%s", r->kernel_name, r->kernel_provider, r->kernel_operation_mode,
			 r->x_name, r->x_value, r->extra_benchmark_config_str, r->gpu_name);
	return k;
}

static const twin *
twin_find(const char *key)
{
	for (long i = 0; i < ntwins; i++)
		if (strcmp(twins[i].key, key) == 0)
			return &twins[i];
	return NULL;
}

/* ---------------------------------------------------------------- main */

int
main(int argc, char **argv)
{
	size_t		csv_len,
				exp_len;
	char	   *csv,
			   *expbuf;
	ki_arena	arena,
				scratch;
	ki_liger_reader rd;
	ki_liger_row row;
	const char *err;
	ki_liger_read_status st;
	long		records = 0,
				speed = 0,
				memory = 0,
				mapped = 0,
				skipped = 0,
				bad_records = 0,
				exp_count = 0,
				max_line = 0;
	long		digest_bad = 0,
				manifest_bad = 0,
				missing = 0,
				compared = 0,
				printed_d = 0,
				printed_m = 0,
				printed_s = 0;
	long		mem_twins = 0,
				mem_twin_bad = 0,
				mem_bad = 0,
				mem_sample = 0;
	expected_line *expected;
	double		t0,
				elapsed;
	char		ref_digest[KI_LIGER_NPARTS][KI_DIGEST_LEN + 1];
	bool		have_ref = false;
	bool		kernel_seen[64] = {false};
	int			nkernels = 0,
				nseen = 0;

	if (argc != 4)
	{
		fprintf(stderr, "usage: %s CSV EXPECTED_JSONL SEEDS_DIR\n", argv[0]);
		return 2;
	}
	csv = read_file(argv[1], &csv_len);
	expbuf = read_file(argv[2], &exp_len);
	if (csv == NULL || expbuf == NULL)
	{
		fprintf(stderr, "cannot read %s or %s\n", argv[1], argv[2]);
		return 2;
	}
	printf("TAP version 13\n");
	ki_arena_init_malloc(&arena);
	ki_arena_init_malloc(&scratch);
	str_arena = &scratch;

	/* ---- 1. timing: read and map the whole CSV, one arena reset per row */
	t0 = now_ms();
	if (!ki_liger_reader_init(&rd, &arena, csv, csv_len, &err))
	{
		printf("Bail out! header: %s\n", err);
		return 1;
	}
	{
		ki_arena	rowa;

		ki_arena_init_malloc(&rowa);
		while ((st = ki_liger_reader_next(&rd, &row, &err)) != KI_LIGER_READ_END)
		{
			ki_liger_result res;

			if (st != KI_LIGER_READ_ROW)
				break;
			if (ki_liger_map(&rowa, &row, &res) == KI_LIGER_MAPPED)
				mapped++;
			ki_arena_reset(&rowa);
		}
		ki_arena_reset(&rowa);
	}
	elapsed = now_ms() - t0;
	printf("# mapped %ld rows in %.1f ms\n", mapped, elapsed);
	ki_arena_reset(&arena);
	mapped = 0;

	/* ---- the speed rows' digests by shape, for their memory twins */
	if (!ki_liger_reader_init(&rd, &arena, csv, csv_len, &err))
	{
		printf("Bail out! header: %s\n", err);
		return 1;
	}
	while ((st = ki_liger_reader_next(&rd, &row, &err)) == KI_LIGER_READ_ROW)
	{
		ki_liger_result res;

		if (ki_liger_map(&scratch, &row, &res) == KI_LIGER_MAPPED &&
			ntwins < (long) (sizeof twins / sizeof twins[0]))
		{
			twins[ntwins].key = twin_key(&row);
			memcpy(twins[ntwins].digest, res.digest, sizeof res.digest);
			ntwins++;
		}
		ki_arena_reset(&scratch);
	}
	ki_arena_reset(&arena);

	/* ---- 2. the full comparison */
	for (const char *p = csv; *p; p++)
		if (*p == '\n')
			max_line++;
	max_line += 2;
	expected = index_expected(expbuf, exp_len, max_line, &exp_count);
	printf("# expected file: %ld lines\n", exp_count);

	if (!ki_liger_reader_init(&rd, &arena, csv, csv_len, &err))
	{
		printf("Bail out! header: %s\n", err);
		return 1;
	}
	while ((st = ki_liger_reader_next(&rd, &row, &err)) != KI_LIGER_READ_END)
	{
		ki_liger_result res;
		ki_liger_outcome oc;

		if (st != KI_LIGER_READ_ROW)
		{
			bad_records++;
			fprintf(stderr, "# csv: %s\n", err);
			if (st == KI_LIGER_READ_FATAL)
				break;
			continue;
		}
		records++;
		oc = ki_liger_map(&scratch, &row, &res);
		if (strcmp(row.metric_name, "speed") == 0)
			speed++;
		if (oc == KI_LIGER_MAPPED_MEMORY)
		{
			char	   *key = twin_key(&row);
			const twin *tw = twin_find(key);

			memory++;
			if (res.manifest[KI_LIGER_RUN] != NULL || res.digest[KI_LIGER_RUN][0] != '\0' ||
				res.memory.p50_bytes <= 0 || !res.memory.spread || res.external_id == NULL ||
				strcmp(res.memory.pass, row.kernel_operation_mode) != 0 ||
				strcmp(res.memory.liger_version, row.liger_version) != 0 ||
				(double) res.memory.p50_bytes != strtod(row.y_value_50, NULL) * 1048576.0 ||
				(double) res.memory.p20_bytes != strtod(row.y_value_20, NULL) * 1048576.0 ||
				(double) res.memory.p80_bytes != strtod(row.y_value_80, NULL) * 1048576.0)
				mem_bad++;
			for (int i = KI_LIGER_PROTOCOL; i < KI_LIGER_NPARTS; i++)
				if (res.manifest[i] == NULL)
					mem_bad++;
			if (tw)
			{
				mem_twins++;
				for (int i = KI_LIGER_PROTOCOL; i < KI_LIGER_NPARTS; i++)
					if (strcmp(tw->digest[i], res.digest[i]) != 0)
					{
						mem_twin_bad++;
						fprintf(stderr, "# line %ld: memory %s digest %s, its speed twin's %s\n", row.line,
								ki_liger_part_names[i], res.digest[i], tw->digest[i]);
					}
			}
			/* the first memory row: cross_entropy, liger, full, V=4096, A100: 256.32861328125 MiB */
			if (row.line == 26 && res.memory.p50_bytes == 268780032 &&
				strcmp(res.external_id, "cross_entropy/full/liger/nvidia-a100-sxm4-80gb/tokens16384-vocab4096-fp32/2024-09-03-15-31-42") == 0 &&
				strcmp(res.memory.observed_at, "2024-09-03T15:31:42.000Z") == 0)
				mem_sample++;
			free(key);
		}
		else if (oc == KI_LIGER_SKIPPED)
		{
			skipped++;
			if (printed_s++ < 10)
				fprintf(stderr, "# line %ld skipped: %s\n", row.line, res.reason);
		}
		else
		{
			mapped++;
			for (size_t i = 0; i < sizeof kernel_seen / sizeof kernel_seen[0]; i++)
			{
				const ki_liger_kernel *k = ki_liger_kernel_at(i);

				if (k && strcmp(k->csv_name, row.kernel_name) == 0)
					kernel_seen[i] = true;
			}
			if (!have_ref && row.line == 284)	/* rms_norm, liger, forward, A100 */
			{
				memcpy(ref_digest, res.digest, sizeof ref_digest);
				have_ref = true;
			}
		}
		if (oc == KI_LIGER_MAPPED && row.line <= max_line && expected[row.line].text)
		{
			ki_errors	errs;
			ki_value   *e;
			const ki_value *ed;

			ki_errors_init(&errs, &scratch);
			e = ki_parse(&scratch, expected[row.line].text, expected[row.line].len, &errs);
			ed = e ? ki_get(e, "digests") : NULL;
			compared++;
			for (int i = 0; i < KI_LIGER_NPARTS; i++)
			{
				const char *want = ed ? str_at(ed, ki_liger_part_names[i]) : NULL;
				ki_value   *em = e ? ki_get(e, ki_liger_part_names[i]) : NULL;
				const ki_value *en = normalized(&scratch, em);
				const char *ours_c = canon(&scratch, res.manifest[i]);
				const char *theirs_c = en ? canon(&scratch, en) : "";

				if (!streq(want, res.digest[i]))
				{
					digest_bad++;
					if (printed_d++ < 10)
					{
						ki_value   *ob = ki_identity_body(&scratch, res.manifest[i]);
						const ki_value *tb = en ? ki_identity_body(&scratch, en) : NULL;

						fprintf(stderr, "# line %ld: %s digest %s, expected %s\n", row.line,
								ki_liger_part_names[i], res.digest[i], want ? want : "(none)");
						diff_hint(canon(&scratch, ob), tb ? canon(&scratch, tb) : "");
					}
				}
				if (strcmp(ours_c, theirs_c) != 0)
				{
					manifest_bad++;
					if (printed_m++ < 10)
					{
						fprintf(stderr, "# line %ld: %s manifest differs\n", row.line,
								ki_liger_part_names[i]);
						diff_hint(ours_c, theirs_c);
					}
				}
			}
		}
		else if (oc == KI_LIGER_MAPPED)
		{
			missing++;
			if (missing <= 10)
				fprintf(stderr, "# line %ld mapped but not in the expected file\n", row.line);
		}
		else if (row.line <= max_line && expected[row.line].text)
		{
			missing++;
			if (missing <= 10)
				fprintf(stderr, "# line %ld expected but not mapped (%s)\n", row.line,
						res.reason ? res.reason : "");
		}
		ki_arena_reset(&scratch);
	}
	printf("# records %ld, speed %ld, mapped %ld, memory %ld, skipped %ld, compared %ld\n",
		   records, speed, mapped, memory, skipped, compared);

	tap(bad_records == 0 && records == 2448, "the CSV reads as 2448 records under a valid header");
	tap(mapped == 1649 && speed == 1649 && skipped == 0, "all 1649 speed rows map (%ld mapped, %ld skipped)",
		mapped, skipped);
	tap(memory == 799, "799 memory rows map to memory observations (%ld)", memory);
	tap(mem_bad == 0, "every memory observation: no run, five manifests, pass, version, p20/p50/p80 = MiB x 2^20 (%ld bad)",
		mem_bad);
	tap(mem_twins == 791 && mem_twin_bad == 0,
		"memory rows with a speed twin name its operation, workload, implementation, protocol, environment digests (%ld rows, %ld mismatches)",
		mem_twins, mem_twin_bad);
	tap(mem_sample == 1, "line 26 (cross_entropy full V=4096 A100, 256.32861328125 MiB) is 268780032 bytes with its external id");
	for (size_t i = 0; i < sizeof kernel_seen / sizeof kernel_seen[0]; i++)
		if (ki_liger_kernel_at(i))
		{
			nkernels++;
			if (kernel_seen[i])
				nseen++;
			else
				fprintf(stderr, "# kernel %s maps no row of the CSV\n", ki_liger_kernel_at(i)->csv_name);
		}
	tap(nkernels == nseen && nkernels == 35 && ki_liger_kernel_at(64) == NULL,
		"every kernel table entry maps rows of the CSV (%d of %d)", nseen, nkernels);
	tap(compared == exp_count && missing == 0 && compared == 1649,
		"every expected csv_line is mapped and nothing else (%ld of %ld compared)", compared, exp_count);
	tap(digest_bad == 0 && compared == 1649, "all six digests equal for every row (%ld mismatches)", digest_bad);
	tap(manifest_bad == 0 && compared == 1649,
		"full manifests equal incl. metadata, canonical form (%ld mismatches)", manifest_bad);

	/* ---- 3. seeds: the composite documents, byte for byte */
	{
		int			seed_ok = 0;

		for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
		{
			size_t		slen;
			char	   *text;
			const char *json;
			ki_errors	errs;
			ki_value   *doc;
			ki_composite comp;
			bool		ok = false;

			text = read_seed(argv[3], seeds[s].file, &slen, &json);
			ki_errors_init(&errs, &scratch);
			doc = json ? ki_parse(&scratch, json, strlen(json), &errs) : NULL;
			if (doc && ki_composite_validate(&scratch, doc, &comp, &errs))
			{
				/* find our row */
				ki_liger_reader r2;
				ki_liger_row rw;
				const char *e2;

				if (ki_liger_reader_init(&r2, &scratch, csv, csv_len, &e2))
					while (ki_liger_reader_next(&r2, &rw, &e2) == KI_LIGER_READ_ROW)
					{
						ki_liger_result res;

						if (rw.line != seeds[s].line)
							continue;
						if (ki_liger_map(&scratch, &rw, &res) == KI_LIGER_MAPPED)
						{
							const ki_value *theirs[3] = {comp.run, comp.protocol, comp.environment};
							int			parts[3] = {KI_LIGER_RUN, KI_LIGER_PROTOCOL, KI_LIGER_ENVIRONMENT};

							ok = strcmp(res.digest[KI_LIGER_RUN], comp.run_digest) == 0 &&
								strcmp(res.digest[KI_LIGER_PROTOCOL], comp.protocol_digest) == 0 &&
								strcmp(res.digest[KI_LIGER_ENVIRONMENT], comp.environment_digest) == 0;
							for (int i = 0; i < 3; i++)
							{
								const char *o = canon(&scratch, res.manifest[parts[i]]);
								const char *t = canon(&scratch, theirs[i]);

								if (strcmp(o, t) != 0)
								{
									ok = false;
									fprintf(stderr, "# seed %s: %s differs\n", seeds[s].file,
											ki_liger_part_names[parts[i]]);
									diff_hint(o, t);
								}
							}
						}
						break;
					}
			}
			else
				fprintf(stderr, "# seed %s unreadable or invalid\n", seeds[s].file);
			if (ok)
				seed_ok++;
			free(text);
			ki_arena_reset(&scratch);
		}
		tap(seed_ok == 3, "seeds 000/002/004 (lines 2293, 607, 1363) reproduced byte for byte (%d of 3)",
			seed_ok);
	}

	/* ---- 4. hand-made rows */
	{
		const char *const base[KI_LIGER_NCOLUMNS] = {
			"rms_norm", "liger", "forward", "speed", "ms", "H", "hidden size", "1024",
			"0.0212", "0.0201", "0.0228", "{\"M\": 2048, \"dtype\": \"torch.bfloat16\", \"eps\": 1e-06}",
			"NVIDIA A100-SXM4-80GB", "2024-09-03 15:39:30", "0.2.1"
		};
		const char *v[KI_LIGER_NCOLUMNS];
		ki_liger_row r;
		ki_liger_result res;
		ki_liger_outcome oc;
		bool		ok;

		/* an unknown GPU is skipped, not guessed */
		memcpy(v, base, sizeof v);
		v[12] = "Imaginary Accelerator X9";
		r = row_from(v, 9001);
		oc = ki_liger_map(&scratch, &r, &res);
		ok = oc == KI_LIGER_SKIPPED && res.reason && strstr(res.reason, "unknown gpu") &&
			strstr(res.reason, "Imaginary Accelerator X9") && res.manifest[KI_LIGER_RUN] == NULL;
		printf("# reason: %s\n", res.reason ? res.reason : "(none)");
		v[12] = "NVIDIA A1000";	/* not the A100 family */
		r = row_from(v, 9002);
		ok = ok && ki_liger_map(&scratch, &r, &res) == KI_LIGER_SKIPPED &&
			strstr(res.reason, "unknown gpu") != NULL;
		tap(ok, "an unknown gpu row is skipped with a reason");

		/* a new size, date, version and a new H100 form factor map by the same rules */
		memcpy(v, base, sizeof v);
		v[7] = "16384";
		v[8] = "0.5";
		v[9] = "0.4999999";
		v[10] = "0.5000001";
		v[11] = "{\"M\": 8192, \"dtype\": \"torch.float16\", \"eps\": 1e-05}";
		v[12] = "NVIDIA H100 NVL";
		v[13] = "2027-01-02 03:04:05";
		v[14] = "0.9.0";
		r = row_from(v, 9003);
		oc = ki_liger_map(&scratch, &r, &res);
		ok = oc == KI_LIGER_MAPPED;
		if (!ok)
			fprintf(stderr, "# new row: %s\n", res.reason ? res.reason : "?");
		else
		{
			const ki_value *env = res.manifest[KI_LIGER_ENVIRONMENT];
			const ki_value *wl = res.manifest[KI_LIGER_WORKLOAD];
			const ki_value *run = res.manifest[KI_LIGER_RUN];

			ok = streq(str_at(env, "spec.hardware.product"), "NVIDIA H100") &&
				streq(str_at(env, "spec.hardware.formFactor"), "NVL") &&
				streq(str_at(env, "spec.hardware.architecture"), "sm_90") &&
				streq(str_at(env, "spec.hardware.vendor"), "nvidia") &&
				streq(str_at(env, "metadata.name"), "liger-bench-nvidia-h100-nvl") &&
				streq(str_at(env, "metadata.title"), "Liger benchmark host · H100 NVL") &&
				num_at(wl, "spec.axes.rows", 0) == 8192 && num_at(wl, "spec.axes.hidden", 0) == 16384 &&
				num_at(wl, "spec.scalars.eps.value", 0) == 1e-05 &&
				streq(str_at(wl, "metadata.name"), "liger-rms-norm-hidden16384-rows8192-fp16") &&
				streq(str_at(wl, "metadata.title"), "RMSNorm · rows=8192, hidden=16384 · fp16") &&
				streq(str_at(run, "spec.observedAt"), "2027-01-02T03:04:05.000Z") &&
				streq(str_at(run, "metadata.labels.liger_version"), "0.9.0") &&
				num_at(run, "spec.timing.latencyNs.median", 0) == 500000 &&
				streq(str_at(run, "spec.sourceNative.externalId"),
					  "rms_norm/forward/liger/nvidia-h100-nvl/hidden16384-rows8192-fp16/2027-01-02-03-04-05") &&
				streq(res.external_id, str_at(run, "spec.sourceNative.externalId"));
			/* the operation, implementation and protocol are those of the real rows */
			ok = ok && have_ref &&
				strcmp(res.digest[KI_LIGER_OPERATION], ref_digest[KI_LIGER_OPERATION]) == 0 &&
				strcmp(res.digest[KI_LIGER_IMPLEMENTATION], ref_digest[KI_LIGER_IMPLEMENTATION]) == 0 &&
				strcmp(res.digest[KI_LIGER_PROTOCOL], ref_digest[KI_LIGER_PROTOCOL]) == 0;
		}
		tap(ok, "a row with a new size/date/version/GPU form factor maps by the same rules");

		/* timestamps with a zone are folded into UTC */
		memcpy(v, base, sizeof v);
		v[13] = "2024-12-31T23:30:00.25-01:00";
		r = row_from(v, 9004);
		ok = ki_liger_map(&scratch, &r, &res) == KI_LIGER_MAPPED &&
			streq(str_at(res.manifest[KI_LIGER_RUN], "spec.observedAt"), "2025-01-01T00:30:00.250Z");
		v[13] = "2024-02-30 00:00:00";
		r = row_from(v, 9005);
		ok = ok && ki_liger_map(&scratch, &r, &res) == KI_LIGER_SKIPPED && strstr(res.reason, "timestamp");
		tap(ok, "timestamps: an offset folds into UTC, an impossible date is skipped");

		/* other rows it cannot map are skipped with a reason */
		{
			struct
			{
				int			col;
				const char *value;
				const char *reason;
			}			cases[] = {
				{0, "flash_attention_9", "unknown kernel"},
				{1, "cutlass", "unknown provider"},
				{2, "sideways", "unknown kernel_operation_mode"},
				{4, "s", "not ms"},
				{3, "throughput", "unknown metric_name"},
				{5, "Q", "config not understood"},
				{7, "1024.5", "not a positive integer"},
				{8, "fast", "y_value_50"},
				{11, "{\"M\": 2048, \"dtype\": \"torch.int8\", \"eps\": 1e-06}", "config not understood"},
				{11, "{\"M\": 2048, \"dtype\": ", "not a JSON object"},
				{11, "{\"M\": 2048, \"M\": 4096, \"dtype\": \"torch.float32\", \"eps\": 1e-06}", "not a JSON object"},
				{6, NULL, "row lacks column x_label"},
				{12, "NVIDIA H100 ", "unknown gpu"},
				{13, "yesterday", "timestamp"},
			};
			int			good = 0,
						n = (int) (sizeof cases / sizeof cases[0]);

			for (int i = 0; i < n; i++)
			{
				memcpy(v, base, sizeof v);
				v[cases[i].col] = cases[i].value;
				r = row_from(v, 9100 + i);
				oc = ki_liger_map(&scratch, &r, &res);
				if (oc == KI_LIGER_SKIPPED && res.reason && strstr(res.reason, cases[i].reason))
					good++;
				else
					fprintf(stderr, "# case %d: outcome %d, reason %s\n", i, (int) oc,
							res.reason ? res.reason : "(none)");
			}
			memcpy(v, base, sizeof v);
			v[3] = "memory";
			v[4] = "MB";
			v[8] = "1.5";
			v[9] = "1.25";
			v[10] = "2";
			r = row_from(v, 9200);
			if (ki_liger_map(&scratch, &r, &res) == KI_LIGER_MAPPED_MEMORY && res.memory.p50_bytes == 1572864 &&
				res.memory.p20_bytes == 1310720 && res.memory.p80_bytes == 2097152)
				good++;
			tap(good == n + 1, "unknown kernel/provider/mode/unit/metric/config/x/y rows are skipped with reasons (%d of %d)",
				good, n + 1);
		}

		/* memory rows it cannot map are skipped with a reason, never rounded */
		{
			struct
			{
				int			col;
				const char *value;
				const char *reason;
			}			cases[] = {
				{4, "GB", "memory unit 'GB' is not MB"},
				{8, "0.1", "'0.1' MiB is not a positive whole number of bytes"},
				{9, "0.3", "'0.3' MiB is not a positive whole number of bytes"},
				{8, "-1", "y_value_50 '-1' is not a positive number"},
				{8, "", "y_value_50 '' is not a positive number"},
				{8, "9000000000", "MiB is not a positive whole number of bytes below 2^53"},
				{12, "Imaginary Accelerator X9", "unknown gpu"},
				{0, "flash_attention_9", "unknown kernel"},
			};
			int			good = 0,
						n = (int) (sizeof cases / sizeof cases[0]);

			for (int i = 0; i < n; i++)
			{
				memcpy(v, base, sizeof v);
				v[3] = "memory";
				v[4] = "MB";
				v[8] = "1.5";
				v[9] = "1.25";
				v[10] = "2";
				v[cases[i].col] = cases[i].value;
				r = row_from(v, 9300 + i);
				oc = ki_liger_map(&scratch, &r, &res);
				if (oc == KI_LIGER_SKIPPED && res.reason && strstr(res.reason, cases[i].reason))
					good++;
				else
					fprintf(stderr, "# memory case %d: outcome %d, reason %s\n", i, (int) oc,
							res.reason ? res.reason : "(none)");
			}
			/* no spread: p20/p80 that are not numbers */
			memcpy(v, base, sizeof v);
			v[3] = "memory";
			v[4] = "MB";
			v[8] = "3";
			v[9] = "";
			v[10] = "";
			r = row_from(v, 9400);
			if (ki_liger_map(&scratch, &r, &res) == KI_LIGER_MAPPED_MEMORY && res.memory.p50_bytes == 3145728 &&
				!res.memory.spread)
				good++;
			tap(good == n + 1, "bad memory rows (unit, fractional bytes, sign, size, gpu, kernel) are skipped with reasons (%d of %d)",
				good, n + 1);
		}
		ki_arena_reset(&scratch);
	}

	/* ---- 5. malformed CSV */
	{
		const char *header =
			"kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,"
			"x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,"
			"timestamp,liger_version\r\n";
		const char *good =
			"rms_norm,liger,forward,speed,ms,H,hidden size,1024,0.02,0.01,0.03,"
			"\"{\"\"M\"\": 2048, \"\"dtype\"\": \"\"torch.bfloat16\"\", \"\"eps\"\": 1e-06}\","
			"NVIDIA A100-SXM4-80GB,2024-09-03 15:39:30,0.2.1\r\n";
		const char *multiline =	/* a quoted field spanning two physical lines */
			"rms_norm,liger,forward,speed,ms,H,\"hidden\nsize\",1024,0.02,0.01,0.03,"
			"\"{\"\"M\"\": 2048, \"\"dtype\"\": \"\"torch.bfloat16\"\", \"\"eps\"\": 1e-06}\","
			"NVIDIA A100-SXM4-80GB,2024-09-03 15:39:30,0.2.1\n";
		const char *short_row = "rms_norm,liger,forward,speed,ms,H,hidden size,1024,0.02,0.01,0.03,"
			"NVIDIA A100-SXM4-80GB,2024-09-03 15:39:30,0.2.1\n";
		const char *unterminated = "rms_norm,liger,forward,speed,ms,H,hidden size,1024,0.02,0.01,0.03,"
			"\"{\"\"M\"\": 2048,NVIDIA A100-SXM4-80GB,2024-09-03 15:39:30,0.2.1\n";
		ki_buf		b;
		ki_liger_reader r;
		ki_liger_row rw;
		const char *e = NULL;
		bool		ok = true;
		ki_liger_read_status s;
		ki_liger_result res;

		ki_buf_init(&b, &scratch, 4096);
		ki_buf_puts(&b, header);	/* line 1 */
		ki_buf_puts(&b, good);		/* line 2 */
		ki_buf_puts(&b, multiline); /* lines 3-4 */
		ki_buf_puts(&b, "\n");		/* line 5, blank */
		ki_buf_puts(&b, short_row); /* line 6 */
		ki_buf_puts(&b, good);		/* line 7 */
		ki_buf_puts(&b, unterminated);	/* line 8 */
		ki_buf_puts(&b, good);		/* line 9: swallowed by the open quote */

		ok = ki_liger_reader_init(&r, &scratch, b.data, b.len, &e);
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_ROW && rw.line == 2 &&
			ki_liger_map(&scratch, &rw, &res) == KI_LIGER_MAPPED;
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_ROW && rw.line == 3 && streq(rw.x_label, "hidden\nsize");
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_BAD_RECORD && e && strstr(e, "line 6") && strstr(e, "found 14") && rw.line == 6;
		printf("# %s\n", e ? e : "(no error)");
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_ROW && rw.line == 7;
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_FATAL && e && strstr(e, "line 8") && strstr(e, "unterminated");
		printf("# %s\n", e ? e : "(no error)");
		s = ki_liger_reader_next(&r, &rw, &e);
		ok = ok && s == KI_LIGER_READ_END;

		/* an unterminated quote at the end of the input */
		{
			ki_buf		b2;

			ki_buf_init(&b2, &scratch, 4096);
			ki_buf_puts(&b2, header);	/* line 1 */
			ki_buf_puts(&b2, good);	/* line 2 */
			ki_buf_puts(&b2, unterminated);	/* line 3 */
			ok = ok && ki_liger_reader_init(&r, &scratch, b2.data, b2.len, &e) &&
				ki_liger_reader_next(&r, &rw, &e) == KI_LIGER_READ_ROW &&
				ki_liger_reader_next(&r, &rw, &e) == KI_LIGER_READ_FATAL &&
				strstr(e, "line 3") && strstr(e, "unterminated");
			printf("# %s\n", e ? e : "(no error)");
		}

		/* a header without a column is refused, with its line */
		ok = ok && !ki_liger_reader_init(&r, &scratch, "kernel_name,kernel_provider\n", 28, &e) &&
			strstr(e, "line 1") && strstr(e, "kernel_operation_mode");
		/* garbage after a closing quote */
		{
			const char *g = "a,b\n\"x\"y,z\n";
			ki_csv_reader cr;
			ki_csv_record rec;

			ki_csv_init(&cr, &scratch, g, strlen(g));
			ok = ok && ki_csv_next(&cr, &rec, &e) == KI_CSV_RECORD && rec.count == 2 &&
				ki_csv_next(&cr, &rec, &e) == KI_CSV_ERROR && strstr(e, "line 2");
		}
		tap(ok, "malformed CSV (unterminated quote, wrong column count) reported with its line");
		ki_arena_reset(&scratch);
	}

	/* How long the mapping took is printed above ("# mapped ... in ... ms"),
	 * never asserted: a test does not depend on the machine's speed
	 * (bench/import.sh times the Liger import against its COPY). */

	printf("1..%d\n", test_no);
	ki_arena_reset(&arena);
	free(expected);
	free(csv);
	free(expbuf);
	return failures == 0 ? 0 : 1;
}
