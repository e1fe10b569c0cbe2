/*
 * worker_cancel.c: stopping a job through shared memory.  A running job's
 * worker has its slot's cancel flag set (kb_run polls it); a job not running
 * yet gets a pending note, taken when a worker claims it.
 */
#include "kernelindex.h"
#include "worker.h"

/* Ask for a job to stop (see runner.h). */
void
ki_request_cancel(int64 job_id)
{
	int			i;
	bool		running = false;

	if (ki_shared == NULL)
		return;
	LWLockAcquire(ki_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < ki_shared->nslots; i++)
		if (ki_shared->slots[i].job_id == job_id)
		{
			ki_shared->slots[i].cancel = 1;
			if (ki_shared->slots[i].latch)
				SetLatch(ki_shared->slots[i].latch);
			running = true;
		}
	if (!running)
	{
		for (i = 0; i < ki_shared->npending; i++)
			if (ki_shared->pending_cancel[i] == job_id)
				break;
		if (i == ki_shared->npending)
		{
			if (ki_shared->npending == KI_MAX_PENDING_CANCELS)
			{
				memmove(ki_shared->pending_cancel, ki_shared->pending_cancel + 1,
						sizeof(int64) * (KI_MAX_PENDING_CANCELS - 1));
				ki_shared->npending--;
			}
			ki_shared->pending_cancel[ki_shared->npending++] = job_id;
		}
	}
	LWLockRelease(ki_shared->lock);
}

/* Take a pending cancel for job_id, if one was asked for. */
bool
ki_take_pending_cancel(int64 job_id)
{
	int			i;
	bool		found = false;

	LWLockAcquire(ki_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < ki_shared->npending; i++)
		if (ki_shared->pending_cancel[i] == job_id)
		{
			memmove(ki_shared->pending_cancel + i, ki_shared->pending_cancel + i + 1,
					sizeof(int64) * (ki_shared->npending - i - 1));
			ki_shared->npending--;
			found = true;
			break;
		}
	LWLockRelease(ki_shared->lock);
	return found;
}
