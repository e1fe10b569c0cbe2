/*
 * runner.h: what the job functions (queue.c, job_*.c) and the background workers
 * (src/worker_*.c) share: GUCs and the shared-memory worker slots.
 */
#ifndef KI_RUNNER_H
#define KI_RUNNER_H

#include "postgres.h"

#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#define KI_MAX_WORKERS 16
#define KI_DEVICE_LEN 32
#define KI_MAX_PENDING_CANCELS 64

/* One background worker: its device and what it is doing. */
typedef struct KiWorkerSlot
{
	bool		registered;		/* set by the postmaster's _PG_init */
	char		device[KI_DEVICE_LEN];	/* "cpu", "cuda:0", ... */
	char		product[128];	/* what the device says it is */
	pid_t		pid;			/* 0 when not running */
	Latch	   *latch;
	int64		job_id;			/* 0 when idle */
	float4		progress;
	TimestampTz started_at;
	volatile int cancel;		/* set to stop the running job (kb_run polls it) */
	int			phase;			/* KI_PHASE_*: where the running job is */
	float8		rest_s;			/* seconds expected to remain; < 0: not known */
	char		env_digest[72];	/* the environment of the worker's last run ("": none yet) */
	TimestampTz born;			/* when the worker in it started: its jobs started after (recovery) */
} KiWorkerSlot;

/* The phases of a running job (kb_run_phase, then storing), as kbench_jobs.phase names them. */
#define KI_PHASE_NONE 0
#define KI_PHASE_STORING 5
const char *ki_phase_name(int phase);

typedef struct KiShared
{
	LWLock	   *lock;
	int			nslots;
	KiWorkerSlot slots[KI_MAX_WORKERS];
	/* cancels asked for jobs not running yet (checked when a job is claimed) */
	int64		pending_cancel[KI_MAX_PENDING_CANCELS];
	int			npending;
} KiShared;

/* NULL unless kernelindex is in shared_preload_libraries. */
extern KiShared *ki_shared;

/* ERROR unless the workers run (kernelindex in shared_preload_libraries); worker_shmem.c. */
void		ki_require_workers(void);

/* GUCs */
extern char *ki_database;
extern char *ki_devices;
extern int	ki_job_timeout_s;
extern int	ki_retention_s;
extern int	ki_queue_limit;

/* Ask for a job to be stopped: the running worker's flag, or a pending note. */
void		ki_request_cancel(int64 job_id);

/* Wake the workers of a device (all of them when device is NULL). */
void		ki_wake_workers(const char *device);

/* Is device a GPU ("cuda:N")?  (The kernels library validates the N.) */
static inline bool
ki_is_cuda_device(const char *device)
{
	return strncmp(device, "cuda:", 5) == 0;
}

#endif							/* KI_RUNNER_H */
