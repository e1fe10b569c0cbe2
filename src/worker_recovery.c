/*
 * worker_recovery.c: the jobs a stopped worker left behind.  A worker that
 * starts finds the jobs its device left "running" (the worker was killed, or
 * the server restarted) and fails them with the reason, or re-queues those
 * that asked for a retry; the first worker also ends the jobs of devices no
 * worker serves any more.
 */
#include "kernelindex.h"
#include "worker.h"
#include "fleet.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/*
 * The jobs a live worker runs, as a condition on kbench_jobs j: its pid and
 * a start after the worker's own (a pid the system reused for another worker
 * does not make an old job live).  Every other worker's slot, under the lock:
 * a slot is set before its worker claims and cleared when it exits
 * (release_slot), and a crash resets them all with the shared memory.
 */
static char *
live_jobs_condition(void)
{
	StringInfoData c;
	int			i;

	initStringInfo(&c);
	appendStringInfoString(&c, "false");
	LWLockAcquire(ki_shared->lock, LW_SHARED);
	for (i = 0; i < ki_shared->nslots; i++)
	{
		KiWorkerSlot *s = &ki_shared->slots[i];

		if (s == ki_my_slot || s->pid == 0)
			continue;
		appendStringInfo(&c, " OR (j.worker_pid = %d AND j.started_at >= %s::timestamptz)", (int) s->pid,
						 quote_literal_cstr(timestamptz_to_str(s->born)));
	}
	LWLockRelease(ki_shared->lock);
	return c.data;
}

/*
 * Fail (or re-queue) the jobs this device left running: those whose worker
 * is gone.  A sibling serving the same device (kernelindex.devices lists it
 * twice) that is running a job keeps it: only jobs no live worker's slot
 * claims are recovered (live_jobs_condition).  One already past its timeout
 * ends as timeout and is not retried: its worker was stopped by the watchdog
 * (a device that never returned) or died after the deadline.
 */
void
ki_recover_jobs(const char *device)
{
	char	   *sql = psprintf(
							   "UPDATE %s.kbench_jobs j SET "
							   " status = CASE WHEN o.overdue THEN 'timeout' WHEN retries_left > 0 THEN 'queued' ELSE 'failed' END,"
							   " retries_left = CASE WHEN o.overdue THEN retries_left ELSE greatest(retries_left - 1, 0) END,"
							   " finished_at = CASE WHEN retries_left > 0 AND NOT o.overdue THEN NULL ELSE pg_catalog.clock_timestamp() END,"
							   " error = CASE WHEN o.overdue THEN"
							   "   pg_catalog.format('stopped after the job''s timeout of %%s: the device did not return, and the worker for %%s (pid %%s) was restarted',"
							   "          timeout, device, worker_pid)"
							   " ELSE pg_catalog.format('the worker for %%s (pid %%s) stopped while running the job: it was killed or the server restarted%%s',"
							   "             device, worker_pid, CASE WHEN retries_left > 0 THEN '; re-queued for its retry' ELSE '' END) END,"
							   " worker_pid = NULL, phase = CASE WHEN retries_left > 0 AND NOT o.overdue THEN 'queued' END "
							   "FROM (SELECT id, started_at + timeout < pg_catalog.clock_timestamp() AS overdue FROM %s.kbench_jobs j"
							   "      WHERE status = 'running' AND device = %s AND agent IS NULL AND NOT (%s)) o "
							   /* rechecked on the row itself: a sibling recovering at the same time */
							   "WHERE j.id = o.id AND j.status = 'running' AND NOT (%s)",
							   /* where it stopped lived in the worker's shared memory (phase): not known now */
							   ki_worker_schema,
							   /* a kbench agent's job is its own (sql/85_fleet.sql) */
							   ki_worker_schema, quote_literal_cstr(device),
							   live_jobs_condition(), live_jobs_condition());

	ki_run_in_xact("recovering jobs", sql);
}

/*
 * End the jobs of devices that no worker serves any more (the device left
 * kernelindex.devices): those left running fail, as their worker will never
 * come back; those queued are canceled, as none will ever claim them.  Run
 * by the first worker when it starts.
 */
void
ki_recover_orphaned_jobs(void)
{
	StringInfoData served;
	int			i;

	initStringInfo(&served);
	for (i = 0; i < ki_shared->nslots; i++)
		appendStringInfo(&served, "%s%s", i ? ", " : "", quote_literal_cstr(ki_shared->slots[i].device));
	if (served.len == 0)
		return;
	ki_run_in_xact("recovering jobs of devices no worker serves",
				psprintf("UPDATE %s.kbench_jobs SET"
						 " status = CASE WHEN status = 'running' THEN 'failed' ELSE 'canceled' END,"
						 " finished_at = pg_catalog.clock_timestamp(),"
						 " error = CASE WHEN status = 'running'"
						 "   THEN pg_catalog.format('the worker for %%s (pid %%s) stopped while running the job,"
						 " and no worker serves %%s any more (kernelindex.devices)', device, worker_pid, device)"
						 "   ELSE pg_catalog.format('no worker serves %%s any more (kernelindex.devices)', device) END,"
						 " worker_pid = NULL, phase = CASE WHEN status = 'running' THEN NULL ELSE phase END"
						 " WHERE status IN ('queued', 'running') AND device NOT IN (%s)"
						 /* nor those of kbench agents, nor devices agents serve (sql/85_fleet.sql) */
						 " AND agent IS NULL AND _kernelindex.agent_route(device) IS NULL",
						 ki_worker_schema, served.data));
}
