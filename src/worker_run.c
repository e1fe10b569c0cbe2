/*
 * worker_run.c: running one claimed job through the kernels library
 * (kb_run) with the job's protocol, a cancel flag in shared memory, a
 * deadline and a progress callback, then storing what it gave; and the
 * watchdog that ends a GPU worker whose device never returns.
 */
#include "kernelindex.h"
#include "implementations.h"
#include "protocol.h"
#include "worker.h"

#include <time.h>
#include <unistd.h>

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

/* How long after a GPU job's timeout the watchdog ends a worker still inside kb_run. */
#define KI_WATCHDOG_GRACE_MS 5000

static TimeoutId watchdog_timeout = MAX_TIMEOUTS;	/* registered by GPU workers */

static void
worker_progress(void *arg, double fraction)
{
	(void) arg;
	if (ki_my_slot)
		ki_my_slot->progress = (float4) fraction;
}

/* Protocol overrides of a job ({"warmup_ms": ...}) into the request. */
static void
apply_protocol(kb_request *req, const char *protocol_json)
{
	ki_arena	a;
	ki_errors	errs;

	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	ki_protocol_apply(req, ki_parse(&a, protocol_json, strlen(protocol_json), &errs));
}

/*
 * The worst case, a CUDA backend that does not return although kb_run gave
 * every wait a deadline.  Signal context, with the worker blocked inside
 * kb_run: no transaction is open and no lock is held there, so this releases
 * shared memory as proc_exit would (as bgworker_die's FATAL does from its
 * signal handler too), then leaves with _exit(1) rather than exit(): the
 * CUDA runtime's exit handlers could wait on the very call interrupted.  The
 * postmaster starts a new worker, whose ki_recover_jobs ends the job as timeout.
 */
static void
device_watchdog(void)
{
	static const char msg[] = "kernelindex worker: the CUDA backend did not return within the job's timeout; "
		"the worker exits and a new one will start\n";

	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		(void) 0;				/* nothing more to do about it here */
	proc_exit_inprogress = true;	/* as proc_exit: the callbacks check it */
	HOLD_INTERRUPTS();
	shmem_exit(1);
	_exit(1);
}

/* Ready the watchdog (a GPU worker, at its start). */
void
ki_watchdog_register(void)
{
	watchdog_timeout = RegisterTimeout(USER_TIMEOUT, device_watchdog);
}

/*
 * Run one claimed job.  True when the worker must exit after it: a GPU job
 * that timed out may have left a kernel running (see the header comment).
 */
bool
ki_run_job(claimed_job *job, const char *device)
{
	kb_request	req;
	kb_result	res;
	kb_status	st;
	struct timespec now;
	const char *status;
	char	   *volatile error = NULL;

	ki_my_slot->cancel = 0;
	ki_my_slot->progress = 0;
	ki_my_slot->started_at = GetCurrentTimestamp();
	pg_write_barrier();
	ki_my_slot->job_id = job->id;
	/* a cancel that arrived between the claim and now was left pending */
	if (ki_take_pending_cancel(job->id))
		ki_my_slot->cancel = 1;

	kb_request_init(&req);
	req.op = job->operation;
	req.mode = job->mode;
	req.axes_json = job->workload;
	req.impl = job->implementation;
	req.device = device;
	ki_worker_prepare_request(&req, job->operation);	/* python interpreter, registered entries */
	apply_protocol(&req, job->protocol ? job->protocol : "{}");
	req.cancel = &ki_my_slot->cancel;
	clock_gettime(CLOCK_MONOTONIC, &now);
	req.deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (job->timeout_ms * 1e6);
	req.progress = worker_progress;
	req.progress_arg = NULL;

	pgstat_report_activity(STATE_RUNNING, psprintf("running job " INT64_FORMAT ": %s %s", job->id,
												   job->operation, job->mode));
	memset(&res, 0, sizeof(res));
	if (watchdog_timeout != MAX_TIMEOUTS)
		enable_timeout_after(watchdog_timeout,
							 (int) Min(job->timeout_ms + KI_WATCHDOG_GRACE_MS, (double) INT_MAX));
	st = kb_run(&req, &res);
	if (watchdog_timeout != MAX_TIMEOUTS)
		disable_timeout(watchdog_timeout, false);
	pgstat_report_activity(STATE_IDLE, NULL);

	if (st == KB_CANCELED && ki_got_sigterm)
	{
		kb_free_result(&res);
		ki_requeue_job(job->id);
		ki_my_slot->job_id = 0;
		return false;
	}
	switch (st)
	{
		case KB_PASSED:
			status = "passed";
			break;
		case KB_TIMEOUT:
			status = "timeout";
			error = psprintf("stopped after the job's timeout of %.0f s%s%s%s", job->timeout_ms / 1000.0,
							 res.message[0] ? " (" : "", res.message, res.message[0] ? ")" : "");
			break;
		case KB_CANCELED:
			status = "canceled";
			error = "canceled by request";
			break;
		default:
			status = "failed";
			error = psprintf("%s: %s", kb_status_name(st), res.message[0] ? res.message : "no detail");
			break;
	}
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
	/* a child process's timeout leaves nothing running here (src/implementations.c) */
	return st == KB_TIMEOUT && ki_is_cuda_device(device) && !ki_impl_in_child(job->implementation);
}
