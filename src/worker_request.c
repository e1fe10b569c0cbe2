/*
 * worker_request.c: what running any claimed job through the kernels
 * library needs, a single run (worker_run.c) or a paired A/B job
 * (worker_compare.c): the job as a kb_request (its protocol, the cancel
 * flag in shared memory, a deadline, a progress callback with the phase,
 * progress and time left that kbench_job_status shows), kb_run's stop when
 * the postmaster dies, the watchdog that ends a GPU worker whose device
 * never returns, and the job's status and error for what kb_run returned.
 */
#include "kernelindex.h"
#include "implementations.h"
#include "protocol.h"
#include "worker.h"

#include <time.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/timeout.h"

/* How long after a GPU job's timeout the watchdog ends a worker still inside kb_run. */
#define KI_WATCHDOG_GRACE_MS 5000

static TimeoutId watchdog_timeout = MAX_TIMEOUTS;	/* registered by GPU workers */

/* Where the job is, for kbench_job_status: phase, progress, seconds left. */
static void
worker_progress(void *arg, const kb_progress *p)
{
	(void) arg;
	if (ki_my_slot)
	{
		ki_my_slot->phase = (int) p->phase;
		ki_my_slot->progress = (float4) p->fraction;
		ki_my_slot->rest_s = p->rest_s;
	}
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

/*
 * kb_run's stop callback, polled with the cancel flag (between calls, and
 * every 100 ms while a child process runs the implementation): the
 * postmaster died.  kb_run then stops the run and ends the child and what it
 * started (kernels/impl.c), and the worker exits without recording anything
 * (ki_exit_if_postmaster_gone): an orphan must not hold the shared memory
 * that the restart needs, nor commit a result after it.
 */
static int
postmaster_gone(void *arg)
{
	(void) arg;
	return !PostmasterIsAlive();
}

/* After kb_run: if the postmaster died, exit as WL_EXIT_ON_PM_DEATH does; the job is left to recovery. */
void
ki_exit_if_postmaster_gone(const claimed_job *job)
{
	if (PostmasterIsAlive())
		return;
	ereport(LOG,
			(errmsg("kernelindex worker exits: the postmaster died while it ran job " INT64_FORMAT, job->id),
			 errdetail("Its child process was stopped; the job's end is not recorded, the next worker recovers it.")));
	proc_exit(1);
}

/* Ready the watchdog (a GPU worker, at its start). */
void
ki_watchdog_register(void)
{
	watchdog_timeout = RegisterTimeout(USER_TIMEOUT, device_watchdog);
}

/* A claimed job's request: what to run, its protocol, the cancel flag, the deadline, the progress. */
void
ki_job_request(const claimed_job *job, const char *device, kb_request *req)
{
	struct timespec now;

	kb_request_for(req, job->operation, job->mode, job->workload, job->implementation, device);
	ki_worker_prepare_request(req, job->operation);	/* python interpreter, registered entries */
	ki_protocol_apply_text(req, job->protocol ? job->protocol : "{}");
	req->cancel = &ki_my_slot->cancel;
	clock_gettime(CLOCK_MONOTONIC, &now);
	req->deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (job->timeout_ms * 1e6);
	req->progress = worker_progress;
	req->progress_arg = NULL;
	req->stop = postmaster_gone;
	req->stop_arg = NULL;
}

/* The job's status and error for what the kernels library returned. */
void
ki_job_outcome(const claimed_job *job, kb_status st, const char *message, const char **status, char **error)
{
	*error = NULL;
	switch (st)
	{
		case KB_PASSED:
			*status = "passed";
			break;
		case KB_TIMEOUT:
			*status = "timeout";
			*error = psprintf("stopped after the job's timeout of %.0f s%s%s%s", job->timeout_ms / 1000.0,
							  message[0] ? " (" : "", message, message[0] ? ")" : "");
			break;
		case KB_CANCELED:
			*status = "canceled";
			/* where it stopped when the kernels library says (the setup, the fill: issue 29) */
			*error = message[0] && strcmp(message, "canceled") != 0 ? psprintf("canceled by request (%s)", message)
				: "canceled by request";
			break;
		default:
			*status = "failed";
			*error = psprintf("%s: %s", kb_status_name(st), message[0] ? message : "no detail");
			break;
	}
}

void
ki_watchdog_arm(const claimed_job *job)
{
	if (watchdog_timeout != MAX_TIMEOUTS)
		enable_timeout_after(watchdog_timeout,
							 (int) Min(job->timeout_ms + KI_WATCHDOG_GRACE_MS, (double) INT_MAX));
}

void
ki_watchdog_disarm(void)
{
	if (watchdog_timeout != MAX_TIMEOUTS)
		disable_timeout(watchdog_timeout, false);
}
