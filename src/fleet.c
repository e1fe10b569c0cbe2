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
 */
#include "kernelindex.h"
#include "fleet.h"
#include "runner.h"
#include "security.h"
#include "worker.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

int			ki_agent_lease_s = 30;

void
ki_fleet_init(void)
{
	DefineCustomIntVariable("kernelindex.agent_lease",
							"How long a kbench agent may go without a heartbeat before its job is recovered.",
							"The job is then re-queued when it may retry, else failed with the reason.",
							&ki_agent_lease_s, 30, 1, 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
}

/*
 * Does the installed extension have agents (0.2.0)?  A library newer than
 * the installed SQL (before ALTER EXTENSION ... UPDATE) must not name what
 * is not there yet.  Inside or outside a transaction.
 */
bool
ki_fleet_installed(void)
{
	bool		in_xact = IsTransactionState();
	bool		found;

	if (!in_xact)
		StartTransactionCommand();
	found = OidIsValid(get_relname_relid("kbench_agents", ki_ext_namespace()));
	if (!in_xact)
		CommitTransactionCommand();
	return found;
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
 * The local device ("cpu", "cuda:0") of a registered agent that a job for
 * device would run on, palloc'd; NULL when no agent serves it.  The caller
 * is not connected to SPI.
 */
char *
ki_agent_route(const char *device)
{
	Oid			types[1] = {TEXTOID};
	Datum		args[1];
	char	   *route = NULL;
	int			nest;
	MemoryContext caller = CurrentMemoryContext;

	if (!ki_fleet_installed())
		return NULL;

	args[0] = CStringGetTextDatum(device);
	nest = ki_pin_search_path();
	SPI_connect();
	if (SPI_execute_with_args(psprintf("SELECT %s.kbench__agent_route($1)", ki_ext_schema()),
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not route device \"%s\"", device);
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v)
			route = MemoryContextStrdup(caller, v);
	}
	SPI_finish();
	ki_unpin_search_path(nest);
	return route;
}
