/*
 * estimate.c: a job's expected duration at queue time.
 *
 *   ki_job_estimate       seconds the job is expected to take on its device:
 *                         kb_estimate_seconds with the time of one call from
 *                         the device's last run of the same workload and
 *                         implementation when the catalog has one (the
 *                         worker publishes its environment's digest), else
 *                         the cost model (kernels/estimate.c)
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"
#include "estimate.h"
#include "protocol.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "../kernels/kbench.h"

/* The environment digest a device's worker last ran in, or "". */
static void
device_environment(const char *device, char *digest, size_t len)
{
	digest[0] = '\0';
	if (ki_shared == NULL)
		return;
	LWLockAcquire(ki_shared->lock, LW_SHARED);
	for (int i = 0; i < ki_shared->nslots; i++)
		if (strcmp(ki_shared->slots[i].device, device) == 0 && ki_shared->slots[i].env_digest[0])
			strlcpy(digest, ki_shared->slots[i].env_digest, len);
	LWLockRelease(ki_shared->lock);
}

/* The time of a call from a past run of workload and implementation in env (sql/code/30_runner.sql), or 0.  Connected to SPI. */
static double
past_call_ns(const char *workload, const char *implementation, const char *env)
{
	Oid			types[3] = {TEXTOID, TEXTOID, TEXTOID};
	Datum		args[3] = {CStringGetTextDatum(workload), CStringGetTextDatum(implementation),
	CStringGetTextDatum(env)};
	bool		isnull;
	double		v = 0;

	if (SPI_execute_with_args("SELECT _kernelindex.past_call_ns($1, $2, $3)", 3, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read past runs");
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			v = DatumGetFloat8(d);
	}
	return v;
}

double
ki_job_estimate(const char *op, const char *mode, const char *workload, const char *impl,
				const char *device, const char *protocol, char *how, size_t howlen)
{
	kb_request	req;
	char		env[72];
	double		per_call = 0;

	kb_request_for(&req, op, mode, workload, impl, device);
	ki_resolve_request(&req, op);	/* a registered name's entry */
	if (protocol)
		ki_protocol_apply_text(&req, protocol);
	device_environment(device, env, sizeof(env));
	if (env[0])
	{
		kb_result	res;

		if (kb_describe(&req, &res) == KB_PASSED)
		{
			int			nest = ki_pin_search_path();

			SPI_connect();
			per_call = past_call_ns(res.workload_digest, res.implementation_digest, env);
			SPI_finish();
			ki_unpin_search_path(nest);
		}
		kb_free_result(&res);
	}
	return kb_estimate_seconds(&req, per_call, how, howlen);
}
