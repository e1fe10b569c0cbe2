/*
 * job_status.c: the workers and where their jobs are, from shared memory:
 * kbench__workers() (the view kbench_workers) and kbench__job_progress()
 * (the phase, progress and seconds left that kbench_job_status shows).
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"

/* the queue's lock (ki_queue_job): an advisory lock tag SQL cannot make */
/* A copy of the workers' slots, taken under their lock; how many (0 without the preload). */
static int
snapshot_slots(KiWorkerSlot slots[KI_MAX_WORKERS])
{
	int			nslots;

	if (ki_shared == NULL)
		return 0;
	LWLockAcquire(ki_shared->lock, LW_SHARED);
	nslots = ki_shared->nslots;
	memcpy(slots, ki_shared->slots, sizeof(KiWorkerSlot) * nslots);
	LWLockRelease(ki_shared->lock);
	return nslots;
}

/* The workers, from shared memory. */
PG_FUNCTION_INFO_V1(kbench_workers);
Datum
kbench_workers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;
	KiWorkerSlot slots[KI_MAX_WORKERS];
	int			nslots;
	bool		visible[KI_MAX_WORKERS];

	InitMaterializedSRF(fcinfo, 0);
	nslots = snapshot_slots(slots);

	/*
	 * A running job's id, progress and start show only to those who may see
	 * the job (row-level security on kbench_jobs, read as the caller).
	 */
	memset(visible, 0, sizeof(visible));
	for (i = 0; i < nslots; i++)
		if (slots[i].job_id != 0)
		{
			Oid			types[1] = {INT8OID};
			Datum		args[1] = {Int64GetDatum(slots[i].job_id)};
			int			nest = ki_pin_search_path();

			SPI_connect();
			if (SPI_execute_with_args(psprintf("SELECT 1 FROM %s.kbench_jobs WHERE id = $1", ki_ext_schema()),
									  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
				elog(ERROR, "could not read job " INT64_FORMAT, slots[i].job_id);
			visible[i] = SPI_processed == 1;
			SPI_finish();
			ki_unpin_search_path(nest);
		}

	for (i = 0; i < nslots; i++)
	{
		KiWorkerSlot *s = &slots[i];
		Datum		values[7];
		bool		nulls[7] = {false, false, false, false, false, false, false};
		bool		hidden = s->job_id != 0 && !visible[i];

		values[0] = Int32GetDatum((int32) s->pid);
		nulls[0] = s->pid == 0;
		values[1] = CStringGetTextDatum(s->device);
		values[2] = CStringGetTextDatum(s->product);
		nulls[2] = s->product[0] == '\0';
		values[3] = CStringGetTextDatum(s->pid == 0 ? "stopped" : s->job_id ? "running" : "idle");
		values[4] = Int64GetDatum(s->job_id);
		nulls[4] = s->job_id == 0 || hidden;
		values[5] = Float4GetDatum(s->progress);
		nulls[5] = s->job_id == 0 || hidden;
		values[6] = TimestampTzGetDatum(s->started_at);
		nulls[6] = s->job_id == 0 || hidden;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

const char *
ki_phase_name(int phase)
{
	return phase == KI_PHASE_STORING ? "storing" : phase > 0 ? kb_run_phase_name((kb_run_phase) phase) : NULL;
}

/* Where the running jobs the caller may see are: phase, progress, seconds left. */
PG_FUNCTION_INFO_V1(kbench__job_progress);
Datum
kbench__job_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	KiWorkerSlot slots[KI_MAX_WORKERS];
	int			nslots;

	InitMaterializedSRF(fcinfo, 0);
	nslots = snapshot_slots(slots);
	for (int i = 0; i < nslots; i++)
	{
		KiWorkerSlot *s = &slots[i];
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		Oid			types[1] = {INT8OID};
		Datum		args[1] = {Int64GetDatum(s->job_id)};
		const char *phase = ki_phase_name(s->phase);
		bool		visible;
		int			nest;

		if (s->job_id == 0 || s->pid == 0)
			continue;
		/* only the jobs the caller may see (row-level security, read as the caller) */
		nest = ki_pin_search_path();
		SPI_connect();
		if (SPI_execute_with_args(psprintf("SELECT 1 FROM %s.kbench_jobs WHERE id = $1", ki_ext_schema()),
								  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read job " INT64_FORMAT, s->job_id);
		visible = SPI_processed == 1;
		SPI_finish();
		ki_unpin_search_path(nest);
		if (!visible)
			continue;
		values[0] = Int64GetDatum(s->job_id);
		values[1] = phase ? CStringGetTextDatum(phase) : (Datum) 0;
		nulls[1] = phase == NULL;
		values[2] = Float4GetDatum(s->progress);
		values[3] = Float8GetDatum(s->rest_s);
		nulls[3] = s->rest_s < 0 || s->phase == KI_PHASE_NONE;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
