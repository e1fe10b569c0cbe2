/*
 * manifests.c: the manifests of a request (kb_describe) and of a run
 * (protocol, environment, implementation, run, and the composite), each
 * validated, normalized and digested by the identity core.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kb_int.h"
#include "opdef.h"
#ifndef KB_VERSION
#error "KB_VERSION is set by kernels/Makefile from kernelindex.control"
#endif
#include "ki_json.h"

#if __has_include("build/kb_git.h")
#include "build/kb_git.h"
#endif

/* Operation and workload manifests of a parsed case. */
static char *implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
								 const kb_backend *be, char *err, size_t errlen);

bool
kb_describe_case(const kb_case *cs, const kb_request *req, kb_result *res)
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
	if (!kb_describe_case(&cs, req, res))
		res->status = cs.ext ? KB_INVALID_REQUEST : KB_RUNTIME_ERROR;
	/* the floors of one call, as a run reports them (and SQL's kbench_operation_costs) */
	else if (!kb_case_cost(&cs, &res->bytes, &res->flops, res->message, sizeof(res->message)))
		res->status = KB_RUNTIME_ERROR;
	return res->status;
}

int
kb_describe_tensors(const kb_request *req, kb_tensor_desc *out, int max, int64_t *workspace_bytes,
					char *err, size_t errlen)
{
	kb_case		cs;
	kb_call		c;
	kb_plan		p;

	if (kb_parse_case(req, &cs, err, errlen) != KB_PASSED)
		return -1;
	memset(&c, 0, sizeof(c));
	memset(&p, 0, sizeof(p));
	kb_plan_call(&cs, &c, &p);
	if (c.ntensors > max)
	{
		snprintf(err, errlen, "the call has %d tensors, more than %d", c.ntensors, max);
		return -1;
	}
	for (int i = 0; i < c.ntensors; i++)
	{
		out[i].name = p.name[i] ? p.name[i] : "?";
		out[i].rows = c.rows[i];
		out[i].cols = c.cols[i];
		out[i].dtype = kb_dtype_name(c.tdtype[i]);
		out[i].role = p.is_output[i] ? "output" : p.init[i] != KB_INIT_NONE ? "input" : "scratch";
	}
	if (workspace_bytes)
		*workspace_bytes = c.ws_bytes;
	return c.ntensors;
}

/* ------------------------------------------------------------ manifests of a run */

static char *
protocol_text(const kb_case *cs, const kb_request *req, const kb_protocol *pr)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		name[200];
	char		title[200];
	char		notes[1600];
	char		stopping[400];
	char		maxt[40];
	char		reference[500];
	const char *timer = pr->cuda_graph ? "cuda_graph_events" : cs->cuda ? "cuda_events" : "clock_monotonic";

	snprintf(name, sizeof(name), "kbench-%s-%s-%s", cs->cuda ? "cuda" : "cpu", cs->op->slug, kb_mode_name(cs->mode));
	snprintf(title, sizeof(title), "kbench protocol \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s",
			 cs->op->name, kb_mode_name(cs->mode), pr->cuda_graph ? "CUDA graphs" : cs->cuda ? "CUDA events" : "CPU monotonic clock");
	if (pr->max_ms > 0)
		snprintf(maxt, sizeof(maxt), "%g", pr->max_ms);
	else
		snprintf(maxt, sizeof(maxt), "4x the minimum's time");
	if (pr->adaptive)
		snprintf(stopping, sizeof(stopping),
				 " Adaptive stop after that minimum: stdev/mean <= %g%% (noise_target), or steady within 10%% "
				 "over 4 checks under %g%% (converged), else max samples or %s%s (max_time): unstable.",
				 pr->noise_target * 100, pr->noise_ceiling * 100, maxt, pr->max_ms > 0 ? " ms" : "");
	else
		stopping[0] = '\0';
	if (pr->cuda_graph)
		snprintf(notes, sizeof(notes),
				 "Timed: %s. In CUDA graphs: a sample is one graph of up to %d calls (%g ms by the five-call "
				 "estimate), each after a clear of a %lld-byte buffer%s, timed by an event pair, less a graph of the "
				 "clears alone, over its calls; warm-up %g ms (calls), repetition %g ms (graphs), at least %lld and "
				 "at most %lld samples; %d input sets cycled (counter-based generator, set 0 seed %llu, the others "
				 "per run); the last call of %d random graphs checked on its inputs. Reported: median, p20, p80, "
				 "mean, min, max, MAD, 95%% CI of the median; raw samples kept.%s",
				 cs->op->timed[cs->mode], KB_GRAPH_MAX_CALLS, KB_GRAPH_NS / 1e6, (long long) pr->flush,
				 req->flush_bytes >= 0 || pr->flush == 0 ? "" : " (the GPU default)", pr->warmup_ms, pr->rep_ms,
				 (long long) pr->min_samples, (long long) pr->max_samples, KB_INPUT_SETS,
				 (unsigned long long) req->seed, KB_CHECKED_CALLS, stopping);
	else
	snprintf(notes, sizeof(notes),
			 "Timed: %s. do_bench-compatible: warm-up %g ms and repetition %g ms turned into iteration "
			 "counts from a five-call estimate (flush included), at least %lld and at most %lld samples; "
			 "a %lld-byte buffer%s cleared before every timed call outside the timed region; %s per call; "
			 "%d input sets cycled (counter-based generator, set 0 seed %llu, the others seeded per run); "
			 "%d random timed calls checked on their own inputs as they return. Reported: median, p20, p80, "
			 "mean, min, max, MAD, 95%% CI of the median; raw samples kept.%s",
			 cs->op->timed[cs->mode], pr->warmup_ms, pr->rep_ms, (long long) pr->min_samples,
			 (long long) pr->max_samples, (long long) pr->flush,
			 req->flush_bytes >= 0 || pr->flush == 0 ? "" : cs->cuda ? " (the GPU default)" : " (twice the CPU's largest cache)",
			 cs->cuda ? "one CUDA event pair" : "one CLOCK_MONOTONIC pair",
			 KB_INPUT_SETS, (unsigned long long) req->seed, KB_CHECKED_CALLS, stopping);
	if (cs->op->def)
		snprintf(reference, sizeof(reference),
				 "python float64 reference (kernels/python/kbench_reference.py, %s) on the same inputs, computed "
				 "in the implementation's child; pass when every returned output and gradient is within "
				 "rtol |ref| + atol rms(ref) of the definition's tolerance for the dtype (%s); "
				 "metrics.tolerance_ratio is the worst error over its tolerance.", cs->op->def->reference,
				 cs->op->def->file);
	else
		snprintf(reference, sizeof(reference),
				 "C float64 reference (%s) on the same inputs, all rows or a deterministic sample of rows; "
				 "pass when every compared value is within a tolerance derived from the output dtype and the "
				 "terms it sums (kernelindex docs/KERNELS.md, Tolerances); metrics.tolerance_ratio is the "
				 "worst error over its tolerance.", cs->op->c_path);

	kb_text_open(&t);
	ki_jw_manifest(w, "BenchmarkProtocol", name, title);
	ki_jw_spec(w);
	ki_jw_key(w, "harness");
	ki_jw_obj(w);
	ki_jw_kstr(w, "name", "kbench");
	ki_jw_kstr(w, "version", KB_VERSION);
	ki_jw_end_obj(w);
	ki_jw_key(w, "measurement");
	ki_jw_obj(w);
	ki_jw_kstr(w, "timer", timer);
	ki_jw_kstr(w, "synchronization", pr->cuda_graph ? "event_synchronize_per_graph" : cs->cuda ? "event_synchronize_per_sample" : "blocking_call");
	ki_jw_key(w, "compileIncluded");
	ki_jw_bool(w, false);
	ki_jw_key(w, "setupIncluded");
	ki_jw_bool(w, false);
	ki_jw_kint(w, "warmupDuration", (int64_t) llround(pr->warmup_ms * 1e6));
	ki_jw_kstr(w, "inputRegeneration", "rotating_sets");
	ki_jw_kstr(w, "outlierPolicy", cs->cuda
			   ? "Samples taken while the SM clock (NVML, read after each sample) was below 75% of its default "
			   "application clock are discarded and counted (sourceNative.metrics.discarded_throttled); no other "
			   "sample is dropped. Without NVML nothing is discarded and metrics.clock_sampled is 0."
			   : "No sample is discarded (no clock to sample on the CPU); metrics.clock_sampled is 0.");
	ki_jw_kstr(w, "primaryStatistic", "median");
	ki_jw_end_obj(w);
	ki_jw_key(w, "correctness");
	ki_jw_obj(w);
	ki_jw_kstr(w, "reference", reference);
	ki_jw_kstr(w, "comparator", "allclose_by_dtype");
	ki_jw_end_obj(w);
	ki_jw_key(w, "comparability");
	ki_jw_obj(w);
	ki_jw_kstr(w, "family", "kbench_do_bench");
	ki_jw_kstr(w, "notes", notes);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

static char *
implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
					const kb_backend *be, char *err, size_t errlen)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		desc[600];
	const char *vnote;

	if (cs->ext)
		return kb_ext_implementation_text(cs, op_digest, req, be, err, errlen);

	vnote = cs->variant >= 1 && cs->variant <= 4 ? cs->op->variant_notes[cs->variant - 1] : NULL;
	if (cs->cuda)
		snprintf(desc, sizeof(desc), "kernelindex kbench CUDA implementation (libkbench_cuda.so), built for sm_90 "
				 "with PTX for newer GPUs.%s%s%s", cs->variant > 1 ? " Kernel variant " : "",
				 cs->variant > 1 && vnote ? vnote : "", cs->variant > 1 ? "." : "");
	else
		snprintf(desc, sizeof(desc), "kernelindex kbench plain C implementation (fp32 accumulation), the cpu backend.");
	kb_text_open(&t);
	/* name, title and symbol: the one mapping of implementation names (impl_name.c) */
	ki_jw_manifest(w, "ImplementationRevision", cs->impl.name, cs->impl.title);
	ki_jw_kstr(w, "description", desc);
	ki_jw_spec(w);
	ki_jw_key(w, "projectRevision");
	ki_jw_obj(w);
	ki_jw_kstr(w, "version", KB_VERSION);
#ifdef KB_GIT_COMMIT
	if (strlen(KB_GIT_COMMIT) == 40)
		ki_jw_kstr(w, "commit", KB_GIT_COMMIT);
#endif
	ki_jw_end_obj(w);
	ki_jw_key(w, "operation");
	ki_jw_obj(w);
	ki_jw_kstr(w, "specDigest", op_digest);
	ki_jw_end_obj(w);
	ki_jw_key(w, "callable");
	ki_jw_obj(w);
	ki_jw_kstr(w, "language", cs->cuda ? "cuda" : "c");
	ki_jw_kstr(w, "path", cs->cuda ? cs->op->cu_path : cs->op->c_path);
	if (cs->cuda)
		ki_jw_kstr(w, "symbol", cs->impl.symbol);
	ki_jw_kstr(w, "interface", "kbench");
	ki_jw_end_obj(w);
	ki_jw_key(w, "support");
	ki_jw_obj(w);
	ki_jw_key(w, "hardwareArchitectures");
	ki_jw_arr(w);
	if (cs->cuda)
		ki_jw_str(w, "sm_90");
	ki_jw_end_arr(w);
	ki_jw_key(w, "dtypes");
	ki_jw_arr(w);
	for (int i = 0; i < cs->op->ndtypes; i++)
		ki_jw_str(w, kb_dtype_name(cs->op->dtypes[i]));
	ki_jw_end_arr(w);
	ki_jw_end_obj(w);
	ki_jw_key(w, "licensing");
	ki_jw_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* Integer nanoseconds for latencyNs members. */
static int64_t
ns(double v)
{
	return v < 0 ? 0 : (int64_t) llround(v);
}

static void
measurement(ki_jw *w, const char *metric, const char *unit, const char *stat, double v, int64_t count)
{
	ki_jw_obj(w);
	ki_jw_kstr(w, "metric", metric);
	ki_jw_kstr(w, "unit", unit);
	ki_jw_kstr(w, "statistic", stat);
	ki_jw_knum(w, "value", v);
	if (count > 0)
		ki_jw_kint(w, "sampleCount", count);
	ki_jw_end_obj(w);
}

static char *
run_text(const kb_case *cs, const kb_backend *be, const kb_result *res, const char *observed)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
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
	kb_slug(observed, ts, sizeof(ts), '-');
	if (cs->ext)
	{
		/* another implementation, run by kbench: its name in the run's name and title */
		char		label[80];

		kb_slug(kb_ext_label(cs), label, sizeof(label), '-');
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

	kb_text_open(&t);
	ki_jw_manifest(w, "BenchmarkRun", name, title);
	if (st->samples > 0 && st->stop_rule)
	{
		/* how the sampling stopped: a string, which the schema allows only in labels */
		ki_jw_key(w, "labels");
		ki_jw_obj(w);
		ki_jw_kstr(w, "stop_rule", st->stop_rule);
		ki_jw_end_obj(w);
	}
	if (res->message[0])
		ki_jw_kstr(w, "description", res->message);
	ki_jw_spec(w);
	ki_jw_kstr(w, "implementationDigest", res->implementation_digest);
	ki_jw_kstr(w, "workloadDigest", res->workload_digest);
	ki_jw_kstr(w, "protocolDigest", res->protocol_digest);
	ki_jw_kstr(w, "environmentDigest", res->environment_digest);
	ki_jw_kstr(w, "status", kb_result_run_status(res));
	ki_jw_kstr(w, "observedAt", observed);
	if (res->correctness.checked)
	{
		ki_jw_key(w, "correctness");
		ki_jw_obj(w);
		ki_jw_kstr(w, "comparator", "allclose_by_dtype");
		ki_jw_knum(w, "maximumAbsoluteError", res->correctness.max_abs_error);
		ki_jw_knum(w, "maximumRelativeError", res->correctness.max_rel_error);
		ki_jw_knum(w, "matchedRatio", res->correctness.matched_ratio);
		ki_jw_end_obj(w);
	}
	if (st->samples > 0)
	{
		ki_jw_key(w, "timing");
		ki_jw_obj(w);
		ki_jw_kstr(w, "primaryStatistic", "median");
		ki_jw_kint(w, "samples", st->samples);
		ki_jw_key(w, "latencyNs");
		ki_jw_obj(w);
		ki_jw_kint(w, "median", ns(st->median));
		ki_jw_kint(w, "mean", ns(st->mean));
		ki_jw_kint(w, "p05", ns(st->p05));
		ki_jw_kint(w, "p95", ns(st->p95));
		ki_jw_kint(w, "minimum", ns(st->minimum));
		ki_jw_kint(w, "maximum", ns(st->maximum));
		ki_jw_kint(w, "mad", ns(st->mad));
		ki_jw_key(w, "confidence95");
		ki_jw_arr(w);
		ki_jw_int(w, ns(st->ci95_lo));
		ki_jw_int(w, ns(st->ci95_hi));
		ki_jw_end_arr(w);
		ki_jw_end_obj(w);
		ki_jw_end_obj(w);
		ki_jw_key(w, "measurements");
		ki_jw_arr(w);
		measurement(w, "latency", "ns", "p20", st->p20, st->samples);
		measurement(w, "latency", "ns", "p80", st->p80, st->samples);
		if (res->bytes > 0)
			measurement(w, "bandwidth", "gb_per_s", "median", res->achieved_gbps, st->samples);
		if (res->flops > 0)
			measurement(w, "throughput", "tflop_per_s", "median", res->achieved_tflops, st->samples);
		/* last, so the measurements before it keep their places */
		if (res->peak_memory_bytes > 0)
			measurement(w, "peak_memory", "bytes", "max", (double) res->peak_memory_bytes, 0);
		ki_jw_end_arr(w);
	}
	ki_jw_key(w, "sourceNative");
	ki_jw_obj(w);
	ki_jw_kstr(w, "source", "kbench");
	ki_jw_kstr(w, "benchmark", bench);
	ki_jw_key(w, "metrics");
	ki_jw_obj(w);
	ki_jw_knum(w, "bytes", res->bytes);
	ki_jw_knum(w, "flops", res->flops);
	if (st->samples > 0)
	{
		ki_jw_knum(w, "achieved_gb_per_s", res->achieved_gbps);
		ki_jw_knum(w, "achieved_tflop_per_s", res->achieved_tflops);
		ki_jw_kint(w, "warmup_iterations", st->warmup_iterations);
		if (st->graph_calls > 0)
			ki_jw_kint(w, "graph_calls", st->graph_calls);
		ki_jw_kint(w, "estimate_ns", st->estimate_ns);
		ki_jw_kint(w, "raw_samples", res->nsamples);
		ki_jw_knum(w, "noise_stdrel", st->stdrel);
		ki_jw_kint(w, "unstable", st->unstable);
	}
	ki_jw_kint(w, "discarded_throttled", st->discarded_throttled);
	ki_jw_kint(w, "clock_sampled", st->clock_available);
	if (st->clock_available)
	{
		ki_jw_knum(w, "sm_clock_min_mhz", st->clock_mhz_min);
		ki_jw_knum(w, "sm_clock_default_mhz", st->clock_mhz_default);
	}
	if (cs->cuda)
	{
		ki_jw_kint(w, "sm_count", be->info.sm_count);
		ki_jw_kint(w, "l2_bytes", be->info.l2_bytes);
	}
	if (res->input_sets > 0)
		ki_jw_kint(w, "input_sets", res->input_sets);
	if (res->ncheck_calls > 0)
	{
		/* the timed calls the guard checked (measure.c), drawn with getrandom() for this run */
		ki_jw_kint(w, "checked_calls", res->ncheck_calls);
		for (int i = 0; i < res->ncheck_calls; i++)
		{
			char		key[32];

			snprintf(key, sizeof(key), "checked_call_%d", i + 1);
			ki_jw_kint(w, key, res->check_calls[i]);
		}
	}
	if (res->call_overhead_ns > 0)
		ki_jw_kint(w, "call_overhead_ns", ns(res->call_overhead_ns));
	if (res->correctness.checked)
	{
		ki_jw_kint(w, "compared_values", res->correctness.compared);
		ki_jw_knum(w, "tolerance_ratio", res->correctness.worst_ratio);
	}
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* Build, validate and digest every manifest of a finished (or failed) run. */
void
kb_finish_manifests(const kb_case *cs, const kb_request *req, kb_backend *be, kb_result *res,
					const kb_protocol *pr)
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
	kb_text		t;
	ki_jw	   *w = &t.w;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(observed, sizeof(observed), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (now.tv_nsec / 1000000));

	text = protocol_text(cs, req, pr);
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
		kb_text_open(&t);
		ki_jw_obj(w);
		ki_jw_key(w, "run");
		ki_jw_json(w, run);
		ki_jw_key(w, "protocol");
		ki_jw_json(w, protocol);
		ki_jw_key(w, "environment");
		ki_jw_json(w, env);
		ki_jw_end_obj(w);
		res->composite_json = kb_text_take(&t);
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
