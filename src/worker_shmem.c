/*
 * worker_shmem.c: the workers' slots in shared memory (runner.h), made when
 * the library is preloaded, the error of a call that needs them without the
 * preload, and waking the workers of a device.
 */
#include "kernelindex.h"
#include "worker.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

KiShared   *ki_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
ki_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(KiShared)));
	RequestNamedLWLockTranche("kernelindex", 1);
}

static void
ki_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ki_shared = ShmemInitStruct("kernelindex", sizeof(KiShared), &found);
	if (!found)
	{
		memset(ki_shared, 0, sizeof(KiShared));
		ki_shared->lock = &(GetNamedLWLockTranche("kernelindex"))->lock;
		ki_shared->nslots = ki_registered_device_count();
		for (i = 0; i < ki_shared->nslots; i++)
		{
			ki_shared->slots[i].registered = true;
			strlcpy(ki_shared->slots[i].device, ki_registered_device(i), KI_DEVICE_LEN);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Ask for the shared memory and make it (postmaster, preloading). */
void
ki_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ki_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ki_shmem_startup;
}

/* Wake the workers of a device (see runner.h). */
void
ki_wake_workers(const char *device)
{
	int			i;

	if (ki_shared == NULL)
		return;
	for (i = 0; i < ki_shared->nslots; i++)
	{
		KiWorkerSlot *s = &ki_shared->slots[i];

		if (s->latch && (device == NULL || strcmp(s->device, device) == 0))
			SetLatch(s->latch);
	}
}

/* The error of a job function when the workers are not running (no preload). */
void
ki_require_workers(void)
{
	if (ki_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("kernelindex workers are not running"),
				 errdetail("The runner needs kernelindex in shared_preload_libraries."),
				 errhint("Add shared_preload_libraries = 'kernelindex' to postgresql.conf and restart the server.")));
}
