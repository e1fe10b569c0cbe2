/*
 * measure.c: the measurement loop.  It follows triton.testing.do_bench as
 * Liger uses it (warm-up and repetition times turned into iteration counts
 * from a five-call estimate, the cache flushed before every timed call
 * outside the timed region, one timer pair per call), takes at least the
 * protocol's minimum of samples (KB_MIN_SAMPLES) however long a call is,
 * keeps every raw sample, and drops samples taken while the SM clock was
 * throttled (counted).  In steps (kb_meter), so that a paired comparison
 * (compare.c) can interleave two implementations' samples.  A run's
 * sampling stops adaptively by default (kb_meter_adaptive, kb_stop_rule):
 * the rep_ms count is then the minimum, not the whole.
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
/* adaptive stopping: checks the stdrel must have held steady over, and how steady (relative spread) */
#define CONVERGE_CHECKS 4
#define CONVERGE_SPREAD 0.10

const char *
kb_run_phase_name(kb_run_phase p)
{
	switch (p)
	{
		case KB_RUN_SETUP:
			return "setup";
		case KB_RUN_WARMUP:
			return "warm-up";
		case KB_RUN_SAMPLING:
			return "sampling";
		case KB_RUN_CHECKING:
			return "checking";
	}
	return "?";
}

void
kb_report(kb_reporter *r, kb_run_phase phase, double fraction, double rest_s)
{
	int64_t		now;
	kb_progress p;

	if (!r || !r->req->progress)
		return;
	now = kb_now_ns();
	if (phase == r->last_phase && fraction < 1.0 && now - r->last_ns < 100000000)
		return;
	r->last_ns = now;
	r->last_phase = phase;
	p.phase = phase;
	p.fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
	p.rest_s = rest_s;
	r->req->progress(r->req->progress_arg, &p);
}

/* KB_PASSED to go on, else why to stop (cancel, deadline). */
static kb_status
poll_stop(const kb_request *req, kb_result *res)
{
	if (kb_req_stopping(req))
		return KB_CANCELED;
	if (req->deadline_ns > 0 && kb_now_ns() > req->deadline_ns)
	{
		if (!res->message[0])
			snprintf(res->message, sizeof(res->message), "the deadline passed between two calls");
		return KB_TIMEOUT;
	}
	return KB_PASSED;
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

void
kb_meter_init(kb_meter *m, kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res,
			  kb_reporter *rep, void *flush, const kb_protocol *pr)
{
	memset(m, 0, sizeof(*m));
	m->be = be;
	m->c = c;
	m->req = req;
	m->res = res;
	m->rep = rep;
	m->flush = flush;
	m->pr = *pr;
	m->rest_after = -1;
}

/* Seconds left in a step after i of n calls of cost each, plus what follows the step. */
static double
rest_of(const kb_meter *m, int64_t i, int64_t n, double cost_ns)
{
	if (m->rest_after < 0)
		return -1;
	return (double) (n - i) * cost_ns / 1e9 + m->rest_after;
}

kb_status
kb_meter_start(kb_meter *m)
{
	double		op_ns,
				total_ns,
				est = 0,
				op = 0;
	kb_status	st;
	int			rc;
	kb_stats   *s = &m->res->stats;

	/*
	 * One untimed call first, waited for, as do_bench calls fn() once before
	 * its estimate: the first call of a process pays one-time costs (lazy
	 * module loading, cuBLASLt's first heuristics) that would otherwise
	 * inflate the estimate and shrink the warm-up and repetition counts.
	 */
	kb_report(m->rep, KB_RUN_WARMUP, m->f0, -1);
	if ((st = poll_stop(m->req, m->res)) != KB_PASSED)
		return st;
	rc = kb_be_call(m->be, m->c, KB_PHASE_TIMED);
	if (rc == KBC_OK)
		rc = kb_be_sync(m->be, kb_call_timeout(m->req));
	if ((st = kb_be_status(m->be, rc, m->res, "first call")) != KB_PASSED)
		return st;

	/* Five-call estimate, flush included (as do_bench measures it). */
	for (int i = 0; i < 5; i++)
	{
		if ((st = poll_stop(m->req, m->res)) != KB_PASSED)
			return st;
		rc = kb_be_time_one(m->be, m->c, m->flush, (size_t) m->pr.flush, &op_ns, &total_ns, kb_call_timeout(m->req));
		if ((st = kb_be_status(m->be, rc, m->res, "estimate")) != KB_PASSED)
			return st;
		est += total_ns / 5;
		op += op_ns / 5;
	}
	if (est < 1)
		est = 1;
	m->est_ns = est;
	m->call_ns = op > 0 ? op : 1;
	s->estimate_ns = (int64_t) llround(est);
	m->nwarm = (int64_t) floor(m->pr.warmup_ms * 1e6 / est);
	m->nrep = (int64_t) floor(m->pr.rep_ms * 1e6 / est);
	m->nwarm = m->nwarm < 1 ? 1 : m->nwarm > m->pr.max_samples ? m->pr.max_samples : m->nwarm;
	/* at least the protocol's minimum of samples, however long a call is */
	m->nrep = m->nrep < m->pr.min_samples ? m->pr.min_samples : m->nrep > m->pr.max_samples ? m->pr.max_samples : m->nrep;
	s->warmup_iterations = m->nwarm;
	return KB_PASSED;
}

kb_status
kb_meter_warm(kb_meter *m)
{
	kb_status	st;
	int			rc;

	for (int64_t i = 0; i < m->nwarm; i++)
	{
		if ((st = poll_stop(m->req, m->res)) != KB_PASSED)
			return st;
		rc = kb_be_call(m->be, m->c, KB_PHASE_TIMED);
		if (rc == KBC_OK && (i % 16 == 15 || i == m->nwarm - 1))
			rc = kb_be_sync(m->be, kb_call_timeout(m->req));
		if ((st = kb_be_status(m->be, rc, m->res, "warm-up")) != KB_PASSED)
			return st;
		kb_report(m->rep, KB_RUN_WARMUP, m->f0 + (m->f1 - m->f0) * (double) (i + 1) / (double) m->nwarm,
				  rest_of(m, i + 1, m->nwarm, m->call_ns));
	}
	return KB_PASSED;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

kb_status
kb_meter_sample(kb_meter *m, int64_t n, double *block_median)
{
	kb_result  *res = m->res;
	int64_t		first = res->nsamples;
	kb_status	st = KB_PASSED;
	double		op_ns,
				total_ns;
	int			rc;

	if (block_median)
		*block_median = NAN;
	if (first + n > m->cap)
	{
		int64_t		cap = first + n > 2 * m->cap ? first + n : 2 * m->cap;
		double	   *s = realloc(res->samples_ns, sizeof(double) * (size_t) cap);
		unsigned char *k = s ? realloc(res->sample_kept, (size_t) cap) : NULL;
		double	   *clk = k ? realloc(m->clk, sizeof(double) * (size_t) cap) : NULL;

		if (s)
			res->samples_ns = s;
		if (k)
			res->sample_kept = k;
		if (clk)
			m->clk = clk;
		if (!s || !k || !clk)
		{
			kb_setmsg(res, "out of host memory for %lld samples", (long long) cap);
			return KB_RUNTIME_ERROR;
		}
		m->cap = cap;
	}
	kb_report(m->rep, KB_RUN_SAMPLING, m->f0, rest_of(m, 0, n, m->est_ns));
	for (int64_t i = 0; i < n; i++)
	{
		if ((st = poll_stop(m->req, res)) != KB_PASSED)
			break;
		rc = kb_be_time_one(m->be, m->c, m->flush, (size_t) m->pr.flush, &op_ns, &total_ns, kb_call_timeout(m->req));
		if ((st = kb_be_status(m->be, rc, res, "timed call")) != KB_PASSED)
			break;
		res->samples_ns[first + i] = op_ns;
		m->clk[first + i] = kb_be_clock_mhz(m->be);
		res->sample_kept[first + i] = 1;
		res->nsamples = first + i + 1;
		kb_report(m->rep, KB_RUN_SAMPLING, m->f0 + (m->f1 - m->f0) * (double) (i + 1) / (double) n,
				  rest_of(m, i + 1, n, m->est_ns));
	}
	if (block_median && res->nsamples > first)
	{
		/* the median of the block's samples taken at full clock (all of them when none was) */
		int64_t		nb = res->nsamples - first,
					nk = 0;
		double	   *v = malloc(sizeof(double) * (size_t) nb);

		if (v)
		{
			for (int64_t i = first; i < res->nsamples; i++)
				if (!(m->be->clock_default_mhz > 0 && m->clk[i] > 0 &&
					  m->clk[i] < THROTTLE_FRACTION * m->be->clock_default_mhz))
					v[nk++] = res->samples_ns[i];
			if (nk == 0)
				for (int64_t i = first; i < res->nsamples; i++)
					v[nk++] = res->samples_ns[i];
			qsort(v, (size_t) nk, sizeof(double), cmp_double);
			*block_median = kb_quantile(v, nk, 0.5);
			free(v);
		}
	}
	return st;
}

void
kb_meter_finish(kb_meter *m)
{
	kb_result  *res = m->res;
	kb_stats   *s = &res->stats;
	kb_backend *be = m->be;

	/* Throttle filter (NVBench's rule), then the statistics of what is kept. */
	double	   *kept = malloc(sizeof(double) * (size_t) (res->nsamples ? res->nsamples : 1));
	int64_t		nk = 0;

	s->clock_mhz_default = be->clock_default_mhz;
	s->clock_mhz_min = 0;
	s->clock_available = be->clock_default_mhz > 0 && res->nsamples > 0 && m->clk && m->clk[0] > 0;
	for (int64_t i = 0; i < res->nsamples; i++)
	{
		bool		throttled = s->clock_available && m->clk[i] > 0 &&
			m->clk[i] < THROTTLE_FRACTION * be->clock_default_mhz;

		if (s->clock_available && m->clk[i] > 0 && (s->clock_mhz_min == 0 || m->clk[i] < s->clock_mhz_min))
			s->clock_mhz_min = m->clk[i];
		res->sample_kept[i] = !throttled;
		if (throttled)
			s->discarded_throttled++;
		else if (kept)
			kept[nk++] = res->samples_ns[i];
	}
	if (kept)
		kb_compute_stats(kept, nk, s);
	free(kept);
	free(m->clk);
	m->clk = NULL;
	s->stop_rule = m->stop_rule ? m->stop_rule : "fixed";
	s->unstable = m->stop_rule && (strcmp(m->stop_rule, "max_time") == 0 || strcmp(m->stop_rule, "max_samples") == 0);
}

/* ------------------------------------------------------------ adaptive stopping */

/*
 * The stop rule, checked after each block once the minimum (the rep_ms
 * count, at least min_samples) is taken, in this order:
 *   noise_target  stdrel is at or below the target;
 *   converged     stdrel has held within CONVERGE_SPREAD of itself over the
 *                 last CONVERGE_CHECKS checks and is below the ceiling (10 x
 *                 the target): more samples would not make it smaller;
 *   max_samples   the protocol's max_samples are taken;
 *   max_time      the sampling phase has run max_ms (the protocol's, else 4
 *                 times what the minimum took), or one more block would
 *                 run into the request's deadline (a run the fixed count
 *                 would have finished is not failed by the extension).
 * The last two stop a run whose noise never settled: it is unstable.
 * history holds the stdrel of the last nhistory checks, this one last.
 */
const char *
kb_stop_rule(const kb_protocol *pr, double stdrel, const double *history, int nhistory,
			 int64_t nsamples, double elapsed_ms, double max_ms)
{
	if (nsamples >= 2 && stdrel <= pr->noise_target)	/* one sample has no noise to speak of */
		return "noise_target";
	if (nsamples >= 2 && nhistory >= CONVERGE_CHECKS && stdrel <= pr->noise_ceiling)
	{
		double		lo = history[nhistory - 1],
					hi = lo;

		for (int i = nhistory - CONVERGE_CHECKS; i < nhistory; i++)
		{
			lo = history[i] < lo ? history[i] : lo;
			hi = history[i] > hi ? history[i] : hi;
		}
		if (hi - lo <= CONVERGE_SPREAD * stdrel)
			return "converged";
	}
	if (nsamples >= pr->max_samples)
		return "max_samples";
	if (elapsed_ms >= max_ms)
		return "max_time";
	return NULL;
}

/* stdrel of the samples so far taken at full clock (all of them when none was) */
static double
noise_so_far(const kb_meter *m)
{
	const kb_result *res = m->res;
	double	   *v = malloc(sizeof(double) * (size_t) (res->nsamples ? res->nsamples : 1));
	int64_t		nk = 0;
	double		r;

	if (!v)
		return kb_stdrel(res->samples_ns, res->nsamples);
	for (int64_t i = 0; i < res->nsamples; i++)
		if (!(m->be->clock_default_mhz > 0 && m->clk[i] > 0 &&
			  m->clk[i] < THROTTLE_FRACTION * m->be->clock_default_mhz))
			v[nk++] = res->samples_ns[i];
	r = nk > 1 ? kb_stdrel(v, nk) : kb_stdrel(res->samples_ns, res->nsamples);
	free(v);
	return r;
}

kb_status
kb_meter_adaptive(kb_meter *m)
{
	int64_t		t0 = kb_now_ns();
	int64_t		block = m->nrep / 4 > 3 ? m->nrep / 4 : 3;
	double		history[CONVERGE_CHECKS];
	double		max_ms;
	int			nh = 0;
	kb_status	st;

	/* the minimum: the rep_ms count (at least min_samples), as a fixed run takes */
	st = kb_meter_sample(m, m->nrep, NULL);
	m->f0 = m->f1;				/* the blocks after the minimum: progress holds */
	max_ms = m->pr.max_ms > 0 ? m->pr.max_ms : 4 * (double) (kb_now_ns() - t0) / 1e6;
	while (st == KB_PASSED)
	{
		double		r = noise_so_far(m);
		int64_t		n;

		if (nh == CONVERGE_CHECKS)
		{
			memmove(history, history + 1, sizeof(double) * (CONVERGE_CHECKS - 1));
			nh--;
		}
		history[nh++] = r;
		m->stop_rule = kb_stop_rule(&m->pr, r, history, nh, m->res->nsamples,
									 (double) (kb_now_ns() - t0) / 1e6, max_ms);
		if (!m->stop_rule && m->req->deadline_ns > 0 &&
			(double) (m->req->deadline_ns - kb_now_ns()) < 2 * (double) block * m->est_ns + 2 * m->call_ns + 1e9)
			m->stop_rule = "max_time";
		if (m->stop_rule)
			break;
		n = m->pr.max_samples - m->res->nsamples;
		st = kb_meter_sample(m, n < block ? n : block, NULL);
	}
	return st;
}

kb_status
kb_measure(kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res, kb_reporter *rep,
		   void *flush, const kb_protocol *pr)
{
	kb_meter	m;
	kb_status	st;

	kb_meter_init(&m, be, c, req, res, rep, flush, pr);
	m.f0 = 0.05;
	m.f1 = 0.05;
	st = kb_meter_start(&m);
	if (st == KB_PASSED)
	{
		/* what is left: the samples, then the check (about two calls) */
		m.f0 = 0.05;
		m.f1 = 0.2;
		m.rest_after = ((double) m.nrep * m.est_ns + 2 * m.call_ns) / 1e9;
		st = kb_meter_warm(&m);
	}
	if (st == KB_PASSED)
	{
		m.f0 = 0.2;
		m.f1 = 0.8;
		m.rest_after = 2 * m.call_ns / 1e9;
		st = m.pr.adaptive ? kb_meter_adaptive(&m) : kb_meter_sample(&m, m.nrep, NULL);
	}
	kb_meter_finish(&m);
	return st;
}
