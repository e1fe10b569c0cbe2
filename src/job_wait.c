/*
 * job_wait.c: kbench_wait(id, timeout), waiting for a job to finish and
 * returning its row, with a NOTICE when it is still queued or running, or
 * when its run has fewer samples than the protocol's minimum.  Cancelling
 * the wait (Ctrl-C, statement_timeout) cancels the job, when the caller may.
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"

#include "executor/spi.h"
#include "pgstat.h"

/* the queue's lock (ki_queue_job): an advisory lock tag SQL cannot make */
static bool
final_status(const char *s)
{
	return strcmp(s, "queued") != 0 && strcmp(s, "running") != 0;
}

/* Wait for a job to finish and return its row. */
PG_FUNCTION_INFO_V1(kbench_wait);
Datum
kbench_wait(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	Interval   *timeout = PG_GETARG_INTERVAL_P(1);
	TimestampTz deadline;
	volatile long nap_ms = 2;
	Datum		result = (Datum) 0;
	char	   *sql;
	Oid			caller = GetUserId();

	/* whether the caller may cancel this job: known once it has been read */
	volatile bool may_cancel = false;
	int			nest;

	ki_require_workers();
	/* no months; at most 100 years, which keeps the deadline arithmetic in range */
	deadline = GetCurrentTimestamp() +
		ki_interval_usecs(timeout, "timeout", (int64) 36525 * USECS_PER_DAY);
	/* read as the caller: row-level security shows only the jobs they may see */
	nest = ki_pin_search_path();
	sql = psprintf("SELECT j, j.status, j.owner, (SELECT r.samples FROM %s.kbench_runs r WHERE r.digest = j.run_digest)"
				   " FROM %s.kbench_jobs j WHERE j.id = $1",
				   ki_ext_schema(), ki_ext_schema());
	PG_TRY();
	{
		for (;;)
		{
			Oid			types[1] = {INT8OID};
			Datum		args[1];
			bool		isnull;
			char	   *status;
			bool		done;

			args[0] = Int64GetDatum(id);
			SPI_connect();
			/* a fresh snapshot each time: a volatile function sees new commits */
			if (SPI_execute_with_args(sql, 1, types, args, NULL, false, 1) != SPI_OK_SELECT)
				elog(ERROR, "could not read job " INT64_FORMAT, id);
			if (SPI_processed == 0)
				ereport(ERROR,
						(errcode(ERRCODE_NO_DATA_FOUND),
						 errmsg("job " INT64_FORMAT " does not exist", id),
						 errhint("kbench_jobs lists your jobs; finished jobs are kept for kernelindex.history_retention.")));
			status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
			if (!may_cancel)
			{
				char	   *owner = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);

				may_cancel = strcmp(owner, GetUserNameFromId(caller, false)) == 0 ||
					ki_is_runner_admin(caller);
			}
			done = final_status(status) || GetCurrentTimestamp() >= deadline;
			if (done)
			{
				Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

				result = SPI_datumTransfer(d, false, -1);
				if (!final_status(status))
					ereport(NOTICE,
							(errmsg("job " INT64_FORMAT " is still %s after the wait", id, status),
							 errhint("Wait again with kbench_wait(" INT64_FORMAT "), or cancel it with kbench_cancel(" INT64_FORMAT ").", id, id)));
				else
				{
					Datum		n = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull);

					/* an honest run says when it has too few samples to trust its spread */
					if (!isnull && DatumGetInt64(n) < KB_MIN_SAMPLES)
						ereport(NOTICE,
								(errmsg("job " INT64_FORMAT "'s run has only " INT64_FORMAT " samples, fewer than the protocol's minimum of %d",
										id, DatumGetInt64(n), KB_MIN_SAMPLES),
								 errdetail("Its median and spread rest on few calls; the run's description says why."),
								 errhint("Raise max_samples (or min_samples) in the protocol, or give the job more time.")));
				}
			}
			SPI_finish();
			if (done)
				break;
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, nap_ms, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			if (nap_ms < 50)
				nap_ms = nap_ms * 2;
		}
	}
	PG_CATCH();
	{
		/*
		 * The wait was cancelled (Ctrl-C, statement_timeout): so is the job,
		 * when the caller may cancel it.  A job they cannot see, or one of
		 * another role that they may only watch, is left alone.
		 */
		if (may_cancel)
			ki_request_cancel(id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ki_unpin_search_path(nest);
	PG_RETURN_DATUM(result);
}
