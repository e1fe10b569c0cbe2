/*
 * queue.c: the SQL side of the runner.
 *
 *   kbench_run(...)        validate a request and queue it (workers wake at commit)
 *   kbench_wait(id, t)     wait for a job; cancelling the wait cancels the job
 *   kbench_cancel(id)      cancel a queued or running job
 *   kbench_workers()       the workers and what they do, from shared memory
 *   kbench_registry()      what the kernels library can run
 *
 * kbench_run runs with the caller's rights (EXECUTE is granted per role) and
 * writes the job row as the extension's owner, so users need no INSERT
 * privilege on kbench_jobs and cannot bypass the validation.
 */
#include "kernelindex.h"
#include "runner.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "../kernels/kbench.h"

/* Devices with jobs queued by this transaction: woken at commit. */
static bool wake_at_commit = false;
static bool xact_callback_registered = false;

static void
queue_xact_callback(XactEvent event, void *arg)
{
	(void) arg;
	if (event == XACT_EVENT_COMMIT && wake_at_commit)
		ki_wake_workers(NULL);
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
		wake_at_commit = false;
}

static void
require_workers(void)
{
	if (ki_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("kernelindex workers are not running"),
				 errdetail("The runner needs kernelindex in shared_preload_libraries."),
				 errhint("Add shared_preload_libraries = 'kernelindex' to postgresql.conf and restart the server.")));
}

/* The devices the workers serve, for messages. */
static char *
served_devices(void)
{
	StringInfoData s;
	int			i;

	initStringInfo(&s);
	for (i = 0; i < ki_shared->nslots; i++)
		appendStringInfo(&s, "%s%s", i ? ", " : "", ki_shared->slots[i].device);
	if (s.len == 0)
		appendStringInfoString(&s, "none");
	return s.data;
}

static bool
device_served(const char *device)
{
	int			i;

	for (i = 0; i < ki_shared->nslots; i++)
		if (strcmp(ki_shared->slots[i].device, device) == 0)
			return true;
	return false;
}

/* The best device a worker serves: the first GPU, else the CPU. */
static const char *
best_device(void)
{
	int			i;

	for (i = 0; i < ki_shared->nslots; i++)
		if (ki_is_cuda_device(ki_shared->slots[i].device) &&
			strncmp(ki_shared->slots[i].product, "unavailable", 11) != 0)
			return ki_shared->slots[i].device;
	if (device_served("cpu"))
		return "cpu";
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no kernelindex worker serves any device"),
			 errhint("Set kernelindex.devices (for example to auto) and restart the server.")));
	return NULL;
}

/* Check the protocol overrides; every key known, every value in range. */
static void
check_protocol(Jsonb *protocol)
{
	static const struct
	{
		const char *key;
		double		min;
		double		max;
		bool		boolean;
	}			keys[] =
	{
		{"warmup_ms", 0, 600000, false},
		{"rep_ms", 0.001, 3600000, false},
		{"flush_bytes", 0, 1099511627776.0, false},
		{"max_samples", 1, 100000000, false},
		{"seed", 0, 9007199254740991.0, false},
		{"check", 0, 0, true},
	};
	ki_arena	a;
	ki_value   *p;
	size_t		i;
	int			k;

	ki_pg_arena_init(&a);
	p = ki_jsonb_to_tree(&a, protocol);
	if (p == NULL || p->type != KI_OBJECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("protocol must be a JSON object"),
				 errhint("For example {\"warmup_ms\": 25, \"rep_ms\": 100}.")));
	for (i = 0; i < p->u.obj.count; i++)
	{
		const ki_member *m = &p->u.obj.members[i];
		bool		known = false;

		for (k = 0; k < (int) lengthof(keys); k++)
		{
			if (strlen(keys[k].key) != m->key.len || memcmp(keys[k].key, m->key.ptr, m->key.len) != 0)
				continue;
			known = true;
			if (keys[k].boolean ? (m->value->type != KI_TRUE && m->value->type != KI_FALSE)
				: (m->value->type != KI_NUMBER || m->value->u.num < keys[k].min || m->value->u.num > keys[k].max))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("protocol setting \"%s\" is out of range", keys[k].key),
						 keys[k].boolean ? errdetail("It must be true or false.") :
						 errdetail("It must be a number from %g to %g.", keys[k].min, keys[k].max)));
		}
		if (!known)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown protocol setting \"%.*s\"", (int) m->key.len, m->key.ptr),
					 errhint("Known settings: warmup_ms, rep_ms, flush_bytes, max_samples, seed, check.")));
	}
}

/* Run sql through SPI as the extension's owner. */
static int
spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls, bool read_only)
{
	Oid			save_userid;
	int			save_sec;
	volatile int rc = 0;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(ext_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
	PG_TRY();
	{
		rc = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec);
	}
	PG_END_TRY();
	return rc;
}

/* Queue a benchmark job; returns its id. */
PG_FUNCTION_INFO_V1(kbench_run);
Datum
kbench_run(PG_FUNCTION_ARGS)
{
	const char *op,
			   *mode,
			   *impl,
			   *device;
	Jsonb	   *workload,
			   *protocol;
	char	   *workload_text;
	char		err[1024];
	kb_status	st;
	Interval   *timeout;
	bool		retry;
	int64		queued,
				id;
	bool		isnull;
	Datum		args[9];
	Oid			types[9] = {TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, JSONBOID, INTERVALOID, INT4OID, NAMEOID};
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	char	   *dbname;

	require_workers();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation, mode and workload must not be null"),
				 errhint("For example kbench_run('layer_norm', 'backward', '{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}').")));
	op = text_to_cstring(PG_GETARG_TEXT_PP(0));
	mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	workload = PG_GETARG_JSONB_P(2);
	impl = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	device = PG_ARGISNULL(4) ? best_device() : text_to_cstring(PG_GETARG_TEXT_PP(4));
	protocol = PG_ARGISNULL(5) ? NULL : PG_GETARG_JSONB_P(5);
	timeout = PG_ARGISNULL(6) ? NULL : PG_GETARG_INTERVAL_P(6);
	retry = PG_ARGISNULL(7) ? false : PG_GETARG_BOOL(7);

	dbname = get_database_name(MyDatabaseId);
	if (strcmp(dbname, ki_database) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("kernelindex workers serve database \"%s\", not \"%s\"", ki_database, dbname),
				 errhint("Queue jobs in database \"%s\", or set kernelindex.database and restart the server.",
						 ki_database)));
	if (!device_served(device))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no kernelindex worker serves device \"%s\"", device),
				 errdetail("Workers serve: %s.", served_devices())));
	if (JB_ROOT_IS_SCALAR(workload) || !JB_ROOT_IS_OBJECT(workload))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workload must be a JSON object of the operation's axes and its dtype"),
				 errhint("For example {\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}.")));
	if (protocol)
		check_protocol(protocol);
	if (timeout && (timeout->month != 0 || timeout->day != 0 || timeout->time <= 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout must be a positive interval in hours, minutes or seconds")));

	/* the kernels library says whether it can run this, and why not */
	workload_text = JsonbToCString(NULL, &workload->root, VARSIZE(workload));
	/* a GPU's memory is checked by its worker, before allocating: no CUDA in a backend */
	if (ki_is_cuda_device(device))
		st = kb_validate_request(op, mode, workload_text, impl, device, err, sizeof(err));
	else
		st = kb_check_request(op, mode, workload_text, impl, device, err, sizeof(err));
	if (st != KB_PASSED)
		ereport(ERROR,
				(errcode(st == KB_RESOURCE_EXCEEDED ? ERRCODE_PROGRAM_LIMIT_EXCEEDED : ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot queue %s %s: %s", op, mode, err),
				 st == KB_RESOURCE_EXCEEDED ? errdetail("The workload does not fit device %s.", device) : 0,
				 errhint("kbench_device_operations lists what each device can run.")));

	SPI_connect();
	if (spi_as_owner(psprintf("SELECT count(*) FROM %s.kbench_jobs WHERE status = 'queued'", ext_schema()),
					 0, NULL, NULL, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not count the queue");
	queued = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (queued >= ki_queue_limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the benchmark queue is full: " INT64_FORMAT " jobs are waiting", queued),
				 errdetail("kernelindex.queue_limit is %d.", ki_queue_limit),
				 errhint("Wait for queued jobs to finish, cancel some with kbench_cancel(), or raise kernelindex.queue_limit.")));

	args[0] = CStringGetTextDatum(op);
	args[1] = CStringGetTextDatum(mode);
	args[2] = JsonbPGetDatum(workload);
	if (impl)
		args[3] = CStringGetTextDatum(impl);
	else
		nulls[3] = 'n';
	args[4] = CStringGetTextDatum(device);
	if (protocol)
		args[5] = JsonbPGetDatum(protocol);
	else
		nulls[5] = 'n';
	if (timeout)
		args[6] = IntervalPGetDatum(timeout);
	else
		nulls[6] = 'n';
	args[7] = Int32GetDatum(retry ? 1 : 0);
	args[8] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
	if (spi_as_owner(psprintf("INSERT INTO %s.kbench_jobs (operation, mode, workload, implementation, device,"
							  " protocol, timeout, retries_left, owner) VALUES ($1, $2, $3, $4, $5, coalesce($6, '{}'),"
							  " coalesce($7, make_interval(secs => %d)), $8, $9) RETURNING id",
							  ext_schema(), ki_job_timeout_s),
					 9, types, args, nulls, false) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not queue the job");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();

	if (!xact_callback_registered)
	{
		RegisterXactCallback(queue_xact_callback, NULL);
		xact_callback_registered = true;
	}
	wake_at_commit = true;
	PG_RETURN_INT64(id);
}

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

	require_workers();
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   (int64) ((timeout->time + (timeout->day * USECS_PER_DAY)) / 1000));
	sql = psprintf("SELECT j, j.status FROM %s.kbench_jobs j WHERE id = $1", ext_schema());
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
			done = final_status(status) || GetCurrentTimestamp() >= deadline;
			if (done)
			{
				Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

				result = SPI_datumTransfer(d, false, -1);
				if (!final_status(status))
					ereport(NOTICE,
							(errmsg("job " INT64_FORMAT " is still %s after the wait", id, status),
							 errhint("Wait again with kbench_wait(" INT64_FORMAT "), or cancel it with kbench_cancel(" INT64_FORMAT ").", id, id)));
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
		/* the wait was cancelled (Ctrl-C, statement_timeout): so is the job */
		ki_request_cancel(id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	PG_RETURN_DATUM(result);
}

/* Cancel a queued or running job. */
PG_FUNCTION_INFO_V1(kbench_cancel);
Datum
kbench_cancel(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	char	   *status,
			   *owner;
	bool		result = false;

	require_workers();
	args[0] = Int64GetDatum(id);
	SPI_connect();
	/* read as the caller: row-level security shows only what they may see */
	if (SPI_execute_with_args(psprintf("SELECT status, owner FROM %s.kbench_jobs WHERE id = $1", ext_schema()),
							  1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read job " INT64_FORMAT, id);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job " INT64_FORMAT " does not exist", id)));
	status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	owner = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (strcmp(owner, GetUserNameFromId(GetUserId(), false)) != 0 && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job " INT64_FORMAT " belongs to %s", id, owner),
				 errdetail("Only its owner or a superuser can cancel it.")));
	if (strcmp(status, "queued") == 0)
	{
		if (spi_as_owner(psprintf("UPDATE %s.kbench_jobs SET status = 'canceled', finished_at = clock_timestamp(),"
								  " error = 'canceled before it started' WHERE id = $1 AND status = 'queued'",
								  ext_schema()), 1, types, args, NULL, false) != SPI_OK_UPDATE)
			elog(ERROR, "could not cancel job " INT64_FORMAT, id);
		if (SPI_processed == 0)
			ki_request_cancel(id);	/* a worker claimed it meanwhile */
		result = true;
	}
	else if (strcmp(status, "running") == 0)
	{
		ki_request_cancel(id);
		result = true;
	}
	else
		ereport(NOTICE, (errmsg("job " INT64_FORMAT " has already finished (%s)", id, status)));
	SPI_finish();
	PG_RETURN_BOOL(result);
}

/* The workers, from shared memory. */
PG_FUNCTION_INFO_V1(kbench_workers);
Datum
kbench_workers(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (ki_shared == NULL)
		return (Datum) 0;
	LWLockAcquire(ki_shared->lock, LW_SHARED);
	for (i = 0; i < ki_shared->nslots; i++)
	{
		KiWorkerSlot *s = &ki_shared->slots[i];
		Datum		values[7];
		bool		nulls[7] = {false, false, false, false, false, false, false};

		values[0] = Int32GetDatum((int32) s->pid);
		nulls[0] = s->pid == 0;
		values[1] = CStringGetTextDatum(s->device);
		values[2] = CStringGetTextDatum(s->product);
		nulls[2] = s->product[0] == '\0';
		values[3] = CStringGetTextDatum(s->pid == 0 ? "stopped" : s->job_id ? "running" : "idle");
		values[4] = Int64GetDatum(s->job_id);
		nulls[4] = s->job_id == 0;
		values[5] = Float4GetDatum(s->progress);
		nulls[5] = s->job_id == 0;
		values[6] = TimestampTzGetDatum(s->started_at);
		nulls[6] = s->job_id == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(ki_shared->lock);
	return (Datum) 0;
}

/* The kernels registry as jsonb (operations, modes, axes, dtypes, ...). */
PG_FUNCTION_INFO_V1(kbench_registry);
Datum
kbench_registry(PG_FUNCTION_ARGS)
{
	char	   *json = kb_list_json();
	Datum		d;

	if (json == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	d = DirectFunctionCall1(jsonb_in, CStringGetDatum(pstrdup(json)));
	kb_free(json);
	PG_RETURN_DATUM(d);
}
