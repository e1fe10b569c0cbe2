/*
 * worker_main.c: the background workers that run benchmark jobs.
 *
 * With kernelindex in shared_preload_libraries the postmaster starts one
 * worker for the CPU backend and one per visible GPU (GUC
 * kernelindex.devices).  Each worker connects to kernelindex.database and
 * loops: claim the oldest queued job of its device (FOR UPDATE SKIP LOCKED),
 * run it through the kernels library (kb_run), and in one transaction
 * ingest the manifests through the catalog's ingest path and finish the job
 * (NOTIFY kbench_jobs).  Between jobs it sleeps on its latch, which
 * kbench_run sets when the enqueueing transaction commits: no polling.
 *
 * Faults: a worker that starts finds the jobs its device left "running"
 * (the worker was killed, or the server restarted) and fails them with the
 * reason, or re-queues those that asked for a retry.  A job past its timeout
 * stops (kb_run's deadline) and is marked timeout; a CUDA fault gives
 * run_status runtime_error and the kernels library resets the device before
 * the next job.  SIGTERM cancels the running job and re-queues it.
 *
 * A GPU job that times out may leave a kernel that never finishes.  Nothing
 * in this process can then safely wait for the device or reset it (cudaFree,
 * cudaDeviceReset and the like wait for that kernel), so the worker records
 * the job's end and exits with code 1; the postmaster starts a fresh worker
 * (bgw_restart_time) with a fresh CUDA context, and the driver stops the
 * kernel when the old process goes.  Should the CUDA backend itself never
 * return (a driver that breaks the deadline it was given), a watchdog ends
 * the process shortly after the job's timeout and the next worker records
 * the job as timed out (device_watchdog, ki_recover_jobs).
 */
#include "kernelindex.h"
#include "worker.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

PGDLLEXPORT void kbench_worker_main(Datum arg);

KiWorkerSlot *ki_my_slot = NULL;

volatile sig_atomic_t ki_got_sigterm = false;

static void
worker_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	ki_got_sigterm = true;
	if (ki_my_slot)
		ki_my_slot->cancel = 1;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * Clear this worker's slot on any exit: the end of the loop, a FATAL error,
 * the watchdog.  kbench_workers then shows the device stopped until the next
 * worker starts, and nobody sets the latch of a process that is gone.
 */
static void
release_slot(int code, Datum arg)
{
	bool		lock = !LWLockHeldByMe(ki_shared->lock);

	(void) code;
	(void) arg;
	if (lock)
		LWLockAcquire(ki_shared->lock, LW_EXCLUSIVE);
	ki_my_slot->pid = 0;
	ki_my_slot->latch = NULL;
	ki_my_slot->job_id = 0;
	if (lock)
		LWLockRelease(ki_shared->lock);
}

/* The worker of one device. */
void
kbench_worker_main(Datum arg)
{
	int			slot = DatumGetInt32(arg);
	char		device[KI_DEVICE_LEN];
	MemoryContext jobcxt;
	TimestampTz last_retention = 0;
	bool		ready = false;
	int			exit_code = 0;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, worker_sigterm);
	BackgroundWorkerUnblockSignals();

	ki_my_slot = &ki_shared->slots[slot];
	strlcpy(device, ki_my_slot->device, sizeof(device));
	LWLockAcquire(ki_shared->lock, LW_EXCLUSIVE);
	ki_my_slot->pid = MyProcPid;
	ki_my_slot->latch = MyLatch;
	ki_my_slot->job_id = 0;
	ki_my_slot->cancel = 0;
	ki_my_slot->born = GetCurrentTimestamp();
	LWLockRelease(ki_shared->lock);
	before_shmem_exit(release_slot, (Datum) 0);

	if (strcmp(device, "cpu") == 0)
		strlcpy(ki_my_slot->product, "CPU (C reference, kbench cpu backend)", sizeof(ki_my_slot->product));
	else
	{
		char		why[256];
		char	   *product;

		if (!kb_cuda_available(why, sizeof(why)))
			snprintf(ki_my_slot->product, sizeof(ki_my_slot->product), "unavailable: %s", why);
		else if ((product = ki_cuda_product(device)) != NULL)
			strlcpy(ki_my_slot->product, product, sizeof(ki_my_slot->product));
		else
			snprintf(ki_my_slot->product, sizeof(ki_my_slot->product), "unavailable: %s does not exist", device);
		ki_watchdog_register();
	}

	BackgroundWorkerInitializeConnection(ki_database, NULL, 0);
	jobcxt = AllocSetContextCreate(TopMemoryContext, "kbench job", ALLOCSET_DEFAULT_SIZES);
	elog(LOG, "kernelindex worker for %s started in database \"%s\"", device, ki_database);

	while (!ki_got_sigterm)
	{
		claimed_job job;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (!ready)
		{
			ready = ki_worker_extension_ready();
			if (ready)
			{
				ki_recover_jobs(device);
				if (slot == 0)
					ki_recover_orphaned_jobs();
			}
			else
			{
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L,
								 PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
				continue;
			}
		}
		if (slot == 0 && GetCurrentTimestamp() - last_retention > 60 * USECS_PER_SEC)
		{
			ki_apply_retention();
			last_retention = GetCurrentTimestamp();
		}
		ResetLatch(MyLatch);
		MemoryContextReset(jobcxt);
		if (ki_claim_job(device, &job, jobcxt))
		{
			if (ki_take_pending_cancel(job.id))
			{
				ki_finish_job(&job, "canceled", NULL, "canceled before it started");
				continue;
			}
			if (ki_run_job(&job, device))
			{
				ereport(LOG,
						(errmsg("kernelindex worker for %s exits after job " INT64_FORMAT " timed out",
								device, job.id),
						 errdetail("A kernel may still be running; a new worker starts with a fresh CUDA context.")));
				exit_code = 1;	/* the postmaster restarts the worker */
				break;
			}
			/*
			 * What the job's transactions did reaches the cumulative
			 * statistics at most once a second, as a busy backend's does:
			 * without it autovacuum never learns of the runs stored and the
			 * jobs updated here, and never analyzes or vacuums them.
			 */
			(void) pgstat_report_stat(false);
			continue;			/* look for the next job at once */
		}
		/* idle: everything, before sleeping (as a backend does between queries) */
		(void) pgstat_report_stat(true);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 60000L,
						 PG_WAIT_EXTENSION);
	}
	proc_exit(exit_code);		/* release_slot clears the slot */
}
