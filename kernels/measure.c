/*
 * measure.c: the measurement loop.  It follows triton.testing.do_bench as
 * Liger uses it (warm-up and repetition times turned into iteration counts
 * from a five-call estimate, the cache flushed before every timed call
 * outside the timed region, one timer pair per call), keeps every raw
 * sample, and drops samples taken while the SM clock was throttled
 * (counted).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

#define THROTTLE_FRACTION 0.75
#define CALL_TIMEOUT_S 120.0

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

double
kb_call_timeout(const kb_request *req)
{
	if (req->deadline_ns > 0)
	{
		double		left = (double) (req->deadline_ns - kb_now_ns()) / 1e9;

		return left < 1 ? 1 : left < CALL_TIMEOUT_S ? left : CALL_TIMEOUT_S;
	}
	return CALL_TIMEOUT_S;
}

/* Map a backend return code onto a status, with the backend's message. */
kb_status
kb_be_status(kb_backend *be, int rc, kb_result *res, const char *what)
{
	if (rc == KBC_OK)
		return KB_PASSED;
	kb_setmsg(res, "%s: %s", what, be->err);
	return rc == KBC_TIMEOUT ? KB_TIMEOUT : rc == KBC_NOMEM ? KB_RESOURCE_EXCEEDED : KB_RUNTIME_ERROR;
}

/* Warm up, estimate, time; fills res->samples_ns and res->stats. */
kb_status
kb_measure(kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res, void *flush,
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
		rc = kb_be_sync(be, kb_call_timeout(req));
	if ((st = kb_be_status(be, rc, res, "first call")) != KB_PASSED)
		return st;

	/* Five-call estimate, flush included (as do_bench measures it). */
	for (int i = 0; i < 5; i++)
	{
		if ((st = poll_stop(&rs)) != KB_PASSED)
			return st;
		rc = kb_be_time_one(be, c, flush, (size_t) flush_bytes, &op_ns, &total_ns, kb_call_timeout(req));
		if ((st = kb_be_status(be, rc, res, "estimate")) != KB_PASSED)
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
			rc = kb_be_sync(be, kb_call_timeout(req));
		if ((st = kb_be_status(be, rc, res, "warm-up")) != KB_PASSED)
			return st;
		progress(&rs, 0.05 + 0.15 * (double) (i + 1) / (double) nwarm);
	}

	res->samples_ns = malloc(sizeof(double) * (size_t) nrep);
	res->sample_kept = malloc((size_t) nrep);
	clk = malloc(sizeof(double) * (size_t) nrep);
	if (!res->samples_ns || !res->sample_kept || !clk)
	{
		free(clk);
		kb_setmsg(res, "out of host memory for %lld samples", (long long) nrep);
		return KB_RUNTIME_ERROR;
	}
	st = KB_PASSED;
	for (int64_t i = 0; i < nrep; i++)
	{
		if ((st = poll_stop(&rs)) != KB_PASSED)
			break;
		rc = kb_be_time_one(be, c, flush, (size_t) flush_bytes, &op_ns, &total_ns, kb_call_timeout(req));
		if ((st = kb_be_status(be, rc, res, "timed call")) != KB_PASSED)
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
