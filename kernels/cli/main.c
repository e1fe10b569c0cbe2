/*
 * kbench: run one kernel benchmark without PostgreSQL and print its
 * statistics and manifests.
 *
 *   kbench list [--json]
 *   kbench devices [--json]
 *   kbench describe OP MODE key=value... [--impl IMPL] [--device cpu|cuda:N] [--json]
 *   kbench run OP MODE key=value... [--impl IMPL] [--device cpu|cuda:N] [--json]
 *              [--manifests] [--warmup-ms MS] [--rep-ms MS] [--flush-bytes N] [--max-samples N]
 *              [--min-samples N] [--seed N] [--no-check] [--fixed] [--noise-target-pct P] [--max-ms MS] [--timeout S] [--python INTERPRETER]
 *   kbench compare OP MODE key=value... --a IMPL --b IMPL [--rounds N] [--same-pct P] [--json] ...
 *              (cli/compare.c)
 *   kbench probe [--device cpu|cuda:N] [--bytes N] [--json]  the device's measured ceilings (docs/KERNELS.md)
 *   kbench agent [--db CONNINFO] [--name NAME] [--devices auto|cpu,cuda:N] ...  (kbench-agent, docs/FLEET.md)
 *   IMPL: cpu, cuda, cuda/vN (CUDA kernel variant N; cuda is cuda/v1), huggingface,
 *   torch, liger (python, in a child process), Liger's other providers for
 *   their operations (impl_name.c, kb_providers), python:file.py:function or
 *   library:libx.so:symbol (docs/BYO.md): the names kbench_run's implementation
 *   argument takes in SQL.  --variant vN was removed: it said the same as
 *   --impl cuda/vN under a second name, and now says so (exit 2).
 *
 * run prints a short summary (median and spread, samples, correctness, the
 * run's digest); --manifests adds the manifests, --json prints everything as
 * one JSON object whose "summary" member is that summary.  The protocol
 * flags are checked against the ranges kbench_run checks its protocol
 * against (kb_protocol.h).
 *
 * Exit status: 0 passed; 1 the run finished but did not pass (incorrect,
 * runtime error, timeout); 2 bad usage or request; 3 device unavailable;
 * 4 resource exceeded.
 *
 * --timeout S is the run's deadline (status timeout when it passes).  The
 * library keeps it at every wait it controls; a watchdog covers the case it
 * cannot (a driver call that never returns): S + 5 seconds after the start
 * kbench says so and exits with status 1 at once, without the exit
 * handlers that could wait for the device again.
 */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kbench.h"
#include "cli.h"
#include "kb_protocol.h"

static void
usage(FILE *f)
{
	fprintf(f,
			"usage: kbench list [--json]\n"
			"       kbench devices [--json]\n"
			"       kbench describe OP MODE key=value... [--impl IMPL] [--device cpu|cuda:N] [--json]\n"
			"       kbench run OP MODE key=value... [--impl IMPL] [--device cpu|cuda:N] [--json]\n"
			"                  [--manifests] [--warmup-ms MS] [--rep-ms MS] [--flush-bytes N] [--max-samples N]\n"
			"                  [--min-samples N] [--seed N] [--no-check] [--fixed] [--noise-target-pct P] [--max-ms MS] [--timeout S] [--python INTERPRETER]\n"
			"       kbench compare OP MODE key=value... --a IMPL --b IMPL [--rounds N] [--same-pct P] [--json]\n"
			"                  [--device cpu|cuda:N] [protocol options as for run]\n"
			"       kbench probe [--device cpu|cuda:N] [--bytes N] [--json]\n"
			"       kbench agent [--db CONNINFO] [--name NAME] [--devices auto|cpu,cuda:N,...] (docs/FLEET.md)\n"
			"       IMPL: cpu, cuda, cuda/vN (CUDA kernel variant), huggingface, torch, liger, python:file.py:function,\n"
			"             library:libx.so:symbol (docs/BYO.md), or one of Liger's other providers for the operations\n"
			"             Liger benchmarks it with (torch_compile, megatron, deepspeed_tiled, ...: kbench list --json)\n"
			"       --op-file DEF.json (before or after the command): a user's own operation, defined as data\n"
			"             like kernels/ops/defs/*.json, for list, describe, run and compare (docs/OPERATIONS.md)\n"
			"example: kbench run layer_norm backward rows=4096 hidden=4096 dtype=fp32 --device cuda:0\n");
}

static int
exit_code(kb_status st)
{
	switch (st)
	{
		case KB_PASSED:
			return 0;
		case KB_INVALID_REQUEST:
			return 2;
		case KB_DEVICE_UNAVAILABLE:
			return 3;
		case KB_RESOURCE_EXCEEDED:
			return 4;
		default:
			return 1;
	}
}

/* Print a tiny human listing from the JSON of kb_list_json (no parser: walk the registry via describe). */
static int
cmd_list(int json)
{
	char	   *s = kb_list_json();
	const char *broken = kb_builtin_ops_error();

	if (!s)
	{
		fprintf(stderr, "kbench: out of memory\n");
		return 1;
	}
	if (json)
		printf("%s\n", s);
	else
	{
		/* The JSON is compact and regular enough to print field by field. */
		const char *p = strstr(s, "\"operations\":[");

		printf("%-24s %-22s %-12s %-36s %s\n", "operation", "modes", "dtypes", "axes", "implementations");
		while (p && (p = strstr(p, "{\"name\":\"")) && p < strstr(s, "\"devices\":"))
		{
			char		name[64] = "", modes[64] = "", dtypes[64] = "", axes[128] = "", impls[128] = "";
			const char *q;
			const char *end;

#define FIELD(key, buf) \
			q = strstr(p, key); \
			if (q) { q += strlen(key); size_t n = strcspn(q, "]"); \
				snprintf(buf, sizeof(buf), "%.*s", (int) n, q); \
				for (char *c = buf; *c; c++) if (*c == '"') memmove(c, c + 1, strlen(c)), c--; }
			sscanf(p, "{\"name\":\"%63[^\"]", name);
			FIELD("\"modes\":[", modes);
			FIELD("\"dtypes\":[", dtypes);
			FIELD("\"axes\":[", axes);
#undef FIELD
			/* "implementations":[{"implementation":"cpu",...},...]: the names, comma-separated */
			q = strstr(p, "\"implementations\":[");
			end = q ? q + strcspn(q, "]") : NULL;
			while (q && (q = strstr(q, "{\"implementation\":\"")) && q < end)
			{
				q += strlen("{\"implementation\":\"");
				snprintf(impls + strlen(impls), sizeof(impls) - strlen(impls), "%s%.*s", impls[0] ? "," : "",
						 (int) strcspn(q, "\""), q);
			}
			printf("%-24s %-22s %-12s %-36s %s\n", name, modes, dtypes, axes, impls);
			p++;
		}
	}
	free(s);
	if (broken)
	{
		/* a definition embedded at build time that does not parse is left out above: say so, and fail */
		fprintf(stderr, "kbench: a built-in operation's definition does not load (a build error): %s\n", broken);
		return 1;
	}
	return 0;
}

static int
cmd_devices(int json)
{
	char	   *s = kb_devices_json();
	char		why[512] = "";
	int			cuda = kb_cuda_available(why, sizeof(why));

	if (!s)
		return 1;
	if (json)
		printf("%s\n", s);
	else
	{
		const char *p = s;

		printf("cpu\n");
		while ((p = strstr(p, "\"name\":\"cuda:")))
		{
			char		name[32] = "", product[256] = "";
			const char *q = strstr(p, "\"product\":\"");

			sscanf(p, "\"name\":\"%31[^\"]", name);
			if (q)
				sscanf(q, "\"product\":\"%255[^\"]", product);
			printf("%s\t%s\n", name, product);
			p++;
		}
		if (!cuda)
			printf("# no CUDA device: %s\n", why);
	}
	free(s);
	return 0;
}

/* ,"summary":{...}: what a script wants first, without reading the manifests. */
static void
print_json_summary(const kb_result *r)
{
	const kb_stats *s = &r->stats;

	printf(",\"summary\":{\"status\":\"%s\"", kb_status_name(r->status));
	if (s->samples > 0)
	{
		printf(",\"median_ns\":%.0f,\"p20_ns\":%.0f,\"p80_ns\":%.0f,\"samples\":%lld,\"discarded\":%lld",
			   s->median, s->p20, s->p80, (long long) s->samples, (long long) s->discarded_throttled);
		printf(",\"stop_rule\":\"%s\",\"noise_stdrel\":%.6g,\"unstable\":%s",
			   s->stop_rule ? s->stop_rule : "fixed", s->stdrel, s->unstable ? "true" : "false");
	}
	else
		printf(",\"median_ns\":null,\"p20_ns\":null,\"p80_ns\":null,\"samples\":0,\"discarded\":0");
	if (r->correctness.checked)
		printf(",\"checked\":true,\"tolerance_ratio\":%.6g", r->correctness.worst_ratio);
	else
		printf(",\"checked\":false,\"tolerance_ratio\":null");
	printf(",\"run_digest\":\"%s\"}", r->run_digest);
}

/* The specs of a call (operation, workload, implementation manifests, where
 * made) and its bytes and FLOPs (the registry's cost formulas, exact as
 * doubles): members of the JSON object that `run --json` and `describe
 * --json` print. */
static void
print_json_specs(const kb_result *r)
{
	if (r->operation_json)
		printf(",\"operation\":%s", r->operation_json);
	if (r->workload_json)
		printf(",\"workload\":%s", r->workload_json);
	if (r->implementation_json)
		printf(",\"implementation\":%s", r->implementation_json);
	printf(",\"bytes\":%.17g,\"flops\":%.17g", r->bytes, r->flops);
}

static void
print_json_result(const kb_result *r)
{
	printf("{\"status\":\"%s\",\"message\":\"", kb_status_name(r->status));
	for (const char *c = r->message; *c; c++)
	{
		if (*c == '"' || *c == '\\')
			putchar('\\');
		if ((unsigned char) *c >= 0x20)
			putchar(*c);
	}
	printf("\"");
	print_json_summary(r);
	if (r->composite_json)
		printf(",\"composite\":%s", r->composite_json);
	print_json_specs(r);
	printf(",\"digests\":{\"run\":\"%s\",\"protocol\":\"%s\",\"environment\":\"%s\",\"workload\":\"%s\","
		   "\"implementation\":\"%s\",\"operation\":\"%s\"}",
		   r->run_digest, r->protocol_digest, r->environment_digest, r->workload_digest,
		   r->implementation_digest, r->operation_digest);
	printf(",\"rawSamplesNs\":[");
	for (int64_t i = 0; i < r->nsamples; i++)
		printf("%s%.1f", i ? "," : "", r->samples_ns[i]);
	printf("],\"discardedSamples\":[");
	for (int64_t i = 0, n = 0; i < r->nsamples; i++)
		if (!r->sample_kept[i])
			printf("%s%lld", n++ ? "," : "", (long long) i);
	printf("]}\n");
}

/* The name in an ImplementationRevision's text ("metadata":{..."name":"x"), for the header. */
static void
manifest_name(const char *json, char *out, size_t len)
{
	const char *p = json ? strstr(json, "\"metadata\":") : NULL;
	size_t		n = 0;

	out[0] = '\0';
	if (p && (p = strstr(p, "\"name\":\"")) != NULL)
		for (p += 8; *p && *p != '"' && n + 1 < len; p++)
			out[n++] = *p;
	out[n] = '\0';
}

/*
 * kbench describe: what a call of the implementation takes and returns
 * (docs/BYO.md): the tensors (name, shape, dtype, role), the workspace, the
 * floors of one call and the digests; --json: the same as "tensors" beside
 * the manifests.
 */
static bool
print_describe(const kb_request *req, const kb_result *r, int json)
{
	kb_tensor_desc t[KB_DESCRIBE_MAX_TENSORS];
	int64_t		ws = 0;
	char		err[512];
	char		impl[300];
	int			n = kb_describe_tensors(req, t, KB_DESCRIBE_MAX_TENSORS, &ws, err, sizeof(err));

	if (n < 0)
	{
		fprintf(stderr, "kbench: %s\n", err);
		return false;
	}
	if (json)
	{
		printf("{\"status\":\"%s\",\"tensors\":[", kb_status_name(r->status));
		for (int i = 0; i < n; i++)
			printf("%s{\"name\":\"%s\",\"shape\":[%lld,%lld],\"dtype\":\"%s\",\"role\":\"%s\"}", i ? "," : "",
				   t[i].name, (long long) t[i].rows, (long long) t[i].cols, t[i].dtype, t[i].role);
		printf("],\"workspace_bytes\":%lld", (long long) ws);
		print_json_specs(r);
		printf(",\"digests\":{\"workload\":\"%s\",\"implementation\":\"%s\",\"operation\":\"%s\"}}\n",
			   r->workload_digest, r->implementation_digest, r->operation_digest);
		return true;
	}
	manifest_name(r->implementation_json, impl, sizeof(impl));
	printf("%s %s", req->op, req->mode);
	for (int i = 0; i < req->naxes; i++)
		printf(" %s=%s", req->keys[i], req->values[i]);
	printf(": %s\n", impl[0] ? impl : "(implementation)");
	printf("  the tensors of one call (name, shape, dtype, role):\n");
	for (int i = 0; i < n; i++)
	{
		char		shape[64];

		snprintf(shape, sizeof(shape), "[%lld, %lld]", (long long) t[i].rows, (long long) t[i].cols);
		printf("    %-12s %-18s %-5s %s\n", t[i].name, shape, t[i].dtype, t[i].role);
	}
	printf("  roles: input = generated by kbench and copied to the implementation; output = compared with the\n"
		   "  float64 reference (one a python implementation does not return is not compared); scratch = allocated,\n"
		   "  neither generated nor compared\n");
	if (ws > 0)
		printf("  workspace %lld bytes (for kbench's own kernels; another implementation allocates its own)\n", (long long) ws);
	printf("  one call: %.0f bytes, %.0f FLOPs (the floors of kbench_operation_costs)\n", r->bytes, r->flops);
	printf("  operation %s\n  workload %s\n  implementation %s\n", r->operation_digest, r->workload_digest,
		   r->implementation_digest);
	return true;
}

static void
print_text_result(const kb_result *r, const char *op, const char *mode, int manifests)
{
	const kb_stats *s = &r->stats;

	printf("%s %s: %s%s%s\n", op, mode, kb_status_name(r->status), r->message[0] ? " - " : "", r->message);
	if (s->samples > 0)
	{
		printf("  median %.3f us  p20 %.3f us  p80 %.3f us  mean %.3f us  min %.3f us  max %.3f us  MAD %.3f us\n",
			   s->median / 1e3, s->p20 / 1e3, s->p80 / 1e3, s->mean / 1e3, s->minimum / 1e3, s->maximum / 1e3, s->mad / 1e3);
		printf("  95%% CI of the median [%.3f, %.3f] us; %lld samples kept, %lld discarded (throttled); warm-up %lld calls\n",
			   s->ci95_lo / 1e3, s->ci95_hi / 1e3, (long long) s->samples, (long long) s->discarded_throttled,
			   (long long) s->warmup_iterations);
		printf("  stopped by %s: noise (stdev/mean) %.3g%%%s\n", s->stop_rule ? s->stop_rule : "fixed",
			   s->stdrel * 100, s->unstable ? "; unstable: the noise never settled (records mark it)" : "");
		printf("  %.3f GB/s (%.4g bytes), %.4f TFLOP/s (%.4g FLOPs)\n", r->achieved_gbps, r->bytes,
			   r->achieved_tflops, r->flops);
	}
	if (r->peak_memory_bytes > 0)
		printf("  peak memory %lld bytes\n", (long long) r->peak_memory_bytes);
	if (r->correctness.checked)
		printf("  correctness: %lld values, worst error %.3g of its tolerance (pass <= 1) at %s; "
			   "max abs err %.3g, matched %.6f\n",
			   (long long) r->correctness.compared, r->correctness.worst_ratio, r->correctness.worst_at,
			   r->correctness.max_abs_error, r->correctness.matched_ratio);
	else if (r->status == KB_PASSED)
		printf("  correctness: not checked (--no-check): the outputs were not compared\n");
	if (r->run_digest[0])
		printf("  run %s%s\n", r->run_digest, manifests ? "" : " (--manifests prints its manifests, --json all of it)");
	if (!manifests)
		return;
	if (r->operation_json)
		printf("operation %s\n  %s\n", r->operation_digest, r->operation_json);
	if (r->workload_json)
		printf("workload %s\n  %s\n", r->workload_digest, r->workload_json);
	if (r->implementation_json)
		printf("implementation %s\n  %s\n", r->implementation_digest, r->implementation_json);
	if (r->composite_json)
		printf("run %s (protocol %s, environment %s)\n  %s\n", r->run_digest, r->protocol_digest,
			   r->environment_digest, r->composite_json);
}

/*
 * The value of a protocol flag, checked as kbench_run checks its protocol
 * member (kb_protocol.h): a number, within range, whole where it must be.
 */
static int
protocol_flag(const char *flag, const char *text, double *v)
{
	char	   *end;

	for (size_t k = 0; k < KB_PROTOCOL_NSETTINGS; k++)
	{
		const kb_protocol_setting *s = &KB_PROTOCOL_SETTINGS[k];

		if (!s->flag || strcmp(s->flag, flag) != 0)
			continue;
		*v = strtod(text, &end);
		if (end == text || *end || *v != *v)
		{
			fprintf(stderr, "kbench: %s must be a number, got '%s'\n", flag, text);
			return 0;
		}
		if (*v < s->min || *v > s->max)
		{
			fprintf(stderr, "kbench: %s must be a number from %g to %g, got '%s'\n", flag, s->min, s->max, text);
			return 0;
		}
		if (s->integer && *v != (double) (long long) *v)
		{
			fprintf(stderr, "kbench: %s must be a whole number, got '%s'\n", flag, text);
			return 0;
		}
		return 1;
	}
	fprintf(stderr, "kbench: unknown option %s\n", flag);
	return 0;
}

static int
is_value_option(const char *a)
{
	static const char *const opts[] = {"--impl", "--python", "--device", "--warmup-ms", "--rep-ms", "--flush-bytes",
	"--max-samples", "--min-samples", "--seed", "--timeout", "--noise-target-pct", "--max-ms"};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strcmp(a, opts[i]) == 0)
			return 1;
	return 0;
}

void
kbench_progress_cb(void *arg, const kb_progress *p)
{
	(void) arg;
	if (getenv("KBENCH_PROGRESS"))
		fprintf(stderr, "progress %.0f%% %s%s\n", p->fraction * 100, kb_run_phase_name(p->phase),
				p->rest_s >= 0 ? "" : " (time left not known yet)");
}

/* The watchdog: async-signal-safe, no stdio, no exit handlers. */
static void
watchdog(int sig)
{
	static const char msg[] = "kbench: timeout: the device did not return within the deadline's grace; exiting\n";

	(void) sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static int
cmd_run(int argc, char **argv, int describe)
{
	kb_request	req;
	kb_result	res;
	const char **keys = calloc((size_t) argc + 1, sizeof(char *));
	const char **vals = calloc((size_t) argc + 1, sizeof(char *));
	char	  **owned = calloc((size_t) argc + 1, sizeof(char *));
	int			json = 0;
	int			manifests = 0;
	double		timeout_s = 0;
	char	   *entry = NULL;
	int			rc;

	if (!keys || !vals || !owned)
		return 1;
	kb_request_init(&req);
	if (argc < 2)
	{
		usage(stderr);
		return 2;
	}
	req.op = argv[0];
	req.mode = argv[1];
	req.keys = keys;
	req.values = vals;
	req.progress = kbench_progress_cb;
	for (int i = 2; i < argc; i++)
	{
		const char *a = argv[i];
		const char *eq = strchr(a, '=');
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0)
			json = 1;
		else if (strcmp(a, "--manifests") == 0)
			manifests = 1;
		else if (strcmp(a, "--no-check") == 0)
			req.check = 0;
		else if (strcmp(a, "--fixed") == 0)
			req.fixed_count = 1;	/* the protocol's "adaptive": false */
		else if (strcmp(a, "--cuda-graph") == 0)
			req.cuda_graph = 1;		/* the protocol's "cuda_graph": true */
		else if (strncmp(a, "--", 2) == 0 && !next && is_value_option(a))
		{
			fprintf(stderr, "kbench: option %s needs a value\n", a);
			return 2;
		}
		else if (strcmp(a, "--impl") == 0)
		{
			/* --impl python:file.py:fn / library:libx.so:sym: an entry, its file made absolute */
			const char *v = argv[++i];

			if (strncmp(v, "python:", 7) == 0 || strncmp(v, "library:", 8) == 0)
			{
				const char *rest = strchr(v, ':') + 1;
				const char *colon = strrchr(rest, ':');
				char	   *file,
						   *abs;

				if (!colon || colon == rest)
				{
					fprintf(stderr, "kbench: --impl %s: write python:file.py:function or library:libx.so:symbol\n", v);
					return 2;
				}
				file = strndup(rest, (size_t) (colon - rest));
				abs = file ? realpath(file, NULL) : NULL;
				if (!abs)
				{
					fprintf(stderr, "kbench: --impl %s: cannot find %s\n", v, file ? file : "");
					free(file);
					return 2;
				}
				free(entry);
				entry = malloc(strlen(abs) + strlen(colon) + 10);
				if (!entry)
					return 1;
				sprintf(entry, "%.*s%s%s", (int) (rest - v), v, abs, colon);
				req.entry = entry;
				req.impl = v[0] == 'p' ? "python" : "library";
				free(file);
				free(abs);
			}
			else
				req.impl = v;
		}
		else if (strcmp(a, "--python") == 0)
			req.python = argv[++i];
		else if (strcmp(a, "--device") == 0)
			req.device = argv[++i];
		else if (strcmp(a, "--variant") == 0)
		{
			/* one name per concept: a CUDA kernel variant is named as an implementation, as in SQL */
			fprintf(stderr, "kbench: --variant was removed: a CUDA kernel variant is named as an implementation, "
					"as kbench_run names it in SQL: --impl cuda/%s\n", i + 1 < argc ? argv[i + 1] : "vN");
			return 2;
		}
		else if (strcmp(a, "--warmup-ms") == 0 || strcmp(a, "--rep-ms") == 0 || strcmp(a, "--flush-bytes") == 0
				 || strcmp(a, "--max-samples") == 0 || strcmp(a, "--min-samples") == 0 || strcmp(a, "--seed") == 0
				 || strcmp(a, "--noise-target-pct") == 0 || strcmp(a, "--max-ms") == 0)
		{
			double		v;

			if (!protocol_flag(a, argv[++i], &v))
				return 2;
			if (strcmp(a, "--warmup-ms") == 0)
				req.warmup_ms = v;
			else if (strcmp(a, "--rep-ms") == 0)
				req.rep_ms = v;
			else if (strcmp(a, "--flush-bytes") == 0)
				req.flush_bytes = (long long) v;
			else if (strcmp(a, "--max-samples") == 0)
				req.max_samples = (long long) v;
			else if (strcmp(a, "--min-samples") == 0)
				req.min_samples = (long long) v;
			else if (strcmp(a, "--noise-target-pct") == 0)
				req.noise_target_pct = v;
			else if (strcmp(a, "--max-ms") == 0)
				req.max_ms = v;
			else
				req.seed = (unsigned long long) v;
		}
		else if (strcmp(a, "--timeout") == 0)
		{
			char	   *end;

			timeout_s = strtod(argv[++i], &end);
			if (*end || !(timeout_s > 0) || timeout_s > 7 * 24 * 3600)
			{
				fprintf(stderr, "kbench: --timeout must be a number of seconds in (0, 604800], got '%s'\n", argv[i]);
				return 2;
			}
		}
		else if (strncmp(a, "--", 2) == 0)
		{
			fprintf(stderr, "kbench: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		else if (!eq || eq == a)
		{
			fprintf(stderr, "kbench: expected key=value, got '%s'\n", a);
			return 2;
		}
		else
		{
			owned[req.naxes] = strndup(a, (size_t) (eq - a));
			keys[req.naxes] = owned[req.naxes];
			vals[req.naxes] = eq + 1;
			req.naxes++;
		}
	}
	if (timeout_s > 0 && !describe)
	{
		struct timespec now;
		struct sigaction sa;

		clock_gettime(CLOCK_MONOTONIC, &now);
		req.deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (timeout_s * 1e9);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = watchdog;
		sigaction(SIGALRM, &sa, NULL);
		alarm((unsigned) timeout_s + 5);
	}
	if (!describe)
	{
		char		how[256];
		double		est = kb_estimate_seconds(&req, 0, how, sizeof(how));

		/* a long run says so before it starts (docs/KERNELS.md, "Estimates") */
		if (est > 120)
			fprintf(stderr, "kbench: this run is estimated to take %.1f minutes (%s)\n", est / 60, how);
	}
	if (describe)
		rc = kb_describe(&req, &res);
	else
		rc = kb_run(&req, &res);
	if (res.status == KB_INVALID_REQUEST || res.status == KB_DEVICE_UNAVAILABLE || res.status == KB_CANCELED)
		fprintf(stderr, "kbench: %s\n", res.message);
	else if (describe && res.status == KB_PASSED)
	{
		if (!print_describe(&req, &res, json))
			rc = KB_RUNTIME_ERROR;
	}
	else if (json)
		print_json_result(&res);
	else
		print_text_result(&res, req.op, req.mode, manifests);
	if (!json && res.status != KB_PASSED && res.status != KB_INVALID_REQUEST &&
		res.status != KB_DEVICE_UNAVAILABLE)
		fprintf(stderr, "kbench: %s: %s\n", kb_status_name(res.status), res.message);
	/* too few samples to trust the spread: said on stderr whatever the output format */
	if (!describe && res.stats.samples > 0 && res.stats.samples < KB_MIN_SAMPLES)
		fprintf(stderr, "kbench: warning: only %lld samples, fewer than the protocol's minimum of %d\n",
				(long long) res.stats.samples, KB_MIN_SAMPLES);
	kb_free_result(&res);
	for (int i = 0; i < req.naxes; i++)
		free(owned[i]);
	free(owned);
	free(entry);
	free(keys);
	free(vals);
	return exit_code((kb_status) rc);
}

/* kbench agent ...: the kbench-agent program beside this one (libpq; docs/FLEET.md). */
static int
cmd_agent(char **argv)
{
	char		self[4096],
				path[4200];
	ssize_t		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char	   *slash;

	if (n <= 0)
	{
		fprintf(stderr, "kbench: cannot find this program's directory\n");
		return 1;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(path, sizeof(path), "%s/kbench-agent", self);
	argv[1] = path;
	execv(path, argv + 1);
	fprintf(stderr, "kbench: cannot run %s: it is built where libpq's header is (libpq-dev)\n", path);
	return 2;
}

/* kbench probe: the measured ceilings of one device (probe.c). */
static int
cmd_probe(int argc, char **argv)
{
	const char *device = "cpu";
	int64_t		bytes = 0;
	int			json = 0;
	kb_probe	p;
	char	   *s;

	for (int i = 0; i < argc; i++)
	{
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			device = argv[++i];
		else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc && atoll(argv[i + 1]) >= 4096)
			bytes = atoll(argv[++i]);
		else
		{
			fprintf(stderr, "kbench: probe takes --device cpu|cuda:N, --bytes N (4096 or more) and --json, got '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (kb_probe_device(device, bytes, &p) != 0)
	{
		fprintf(stderr, "kbench: %s\n", p.message);
		kb_probe_free(&p);
		return strncmp(p.message, "unknown device", 14) == 0 ? 2 : 3;
	}
	if (json)
	{
		s = kb_probe_json(&p);
		if (!s)
		{
			kb_probe_free(&p);
			return 1;
		}
		printf("%s\n", s);
		kb_free(s);
	}
	else
	{
		static const char *const g[KB_PROBE_GEMMS] = {"tf32", "bf16", "fp16", "fp8"};

		printf("device        %s (environment %s)\n", p.device, p.environment_digest);
		if (p.threads > 0)
		{
			printf("copy          %.2f GB/s on 1 thread, %.2f GB/s on %d threads\n", p.copy_bytes_per_s_1t * 1e-9,
				   p.copy_bytes_per_s * 1e-9, p.threads);
			printf("triad         %.2f GB/s on 1 thread, %.2f GB/s on %d threads\n", p.triad_bytes_per_s_1t * 1e-9,
				   p.triad_bytes_per_s * 1e-9, p.threads);
			printf("fp32 fma      %.2f GFLOP/s on 1 thread, %.2f GFLOP/s on %d threads (%s)\n", p.fma_flops_per_s_1t * 1e-9,
				   p.fma_flops_per_s * 1e-9, p.threads, p.isa);
		}
		else
		{
			printf("copy          %.4g GB/s\n", p.copy_bytes_per_s * 1e-9);
			printf("fp32 fma      %.4g GFLOP/s\n", p.fma_flops_per_s * 1e-9);
			for (int i = 0; i < KB_PROBE_GEMMS; i++)
				if (p.gemm_flops_per_s[i] > 0)
					printf("gemm %-8s %.4g GFLOP/s\n", g[i], p.gemm_flops_per_s[i] * 1e-9);
				else
					printf("gemm %-8s not measured\n", g[i]);
		}
		printf("arrays        %lld bytes; load average %.2f at the start; %.2f s\n", (long long) p.array_bytes,
			   p.load1, p.seconds);
		printf("note          %s\n", p.note);
	}
	kb_probe_free(&p);
	return 0;
}

/*
 * --op-file FILE, anywhere on the line: a user's own operation, added to the
 * registry before anything else reads it (docs/OPERATIONS.md).  Removed
 * from argv; -1 (a usage error, printed) when it is malformed.
 */
static int
load_op_files(int *argc, char **argv)
{
	int			n = 1;

	for (int i = 1; i < *argc; i++)
	{
		char		err[1024];

		if (strcmp(argv[i], "--op-file") != 0)
		{
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc || argv[i + 1][0] == '\0')
		{
			fprintf(stderr, "kbench: --op-file needs the definition file (kernels/ops/defs' format)\n");
			return -1;
		}
		if (kb_load_op_file(argv[++i], err, sizeof(err)) != 0)
		{
			fprintf(stderr, "kbench: --op-file: %s\n", err);
			return -1;
		}
	}
	*argc = n;
	argv[n] = NULL;
	return 0;
}

int
main(int argc, char **argv)
{
	int			json;

	if (load_op_files(&argc, argv) != 0)
		return 2;
	json = argc > 2 && strcmp(argv[2], "--json") == 0;

	if (argc >= 2 && (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "devices") == 0) && argc > 2 + json)
	{
		fprintf(stderr, "kbench: %s takes only --json, got '%s'\n", argv[1], argv[2 + json]);
		usage(stderr);
		return 2;
	}
	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0)
	{
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "list") == 0)
		return cmd_list(json);
	if (strcmp(argv[1], "devices") == 0)
		return cmd_devices(json);
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 2, argv + 2, 0);
	if (strcmp(argv[1], "describe") == 0)
		return cmd_run(argc - 2, argv + 2, 1);
	if (strcmp(argv[1], "compare") == 0)
		return kbench_cmd_compare(argc - 2, argv + 2);	/* cli/compare.c */
	if (strcmp(argv[1], "probe") == 0)
		return cmd_probe(argc - 2, argv + 2);
	if (strcmp(argv[1], "agent") == 0)
		return cmd_agent(argv);
	fprintf(stderr, "kbench: unknown command '%s'; allowed: list, devices, describe, run, compare, probe, agent, help\n", argv[1]);
	usage(stderr);
	return 2;
}
