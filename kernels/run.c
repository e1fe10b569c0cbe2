/*
 * run.c: kb_run and the manifests of a run.
 *
 * The measurement loop follows triton.testing.do_bench as Liger uses it
 * (warm-up and repetition times turned into iteration counts from a
 * five-call estimate, the cache flushed before every timed call outside the
 * timed region, one timer pair per call), keeps every raw sample, drops
 * samples taken while the SM clock was throttled (counted), and checks the
 * outputs against the float64 reference before anything is reported.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kb_int.h"
#ifndef KB_VERSION
#error "KB_VERSION is set by kernels/Makefile from kernelindex.control"
#endif
#include "ki_json.h"

#if __has_include("build/kb_git.h")
#include "build/kb_git.h"
#endif

#define DEFAULT_WARMUP_MS 25.0
#define DEFAULT_REP_MS 100.0
#define DEFAULT_FLUSH_BYTES ((int64_t) 256 << 20)
#define DEFAULT_MAX_SAMPLES 100000
#define THROTTLE_FRACTION 0.75
#define CALL_TIMEOUT_S 120.0

void
kb_request_init(kb_request *r)
{
	memset(r, 0, sizeof(*r));
	r->flush_bytes = -1;
	r->check = 1;
}

static void
setmsg(kb_result *res, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, ap);
	va_end(ap);
}

void
kb_free_result(kb_result *res)
{
	if (!res)
		return;
	free(res->samples_ns);
	free(res->sample_kept);
	free(res->composite_json);
	free(res->workload_json);
	free(res->implementation_json);
	free(res->operation_json);
	memset(res, 0, sizeof(*res));
}

int
kb_cuda_available(char *why, size_t whylen)
{
	const kbc_api *api = kb_cuda_api(why, whylen);
	int			n;

	if (!api)
		return 0;
	n = api->device_count(why, whylen);
	if (n <= 0)
	{
		if (n == 0 && why && whylen)
			snprintf(why, whylen, "no CUDA device");
		return 0;
	}
	return 1;
}

char *
kb_devices_json(void)
{
	kb_jw		w;
	char		why[256];
	const kbc_api *api = kb_cuda_api(why, sizeof(why));
	int			n = api ? api->device_count(why, sizeof(why)) : 0;
	kb_backend	cpu;
	char	   *env;

	memset(&cpu, 0, sizeof(cpu));
	kb_jw_init(&w);
	kb_jw_arr(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "name", "cpu");
	kb_jw_kstr(&w, "implementation", "cpu");
	env = kb_environment_text(&cpu);
	if (env)
	{
		kb_jw_key(&w, "environment");
		kb_jw_json(&w, env);
	}
	free(env);
	kb_jw_end_obj(&w);
	for (int d = 0; d < n; d++)
	{
		kbc_device_info info;
		char		name[32];
		char		arch[32];

		if (api->device_info(d, &info, why, sizeof(why)) != KBC_OK)
			continue;
		snprintf(name, sizeof(name), "cuda:%d", d);
		snprintf(arch, sizeof(arch), "sm_%d%d", info.cc_major, info.cc_minor);
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "name", name);
		kb_jw_kstr(&w, "implementation", "cuda");
		kb_jw_kstr(&w, "product", info.name);
		kb_jw_kstr(&w, "architecture", arch);
		kb_jw_kint(&w, "memoryBytes", info.total_mem);
		kb_jw_kint(&w, "freeBytes", info.free_mem);
		kb_jw_kint(&w, "smCount", info.sm_count);
		kb_jw_kstr(&w, "pciBusId", info.pci_bus_id);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_arr(&w);
	return kb_jw_take(&w);
}

/* Bytes of every tensor and the workspace of a planned call. */
static int64_t
call_bytes(const kb_call *c)
{
	int64_t		b = c->ws_bytes;

	for (int i = 0; i < c->ntensors; i++)
		b += c->rows[i] * c->cols[i] * (int64_t) kb_dtype_size(c->tdtype[i]);
	return b;
}

static void
plan_call(const kb_case *cs, kb_call *c, kb_plan *p)
{
	memset(c, 0, sizeof(*c));
	memset(p, 0, sizeof(*p));
	c->op = cs->op->id;
	c->mode = cs->mode;
	c->dtype = cs->dtype;
	memcpy(c->ax, cs->ax, sizeof(c->ax));
	c->variant = cs->variant;
	cs->op->plan(c, p, cs->cuda);
}

/* Memory the run needs on its device, including the flush buffer. */
static int64_t
run_bytes(const kb_case *cs, int64_t flush)
{
	kb_call		c;
	kb_plan		p;

	plan_call(cs, &c, &p);
	return call_bytes(&c) + flush + ((int64_t) 64 << 20);	/* + cuBLASLt and driver slack */
}

static int64_t
flush_bytes_of(const kb_request *req)
{
	return req->flush_bytes < 0 ? DEFAULT_FLUSH_BYTES : req->flush_bytes;
}

/* Refuse what cannot fit before anything is allocated. */
static kb_status
check_fit(const kb_case *cs, int64_t flush, char *err, size_t errlen)
{
	int64_t		need = run_bytes(cs, flush);

	if (cs->cuda)
	{
		char		why[256];
		const kbc_api *api = kb_cuda_api(why, sizeof(why));
		kbc_device_info info;
		int			n;

		if (!api)
		{
			snprintf(err, errlen, "%s", why);
			return KB_DEVICE_UNAVAILABLE;
		}
		n = api->device_count(why, sizeof(why));
		if (cs->device >= n)
		{
			if (n > 0)
				snprintf(err, errlen, "device cuda:%d does not exist; allowed: cpu, cuda:0..cuda:%d", cs->device, n - 1);
			else
				snprintf(err, errlen, "device cuda:%d does not exist (%s); allowed: cpu", cs->device, n == 0 ? "no CUDA device" : why);
			return KB_DEVICE_UNAVAILABLE;
		}
		if (api->device_info(cs->device, &info, why, sizeof(why)) != KBC_OK)
		{
			snprintf(err, errlen, "cuda:%d: %s", cs->device, why);
			return KB_DEVICE_UNAVAILABLE;
		}
		if (need > info.free_mem)
		{
			snprintf(err, errlen, "workload needs %.2f GiB on cuda:%d, which has %.2f GiB free of %.2f GiB",
					 need / 1073741824.0, cs->device, info.free_mem / 1073741824.0, info.total_mem / 1073741824.0);
			return KB_RESOURCE_EXCEEDED;
		}
	}
	else
	{
		long		avail = sysconf(_SC_AVPHYS_PAGES);
		long		psize = sysconf(_SC_PAGESIZE);
		double		have = (double) avail * (double) psize;

		if (avail > 0 && psize > 0 && (double) need > have)
		{
			snprintf(err, errlen, "workload needs %.2f GiB of host memory, %.2f GiB are free",
					 need / 1073741824.0, have / 1073741824.0);
			return KB_RESOURCE_EXCEEDED;
		}
	}
	return KB_PASSED;
}

kb_status
kb_check(const kb_request *req, char *errbuf, size_t errlen)
{
	kb_case		cs;
	kb_status	st = kb_parse_case(req, &cs, errbuf, errlen);

	if (st != KB_PASSED)
		return st;
	st = check_fit(&cs, flush_bytes_of(req), errbuf, errlen);
	if (st == KB_PASSED && errbuf && errlen)
		errbuf[0] = '\0';
	return st;
}

/* A request of the short-form checks below. */
static void
request_of(kb_request *r, const char *op, const char *mode, const char *axes_json, const char *impl,
		   const char *device)
{
	kb_request_init(r);
	r->op = op;
	r->mode = mode;
	r->axes_json = axes_json ? axes_json : "{}";
	r->impl = impl;
	r->device = device;
}

kb_status
kb_check_request(const char *op, const char *mode, const char *axes_json,
				 const char *impl, const char *device, char *errbuf, size_t errlen)
{
	kb_request	r;

	request_of(&r, op, mode, axes_json, impl, device);
	return kb_check(&r, errbuf, errlen);
}

kb_status
kb_validate_request(const char *op, const char *mode, const char *axes_json,
					const char *impl, const char *device, char *errbuf, size_t errlen)
{
	kb_request	r;
	kb_case		cs;
	kb_status	st;

	request_of(&r, op, mode, axes_json, impl, device);
	st = kb_parse_case(&r, &cs, errbuf, errlen);
	if (st == KB_PASSED && errbuf && errlen)
		errbuf[0] = '\0';
	return st;
}

/* Operation and workload manifests of a parsed case. */
static char *implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
								 const kb_backend *be, char *err, size_t errlen);

static bool
describe_case(const kb_case *cs, const kb_request *req, kb_result *res)
{
	char	   *text = kb_operation_text(cs->op);
	bool		ok = kb_manifest_finish(text, &res->operation_json, res->operation_digest,
										res->message, sizeof(res->message));

	free(text);
	if (!ok)
		return false;
	text = kb_workload_text(cs, res->operation_digest);
	ok = kb_manifest_finish(text, &res->workload_json, res->workload_digest,
							res->message, sizeof(res->message));
	free(text);
	if (!ok)
		return false;
	text = implementation_text(cs, res->operation_digest, req, NULL, res->message, sizeof(res->message));
	if (!text && res->message[0])
		return false;
	ok = kb_manifest_finish(text, &res->implementation_json, res->implementation_digest,
							res->message, sizeof(res->message));
	free(text);
	return ok;
}

kb_status
kb_describe(const kb_request *req, kb_result *res)
{
	kb_case		cs;

	memset(res, 0, sizeof(*res));
	res->status = kb_parse_case(req, &cs, res->message, sizeof(res->message));
	if (res->status != KB_PASSED)
		return res->status;
	if (!describe_case(&cs, req, res))
		res->status = cs.ext ? KB_INVALID_REQUEST : KB_RUNTIME_ERROR;
	return res->status;
}

/* ------------------------------------------------------------ manifests of a run */

static void
slugify(const char *in, char *out, size_t len)
{
	size_t		n = 0;

	for (; *in && n + 1 < len; in++)
	{
		unsigned char ch = (unsigned char) tolower((unsigned char) *in);

		if (isalnum(ch))
			out[n++] = (char) ch;
		else if (n && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n && out[n - 1] == '-')
		n--;
	out[n] = '\0';
}

static char *
protocol_text(const kb_case *cs, const kb_request *req, double warmup_ms, double rep_ms,
			  int64_t flush, int64_t max_samples)
{
	kb_jw		w;
	char		name[200];
	char		title[200];
	char		notes[1000];
	char		reference[500];
	const char *timer = cs->cuda ? "cuda_events" : "clock_monotonic";

	snprintf(name, sizeof(name), "kbench-%s-%s-%s", cs->cuda ? "cuda" : "cpu", cs->op->slug, kb_mode_name(cs->mode));
	snprintf(title, sizeof(title), "kbench protocol \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s",
			 cs->op->name, kb_mode_name(cs->mode), cs->cuda ? "CUDA events" : "CPU monotonic clock");
	snprintf(notes, sizeof(notes),
			 "Timed: %s. do_bench-compatible: warm-up %g ms and repetition %g ms turned into iteration "
			 "counts from a five-call estimate (flush included), at most %lld samples; a %lld-byte buffer "
			 "cleared before every timed call outside the timed region; %s per call; inputs generated once "
			 "(counter-based generator, seed %llu). Reported: median, p20, p80 (linear interpolation), mean, "
			 "min, max, MAD, distribution-free 95%% order-statistic interval of the median; raw samples kept.",
			 cs->op->timed[cs->mode], warmup_ms, rep_ms, (long long) max_samples, (long long) flush,
			 cs->cuda ? "one CUDA event pair" : "one CLOCK_MONOTONIC pair",
			 (unsigned long long) req->seed);
	if (cs->op->id != KB_OP_DISTILL_JSD)
		snprintf(reference, sizeof(reference),
				 "C float64 reference (%s) on the same inputs, all rows or a deterministic sample of rows; "
				 "pass when every compared value is within a tolerance derived from the output dtype and the "
				 "terms it sums (kernelindex docs/KERNELS.md, Tolerances); metrics.tolerance_ratio is the "
				 "worst error over its tolerance.", cs->op->c_path);
	else
		snprintf(reference, sizeof(reference),
				 "C float64 reference (%s) on the same inputs, all rows or a deterministic sample of rows; "
				 "pass when every compared value has |got-ref| <= rtol*|ref| + rtol*max|ref| with rtol 1e-5 "
				 "(fp32) or 1e-2 (bf16); metrics.tolerance_ratio is the worst error over it.", cs->op->c_path);

	kb_jw_manifest(&w, "BenchmarkProtocol", name, title);
	kb_jw_spec(&w);
	kb_jw_key(&w, "harness");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "name", "kbench");
	kb_jw_kstr(&w, "version", KB_VERSION);
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "measurement");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "timer", timer);
	kb_jw_kstr(&w, "synchronization", cs->cuda ? "event_synchronize_per_sample" : "blocking_call");
	kb_jw_key(&w, "compileIncluded");
	kb_jw_bool(&w, false);
	kb_jw_key(&w, "setupIncluded");
	kb_jw_bool(&w, false);
	kb_jw_kint(&w, "warmupDuration", (int64_t) llround(warmup_ms * 1e6));
	kb_jw_kstr(&w, "inputRegeneration", "none");
	kb_jw_kstr(&w, "outlierPolicy", cs->cuda
			   ? "Samples taken while the SM clock (NVML, read after each sample) was below 75% of its default "
			   "application clock are discarded and counted (sourceNative.metrics.discarded_throttled); no other "
			   "sample is dropped. Without NVML nothing is discarded and metrics.clock_sampled is 0."
			   : "No sample is discarded (no clock to sample on the CPU); metrics.clock_sampled is 0.");
	kb_jw_kstr(&w, "primaryStatistic", "median");
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "correctness");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "reference", reference);
	kb_jw_kstr(&w, "comparator", "allclose_by_dtype");
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "comparability");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "family", "kbench_do_bench");
	kb_jw_kstr(&w, "notes", notes);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}

static char *
implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
					const kb_backend *be, char *err, size_t errlen)
{
	kb_jw		w;
	char		name[200];
	char		title[200];

	char		desc[600];
	const char *vnote = cs->variant <= 4 ? cs->op->variant_notes[cs->variant - 1] : NULL;

	if (cs->ext)
		return kb_ext_implementation_text(cs, op_digest, req, be, err, errlen);

	/* v1 keeps the names it always had, so its history stays one implementation. */
	if (cs->cuda && cs->variant > 1)
	{
		snprintf(name, sizeof(name), "kbench-%s-cuda-v%d", cs->op->slug, cs->variant);
		snprintf(title, sizeof(title), "%s \xc2\xb7 kbench CUDA v%d", cs->op->title, cs->variant);
	}
	else
	{
		snprintf(name, sizeof(name), "kbench-%s-%s", cs->op->slug, cs->cuda ? "cuda" : "cpu");
		snprintf(title, sizeof(title), "%s \xc2\xb7 kbench %s", cs->op->title, cs->cuda ? "CUDA" : "C");
	}
	if (cs->cuda)
		snprintf(desc, sizeof(desc), "kernelindex kbench CUDA implementation (libkbench_cuda.so), built for sm_90 "
				 "with PTX for newer GPUs.%s%s%s", cs->variant > 1 ? " Kernel variant " : "",
				 cs->variant > 1 && vnote ? vnote : "", cs->variant > 1 ? "." : "");
	else
		snprintf(desc, sizeof(desc), "kernelindex kbench plain C implementation (fp32 accumulation), the cpu backend.");
	kb_jw_manifest(&w, "ImplementationRevision", name, title);
	kb_jw_kstr(&w, "description", desc);
	kb_jw_spec(&w);
	kb_jw_key(&w, "projectRevision");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "version", KB_VERSION);
#ifdef KB_GIT_COMMIT
	if (strlen(KB_GIT_COMMIT) == 40)
		kb_jw_kstr(&w, "commit", KB_GIT_COMMIT);
#endif
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "operation");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "specDigest", op_digest);
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "callable");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "language", cs->cuda ? "cuda" : "c");
	kb_jw_kstr(&w, "path", cs->cuda ? cs->op->cu_path : cs->op->c_path);
	if (cs->cuda && cs->variant > 1)
	{
		char		sym[160];

		/* the entry point called with kb_call.variant: part of the identity, so v2 is its own implementation */
		snprintf(sym, sizeof(sym), "%s/v%d", cs->op->cu_symbol, cs->variant);
		kb_jw_kstr(&w, "symbol", sym);
	}
	else if (cs->cuda)
		kb_jw_kstr(&w, "symbol", cs->op->cu_symbol);
	kb_jw_kstr(&w, "interface", "kbench");
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "support");
	kb_jw_obj(&w);
	kb_jw_key(&w, "hardwareArchitectures");
	kb_jw_arr(&w);
	if (cs->cuda)
		kb_jw_str(&w, "sm_90");
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "dtypes");
	kb_jw_arr(&w);
	for (int i = 0; i < cs->op->ndtypes; i++)
		kb_jw_str(&w, kb_dtype_name(cs->op->dtypes[i]));
	kb_jw_end_arr(&w);
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "licensing");
	kb_jw_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}

/* Integer nanoseconds for latencyNs members. */
static int64_t
ns(double v)
{
	return v < 0 ? 0 : (int64_t) llround(v);
}

static void
measurement(kb_jw *w, const char *metric, const char *unit, const char *stat, double v, int64_t count)
{
	kb_jw_obj(w);
	kb_jw_kstr(w, "metric", metric);
	kb_jw_kstr(w, "unit", unit);
	kb_jw_kstr(w, "statistic", stat);
	kb_jw_knum(w, "value", v);
	if (count > 0)
		kb_jw_kint(w, "sampleCount", count);
	kb_jw_end_obj(w);
}

static char *
run_text(const kb_case *cs, const kb_backend *be, const kb_result *res, const char *observed)
{
	kb_jw		w;
	char		name[200];
	char		title[200];
	char		bench[64];
	char		wl[120];
	char		ts[40];
	const kb_stats *st = &res->stats;
	const char *p;

	/* The workload's name without its "liger-<op>-" prefix. */
	p = strstr(res->workload_json, "\"name\":\"liger-");
	wl[0] = '\0';
	if (p)
	{
		size_t		skip = strlen("\"name\":\"liger-") + strlen(cs->op->slug) + 1;
		const char *e = strchr(p + skip, '"');

		if (e && (size_t) (e - p) > skip)
			snprintf(wl, sizeof(wl), "%.*s", (int) (e - (p + skip)), p + skip);
	}
	slugify(observed, ts, sizeof(ts));
	if (cs->ext)
	{
		/* another implementation, run by kbench: its name in the run's name and title */
		char		label[80];

		slugify(kb_ext_label(cs), label, sizeof(label));
		snprintf(name, sizeof(name), "kbench-%s-%s-%s-%s-%s-%s", cs->op->slug, kb_mode_name(cs->mode),
				 label, cs->cuda ? "cuda" : "cpu", wl, ts);
		snprintf(title, sizeof(title), "%s \xc2\xb7 %s (%s) \xc2\xb7 %s", cs->op->title, kb_ext_label(cs),
				 cs->ext == KB_EXT_PYTHON ? "python" : "library", kb_mode_name(cs->mode));
	}
	else
	{
		snprintf(name, sizeof(name), "kbench-%s-%s-%s-%s-%s", cs->op->slug, kb_mode_name(cs->mode),
				 cs->cuda ? "cuda" : "cpu", wl, ts);
		snprintf(title, sizeof(title), "%s \xc2\xb7 kbench %s \xc2\xb7 %s", cs->op->title,
				 cs->cuda ? "CUDA" : "C", kb_mode_name(cs->mode));
	}
	snprintf(bench, sizeof(bench), "%s/%s", cs->op->name, kb_mode_name(cs->mode));

	kb_jw_manifest(&w, "BenchmarkRun", name, title);
	if (res->message[0])
		kb_jw_kstr(&w, "description", res->message);
	kb_jw_spec(&w);
	kb_jw_kstr(&w, "implementationDigest", res->implementation_digest);
	kb_jw_kstr(&w, "workloadDigest", res->workload_digest);
	kb_jw_kstr(&w, "protocolDigest", res->protocol_digest);
	kb_jw_kstr(&w, "environmentDigest", res->environment_digest);
	kb_jw_kstr(&w, "status", kb_result_run_status(res));
	kb_jw_kstr(&w, "observedAt", observed);
	if (res->correctness.checked)
	{
		kb_jw_key(&w, "correctness");
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "comparator", "allclose_by_dtype");
		kb_jw_knum(&w, "maximumAbsoluteError", res->correctness.max_abs_error);
		kb_jw_knum(&w, "maximumRelativeError", res->correctness.max_rel_error);
		kb_jw_knum(&w, "matchedRatio", res->correctness.matched_ratio);
		kb_jw_end_obj(&w);
	}
	if (st->samples > 0)
	{
		kb_jw_key(&w, "timing");
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "primaryStatistic", "median");
		kb_jw_kint(&w, "samples", st->samples);
		kb_jw_key(&w, "latencyNs");
		kb_jw_obj(&w);
		kb_jw_kint(&w, "median", ns(st->median));
		kb_jw_kint(&w, "mean", ns(st->mean));
		kb_jw_kint(&w, "p05", ns(st->p05));
		kb_jw_kint(&w, "p95", ns(st->p95));
		kb_jw_kint(&w, "minimum", ns(st->minimum));
		kb_jw_kint(&w, "maximum", ns(st->maximum));
		kb_jw_kint(&w, "mad", ns(st->mad));
		kb_jw_key(&w, "confidence95");
		kb_jw_arr(&w);
		kb_jw_int(&w, ns(st->ci95_lo));
		kb_jw_int(&w, ns(st->ci95_hi));
		kb_jw_end_arr(&w);
		kb_jw_end_obj(&w);
		kb_jw_end_obj(&w);
		kb_jw_key(&w, "measurements");
		kb_jw_arr(&w);
		measurement(&w, "latency", "ns", "p20", st->p20, st->samples);
		measurement(&w, "latency", "ns", "p80", st->p80, st->samples);
		if (res->bytes > 0)
			measurement(&w, "bandwidth", "gb_per_s", "median", res->achieved_gbps, st->samples);
		if (res->flops > 0)
			measurement(&w, "throughput", "tflop_per_s", "median", res->achieved_tflops, st->samples);
		/* last, so the measurements before it keep their places */
		if (res->peak_memory_bytes > 0)
			measurement(&w, "peak_memory", "bytes", "max", (double) res->peak_memory_bytes, 0);
		kb_jw_end_arr(&w);
	}
	kb_jw_key(&w, "sourceNative");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "source", "kbench");
	kb_jw_kstr(&w, "benchmark", bench);
	kb_jw_key(&w, "metrics");
	kb_jw_obj(&w);
	kb_jw_knum(&w, "bytes", res->bytes);
	kb_jw_knum(&w, "flops", res->flops);
	if (st->samples > 0)
	{
		kb_jw_knum(&w, "achieved_gb_per_s", res->achieved_gbps);
		kb_jw_knum(&w, "achieved_tflop_per_s", res->achieved_tflops);
		kb_jw_kint(&w, "warmup_iterations", st->warmup_iterations);
		kb_jw_kint(&w, "estimate_ns", st->estimate_ns);
		kb_jw_kint(&w, "raw_samples", res->nsamples);
	}
	kb_jw_kint(&w, "discarded_throttled", st->discarded_throttled);
	kb_jw_kint(&w, "clock_sampled", st->clock_available);
	if (st->clock_available)
	{
		kb_jw_knum(&w, "sm_clock_min_mhz", st->clock_mhz_min);
		kb_jw_knum(&w, "sm_clock_default_mhz", st->clock_mhz_default);
	}
	if (cs->cuda)
	{
		kb_jw_kint(&w, "sm_count", be->info.sm_count);
		kb_jw_kint(&w, "l2_bytes", be->info.l2_bytes);
	}
	if (res->correctness.checked)
	{
		kb_jw_kint(&w, "compared_values", res->correctness.compared);
		kb_jw_knum(&w, "tolerance_ratio", res->correctness.worst_ratio);
	}
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}

/* Build, validate and digest every manifest of a finished (or failed) run. */
static void
finish_manifests(const kb_case *cs, const kb_request *req, kb_backend *be, kb_result *res,
				 double warmup_ms, double rep_ms, int64_t flush, int64_t max_samples)
{
	char		observed[96];
	char		err[512] = "";
	char	   *text;
	char	   *protocol = NULL,
			   *env = NULL,
			   *run = NULL;
	struct timespec now;
	struct tm	tm;
	bool		ok;
	kb_jw		w;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(observed, sizeof(observed), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (now.tv_nsec / 1000000));

	text = protocol_text(cs, req, warmup_ms, rep_ms, flush, max_samples);
	ok = kb_manifest_finish(text, &protocol, res->protocol_digest, err, sizeof(err));
	free(text);
	if (ok)
	{
		text = kb_environment_text(be);
		ok = kb_manifest_finish(text, &env, res->environment_digest, err, sizeof(err));
		free(text);
	}
	if (ok)
	{
		text = implementation_text(cs, res->operation_digest, req, be, err, sizeof(err));
		free(res->implementation_json);
		ok = kb_manifest_finish(text, &res->implementation_json, res->implementation_digest, err, sizeof(err));
		free(text);
	}
	if (ok)
	{
		text = run_text(cs, be, res, observed);
		ok = kb_manifest_finish(text, &run, res->run_digest, err, sizeof(err));
		free(text);
	}
	if (ok)
	{
		kb_jw_init(&w);
		kb_jw_obj(&w);
		kb_jw_key(&w, "run");
		kb_jw_json(&w, run);
		kb_jw_key(&w, "protocol");
		kb_jw_json(&w, protocol);
		kb_jw_key(&w, "environment");
		kb_jw_json(&w, env);
		kb_jw_end_obj(&w);
		res->composite_json = kb_jw_take(&w);
		if (res->composite_json)
		{
			/* The same composite check the ingest path applies. */
			ki_arena	a;
			ki_errors	errs;
			ki_value   *doc;
			ki_composite comp;

			ki_arena_init_malloc(&a);
			ki_errors_init(&errs, &a);
			doc = ki_parse(&a, res->composite_json, strlen(res->composite_json), &errs);
			if (!doc || !ki_composite_validate(&a, doc, &comp, &errs))
			{
				snprintf(err, sizeof(err), "composite rejected by the identity core: %s",
						 errs.count ? errs.items[0].message : "?");
				ok = false;
			}
			ki_arena_reset(&a);
		}
	}
	if (!ok)
	{
		res->status = KB_RUNTIME_ERROR;
		snprintf(res->message, sizeof(res->message), "%s", err);
		free(res->composite_json);
		res->composite_json = NULL;
	}
	free(protocol);
	free(env);
	free(run);
}

/* ------------------------------------------------------------ the run */

typedef struct run_state
{
	const kb_request *req;
	kb_result  *res;
	int64_t		last_progress_ns;
} run_state;

/* KB_PASSED to go on, else why to stop (cancel, deadline). */
static kb_status
poll_stop(run_state *rs)
{
	if (rs->req->cancel && *rs->req->cancel)
		return KB_CANCELED;
	if (rs->req->deadline_ns > 0 && kb_now_ns() > rs->req->deadline_ns)
	{
		if (!rs->res->message[0])
			snprintf(rs->res->message, sizeof(rs->res->message),
					 "the deadline passed between two calls");
		return KB_TIMEOUT;
	}
	return KB_PASSED;
}

static void
progress(run_state *rs, double f)
{
	int64_t		now;

	if (!rs->req->progress)
		return;
	now = kb_now_ns();
	if (f < 1.0 && now - rs->last_progress_ns < 100000000)
		return;
	rs->last_progress_ns = now;
	rs->req->progress(rs->req->progress_arg, f);
}

static double
call_timeout(const kb_request *req)
{
	if (req->deadline_ns > 0)
	{
		double		left = (double) (req->deadline_ns - kb_now_ns()) / 1e9;

		return left < 1 ? 1 : left < CALL_TIMEOUT_S ? left : CALL_TIMEOUT_S;
	}
	return CALL_TIMEOUT_S;
}

/* Map a backend return code onto a status, with the backend's message. */
static kb_status
be_status(kb_backend *be, int rc, kb_result *res, const char *what)
{
	if (rc == KBC_OK)
		return KB_PASSED;
	setmsg(res, "%s: %s", what, be->err);
	return rc == KBC_TIMEOUT ? KB_TIMEOUT : rc == KBC_NOMEM ? KB_RESOURCE_EXCEEDED : KB_RUNTIME_ERROR;
}

/* Warm up, estimate, time; fills res->samples_ns and res->stats. */
static kb_status
measure(kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res, void *flush,
		int64_t flush_bytes, double warmup_ms, double rep_ms, int64_t max_samples)
{
	run_state	rs = {req, res, 0};
	double		op_ns,
				total_ns,
				est = 0;
	int64_t		nwarm,
				nrep;
	kb_status	st;
	double	   *clk;
	int			rc;
	kb_stats   *s = &res->stats;

	/*
	 * One untimed call first, waited for, as do_bench calls fn() once before
	 * its estimate: the first call of a process pays one-time costs (lazy
	 * module loading, cuBLASLt's first heuristics) that would otherwise
	 * inflate the estimate and shrink the warm-up and repetition counts.
	 */
	if ((st = poll_stop(&rs)) != KB_PASSED)
		return st;
	rc = kb_be_call(be, c, KB_PHASE_TIMED);
	if (rc == KBC_OK)
		rc = kb_be_sync(be, call_timeout(req));
	if ((st = be_status(be, rc, res, "first call")) != KB_PASSED)
		return st;

	/* Five-call estimate, flush included (as do_bench measures it). */
	for (int i = 0; i < 5; i++)
	{
		if ((st = poll_stop(&rs)) != KB_PASSED)
			return st;
		rc = kb_be_time_one(be, c, flush, (size_t) flush_bytes, &op_ns, &total_ns, call_timeout(req));
		if ((st = be_status(be, rc, res, "estimate")) != KB_PASSED)
			return st;
		est += total_ns / 5;
	}
	if (est < 1)
		est = 1;
	s->estimate_ns = (int64_t) llround(est);
	nwarm = (int64_t) floor(warmup_ms * 1e6 / est);
	nrep = (int64_t) floor(rep_ms * 1e6 / est);
	nwarm = nwarm < 1 ? 1 : nwarm > max_samples ? max_samples : nwarm;
	nrep = nrep < 1 ? 1 : nrep > max_samples ? max_samples : nrep;
	s->warmup_iterations = nwarm;
	progress(&rs, 0.05);

	for (int64_t i = 0; i < nwarm; i++)
	{
		if ((st = poll_stop(&rs)) != KB_PASSED)
			return st;
		rc = kb_be_call(be, c, KB_PHASE_TIMED);
		if (rc == KBC_OK && (i % 16 == 15 || i == nwarm - 1))
			rc = kb_be_sync(be, call_timeout(req));
		if ((st = be_status(be, rc, res, "warm-up")) != KB_PASSED)
			return st;
		progress(&rs, 0.05 + 0.15 * (double) (i + 1) / (double) nwarm);
	}

	res->samples_ns = malloc(sizeof(double) * (size_t) nrep);
	res->sample_kept = malloc((size_t) nrep);
	clk = malloc(sizeof(double) * (size_t) nrep);
	if (!res->samples_ns || !res->sample_kept || !clk)
	{
		free(clk);
		setmsg(res, "out of host memory for %lld samples", (long long) nrep);
		return KB_RUNTIME_ERROR;
	}
	st = KB_PASSED;
	for (int64_t i = 0; i < nrep; i++)
	{
		if ((st = poll_stop(&rs)) != KB_PASSED)
			break;
		rc = kb_be_time_one(be, c, flush, (size_t) flush_bytes, &op_ns, &total_ns, call_timeout(req));
		if ((st = be_status(be, rc, res, "timed call")) != KB_PASSED)
			break;
		res->samples_ns[i] = op_ns;
		clk[i] = kb_be_clock_mhz(be);
		res->nsamples = i + 1;
		progress(&rs, 0.2 + 0.6 * (double) (i + 1) / (double) nrep);
	}

	/* Throttle filter (NVBench's rule), then the statistics of what is kept. */
	{
		double	   *kept = malloc(sizeof(double) * (size_t) (res->nsamples ? res->nsamples : 1));
		int64_t		nk = 0;

		s->clock_mhz_default = be->clock_default_mhz;
		s->clock_mhz_min = 0;
		s->clock_available = be->clock_default_mhz > 0 && res->nsamples > 0 && clk[0] > 0;
		for (int64_t i = 0; i < res->nsamples; i++)
		{
			bool		throttled = s->clock_available && clk[i] > 0 &&
				clk[i] < THROTTLE_FRACTION * be->clock_default_mhz;

			if (s->clock_available && clk[i] > 0 && (s->clock_mhz_min == 0 || clk[i] < s->clock_mhz_min))
				s->clock_mhz_min = clk[i];
			res->sample_kept[i] = !throttled;
			if (throttled)
				s->discarded_throttled++;
			else if (kept)
				kept[nk++] = res->samples_ns[i];
		}
		if (kept)
			kb_compute_stats(kept, nk, s);
		free(kept);
	}
	free(clk);
	return st;
}

kb_status
kb_run(const kb_request *req, kb_result *res)
{
	kb_case		cs;
	kb_backend	be;
	kb_call		c;
	kb_plan		plan;
	double		warmup_ms = req->warmup_ms > 0 ? req->warmup_ms : DEFAULT_WARMUP_MS;
	double		rep_ms = req->rep_ms > 0 ? req->rep_ms : DEFAULT_REP_MS;
	int64_t		flush = flush_bytes_of(req);
	int64_t		max_samples = req->max_samples > 0 ? req->max_samples : DEFAULT_MAX_SAMPLES;
	void	   *flushbuf = NULL;
	kb_status	st;
	int			rc = KBC_OK;
	int			allocated = 0;

	memset(res, 0, sizeof(*res));
	st = kb_parse_case(req, &cs, res->message, sizeof(res->message));
	if (st != KB_PASSED)
		return res->status = st;
	if (!describe_case(&cs, req, res))
		return res->status = cs.ext ? KB_INVALID_REQUEST : KB_RUNTIME_ERROR;

	if (cs.ext ? kb_ext_open(&be, &cs, req, flush) != KBC_OK : kb_be_open(&be, cs.cuda, cs.device) != KBC_OK)
	{
		if (cs.ext)
			setmsg(res, "%s", be.err);
		else
			setmsg(res, "cuda:%d is not available: %s", cs.device, be.err);
		kb_be_close(&be);
		return res->status = KB_DEVICE_UNAVAILABLE;
	}
	plan_call(&cs, &c, &plan);
	cs.op->cost(&c, &res->bytes, &res->flops);

	/* Refuse before allocating anything. */
	st = check_fit(&cs, flush, res->message, sizeof(res->message));
	if (st == KB_DEVICE_UNAVAILABLE)
	{
		kb_be_close(&be);
		return res->status = st;
	}
	if (st == KB_PASSED)
	{
		for (; allocated < c.ntensors; allocated++)
		{
			int			i = allocated;
			size_t		bytes = (size_t) (c.rows[i] * c.cols[i]) * kb_dtype_size(c.tdtype[i]);

			rc = kb_be_alloc(&be, bytes, &c.t[i]);
			if (rc == KBC_OK && plan.init[i] != KB_INIT_NONE)
				rc = kb_be_fill(&be, c.t[i], c.tdtype[i], c.rows[i], c.cols[i], plan.init[i],
								plan.scale[i], plan.modulo[i], req->seed, (uint32_t) (i + 1));
			if (rc != KBC_OK)
			{
				st = be_status(&be, rc, res, plan.name[i] ? plan.name[i] : "tensor");
				allocated++;
				break;
			}
		}
		if (st == KB_PASSED && c.ws_bytes > 0)
			st = be_status(&be, kb_be_alloc(&be, (size_t) c.ws_bytes, &c.ws), res, "workspace");
		if (st == KB_PASSED && flush > 0)
			st = be_status(&be, kb_be_alloc(&be, (size_t) flush, &flushbuf), res, "flush buffer");
		/* another implementation: its child process starts now, on the filled inputs */
		if (st == KB_PASSED && be.ext)
			st = be_status(&be, kb_ext_start(&be, &c, &plan), res, "starting the implementation");
		if (st == KB_PASSED)
		{
			rc = kb_be_call(&be, &c, KB_PHASE_PREPARE);
			if (rc == KBC_OK)
				rc = kb_be_sync(&be, call_timeout(req));
			st = be_status(&be, rc, res, "prepare");
		}
		if (st == KB_PASSED)
			st = measure(&be, &c, req, res, flushbuf, flush, warmup_ms, rep_ms, max_samples);
		/* peak memory of the call: kbench's own allocate exactly the call's tensors and workspace */
		if (st == KB_PASSED && be.ext)
			st = be_status(&be, kb_ext_peak_memory(&be, &res->peak_memory_bytes), res, "peak memory");
		else if (st == KB_PASSED)
			res->peak_memory_bytes = call_bytes(&c);
		if (st == KB_PASSED && req->check)
		{
			if (cs.op->check(&be, &c, &plan, &res->correctness) != 0)
				st = be_status(&be, KBC_ERROR, res, "reading outputs");
			else if (res->correctness.matched_ratio < 1.0)
			{
				st = KB_INCORRECT_NUMERICAL;
				setmsg(res, "outputs differ from the float64 reference: %s", res->correctness.detail);
			}
		}
		else if (st == KB_PASSED)
			setmsg(res, "not checked against the float64 reference (check: false): the run is filed as "
				   "incomplete_evidence and does not compete");
		if (res->stats.samples > 0)
		{
			res->achieved_gbps = res->bytes / res->stats.median;	/* bytes/ns = GB/s */
			res->achieved_tflops = res->flops / res->stats.median / 1e3;
		}
	}
	/* a child stopped by a cancel inside its call: canceled, as between calls */
	if (be.ext && st != KB_PASSED && req->cancel && *req->cancel)
		st = KB_CANCELED;
	if (st == KB_RESOURCE_EXCEEDED && !res->message[0])
		setmsg(res, "out of device memory");
	res->status = st;
	if (st != KB_CANCELED)
		finish_manifests(&cs, req, &be, res, warmup_ms, rep_ms, flush, max_samples);
	else
		setmsg(res, "canceled");

	for (int i = 0; i < allocated; i++)
		kb_be_free(&be, c.t[i]);
	kb_be_free(&be, c.ws);
	kb_be_free(&be, flushbuf);
	kb_be_close(&be);
	if (req->progress && res->status != KB_CANCELED)
		req->progress(req->progress_arg, 1.0);
	return res->status;
}

/* The status the run is filed under: a run whose outputs were not checked has no evidence that
 * it is correct (incomplete_evidence), so it cannot compete; otherwise the result's status. */
const char *
kb_result_run_status(const kb_result *r)
{
	if (r->status == KB_PASSED && !r->correctness.checked)
		return "incomplete_evidence";
	return kb_status_name(r->status);
}
