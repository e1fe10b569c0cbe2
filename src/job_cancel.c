/*
 * job_cancel.c: kbench_cancel(id), cancelling a queued job (it ends
 * canceled at once) or a running one (its worker's cancel flag, or the
 * agent's pending cancel), as a role that may.
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "estimate.h"

#include "executor/spi.h"
#include "miscadmin.h"

/* the queue's lock (ki_queue_job): an advisory lock tag SQL cannot make */
/*
 * Is a worker alive for a running job: a worker of its device whose pid is
 * the job's?  Not when the worker died and none came back, or when the
 * device left kernelindex.devices.
 */
static bool
job_has_worker(const char *device, int pid)
{
	int			i;
	bool		found = false;

	LWLockAcquire(ki_shared->lock, LW_SHARED);
	for (i = 0; i < ki_shared->nslots; i++)
		if (ki_shared->slots[i].pid != 0 && ki_shared->slots[i].pid == pid &&
			strcmp(ki_shared->slots[i].device, device) == 0)
			found = true;
	LWLockRelease(ki_shared->lock);
	return found;
}

/* Cancel a queued or running job. */
PG_FUNCTION_INFO_V1(kbench_cancel);
Datum
kbench_cancel(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	char	   *status,
			   *owner,
			   *device,
			   *pid,
			   *agent;
	bool		result = false;
	int			nest;

	ki_require_workers();
	args[0] = Int64GetDatum(id);
	nest = ki_pin_search_path();
	SPI_connect();
	/* read as the caller: row-level security shows only what they may see */
	/* agent: a kbench agent's job (sql/85_fleet.sql) */
	if (SPI_execute_with_args(psprintf("SELECT status, owner, device, worker_pid, agent FROM %s.kbench_jobs WHERE id = $1",
									   ki_ext_schema()),
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read job " INT64_FORMAT, id);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job " INT64_FORMAT " does not exist", id)));
	status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	owner = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	device = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
	pid = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
	agent = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5);
	if (strcmp(owner, GetUserNameFromId(GetUserId(), false)) != 0 && !ki_is_runner_admin(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job " INT64_FORMAT " belongs to another role", id),
				 errdetail("Only its owner or a member of kbench_admin can cancel it.")));
	if (strcmp(status, "queued") == 0)
	{
		/* a job that ends here notifies its listeners as one a worker finishes does */
		if (ki_spi_as_owner(psprintf("WITH j AS (UPDATE %s.kbench_jobs SET status = 'canceled',"
								  " finished_at = pg_catalog.clock_timestamp(), error = 'canceled before it started'"
								  " WHERE id = $1 AND status = 'queued' RETURNING id)"
								  " SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j",
								  ki_ext_schema()), 1, types, args, NULL, false) != SPI_OK_SELECT)
			elog(ERROR, "could not cancel job " INT64_FORMAT, id);
		if (SPI_processed == 0)
			ki_request_cancel(id);	/* a worker claimed it meanwhile */
		result = true;
	}
	else if (strcmp(status, "running") == 0 && agent != NULL)
	{
		/* a kbench agent runs it: it sees the request at its next heartbeat (sql/85_fleet.sql) */
		if (ki_spi_as_owner(psprintf("UPDATE %s.kbench_jobs SET cancel_requested = true WHERE id = $1 AND status = 'running'",
								  ki_ext_schema()), 1, types, args, NULL, false) != SPI_OK_UPDATE)
			elog(ERROR, "could not cancel job " INT64_FORMAT, id);
		result = SPI_processed == 1;
		if (!result)
			ereport(NOTICE, (errmsg("job " INT64_FORMAT " finished meanwhile", id)));
	}
	else if (strcmp(status, "running") == 0 && !job_has_worker(device, pid ? atoi(pid) : 0))
	{
		/* its worker is gone and no worker will come back for it: end it here */
		if (ki_spi_as_owner(psprintf("UPDATE %s.kbench_jobs SET status = 'canceled', finished_at = pg_catalog.clock_timestamp(),"
								  " worker_pid = NULL, error = pg_catalog.format('canceled while its worker for %%s"
								  " (pid %%s) was gone', device, worker_pid) WHERE id = $1 AND status = 'running'",
								  ki_ext_schema()), 1, types, args, NULL, false) != SPI_OK_UPDATE)
			elog(ERROR, "could not cancel job " INT64_FORMAT, id);
		result = SPI_processed == 1;
		if (!result)
			ereport(NOTICE, (errmsg("job " INT64_FORMAT " finished meanwhile", id)));
	}
	else if (strcmp(status, "running") == 0)
	{
		ki_request_cancel(id);
		result = true;
	}
	else
		ereport(NOTICE, (errmsg("job " INT64_FORMAT " has already finished (%s)", id, status)));
	SPI_finish();
	ki_unpin_search_path(nest);
	PG_RETURN_BOOL(result);
}
