/*
 * compare.c: kbench compare, a paired A/B comparison on a host without a
 * database (kb_compare: A and B timed in alternating blocks on one device,
 * the same inputs, the cache flushed before every timed call).
 *
 *   kbench compare OP MODE key=value... --a IMPL --b IMPL [--rounds N]
 *          [--same-pct P] [--device cpu|cuda:N] [--warmup-ms MS] [--rep-ms MS]
 *          [--flush-bytes N] [--max-samples N] [--min-samples N] [--seed N]
 *          [--timeout S] [--python INTERPRETER] [--json]
 *
 * IMPL as for kbench run (cpu, cuda, cuda/vN, huggingface, torch, liger;
 * python:file.py:function and library:libx.so:symbol).  Prints the ratio
 * B/A of the medians over rounds with its 95% interval and the verdict for
 * B (faster, slower, same, ambiguous); --json prints the comparison and
 * both runs' manifests.  Exit status: 0 both runs passed (whatever the
 * verdict); 1 a run did not pass; 2 bad usage or request; 3 device
 * unavailable; 4 resource exceeded.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kbench.h"
#include "cli.h"

/* A number option's value, or an error (status 2). */
static int
number(const char *opt, const char *v, double lo, double hi, int integer, double *out)
{
	char	   *end;

	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !(*out >= lo && *out <= hi) || (integer && *out != floor(*out)))
	{
		fprintf(stderr, "kbench compare: %s must be %s from %g to %g, got '%s'\n", opt,
				integer ? "a whole number" : "a number", lo, hi, v);
		return 2;
	}
	return 0;
}

/* python:file / library:file made absolute, as kbench run does; the entry (malloc'd) or NULL. */
static char *
entry_of(const char *v, const char **impl)
{
	const char *rest = strchr(v, ':') + 1;
	const char *colon = strrchr(rest, ':');
	char	   *file,
			   *abs,
			   *entry;

	if (!colon || colon == rest)
	{
		fprintf(stderr, "kbench compare: %s: write python:file.py:function or library:libx.so:symbol\n", v);
		return NULL;
	}
	file = strndup(rest, (size_t) (colon - rest));
	abs = file ? realpath(file, NULL) : NULL;
	if (!abs)
	{
		fprintf(stderr, "kbench compare: %s: cannot find %s\n", v, file ? file : "");
		free(file);
		return NULL;
	}
	entry = malloc(strlen(abs) + strlen(colon) + 10);
	if (entry)
		sprintf(entry, "%.*s%s%s", (int) (rest - v), v, abs, colon);
	*impl = v[0] == 'p' ? "python" : "library";
	free(file);
	free(abs);
	return entry;
}

static void
json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++)
	{
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char) *s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

static void
json_side(const char *name, const char *impl, const kb_result *r)
{
	printf("\"%s\":{\"implementation\":", name);
	json_str(impl ? impl : "");
	printf(",\"status\":\"%s\",\"message\":", kb_status_name(r->status));
	json_str(r->message);
	printf(",\"median_ns\":%.1f,\"samples\":%lld", r->stats.samples ? r->stats.median : 0,
		   (long long) r->stats.samples);
	if (r->composite_json)
		printf(",\"run_digest\":\"%s\",\"workload_digest\":\"%s\",\"environment_digest\":\"%s\",\"composite\":%s",
			   r->run_digest, r->workload_digest, r->environment_digest, r->composite_json);
	if (r->implementation_json)
		printf(",\"implementation_manifest\":%s", r->implementation_json);
	printf(",\"rawSamplesNs\":[");
	for (int64_t i = 0; i < r->nsamples; i++)
		printf("%s%.1f", i ? "," : "", r->samples_ns[i]);
	printf("]}");
}

static int
exit_code(kb_status st)
{
	return st == KB_PASSED ? 0 : st == KB_INVALID_REQUEST ? 2 : st == KB_DEVICE_UNAVAILABLE ? 3 :
		st == KB_RESOURCE_EXCEEDED ? 4 : 1;
}

int
kbench_cmd_compare(int argc, char **argv)
{
	kb_compare_request q;
	kb_compare_result res;
	const char **keys = calloc((size_t) argc + 1, sizeof(char *));
	const char **vals = calloc((size_t) argc + 1, sizeof(char *));
	char	  **owned = calloc((size_t) argc + 1, sizeof(char *));
	char	   *entries[2] = {NULL, NULL};
	const char *label[2] = {NULL, NULL};
	int			json = 0,
				have[2] = {0, 0},
				rc = 0;
	double		v,
				timeout_s = 0;

	if (!keys || !vals || !owned)
		return 1;
	kb_compare_request_init(&q);
	if (argc < 2 || strncmp(argv[0], "--", 2) == 0 || strncmp(argv[1], "--", 2) == 0)
	{
		fprintf(stderr, "kbench compare: give the operation and the mode first: kbench compare layer_norm forward "
				"rows=64 hidden=256 --a cpu --b huggingface\n");
		rc = 2;
		goto out;
	}
	q.a.op = argv[0];
	q.a.mode = argv[1];
	q.a.keys = keys;
	q.a.values = vals;
	q.a.progress = kbench_progress_cb;
	for (int i = 2; i < argc && rc == 0; i++)
	{
		const char *a = argv[i];
		const char *eq = strchr(a, '=');

		if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "--no-check") == 0)
			q.a.check = 0;
		else if (strncmp(a, "--", 2) == 0 && i + 1 >= argc)
		{
			fprintf(stderr, "kbench compare: option %s needs a value (or is unknown)\n", a);
			rc = 2;
		}
		else if (strcmp(a, "--a") == 0 || strcmp(a, "--b") == 0)
		{
			int			side = a[2] == 'b';
			const char *val = argv[++i];

			have[side] = 1;
			label[side] = val;
			if (strncmp(val, "python:", 7) == 0 || strncmp(val, "library:", 8) == 0)
			{
				const char *impl = NULL;

				free(entries[side]);
				if (!(entries[side] = entry_of(val, &impl)))
					rc = 2;
				if (side)
				{
					q.impl_b = impl;
					q.entry_b = entries[side];
				}
				else
				{
					q.a.impl = impl;
					q.a.entry = entries[side];
				}
			}
			else if (side)
				q.impl_b = val;
			else
				q.a.impl = val;
		}
		else if (strcmp(a, "--device") == 0)
			q.a.device = argv[++i];
		else if (strcmp(a, "--python") == 0)
			q.a.python = argv[++i];
		else if (strcmp(a, "--rounds") == 0)
		{
			if (!(rc = number(a, argv[++i], 3, 1000, 1, &v)))
				q.rounds = (int) v;
		}
		else if (strcmp(a, "--same-pct") == 0)
		{
			if (!(rc = number(a, argv[++i], 0.001, 99.999, 0, &v)))
				q.same_pct = v;
		}
		else if (strcmp(a, "--warmup-ms") == 0)
		{
			if (!(rc = number(a, argv[++i], 0, 600000, 0, &v)))
				q.a.warmup_ms = v;
		}
		else if (strcmp(a, "--rep-ms") == 0)
		{
			if (!(rc = number(a, argv[++i], 0.001, 3600000, 0, &v)))
				q.a.rep_ms = v;
		}
		else if (strcmp(a, "--flush-bytes") == 0)
		{
			if (!(rc = number(a, argv[++i], 0, 1099511627776.0, 1, &v)))
				q.a.flush_bytes = (int64_t) v;
		}
		else if (strcmp(a, "--max-samples") == 0)
		{
			if (!(rc = number(a, argv[++i], 1, 100000000, 1, &v)))
				q.a.max_samples = (int64_t) v;
		}
		else if (strcmp(a, "--min-samples") == 0)
		{
			if (!(rc = number(a, argv[++i], 1, 100000000, 1, &v)))
				q.a.min_samples = (int64_t) v;
		}
		else if (strcmp(a, "--seed") == 0)
		{
			if (!(rc = number(a, argv[++i], 0, 9007199254740991.0, 1, &v)))
				q.a.seed = (uint64_t) v;
		}
		else if (strcmp(a, "--timeout") == 0)
		{
			if (!(rc = number(a, argv[++i], 0.001, 604800, 0, &timeout_s)))
			{
				struct timespec now;

				clock_gettime(CLOCK_MONOTONIC, &now);
				q.a.deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (timeout_s * 1e9);
			}
		}
		else if (strncmp(a, "--", 2) == 0)
		{
			fprintf(stderr, "kbench compare: unknown option %s\n", a);
			rc = 2;
		}
		else if (!eq || eq == a)
		{
			fprintf(stderr, "kbench compare: expected key=value, got '%s'\n", a);
			rc = 2;
		}
		else
		{
			owned[q.a.naxes] = strndup(a, (size_t) (eq - a));
			keys[q.a.naxes] = owned[q.a.naxes];
			vals[q.a.naxes] = eq + 1;
			q.a.naxes++;
		}
	}
	if (rc == 0 && (!have[0] || !have[1]))
	{
		fprintf(stderr, "kbench compare: name both sides: --a IMPL --b IMPL (e.g. --a cuda --b cuda/v2)\n");
		rc = 2;
	}
	if (rc)
		goto out;

	kb_compare(&q, &res);
	if (res.status == KB_INVALID_REQUEST || res.status == KB_DEVICE_UNAVAILABLE)
		fprintf(stderr, "kbench compare: %s\n", res.message);
	else if (json)
	{
		printf("{\"status\":\"%s\",\"message\":", kb_status_name(res.status));
		json_str(res.message);
		printf(",\"rounds\":%d,\"callsPerBlock\":%lld,\"order\":", res.rounds, (long long) res.calls_per_block);
		json_str(res.order ? res.order : "");
		if (res.paired.verdict)
			printf(",\"aMedianNs\":%.1f,\"bMedianNs\":%.1f,\"ratio\":%.6f,\"ratioLow\":%.6f,\"ratioHigh\":%.6f,\"verdict\":\"%s\"",
				   res.paired.a_median, res.paired.b_median, res.paired.ratio, res.paired.low, res.paired.high,
				   res.paired.verdict);
		printf(",\"aRoundNs\":[");
		for (int r = 0; r < res.rounds; r++)
			printf("%s%.1f", r ? "," : "", res.a_round_ns[r]);
		printf("],\"bRoundNs\":[");
		for (int r = 0; r < res.rounds; r++)
			printf("%s%.1f", r ? "," : "", res.b_round_ns[r]);
		printf("],");
		json_side("a", label[0], &res.a);
		putchar(',');
		json_side("b", label[1], &res.b);
		printf("}\n");
	}
	else
	{
		printf("%s %s: %s\n", q.a.op, q.a.mode, res.message);
		for (int side = 0; side < 2; side++)
		{
			const kb_result *r = side ? &res.b : &res.a;

			if (r->stats.samples > 0)
				printf("  %s %-12s median %.3f us over %lld samples, %s%s%s\n", side ? "b" : "a", label[side],
					   r->stats.median / 1e3, (long long) r->stats.samples, kb_result_run_status(r),
					   r->run_digest[0] ? ", run " : "", r->run_digest);
		}
		if (res.order)
			printf("  order %s (%lld calls a block)\n", res.order, (long long) res.calls_per_block);
	}
	for (int side = 0; side < 2; side++)
	{
		const kb_result *r = side ? &res.b : &res.a;

		if (r->stats.samples > 0 && r->stats.samples < KB_MIN_SAMPLES)
			fprintf(stderr, "kbench compare: warning: %s has only %lld samples, fewer than the protocol's minimum of %d\n",
					side ? "b" : "a", (long long) r->stats.samples, KB_MIN_SAMPLES);
	}
	rc = exit_code(res.status);
	kb_free_compare_result(&res);
out:
	for (int i = 0; i < q.a.naxes; i++)
		free(owned[i]);
	free(owned);
	free(keys);
	free(vals);
	free(entries[0]);
	free(entries[1]);
	return rc;
}
