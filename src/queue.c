/*
 * queue.c: queueing a job, the SQL side of the runner.
 *
 *   kbench_run(...)        validate a request and queue it (workers wake at commit)
 *   kbench__queue_reproduction(run, device)  kbench_reproduce's job, linked to the run it reproduces
 *
 * Waiting for a job is job_wait.c, cancelling one job_cancel.c, what the
 * workers do job_status.c.
 *
 * kbench_run runs with the caller's rights (EXECUTE is granted per role) and
 * writes the job row as the extension's owner, so users need no INSERT
 * privilege on kbench_jobs and cannot bypass the validation.
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"
#include "protocol.h"
#include "estimate.h"
#include "fleet.h"

#include <math.h>

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
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "../kernels/kbench.h"

/* the queue's lock (ki_queue_job): an advisory lock tag SQL cannot make */
#define KI_QUEUE_LOCK_KEY 0x6b62716c	/* "kbql" */
#define KI_QUEUE_LOCK_FIELD4 3

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
	ki_arena	a;

	ki_pg_arena_init(&a);
	ki_protocol_check(ki_jsonb_to_tree(&a, protocol));
}

/* Run sql through SPI as the extension's owner. */
int
ki_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls, bool read_only)
{
	Oid			save_userid;
	int			save_sec;
	volatile int rc = 0;
	int			nest;

	/* as a SECURITY DEFINER function: the owner's rights, a pinned search_path */
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(ki_ext_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
	nest = ki_pin_search_path();
	PG_TRY();
	{
		rc = SPI_execute_with_args(sql, nargs, types, args, nulls, read_only, 0);
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec);
	}
	PG_END_TRY();
	ki_unpin_search_path(nest);
	return rc;
}

/*
 * The names kbench_run takes, as the analytics take them (issue 13, one
 * resolver): any case, surrounding blanks ignored; an operation by its short
 * name ('layer_norm') or its catalog name ('liger-layer-norm', 'Layer-Norm');
 * the built-in implementations (cpu, cuda, cuda/vN, huggingface, torch,
 * liger, and Liger's other providers: kb_providers in kernels/impl_name.c)
 * in any case.  Registered implementations and paths keep their case.
 *
 * queue_trim: s without surrounding blanks, as a palloc'd copy.
 */
static char *
queue_trim(const char *s)
{
	char	   *out;
	size_t		n;

	while (*s == ' ' || *s == '\t')
		s++;
	out = pstrdup(s);
	n = strlen(out);
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		out[--n] = '\0';
	return out;
}

/* s trimmed and in lower case; an operation also with '_' for '-' and no liger_/kbench_ prefix. */
static char *
queue_name(const char *s, bool operation)
{
	char	   *out = queue_trim(s);
	char	   *p;

	for (p = out; *p; p++)
	{
		*p = pg_ascii_tolower((unsigned char) *p);
		if (operation && *p == '-')
			*p = '_';
	}
	if (operation && strncmp(out, "liger_", 6) == 0)
		return out + 6;
	if (operation && strncmp(out, "kbench_", 7) == 0)
		return out + 7;
	return out;
}

static char *
queue_impl_name(const char *s)
{
	char	   *low = queue_name(s, false);

	if (kb_impl_builtin(low) && strcmp(low, "python") != 0 && strcmp(low, "library") != 0)
		return low;
	return pstrdup(s);
}

/*
 * A device as kbench_run takes it, trimmed: the workers' own names ("cpu",
 * "cuda:N") in any case; a device class or an agent's name ("cuda:H200",
 * "agent:gpu-07", sql/85_fleet.sql) as written, since the agents claim by
 * those exact names.
 */
static char *
queue_device_name(const char *s)
{
	char	   *low = queue_name(s, false);
	const char *p;

	if (strcmp(low, "cpu") == 0)
		return low;
	if (strncmp(low, "cuda:", 5) == 0 && low[5] != '\0')
	{
		for (p = low + 5; *p >= '0' && *p <= '9'; p++)
			;
		if (*p == '\0')
			return low;
	}
	return queue_trim(s);
}

/* Validate and queue a job (kbench_run, kbench_compare); its id. */
int64
ki_queue_job(KiJobRequest *r)
{
	const char *run_on;
	char	   *workload_text;
	char	   *protocol_text = NULL;
	char		err[1024];
	kb_status	st;
	int64		queued,
				queued_by_role,
				timeout_us,
				max_us;
	int64		id;
	char	   *caller;
	bool		isnull;
	double		est = -1;
	char		how[256] = "";
	Datum		args[11];
	Oid			types[11] = {TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, JSONBOID, INTERVALOID, INT4OID, NAMEOID,
	FLOAT8OID, JSONBOID};
	char		nulls[11] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	char	   *dbname;
	bool		worker_only = r->device == NULL;	/* no device given: never an agent's (docs/FLEET.md) */

	ki_require_workers();
	if (r->device == NULL)
		r->device = best_device();
	dbname = get_database_name(MyDatabaseId);
	if (strcmp(dbname, ki_database) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("kernelindex workers serve database \"%s\", not \"%s\"", ki_database, dbname),
				 errhint("Queue jobs in database \"%s\", or set kernelindex.database and restart the server.",
						 ki_database)));
	/* an in-server worker's device, else one that a kbench agent serves (src/fleet.c) */
	run_on = r->device;
	if (!device_served(r->device) && (run_on = ki_agent_route(r->device)) == NULL)
	{
		/* only what serves now: the workers' devices, the live agents' (issue 29) */
		char	   *agents = ki_agent_served();

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no kernelindex worker or agent serves device \"%s\"", r->device),
				 errdetail("Workers serve: %s.  Live agents serve: %s.", served_devices(), agents),
				 errhint("Name one of those; kbench_agent_status lists the agents and the device classes they serve.")));
	}
	if (r->b_set && run_on != r->device)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a paired comparison runs on an in-server worker's device, not on \"%s\"", r->device),
				 errdetail("kbench agents run single jobs; kbench_compare's interleaved job needs kb_compare in a worker."),
				 errhint("Give device => one of: %s.", served_devices())));
	if (JB_ROOT_IS_SCALAR(r->workload) || !JB_ROOT_IS_OBJECT(r->workload))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workload must be a JSON object of the operation's axes and its dtype"),
				 errhint("For example {\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}.")));
	if (r->protocol)
	{
		check_protocol(r->protocol);
		protocol_text = JsonbToCString(NULL, &r->protocol->root, VARSIZE(r->protocol));
	}
	if (isnan(r->max_minutes) || r->max_minutes < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_minutes must be a positive number of minutes"),
				 errdetail("A job estimated to take longer is refused before it is queued.")));
	/* the timeout: given (days as 24 hours, no months) or the default, within the bound */
	max_us = (int64) ki_max_job_timeout_s * USECS_PER_SEC;
	if (r->timeout)
	{
		timeout_us = ki_interval_usecs(r->timeout, "timeout", 0);
		if (timeout_us <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout must be a positive interval")));
		if (timeout_us > max_us)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("timeout must not exceed kernelindex.max_job_timeout"),
					 errdetail("kernelindex.max_job_timeout is %d seconds.", ki_max_job_timeout_s),
					 errhint("Give a shorter timeout, or ask an administrator to raise kernelindex.max_job_timeout.")));
	}
	else
		timeout_us = Min((int64) ki_job_timeout_s * USECS_PER_SEC, max_us);

	ki_require_safe_schema();

	/* the kernels library says whether it can run this, and why not */
	workload_text = JsonbToCString(NULL, &r->workload->root, VARSIZE(r->workload));
	/* a GPU's memory is checked by its worker, before allocating: no CUDA in a backend */
	for (int side = 0; side < (r->b_set ? 2 : 1); side++)
	{
		const char *impl = side ? r->impl_b : r->impl;

		st = ki_check_job(r->op, r->mode, workload_text, impl, run_on, protocol_text, err, sizeof(err));
		if (st != KB_PASSED)
			ereport(ERROR,
					(errcode(st == KB_RESOURCE_EXCEEDED ? ERRCODE_PROGRAM_LIMIT_EXCEEDED : ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot queue %s %s%s: %s", r->op, r->mode, !r->b_set ? "" : side ? " (implementation b)" : " (implementation a)", err),
					 st == KB_RESOURCE_EXCEEDED ? errdetail("The workload does not fit device %s.", r->device) : 0,
					 errhint("kbench_device_operations lists what each device can run.")));
	}

	/* how long it will take: a NOTICE past a few minutes, refused past max_minutes */
	for (int side = 0; side < (r->b_set ? 2 : 1); side++)
	{
		char		h[256];
		double		e = ki_job_estimate(r->op, r->mode, workload_text, side ? r->impl_b : r->impl, run_on,
										protocol_text, h, sizeof(h));

		if (e < 0)
		{
			est = -1;
			break;
		}
		est = (est < 0 ? 0 : est) + e;
		if (side == 0)
			strlcpy(how, h, sizeof(how));
	}
	if (est >= 0 && r->max_minutes > 0 && est > r->max_minutes * 60)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s %s is estimated to take %.1f minutes on %s, more than max_minutes (%g)",
						r->op, r->mode, est / 60, r->device, r->max_minutes),
				 errdetail("The estimate is %s.", how),
				 errhint("Queue a smaller workload or a shorter protocol, or raise max_minutes.")));
	if (est > KI_ESTIMATE_NOTICE_S)
		ereport(NOTICE,
				(errmsg("%s %s is estimated to take %.1f minutes on %s", r->op, r->mode, est / 60, r->device),
				 errdetail("The estimate is %s.", how),
				 errhint("kbench_job_status shows its phase and the time remaining; max_minutes refuses such jobs up front.")));

	caller = GetUserNameFromId(GetUserId(), false);
	args[8] = DirectFunctionCall1(namein, CStringGetDatum(caller));
	SPI_connect();

	/*
	 * The limits are exact under concurrency (issue 24): the count and the
	 * INSERT below happen under the queue's lock, held until this
	 * transaction ends, so a concurrent kbench_run counts after this one's
	 * jobs are committed (or rolled back).  One lock for the database's
	 * queue covers both limits.  Its tag is an advisory lock's with a fourth
	 * field no SQL function makes (pg_advisory_lock uses 1 and 2), so no
	 * role can take it to hold the queue up without queueing.  The count
	 * reads a snapshot taken after the lock (GetLatestSnapshot), also in a
	 * REPEATABLE READ or SERIALIZABLE transaction, whose own snapshot may
	 * predate the jobs committed meanwhile; it sees the jobs this
	 * transaction queued already (CommandCounterIncrement).
	 */
	{
		LOCKTAG		tag;
		bool		nowait = MyBackendType == B_BG_WORKER;

		/*
		 * A worker (queueing an alert's confirmation rerun as it stores a
		 * run) does not wait for a role's open transaction: it would stall
		 * the device's jobs until that role commits.  kbench__queue_confirmation
		 * records the refusal as the confirmation's error.
		 */
		SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, KI_QUEUE_LOCK_KEY, 0, KI_QUEUE_LOCK_FIELD4);
		if (LockAcquire(&tag, ExclusiveLock, false, nowait) == LOCKACQUIRE_NOT_AVAIL)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("the benchmark queue is locked by a transaction that is queueing jobs"),
					 errdetail("A kernelindex worker does not wait for the queue's lock."),
					 errhint("The transaction holds the lock until it ends: commit it.")));
	}
	CommandCounterIncrement();
	PushActiveSnapshot(GetLatestSnapshot());
	if (ki_spi_as_owner(psprintf("SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE owner = $1)"
								 " FROM %s.kbench_jobs WHERE status = 'queued'", ki_ext_schema()),
						1, &types[8], &args[8], NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not count the queue");
	PopActiveSnapshot();
	queued = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	queued_by_role = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (ki_queue_limit_per_role > 0 && queued_by_role >= ki_queue_limit_per_role)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("role %s has " INT64_FORMAT " jobs waiting in the benchmark queue", caller, queued_by_role),
				 errdetail("kernelindex.queue_limit_per_role is %d.", ki_queue_limit_per_role),
				 errhint("Wait for your queued jobs to finish, cancel some with kbench_cancel(), or ask an administrator to raise kernelindex.queue_limit_per_role.")));
	if (queued >= ki_queue_limit)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("the benchmark queue is full: " INT64_FORMAT " jobs are waiting", queued),
				 errdetail("kernelindex.queue_limit is %d.", ki_queue_limit),
				 errhint("Wait for queued jobs to finish, cancel some with kbench_cancel(), or raise kernelindex.queue_limit.")));

	args[0] = CStringGetTextDatum(r->op);
	args[1] = CStringGetTextDatum(r->mode);
	args[2] = JsonbPGetDatum(r->workload);
	if (r->impl)
		args[3] = CStringGetTextDatum(r->impl);
	else
		nulls[3] = 'n';
	args[4] = CStringGetTextDatum(r->device);
	if (r->protocol)
		args[5] = JsonbPGetDatum(r->protocol);
	else
		nulls[5] = 'n';
	{
		Interval   *iv = palloc0(sizeof(Interval));

		iv->time = timeout_us;	/* stored as hours, minutes and seconds */
		args[6] = IntervalPGetDatum(iv);
	}
	args[7] = Int32GetDatum(r->retry ? 1 : 0);
	args[9] = Float8GetDatum(est);
	if (est < 0)
		nulls[9] = 'n';
	if (r->comparison)
		args[10] = DirectFunctionCall1(jsonb_in, CStringGetDatum(r->comparison));
	else
		nulls[10] = 'n';
	if (ki_spi_as_owner(psprintf("INSERT INTO %s.kbench_jobs (operation, mode, workload, implementation, device,"
								 " protocol, timeout, retries_left, owner, estimate_s, comparison, worker_only) VALUES ($1, $2, $3, $4, $5,"
								 " coalesce($6, '{}'::pg_catalog.jsonb), $7, $8, $9, $10, $11, %s) RETURNING id",
								 ki_ext_schema(), worker_only ? "true" : "false"),
						11, types, args, nulls, false) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not queue the job");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* kbench agents LISTEN kbench_queue: they wake when this commits (no payload) */
	if (ki_spi_as_owner("SELECT pg_catalog.pg_notify('kbench_queue', '')", 0, NULL, NULL, NULL, false) != SPI_OK_SELECT)
		elog(ERROR, "could not notify the agents");
	SPI_finish();

	if (!xact_callback_registered)
	{
		RegisterXactCallback(queue_xact_callback, NULL);
		xact_callback_registered = true;
	}
	wake_at_commit = true;
	return id;
}

/* Queue a benchmark job; returns its id. */
PG_FUNCTION_INFO_V1(kbench_run);
Datum
kbench_run(PG_FUNCTION_ARGS)
{
	KiJobRequest r;

	ki_require_workers();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation, mode and workload must not be null"),
				 errhint("For example kbench_run('layer_norm', 'backward', '{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}').")));
	memset(&r, 0, sizeof(r));
	r.op = queue_name(text_to_cstring(PG_GETARG_TEXT_PP(0)), true);
	r.mode = queue_name(text_to_cstring(PG_GETARG_TEXT_PP(1)), false);
	r.workload = PG_GETARG_JSONB_P(2);
	r.impl = PG_ARGISNULL(3) ? NULL : queue_impl_name(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	r.device = PG_ARGISNULL(4) ? NULL : queue_device_name(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	r.protocol = PG_ARGISNULL(5) ? NULL : PG_GETARG_JSONB_P(5);
	r.timeout = PG_ARGISNULL(6) ? NULL : PG_GETARG_INTERVAL_P(6);
	r.retry = PG_ARGISNULL(7) ? false : PG_GETARG_BOOL(7);
	/* 0.1.0's kbench_run had eight arguments; its C symbol is this one */
	r.max_minutes = PG_NARGS() < 9 || PG_ARGISNULL(8) ? 0 : PG_GETARG_FLOAT8(8);
	if (PG_NARGS() >= 9 && !PG_ARGISNULL(8) && r.max_minutes == 0)
		r.max_minutes = -1;		/* refused as not positive */
	PG_RETURN_INT64(ki_queue_job(&r));
}

/*
 * Queue the reproduction of a run (kbench_reproduce, sql/45_reproductions_link.sql):
 * the job asks for exactly what kbench__reproduction_request says of the run,
 * and its link to the run is written here, as the extension's owner, with the
 * job that this call queued (issue 24, item 3: no user-callable function
 * links a job of the caller's choosing to a run).  The job's run is added to
 * the link by the system when the job finishes (kbench__reproduction_finished).
 */
PG_FUNCTION_INFO_V1(kbench__queue_reproduction);
Datum
kbench__queue_reproduction(PG_FUNCTION_ARGS)
{
	KiJobRequest r;
	MemoryContext cxt = CurrentMemoryContext;
	char	   *run;
	char	   *op = NULL,
			   *mode = NULL,
			   *workload = NULL,
			   *impl = NULL;
	Oid			types[3] = {TEXTOID, INT8OID, NAMEOID};
	Datum		args[3];
	int64		id;

	ki_require_workers();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the run to reproduce must not be null")));
	run = text_to_cstring(PG_GETARG_TEXT_PP(0));
	args[0] = CStringGetTextDatum(run);
	SPI_connect();
	if (ki_spi_as_owner("SELECT q.operation, q.mode, q.workload::pg_catalog.text, q.implementation"
						" FROM _kernelindex.reproduction_request($1) q",
						1, types, args, NULL, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read the reproduction request");
	if (SPI_processed == 1)
	{
		char	   *v;

		if ((v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)) != NULL)
			op = MemoryContextStrdup(cxt, v);
		if ((v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2)) != NULL)
			mode = MemoryContextStrdup(cxt, v);
		if ((v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3)) != NULL)
			workload = MemoryContextStrdup(cxt, v);
		if ((v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4)) != NULL)
			impl = MemoryContextStrdup(cxt, v);
	}
	SPI_finish();
	if (op == NULL || mode == NULL || workload == NULL || impl == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("run %s cannot be reproduced here", run),
				 errdetail("Its operation, mode or implementation is not one that kbench runs here."),
				 errhint("kbench_reproduce says why.")));

	memset(&r, 0, sizeof(r));
	r.op = queue_name(op, true);
	r.mode = queue_name(mode, false);
	r.workload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(workload)));
	r.impl = queue_impl_name(impl);
	r.device = PG_ARGISNULL(1) ? NULL : queue_device_name(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	id = ki_queue_job(&r);

	args[1] = Int64GetDatum(id);
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
	SPI_connect();
	if (ki_spi_as_owner(psprintf("INSERT INTO %s.kbench_reproduction_jobs (job_id, reported_run, owner)"
								 " VALUES ($2, $1, $3)", ki_ext_schema()),
						3, types, args, NULL, false) != SPI_OK_INSERT)
		elog(ERROR, "could not link the reproduction");
	SPI_finish();
	PG_RETURN_INT64(id);
}
