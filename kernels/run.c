/*
 * run.c: kb_run: parse the case, open the backend, allocate and fill the
 * tensors, measure (measure.c), check the outputs against the float64
 * reference before anything is reported, and build the manifests
 * (manifests.c).  The steps around the measurement are a session
 * (kb_session_open / _finish / _close), which a paired comparison
 * (compare.c) opens twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

/* A cancel seen between two steps of the setup: where it stopped. */
static kb_status
setup_canceled(kb_result *res, const char *step)
{
	kb_setmsg(res, "canceled during the setup, before %s", step);
	return res->status = KB_CANCELED;
}

kb_status
kb_session_open(kb_session *s, const kb_request *req, kb_result *res, kb_reporter *rep)
{
	kb_case    *cs = &s->cs;
	kb_backend *be = &s->be;
	kb_call    *c = &s->c;
	kb_plan    *plan = &s->plan;
	kb_status	st;
	int			rc = KBC_OK;

	memset(s, 0, sizeof(*s));
	memset(res, 0, sizeof(*res));
	s->req = req;
	s->res = res;
	s->rep = rep;
	s->final = true;
	st = kb_parse_case(req, cs, res->message, sizeof(res->message));
	if (st == KB_PASSED)
		st = kb_check_numerics(cs, res->message, sizeof(res->message));
	if (st != KB_PASSED)
		return res->status = st;
	kb_protocol_of(req, cs->cuda, &s->pr);
	if (!kb_describe_case(cs, req, res))
		return res->status = cs->ext ? KB_INVALID_REQUEST : KB_RUNTIME_ERROR;

	kb_report(rep, KB_RUN_SETUP, 0, -1);
	if (kb_be_open(be, cs, req, s->pr.flush) != KBC_OK)
	{
		kb_setmsg(res, "%s", be->err);
		kb_be_close(be);
		return res->status = KB_DEVICE_UNAVAILABLE;
	}
	s->opened = true;
	s->final = false;
	kb_plan_call(cs, c, plan);
	if (!kb_case_cost(cs, &res->bytes, &res->flops, res->message, sizeof(res->message)))
	{
		kb_be_close(be);
		s->opened = false;
		s->final = true;
		return res->status = KB_RUNTIME_ERROR;
	}

	/* Refuse before allocating anything. */
	st = kb_check_fit(cs, s->pr.flush, res->message, sizeof(res->message));
	if (st == KB_DEVICE_UNAVAILABLE)
	{
		kb_be_close(be);
		s->opened = false;
		s->final = true;
		return res->status = st;
	}
	if (st != KB_PASSED)
		return st;
	for (; s->allocated < c->ntensors; s->allocated++)
	{
		int			i = s->allocated;
		size_t		bytes = (size_t) (c->rows[i] * c->cols[i]) * kb_dtype_size(c->tdtype[i]);

		/* a cancel reaches every step of the setup (issue 29), the fill inside too (fill.c) */
		if (kb_req_stopping(req))
			return setup_canceled(res, "allocating the inputs");

		rc = kb_be_alloc(be, bytes, &c->t[i]);
		if (rc == KBC_OK && plan->init[i] != KB_INIT_NONE)
			rc = kb_be_fill(be, c->t[i], c->tdtype[i], c->rows[i], c->cols[i], plan->init[i],
							plan->scale[i], plan->modulo[i], req->seed, (uint32_t) (i + 1));
		if (rc != KBC_OK)
		{
			st = kb_be_status(be, rc, res, plan->name[i] ? plan->name[i] : "tensor");
			s->allocated++;
			return st;
		}
	}
	if (c->ws_bytes > 0 && (st = kb_be_status(be, kb_be_alloc(be, (size_t) c->ws_bytes, &c->ws), res, "workspace")) != KB_PASSED)
		return st;
	if (s->pr.flush > 0 &&
		(st = kb_be_status(be, kb_be_alloc(be, (size_t) s->pr.flush, &s->flushbuf), res, "flush buffer")) != KB_PASSED)
		return st;
	if (kb_req_stopping(req))
		return setup_canceled(res, "starting the implementation");
	/* another implementation: its child process starts now, on the filled inputs */
	if ((st = kb_be_status(be, kb_be_start(be, c, plan), res, "starting the implementation")) != KB_PASSED)
		return st;
	rc = kb_be_call(be, c, KB_PHASE_PREPARE);
	if (rc == KBC_OK)
		rc = kb_be_sync(be, kb_call_timeout(req));
	if ((st = kb_be_status(be, rc, res, "prepare")) != KB_PASSED)
		return st;
	if (kb_req_stopping(req))
		return setup_canceled(res, "generating the other input sets");
	/* the other input sets the timed calls cycle through (measure.c, the guard) */
	return kb_guard_open(&s->guard, be, cs, c, plan, req->seed, kb_call_timeout(req), res);
}

/* Append "; text" (or text) to a result's message. */
static void
add_note(kb_result *res, const char *text)
{
	size_t		n = strlen(res->message);

	snprintf(res->message + n, sizeof(res->message) - n, "%s%s", n ? "; " : "", text);
}

kb_status
kb_session_finish(kb_session *s, kb_status st)
{
	kb_backend *be = &s->be;
	kb_result  *res = s->res;
	const kb_request *req = s->req;

	if (s->final)
		return res->status;
	/* a cancel that came with the last timed call: not on to the check (issue 29) */
	if (st == KB_PASSED && kb_req_stopping(req))
		st = KB_CANCELED;
	if (st == KB_PASSED)
		kb_report(s->rep, KB_RUN_CHECKING, 0.8, 2 * (res->stats.estimate_ns > 0 ? (double) res->stats.estimate_ns : 0) / 1e9);
	/* peak memory of the call, one rule for every kind (docs/KERNELS.md, "Peak memory"): the
	 * inputs and the outputs compared, plus what the implementation allocates as far as it is
	 * known (kbench's own: its workspace) */
	if (st == KB_PASSED && be->ops->peak_memory)
		st = kb_be_status(be, be->ops->peak_memory(be, &res->peak_memory_bytes), res, "peak memory");
	else if (st == KB_PASSED)
		res->peak_memory_bytes = kb_call_io_bytes(&s->c, &s->plan) + s->c.ws_bytes;
	if (st == KB_PASSED && req->check)
	{
		if (s->cs.op->check(be, &s->c, &s->plan, &res->correctness) != 0)
		{
			/* a cancel while checking (a C check between rows, the python child's reference) */
			st = kb_req_stopping(req) ? KB_CANCELED : kb_be_status(be, KBC_ERROR, res, "reading outputs");
			if (st == KB_CANCELED)
				kb_setmsg(res, "canceled while checking against the float64 reference");
		}
		else if (res->correctness.matched_ratio < 1.0)
		{
			st = KB_INCORRECT_NUMERICAL;
			kb_setmsg(res, "outputs differ from the float64 reference: %s", res->correctness.detail);
		}
	}
	else if (st == KB_PASSED)
		kb_setmsg(res, "not checked against the float64 reference (check: false): the run is filed as "
				  "incomplete_evidence and does not compete");
	if (res->stats.samples > 0)
	{
		res->achieved_gbps = res->bytes / res->stats.median;	/* bytes/ns = GB/s */
		res->achieved_tflops = res->flops / res->stats.median / 1e3;
	}
	/* a child stopped by a cancel inside its call, or a setup step (a fill) that
	 * stopped for one: canceled, as between calls */
	if (st != KB_PASSED && kb_req_stopping(req) && (be->ops->cancel_inside_call || st != KB_INCORRECT_NUMERICAL))
		st = KB_CANCELED;
	if (st == KB_RESOURCE_EXCEEDED && !res->message[0])
		kb_setmsg(res, "out of device memory");
	/* an honest run says when it has fewer samples than the protocol's minimum */
	if (st != KB_CANCELED && res->stats.samples > 0 && res->stats.samples < KB_MIN_SAMPLES)
	{
		char		note[200];

		snprintf(note, sizeof(note), "only %lld samples, fewer than the protocol's minimum of %d (%s)",
				 (long long) res->stats.samples, KB_MIN_SAMPLES,
				 s->pr.max_samples < KB_MIN_SAMPLES ? "max_samples is below it" :
				 s->pr.min_samples < KB_MIN_SAMPLES ? "min_samples is below it" : "the run was cut short");
		add_note(res, note);
	}
	res->status = st;
	if (st != KB_CANCELED)
		kb_finish_manifests(&s->cs, req, be, res, &s->pr);
	else if (!strstr(res->message, "canceled"))
		kb_setmsg(res, "canceled");		/* else it says where: in the setup, in the fill (fill.c) */
	return res->status;
}

void
kb_session_close(kb_session *s)
{
	if (s->opened)
		kb_guard_close(&s->guard, &s->be);
	for (int i = 0; i < s->allocated; i++)
		kb_be_free(&s->be, s->c.t[i]);
	if (s->opened)
	{
		kb_be_free(&s->be, s->c.ws);
		kb_be_free(&s->be, s->flushbuf);
		kb_be_close(&s->be);
	}
	s->allocated = 0;
	s->opened = false;
}

kb_status
kb_run(const kb_request *req, kb_result *res)
{
	kb_session	s;
	kb_reporter rep = {req, 0, 0};
	kb_status	st = kb_session_open(&s, req, res, &rep);

	if (s.final)
		return st;
	if (st == KB_PASSED)
		st = kb_measure(&s.be, &s.c, req, res, &rep, s.flushbuf, &s.pr, &s.guard);
	kb_session_finish(&s, st);
	kb_session_close(&s);
	/* done: a run that stopped early keeps the phase and progress where it stopped */
	if (res->status == KB_PASSED)
		kb_report(&rep, KB_RUN_CHECKING, 1.0, 0);
	return res->status;
}
