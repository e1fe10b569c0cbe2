/*
 * fleet.c: the server side of kbench agents (sql/85_fleet.sql,
 * kernels/agent/, docs/FLEET.md).
 *
 *   kernelindex.agent_lease        how long an agent may stay silent before
 *                                  its job is recovered
 *   kbench__require_safe_schema()  the agents' claim refuses, as the
 *                                  worker's does, while others may create
 *                                  objects in the extension's schema
 *   kbench__take_pending_cancel(job)  a cancelled kbench_wait's request,
 *                                  for the heartbeat of the agent running it
 *   ki_agent_route(device)         for kbench_run: the agent device that a
 *                                  job's device ("cuda:H200", "agent:gpu-07")
 *                                  reaches, if any
 *   kernelindex.agent_devices_per_role, kernelindex.agent_devices
 *                                  how many devices agents may register, per
 *                                  role and in all (kbench_agent_register)
 *   kbench__job_manifests(...)     what a job's run must name: its workload's
 *                                  and operation's digests and the built-in
 *                                  implementation's manifest (kb_describe),
 *                                  for kbench_agent_finish's checks
 *   kbench__set_storing_job(job), kbench__storing_job()
 *                                  the job whose run this backend stores now
 *                                  (set by kbench_agent_finish and the
 *                                  worker, reset at the transaction's end):
 *                                  a confirmation rerun is judged by its job
 *                                  (sql/51_confirmations.sql)
 */
#include "kernelindex.h"
#include "fleet.h"
#include "implementations.h"
#include "runner.h"
#include "security.h"
#include "worker.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "funcapi.h"

#include "../kernels/kbench.h"

int			ki_agent_lease_s = 30;
int			ki_agent_devices_per_role = 64;
int			ki_agent_devices = 1024;

/* The job whose run this backend is storing (0: none); see kbench__storing_job. */
static int64 storing_job = 0;
static bool storing_callback = false;

static void
storing_xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		storing_job = 0;
}

void
ki_set_storing_job(int64 job)
{
	if (!storing_callback)
	{
		RegisterXactCallback(storing_xact_callback, NULL);
		storing_callback = true;
	}
	storing_job = job;
}

void
ki_fleet_init(void)
{
	DefineCustomIntVariable("kernelindex.agent_lease",
							"How long a kbench agent may go without a heartbeat before its job is recovered.",
							"The job is then re-queued when it may retry, else failed with the reason.",
							&ki_agent_lease_s, 30, 1, 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.agent_devices_per_role",
							"How many devices the kbench agents of one role may register, all its agent names together.",
							"kbench_agent_register refuses a registration past it.",
							&ki_agent_devices_per_role, 64, 1, 100000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.agent_devices",
							"How many devices all kbench agents together may register.",
							"kbench_agent_register refuses a registration past it.",
							&ki_agent_devices, 1024, 1, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
}

PG_FUNCTION_INFO_V1(kbench__require_safe_schema);
Datum
kbench__require_safe_schema(PG_FUNCTION_ARGS)
{
	ki_require_safe_schema();
	PG_RETURN_VOID();
}

/*
 * A cancel asked for while no worker ran the job (kbench_wait cancelled:
 * ki_request_cancel keeps it in shared memory), taken for an agent's job
 * by its heartbeat (kbench_agent_heartbeat).  False without the preload.
 */
PG_FUNCTION_INFO_V1(kbench__take_pending_cancel);
Datum
kbench__take_pending_cancel(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(ki_shared != NULL && ki_take_pending_cancel(PG_GETARG_INT64(0)));
}

/*
 * The one text value a read-only query gives (its first column of its first
 * row), palloc'd in the caller's context; NULL when it gives no row or a
 * NULL.  Run under the pinned search_path; the caller is not connected to
 * SPI.  what names the query in the error.
 */
static char *
fleet_one_text(const char *sql, int nargs, Oid *types, Datum *args, const char *what)
{
	char	   *out = NULL;
	int			nest;
	MemoryContext caller = CurrentMemoryContext;

	nest = ki_pin_search_path();
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not %s", what);
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v)
			out = MemoryContextStrdup(caller, v);
	}
	SPI_finish();
	ki_unpin_search_path(nest);
	return out;
}

/*
 * The local device ("cpu", "cuda:0") of a registered agent that a job for
 * device would run on, palloc'd; NULL when no agent serves it.  The caller
 * is not connected to SPI.
 */
char *
ki_agent_route(const char *device)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];

	args[0] = CStringGetTextDatum(device);
	return fleet_one_text("SELECT _kernelindex.agent_route($1)", 1, types, args,
						  psprintf("route device \"%s\"", device));
}

/*
 * What the registered agents that are alive serve now, for a hint: their
 * device classes and agent:NAME, palloc'd ("none" when no agent is alive).
 * The caller is not connected to SPI.
 */
char *
ki_agent_served(void)
{
	char	   *served;

	served = fleet_one_text(psprintf("SELECT pg_catalog.string_agg(DISTINCT c, ', ' ORDER BY c) FROM ("
									 " SELECT pg_catalog.split_part(d, '=', 2) AS c FROM %s.kbench_agent_status a, pg_catalog.unnest(a.devices) d"
									 "  WHERE a.state = 'alive'"
									 " UNION SELECT 'agent:' || a.name FROM %s.kbench_agent_status a WHERE a.state = 'alive') q",
									 ki_ext_schema(), ki_ext_schema()),
							0, NULL, NULL, "list the agents' devices");
	return served ? served : pstrdup("none");
}

/*
 * kbench__set_storing_job(job): the job whose run this backend stores next
 * (NULL: none).  Not for PUBLIC (sql/90_privileges.sql revokes the
 * volatile kbench__ functions): kbench_agent_finish, SECURITY DEFINER, sets
 * it for the job whose lease it checked; the worker sets it in C.
 */
PG_FUNCTION_INFO_V1(kbench__set_storing_job);
Datum
kbench__set_storing_job(PG_FUNCTION_ARGS)
{
	ki_set_storing_job(PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0));
	PG_RETURN_VOID();
}

/* kbench__storing_job(): that job, or NULL. */
PG_FUNCTION_INFO_V1(kbench__storing_job);
Datum
kbench__storing_job(PG_FUNCTION_ARGS)
{
	if (storing_job == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64(storing_job);
}

static bool
builtin_c_impl(const char *impl)
{
	return impl == NULL || strcmp(impl, "cpu") == 0 || strcmp(impl, "cuda") == 0 || strncmp(impl, "cuda/", 5) == 0;
}

/*
 * kbench__job_manifests(operation, mode, workload, implementation, device):
 * what the run of such a job names, from the kernels library without
 * running anything (kb_describe; no GPU is touched for a cuda device):
 * workload_digest and operation_digest; cpu_implementation, the manifest of
 * the operation's plain C implementation (its name holds the operation's
 * manifest slug); implementation, the manifest of the job's built-in C or
 * CUDA implementation on device (NULL for another implementation).  NULLs
 * when the kernels library cannot describe the job.
 */
PG_FUNCTION_INFO_V1(kbench__job_manifests);
Datum
kbench__job_manifests(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {true, true, true, true};
	char	   *op,
			   *mode,
			   *workload,
			   *impl,
			   *device;
	kb_request	req;
	kb_result	res;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_kernelindex.job_manifests must return a record");
	desc = BlessTupleDesc(desc);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4))
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	op = text_to_cstring(PG_GETARG_TEXT_PP(0));
	mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	workload = text_to_cstring(PG_GETARG_TEXT_PP(2));
	impl = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	device = text_to_cstring(PG_GETARG_TEXT_PP(4));

	ki_sync_operations();		/* a registered operation's name (src/operations.c) */
	kb_request_for(&req, op, mode, workload, "cpu", "cpu");
	if (kb_describe(&req, &res) != KB_PASSED && impl)
	{
		/*
		 * An operation defined as data has no cpu implementation: its
		 * digests, as the job's own implementation describes them (no
		 * cpu_implementation then).
		 */
		kb_free_result(&res);
		req.impl = impl;
		ki_resolve_request(&req, op);
		if (kb_describe(&req, &res) == KB_PASSED)
		{
			values[0] = CStringGetTextDatum(res.workload_digest);
			values[1] = CStringGetTextDatum(res.operation_digest);
			nulls[0] = nulls[1] = false;
		}
		kb_free_result(&res);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	}
	if (res.status == KB_PASSED)
	{
		values[0] = CStringGetTextDatum(res.workload_digest);
		values[1] = CStringGetTextDatum(res.operation_digest);
		nulls[0] = nulls[1] = false;
		if (res.implementation_json)
		{
			values[2] = CStringGetTextDatum(res.implementation_json);
			nulls[2] = false;
		}
	}
	kb_free_result(&res);
	if (!nulls[0] && builtin_c_impl(impl))
	{
		req.impl = impl;
		req.device = device;
		if (kb_describe(&req, &res) == KB_PASSED && res.implementation_json)
		{
			values[3] = CStringGetTextDatum(res.implementation_json);
			nulls[3] = false;
		}
		kb_free_result(&res);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
