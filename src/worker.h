/*
 * worker.h: what the background worker's files (src/worker_*.c) share; the
 * rest of the extension sees runner.h.
 *
 *   worker_main.c      the loop of one device's worker, its signals and slot
 *   worker_devices.c   which devices get a worker, registering them, their product names
 *   worker_shmem.c     the shared worker slots, waking them
 *   worker_cancel.c    the cancel API: a running job's flag, or a pending note
 *   worker_jobs.c      the statements on kbench_jobs: claim, store and finish, re-queue, retention
 *   worker_recovery.c  ending the jobs a stopped worker left behind
 *   worker_request.c   a claimed job as a kernels-library request, the watchdog, the outcome
 *   worker_run.c       running one claimed job and storing its run (a paired one: worker_compare.c)
 *   worker_compare.c   running a paired A/B job (kbench_compare) and storing both runs
 */
#ifndef KI_WORKER_H
#define KI_WORKER_H

#include "runner.h"

#include <signal.h>

#include "utils/memutils.h"

#include "../kernels/kbench.h"

/* This worker's slot in shared memory (NULL outside a worker). */
extern KiWorkerSlot *ki_my_slot;

/* Set by SIGTERM: the worker re-queues its job and stops. */
extern volatile sig_atomic_t ki_got_sigterm;

/*
 * The extension's schema, looked up inside a transaction by
 * ki_worker_extension_ready(): the worker builds SQL text outside
 * transactions too.
 */
extern char *ki_worker_schema;


/* worker_devices.c */
void		ki_register_workers(void);
int			ki_registered_device_count(void);
const char *ki_registered_device(int i);
char	   *ki_cuda_product(const char *device);

/* worker_shmem.c */
void		ki_shmem_install_hooks(void);

/* worker_cancel.c */
bool		ki_take_pending_cancel(int64 job_id);

/* worker_jobs.c */
typedef struct claimed_job
{
	int64		id;
	char	   *operation;
	char	   *mode;
	char	   *workload;
	char	   *implementation;
	char	   *protocol;
	double		timeout_ms;
	char	   *comparison;		/* a paired A/B job's {"id", "b", "rounds", "same_pct"}, or NULL */
	int32		attempt;		/* kbench_jobs.attempts after the claim: this worker's attempt */
} claimed_job;

void		ki_run_in_xact(const char *what, const char *sql);
bool		ki_worker_extension_ready(void);
bool		ki_claim_job(const char *device, claimed_job *job, MemoryContext cxt);
void		ki_finish_job(const claimed_job *job, const char *status, const kb_result *res, const char *error);
void		ki_store_result(const kb_result *res);
bool		ki_end_job(const claimed_job *job, const char *status, const kb_result *res, const char *error);
void		ki_end_xact(bool commit);
void		ki_requeue_job(const claimed_job *job);
void		ki_apply_retention(void);

/* worker_recovery.c */
void		ki_recover_jobs(const char *device);
void		ki_recover_orphaned_jobs(void);

/* worker_request.c */
void		ki_exit_if_postmaster_gone(const claimed_job *job);
void		ki_watchdog_register(void);
void		ki_job_request(const claimed_job *job, const char *device, kb_request *req);
void		ki_job_outcome(const claimed_job *job, kb_status st, const char *message, const char **status,
						   char **error);
void		ki_watchdog_arm(const claimed_job *job);
void		ki_watchdog_disarm(void);

/* worker_run.c */
bool		ki_run_job(claimed_job *job, const char *device);

/* worker_compare.c */
bool		ki_run_compare_job(claimed_job *job, const char *device);

#endif							/* KI_WORKER_H */
