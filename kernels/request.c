/*
 * request.c: the public entry points around a request and its result
 * (kb_request_init, kb_check, kb_validate_request, kb_free_result) and the
 * status a result is filed under.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

void
kb_request_init(kb_request *r)
{
	memset(r, 0, sizeof(*r));
	r->flush_bytes = -1;
	r->check = 1;
}

void
kb_request_for(kb_request *r, const char *op, const char *mode, const char *axes_json,
			   const char *impl, const char *device)
{
	kb_request_init(r);
	r->op = op;
	r->mode = mode;
	r->axes_json = axes_json;
	r->impl = impl;
	r->device = device;
}

void
kb_setmsg(kb_result *res, const char *fmt,...)
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

kb_status
kb_check(const kb_request *req, char *errbuf, size_t errlen)
{
	kb_case		cs;
	kb_status	st = kb_parse_case(req, &cs, errbuf, errlen);

	if (st != KB_PASSED)
		return st;
	if ((st = kb_check_numerics(&cs, errbuf, errlen)) != KB_PASSED)
		return st;
	{
		kb_protocol pr;

		kb_protocol_of(req, cs.cuda, &pr);
		st = kb_check_fit(&cs, pr.flush, errbuf, errlen);
	}
	if (st == KB_PASSED && errbuf && errlen)
		errbuf[0] = '\0';
	return st;
}


kb_status
kb_check_request(const char *op, const char *mode, const char *axes_json,
				 const char *impl, const char *device, char *errbuf, size_t errlen)
{
	kb_request	r;

	kb_request_for(&r, op, mode, axes_json ? axes_json : "{}", impl, device);
	return kb_check(&r, errbuf, errlen);
}

kb_status
kb_validate_request(const char *op, const char *mode, const char *axes_json,
					const char *impl, const char *device, char *errbuf, size_t errlen)
{
	kb_request	r;
	kb_case		cs;
	kb_status	st;

	kb_request_for(&r, op, mode, axes_json ? axes_json : "{}", impl, device);
	st = kb_parse_case(&r, &cs, errbuf, errlen);
	if (st == KB_PASSED && errbuf && errlen)
		errbuf[0] = '\0';
	return st;
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
