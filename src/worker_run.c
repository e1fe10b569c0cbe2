/*
 * worker_run.c: running one claimed job through the kernels library
 * (kb_run), its request, watchdog and outcome made by worker_request.c,
 * then storing what it gave; a paired A/B job goes to worker_compare.c.
 */
#include "kernelindex.h"
#include "implementations.h"
#include "worker.h"

#include "access/xact.h"
#include "pgstat.h"

/*
 * Run one claimed job.  True when the worker must exit after it: a GPU job
 * that timed out may have left a kernel running (worker_request.c, the watchdog).
 */
bool
ki_run_job(claimed_job *job, const char *device)
{
	kb_request	req;
	kb_result	res;
	kb_status	st;
	const char *status;
	char	   *volatile error = NULL;
	char	   *err;

	ki_my_slot->cancel = 0;
	ki_my_slot->progress = 0;
	ki_my_slot->phase = KB_RUN_SETUP;
	ki_my_slot->rest_s = -1;
	ki_my_slot->started_at = GetCurrentTimestamp();
	pg_write_barrier();
	ki_my_slot->job_id = job->id;
	/* a cancel that arrived between the claim and now was left pending */
	if (ki_take_pending_cancel(job->id))
		ki_my_slot->cancel = 1;
	if (job->comparison)
		return ki_run_compare_job(job, device);

	ki_job_request(job, device, &req);
	pgstat_report_activity(STATE_RUNNING, psprintf("running job " INT64_FORMAT ": %s %s", job->id,
												   job->operation, job->mode));
	memset(&res, 0, sizeof(res));
	ki_watchdog_arm(job);
	st = kb_run(&req, &res);
	ki_watchdog_disarm();
	ki_exit_if_postmaster_gone(job);
	pgstat_report_activity(STATE_IDLE, NULL);
	/* the environment the device's runs are in: kbench_run's estimates look for its past runs */
	if (res.environment_digest[0])
		strlcpy(ki_my_slot->env_digest, res.environment_digest, sizeof(ki_my_slot->env_digest));

	if (st == KB_CANCELED && ki_got_sigterm)
	{
		kb_free_result(&res);
		ki_requeue_job(job);
		return false;
	}
	ki_job_outcome(job, st, res.message, &status, &err);
	error = err;
	if (st != KB_CANCELED)
		ki_my_slot->phase = st == KB_PASSED ? KI_PHASE_STORING : ki_my_slot->phase;
	PG_TRY();
	{
		ki_finish_job(job, status, &res, error);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		edata = CopyErrorData();
		MemoryContextSwitchTo(old);
		FlushErrorState();
		AbortCurrentTransaction();
		ki_finish_job(job, "failed", NULL, psprintf("could not store the run: %s", edata->message));
	}
	PG_END_TRY();
	kb_free_result(&res);
	ki_my_slot->job_id = 0;
	ki_my_slot->progress = 0;
	ki_my_slot->phase = KI_PHASE_NONE;
	/* a child process's timeout leaves nothing running here (src/implementations.c) */
	return st == KB_TIMEOUT && ki_is_cuda_device(device) && !ki_impl_in_child(job->implementation);
}
