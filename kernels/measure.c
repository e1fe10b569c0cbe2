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
#include <sys/random.h>

#include "kb_int.h"
#include "opdef.h"

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

/* ------------------------------------------------------------ the guard (kb_int.h, kb_guard) */

/* 64 bits from getrandom(): what the implementation cannot know in advance. */
static uint64_t
random64(void)
{
	uint64_t	v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t) sizeof(v))
		v = (uint64_t) kb_now_ns() * 0x9E3779B97F4A7C15ull;
	return v;
}

static size_t
tensor_bytes(const kb_call *c, int i)
{
	return (size_t) (c->rows[i] * c->cols[i]) * kb_dtype_size(c->tdtype[i]);
}

kb_status
kb_guard_open(kb_guard *g, kb_backend *be, const kb_case *cs, kb_call *c, kb_plan *plan,
			  uint64_t seed, double timeout_s, kb_result *res)
{
	/*
	 * What a prepare call leaves for the timed calls (layer_norm backward's
	 * mean and rstd: neither input nor output) follows the inputs: where the
	 * call is passed its pointers (kbench's own cpu and cuda), each set has
	 * its own, made by a prepare call on that set.  A child's implementation
	 * keeps its own state and is told of each change (its inputs op).
	 */
	bool		state = !be->ops->inputs;

	memset(g, 0, sizeof(*g));
	g->op = cs->op;
	g->plan = plan;
	g->c = c;
	g->nsets = 1;
	g->seed[0] = seed;
	for (int i = 0; i < c->ntensors; i++)
		g->set[0][i] = c->t[i];
	res->input_sets = 1;
	for (int k = 1; k < KB_INPUT_SETS; k++)
	{
		int			rc = KBC_OK;

		g->seed[k] = random64();
		g->nsets = k + 1;		/* what is allocated is freed by kb_guard_close */
		for (int i = 0; i < c->ntensors; i++)
		{
			bool		input = plan->init[i] != KB_INIT_NONE;

			g->set[k][i] = c->t[i];
			if (!c->t[i] || !(input || (state && !plan->is_output[i])))
				continue;
			g->set[k][i] = NULL;
			rc = kb_be_alloc(be, tensor_bytes(c, i), &g->set[k][i]);
			if (rc == KBC_OK && input)
				rc = kb_be_fill(be, g->set[k][i], c->tdtype[i], c->rows[i], c->cols[i], plan->init[i],
								plan->scale[i], plan->modulo[i], g->seed[k], (uint32_t) (i + 1));
			if (rc != KBC_OK)
				return kb_be_status(be, rc, res, "input set");
		}
		if (state)
		{
			for (int i = 0; i < c->ntensors; i++)
				c->t[i] = g->set[k][i];
			rc = kb_be_call(be, c, KB_PHASE_PREPARE);
			if (rc == KBC_OK)
				rc = kb_be_sync(be, timeout_s);
			for (int i = 0; i < c->ntensors; i++)
				c->t[i] = g->set[0][i];
			if (rc != KBC_OK)
				return kb_be_status(be, rc, res, "prepare of an input set");
		}
	}
	res->input_sets = g->nsets;
	return KB_PASSED;
}

void
kb_guard_close(kb_guard *g, kb_backend *be)
{
	if (!g->c)
		return;
	for (int i = 0; i < g->c->ntensors; i++)
		g->c->t[i] = g->set[0][i];
	for (int k = 1; k < g->nsets; k++)
		for (int i = 0; i < g->c->ntensors; i++)
			if (g->set[k][i] && g->set[k][i] != g->set[0][i])
				kb_be_free(be, g->set[k][i]);
	for (int i = 0; i < KB_MAX_TENSORS; i++)
		free(g->host[i]);
	memset(g, 0, sizeof(*g));
}

/* Point the call at input set k and tell the implementation (untimed). */
static kb_status
guard_use(kb_meter *m, int k)
{
	kb_guard   *g = m->guard;

	if (!g || g->nsets < 2 || k == g->current)
		return KB_PASSED;
	for (int i = 0; i < g->c->ntensors; i++)
		g->c->t[i] = g->set[k][i];
	g->current = k;
	if (m->be->ops->inputs)
		return kb_be_status(m->be, m->be->ops->inputs(m->be, g->c), m->res, "changing the inputs");
	return KB_PASSED;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* Choose the timed calls to check among the first n, with getrandom(), before any is made. */
void
kb_meter_choose(kb_meter *m, int64_t n)
{
	kb_guard   *g = m->guard;

	if (!g)
		return;
	g->nat = 0;
	if (n <= KB_CHECKED_CALLS)
		for (int64_t j = 0; j < n; j++)
			g->at[g->nat++] = j;
	else
		while (g->nat < KB_CHECKED_CALLS)
		{
			int64_t		j = (int64_t) (random64() % (uint64_t) n);
			bool		dup = false;

			for (int k = 0; k < g->nat; k++)
				dup |= g->at[k] == j;
			if (!dup)
				g->at[g->nat++] = j;
		}
	qsort(g->at, (size_t) g->nat, sizeof(int64_t), cmp_i64);
}

/* Reads a host copy (the guard's check of a captured call). */
static int
host_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	(void) be;
	memcpy(dst, src, bytes);
	return KBC_OK;
}

static const kb_backend_ops host_ops = {.name = "host", .to_host = host_to_host};

/* A checked call's comparison: recorded, and a difference fails the run naming the call. */
static kb_status
guard_verdict(kb_meter *m, int64_t j, const kb_correctness *corr)
{
	kb_guard   *g = m->guard;
	kb_result  *res = m->res;

	if (res->ncheck_calls < (int) (sizeof(res->check_calls) / sizeof(res->check_calls[0])))
		res->check_calls[res->ncheck_calls++] = j;
	if (corr->matched_ratio < 1.0)
	{
		kb_setmsg(res, "timed %s %lld (input set %d of %d) differs from the float64 reference for its own "
				  "inputs (its outputs do not follow its inputs, or the work was skipped on this call or "
				  "finished after it returned): %s", m->graph_calls > 0 ? "graph's last call, graph" : "call",
				  (long long) j, g->current, g->nsets, corr->detail);
		return KB_INCORRECT_NUMERICAL;
	}
	return KB_PASSED;
}

/*
 * Timed call j (0-based) has just returned: when it is one of the chosen,
 * copy its outputs to the host at once (then its inputs) and check them
 * against the reference for the inputs it was given.
 */
static kb_status
guard_check(kb_meter *m, int64_t j)
{
	kb_guard   *g = m->guard;
	kb_result  *res = m->res;
	kb_call		hc;
	kb_backend	hb;
	kb_correctness corr;
	bool		due = false;

	if (!g || !m->req->check)
		return KB_PASSED;
	for (int k = 0; k < g->nat; k++)
		due |= g->at[k] == j;
	if (!due)
		return KB_PASSED;
	memset(&corr, 0, sizeof(corr));
	if (g->op->def)
	{
		/*
		 * An operation defined as data: its python reference runs in the
		 * implementation's child (opdef.c), which reads this call's outputs
		 * back now and compares them with the reference for the input set
		 * the call was given (the child's current set).  Where there is no
		 * python child the check after the last call refuses the run.
		 */
		if (!kb_opdef_checkable(m->be))
			return KB_PASSED;
		if (g->op->check(m->be, g->c, g->plan, &corr) != 0)
		{
			kb_setmsg(res, "checking timed call %lld: %s", (long long) j, m->be->err);
			return m->be->req && kb_req_stopping(m->be->req) ? KB_CANCELED : KB_RUNTIME_ERROR;
		}
		return guard_verdict(m, j, &corr);
	}
	hc = *g->c;
	/* outputs first: the moment the call returned (a child's are read back with the first) */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < g->c->ntensors; i++)
		{
			size_t		bytes = tensor_bytes(g->c, i);

			if ((g->plan->init[i] != KB_INIT_NONE) != (pass == 1) || !g->c->t[i])
				continue;
			if (!g->host[i] && !(g->host[i] = malloc(bytes ? bytes : 1)))
			{
				kb_setmsg(res, "out of host memory for a copy of timed call %lld", (long long) j);
				return KB_RUNTIME_ERROR;
			}
			if (kb_be_to_host(m->be, g->host[i], g->c->t[i], bytes) != KBC_OK)
				return kb_be_status(m->be, KBC_ERROR, res, "reading a checked call's outputs");
			hc.t[i] = g->host[i];
		}
	memset(&hb, 0, sizeof(hb));
	hb.ops = &host_ops;
	hb.req = m->be->req;		/* the check's reads poll the cancel (kb_fetch_rows) */
	if (g->op->check(&hb, &hc, g->plan, &corr) != 0)
	{
		kb_setmsg(res, "checking timed call %lld: %s", (long long) j, hb.err);
		return m->be->req && kb_req_stopping(m->be->req) ? KB_CANCELED : KB_RUNTIME_ERROR;
	}
	return guard_verdict(m, j, &corr);
}

/* After the timed calls: back to set 0 and one untimed call, so the last call's check reads set 0 as ever. */
kb_status
kb_meter_settle(kb_meter *m)
{
	kb_status	st;
	int			rc;

	if (!m->guard || m->guard->current == 0)
		return KB_PASSED;
	if ((st = guard_use(m, 0)) != KB_PASSED)
		return st;
	rc = kb_be_call(m->be, m->c, KB_PHASE_TIMED);
	if (rc == KBC_OK)
		rc = kb_be_sync(m->be, kb_call_timeout(m->req));
	return kb_be_status(m->be, rc, m->res, "the call after the timing");
}

/* kbench's own cost of a call (a child's empty round trip), before the timing: reported, not in the samples. */
static kb_status
measure_overhead(kb_meter *m)
{
	double		ns = 0;

	if (!m->be->ops->overhead)
		return KB_PASSED;
	if (kb_be_status(m->be, m->be->ops->overhead(m->be, &ns), m->res, "an empty call") != KB_PASSED)
		return m->res->status = KB_RUNTIME_ERROR;
	m->res->call_overhead_ns = ns;
	return KB_PASSED;
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

int64_t
kb_graph_calls(double call_ns)
{
	double		n = call_ns > 0 ? floor(KB_GRAPH_NS / call_ns) : KB_GRAPH_MAX_CALLS;

	return n < 1 ? 1 : n > KB_GRAPH_MAX_CALLS ? KB_GRAPH_MAX_CALLS : (int64_t) n;
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
	if (m->pr.cuda_graph)
	{
		/* a sample is a graph of graph_calls calls and their clears: the counts are of graphs */
		m->graph_calls = kb_graph_calls(m->call_ns);
		m->est_ns = est * (double) m->graph_calls;
	}
	m->nrep = (int64_t) floor(m->pr.rep_ms * 1e6 / m->est_ns);
	m->nwarm = m->nwarm < 1 ? 1 : m->nwarm > m->pr.max_samples ? m->pr.max_samples : m->nwarm;
	/* at least the protocol's minimum of samples, however long a call is */
	m->nrep = m->nrep < m->pr.min_samples ? m->pr.min_samples : m->nrep > m->pr.max_samples ? m->pr.max_samples : m->nrep;
	s->warmup_iterations = m->nwarm;
	kb_meter_choose(m, m->nrep);
	return measure_overhead(m);
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
		if ((st = guard_use(m, m->guard ? (int) ((first + i) % m->guard->nsets) : 0)) != KB_PASSED)
			break;
		rc = m->graph_calls > 0
			? kb_be_time_graph(m->be, m->c, m->graph_calls, m->flush, (size_t) m->pr.flush, &op_ns, &total_ns,
							   kb_call_timeout(m->req))
			: kb_be_time_one(m->be, m->c, m->flush, (size_t) m->pr.flush, &op_ns, &total_ns, kb_call_timeout(m->req));
		if ((st = kb_be_status(m->be, rc, res, m->graph_calls > 0 ? "timed graph" : "timed call")) != KB_PASSED)
			break;
		res->samples_ns[first + i] = op_ns;
		m->clk[first + i] = kb_be_clock_mhz(m->be);
		res->sample_kept[first + i] = 1;
		res->nsamples = first + i + 1;
		if ((st = guard_check(m, first + i)) != KB_PASSED)
			break;
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
	s->graph_calls = m->graph_calls;
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
		   void *flush, const kb_protocol *pr, kb_guard *guard)
{
	kb_meter	m;
	kb_status	st;

	kb_meter_init(&m, be, c, req, res, rep, flush, pr);
	m.guard = guard;
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
	if (st == KB_PASSED)
		st = kb_meter_settle(&m);
	kb_meter_finish(&m);
	return st;
}
