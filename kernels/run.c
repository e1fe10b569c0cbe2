/*
 * run.c: kb_run: parse the case, open the backend, allocate and fill the
 * tensors, measure (measure.c), check the outputs against the float64
 * reference before anything is reported, and build the manifests
 * (manifests.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

#define DEFAULT_WARMUP_MS 25.0
#define DEFAULT_REP_MS 100.0
#define DEFAULT_MAX_SAMPLES 100000

kb_status
kb_run(const kb_request *req, kb_result *res)
{
	kb_case		cs;
	kb_backend	be;
	kb_call		c;
	kb_plan		plan;
	double		warmup_ms = req->warmup_ms > 0 ? req->warmup_ms : DEFAULT_WARMUP_MS;
	double		rep_ms = req->rep_ms > 0 ? req->rep_ms : DEFAULT_REP_MS;
	int64_t		flush = kb_flush_bytes(req);
	int64_t		max_samples = req->max_samples > 0 ? req->max_samples : DEFAULT_MAX_SAMPLES;
	void	   *flushbuf = NULL;
	kb_status	st;
	int			rc = KBC_OK;
	int			allocated = 0;

	memset(res, 0, sizeof(*res));
	st = kb_parse_case(req, &cs, res->message, sizeof(res->message));
	if (st != KB_PASSED)
		return res->status = st;
	if (!kb_describe_case(&cs, req, res))
		return res->status = cs.ext ? KB_INVALID_REQUEST : KB_RUNTIME_ERROR;

	if (cs.ext ? kb_ext_open(&be, &cs, req, flush) != KBC_OK : kb_be_open(&be, cs.cuda, cs.device) != KBC_OK)
	{
		if (cs.ext)
			kb_setmsg(res, "%s", be.err);
		else
			kb_setmsg(res, "cuda:%d is not available: %s", cs.device, be.err);
		kb_be_close(&be);
		return res->status = KB_DEVICE_UNAVAILABLE;
	}
	kb_plan_call(&cs, &c, &plan);
	if (!kb_case_cost(&cs, &res->bytes, &res->flops, res->message, sizeof(res->message)))
	{
		kb_be_close(&be);
		return res->status = KB_RUNTIME_ERROR;
	}

	/* Refuse before allocating anything. */
	st = kb_check_fit(&cs, flush, res->message, sizeof(res->message));
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
				st = kb_be_status(&be, rc, res, plan.name[i] ? plan.name[i] : "tensor");
				allocated++;
				break;
			}
		}
		if (st == KB_PASSED && c.ws_bytes > 0)
			st = kb_be_status(&be, kb_be_alloc(&be, (size_t) c.ws_bytes, &c.ws), res, "workspace");
		if (st == KB_PASSED && flush > 0)
			st = kb_be_status(&be, kb_be_alloc(&be, (size_t) flush, &flushbuf), res, "flush buffer");
		/* another implementation: its child process starts now, on the filled inputs */
		if (st == KB_PASSED && be.ext)
			st = kb_be_status(&be, kb_ext_start(&be, &c, &plan), res, "starting the implementation");
		if (st == KB_PASSED)
		{
			rc = kb_be_call(&be, &c, KB_PHASE_PREPARE);
			if (rc == KBC_OK)
				rc = kb_be_sync(&be, kb_call_timeout(req));
			st = kb_be_status(&be, rc, res, "prepare");
		}
		if (st == KB_PASSED)
			st = kb_measure(&be, &c, req, res, flushbuf, flush, warmup_ms, rep_ms, max_samples);
		/* peak memory of the call: kbench's own allocate exactly the call's tensors and workspace */
		if (st == KB_PASSED && be.ext)
			st = kb_be_status(&be, kb_ext_peak_memory(&be, &res->peak_memory_bytes), res, "peak memory");
		else if (st == KB_PASSED)
			res->peak_memory_bytes = kb_call_bytes(&c);
		if (st == KB_PASSED && req->check)
		{
			if (cs.op->check(&be, &c, &plan, &res->correctness) != 0)
				st = kb_be_status(&be, KBC_ERROR, res, "reading outputs");
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
	}
	/* a child stopped by a cancel inside its call: canceled, as between calls */
	if (be.ext && st != KB_PASSED && req->cancel && *req->cancel)
		st = KB_CANCELED;
	if (st == KB_RESOURCE_EXCEEDED && !res->message[0])
		kb_setmsg(res, "out of device memory");
	res->status = st;
	if (st != KB_CANCELED)
		kb_finish_manifests(&cs, req, &be, res, warmup_ms, rep_ms, flush, max_samples);
	else
		kb_setmsg(res, "canceled");

	for (int i = 0; i < allocated; i++)
		kb_be_free(&be, c.t[i]);
	kb_be_free(&be, c.ws);
	kb_be_free(&be, flushbuf);
	kb_be_close(&be);
	if (req->progress && res->status != KB_CANCELED)
		req->progress(req->progress_arg, 1.0);
	return res->status;
}
