/*
 * worker.c: the background workers that run benchmark jobs.
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
 * the job as timed out (device_watchdog, recover_jobs).
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"

#include <dirent.h>
#include <math.h>
#include <time.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"

#include "../kernels/kbench.h"

PGDLLEXPORT void kbench_worker_main(Datum arg);

KiShared   *ki_shared = NULL;

char	   *ki_database = NULL;
char	   *ki_devices = NULL;
int			ki_job_timeout_s = 600;
int			ki_retention_s = 7 * 24 * 3600;
int			ki_queue_limit = 1000;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The devices the postmaster registered workers for (inherited by fork). */
static char registered_devices[KI_MAX_WORKERS][KI_DEVICE_LEN];
static int	nregistered = 0;

static KiWorkerSlot *MySlot = NULL;

/* How long after a GPU job's timeout the watchdog ends a worker still inside kb_run. */
#define KI_WATCHDOG_GRACE_MS 5000

static TimeoutId watchdog_timeout = MAX_TIMEOUTS;	/* registered by GPU workers */

/* Count the NVIDIA GPUs the driver shows, without loading CUDA. */
static int
count_nvidia_gpus(void)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	DIR		   *d;
	struct dirent *e;
	int			n = 0;

	d = opendir("/proc/driver/nvidia/gpus");
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	if (visible != NULL)
	{
		int			v = 0;
		const char *p;

		if (*visible == '\0')
			return 0;
		v = 1;
		for (p = visible; *p; p++)
			if (*p == ',')
				v++;
		if (v < n)
			n = v;
	}
	return n;
}

/* Parse kernelindex.devices into registered_devices. */
static void
plan_devices(void)
{
	char	   *list = pstrdup(ki_devices ? ki_devices : "auto");
	char	   *tok,
			   *save = NULL;

	nregistered = 0;
	for (tok = strtok_r(list, ", ", &save); tok && nregistered < KI_MAX_WORKERS; tok = strtok_r(NULL, ", ", &save))
	{
		if (strcmp(tok, "auto") == 0)
		{
			int			g = count_nvidia_gpus(),
						i;

			strlcpy(registered_devices[nregistered++], "cpu", KI_DEVICE_LEN);
			for (i = 0; i < g && nregistered < KI_MAX_WORKERS; i++)
				snprintf(registered_devices[nregistered++], KI_DEVICE_LEN, "cuda:%d", i);
		}
		else if (strcmp(tok, "none") == 0)
			continue;
		else if (strcmp(tok, "cpu") == 0 || (strncmp(tok, "cuda:", 5) == 0 && tok[5] >= '0' && tok[5] <= '9'))
			strlcpy(registered_devices[nregistered++], tok, KI_DEVICE_LEN);
		else
			ereport(WARNING,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("kernelindex.devices: ignoring unknown device \"%s\"", tok),
					 errhint("Use auto, none, cpu or cuda:N, separated by commas.")));
	}
}

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
		ki_shared->nslots = nregistered;
		for (i = 0; i < nregistered; i++)
		{
			ki_shared->slots[i].registered = true;
			strlcpy(ki_shared->slots[i].device, registered_devices[i], KI_DEVICE_LEN);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

void		_PG_init(void);

/* Module load: GUCs; shared memory and workers when preloaded. */
void
_PG_init(void)
{
	int			i;
	GucContext	postmaster_level = process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP;

	/*
	 * Every setting exists with and without the preload, so that one
	 * postgresql.conf serves both.  The postmaster-level ones can only be
	 * PGC_POSTMASTER while preloading; loaded later they are read (SIGHUP)
	 * but start nothing, as no worker runs.
	 */
	DefineCustomStringVariable("kernelindex.database",
							   "Database the kernelindex workers connect to.",
							   "Jobs can be queued only in this database.",
							   &ki_database, "postgres", postmaster_level, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("kernelindex.devices",
							   "Devices to start workers for: auto, none, or a list such as cpu,cuda:0.",
							   "auto starts one worker for the CPU backend and one per visible NVIDIA GPU.",
							   &ki_devices, "auto", postmaster_level, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.job_timeout",
							"Default time limit of a benchmark job.",
							"A job that runs longer is stopped and marked timeout.",
							&ki_job_timeout_s, 600, 1, 7 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.history_retention",
							"How long finished jobs stay in kbench_jobs.",
							"Their runs stay in the catalog forever; only the job rows go.",
							&ki_retention_s, 7 * 24 * 3600, 60, INT_MAX, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.queue_limit",
							"Most jobs that may wait in the queue.",
							"kbench_run refuses new jobs beyond it.",
							&ki_queue_limit, 1000, 1, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	ki_define_security_gucs();
	ki_implementations_init();
	ki_continuous_init();		/* continuous.c: kernelindex.confirm_alerts */
	MarkGUCPrefixReserved("kernelindex");

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ki_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ki_shmem_startup;

	plan_devices();
	for (i = 0; i < nregistered; i++)
	{
		BackgroundWorker worker;

		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = 1;
		strlcpy(worker.bgw_library_name, "kernelindex", BGW_MAXLEN);
		strlcpy(worker.bgw_function_name, "kbench_worker_main", BGW_MAXLEN);
		snprintf(worker.bgw_name, BGW_MAXLEN, "kernelindex worker %s", registered_devices[i]);
		strlcpy(worker.bgw_type, "kernelindex worker", BGW_MAXLEN);
		worker.bgw_main_arg = Int32GetDatum(i);
		RegisterBackgroundWorker(&worker);
	}
}

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
static bool
take_pending_cancel(int64 job_id)
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

/* ---------------------------------------------------------------- worker */

static volatile sig_atomic_t got_sigterm = false;

static void
worker_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	if (MySlot)
		MySlot->cancel = 1;
	SetLatch(MyLatch);
	errno = save_errno;
}

static void
worker_progress(void *arg, double fraction)
{
	(void) arg;
	if (MySlot)
		MySlot->progress = (float4) fraction;
}

/* Run sql (no arguments) in a transaction of its own. */
static void
run_in_xact(const char *what, const char *sql)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, what);
	SPI_execute(sql, false, 0);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * The extension's schema, looked up inside a transaction by
 * extension_ready(): the worker builds SQL text outside transactions too.
 */
static char *worker_schema = NULL;

/* Is the extension installed in this database?  Remembers its schema. */
static bool
extension_ready(void)
{
	bool		ok;

	StartTransactionCommand();
	ok = OidIsValid(get_extension_oid("kernelindex", true));
	if (ok)
	{
		worker_schema = MemoryContextStrdup(TopMemoryContext, ext_schema());

		/*
		 * Everything the worker runs, it runs as the bootstrap superuser:
		 * with search_path pinned for the session (over ALTER DATABASE ...
		 * SET search_path too), and pg_catalog's functions named in full.
		 */
		SetConfigOption("search_path", ki_pinned_search_path(), PGC_SUSET, PGC_S_SESSION);
	}
	CommitTransactionCommand();
	return ok;
}

/*
 * Fail (or re-queue) the jobs this device left running.  One already past
 * its timeout ends as timeout and is not retried: its worker was stopped by
 * the watchdog (a device that never returned) or died after the deadline.
 */
static void
recover_jobs(const char *device)
{
	char	   *sql = psprintf(
							   "UPDATE %s.kbench_jobs j SET "
							   " status = CASE WHEN o.overdue THEN 'timeout' WHEN retries_left > 0 THEN 'queued' ELSE 'failed' END,"
							   " retries_left = CASE WHEN o.overdue THEN retries_left ELSE greatest(retries_left - 1, 0) END,"
							   " finished_at = CASE WHEN retries_left > 0 AND NOT o.overdue THEN NULL ELSE pg_catalog.clock_timestamp() END,"
							   " error = CASE WHEN o.overdue THEN"
							   "   pg_catalog.format('stopped after the job''s timeout of %%s: the device did not return, and the worker for %%s (pid %%s) was restarted',"
							   "          timeout, device, worker_pid)"
							   " ELSE pg_catalog.format('the worker for %%s (pid %%s) stopped while running the job: it was killed or the server restarted%%s',"
							   "             device, worker_pid, CASE WHEN retries_left > 0 THEN '; re-queued for its retry' ELSE '' END) END,"
							   " worker_pid = NULL "
							   "FROM (SELECT id, started_at + timeout < pg_catalog.clock_timestamp() AS overdue FROM %s.kbench_jobs"
							   "      WHERE status = 'running' AND device = %s) o "
							   "WHERE j.id = o.id",
							   worker_schema, worker_schema, quote_literal_cstr(device));

	run_in_xact("recovering jobs", sql);
}

/*
 * End the jobs of devices that no worker serves any more (the device left
 * kernelindex.devices): those left running fail, as their worker will never
 * come back; those queued are canceled, as none will ever claim them.  Run
 * by the first worker when it starts.
 */
static void
recover_orphaned_jobs(void)
{
	StringInfoData served;
	int			i;

	initStringInfo(&served);
	for (i = 0; i < ki_shared->nslots; i++)
		appendStringInfo(&served, "%s%s", i ? ", " : "", quote_literal_cstr(ki_shared->slots[i].device));
	if (served.len == 0)
		return;
	run_in_xact("recovering jobs of devices no worker serves",
				psprintf("UPDATE %s.kbench_jobs SET"
						 " status = CASE WHEN status = 'running' THEN 'failed' ELSE 'canceled' END,"
						 " finished_at = pg_catalog.clock_timestamp(),"
						 " error = CASE WHEN status = 'running'"
						 "   THEN pg_catalog.format('the worker for %%s (pid %%s) stopped while running the job,"
						 " and no worker serves %%s any more (kernelindex.devices)', device, worker_pid, device)"
						 "   ELSE pg_catalog.format('no worker serves %%s any more (kernelindex.devices)', device) END,"
						 " worker_pid = NULL"
						 " WHERE status IN ('queued', 'running') AND device NOT IN (%s)",
						 worker_schema, served.data));
}

typedef struct claimed_job
{
	int64		id;
	char	   *operation;
	char	   *mode;
	char	   *workload;
	char	   *implementation;
	char	   *protocol;
	double		timeout_ms;
} claimed_job;

/* Claim the oldest queued job of the device; false when there is none. */
static bool
claim_job(const char *device, claimed_job *job, MemoryContext cxt)
{
	static SPIPlanPtr plan = NULL;
	Datum		args[2];
	Oid			types[2] = {TEXTOID, INT4OID};
	bool		found = false;
	static bool warned = false;
	char	   *why = NULL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "claiming a job");
	/* no job runs while a role that is not a superuser may create objects in the schema */
	if (!ki_schema_is_safe(&why))
	{
		if (!warned)
			ereport(WARNING,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("kernelindex worker for %s runs no job while others may create objects in the extension's schema", device),
					 errdetail("%s.", why),
					 errhint("Revoke CREATE on the schema from every role but a superuser; the queued jobs run then.")));
		warned = true;
	}
	else
		warned = false;
	if (why == NULL && plan == NULL)
	{
		plan = SPI_prepare(psprintf("SELECT id, operation, mode, workload::text, implementation, protocol::text,"
									" extract(epoch FROM timeout) * 1000 FROM %s.kbench__claim($1, $2)",
									worker_schema), 2, types);
		if (plan == NULL)
			elog(ERROR, "could not prepare the claim: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
	}
	args[0] = CStringGetTextDatum(device);
	args[1] = Int32GetDatum(MyProcPid);
	if (why == NULL && SPI_execute_plan(plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not claim a job");
	if (why == NULL && SPI_processed == 1)
	{
		HeapTuple	t = SPI_tuptable->vals[0];
		TupleDesc	d = SPI_tuptable->tupdesc;
		MemoryContext old = MemoryContextSwitchTo(cxt);
		bool		isnull;

		job->id = DatumGetInt64(SPI_getbinval(t, d, 1, &isnull));
		job->operation = SPI_getvalue(t, d, 2);
		job->mode = SPI_getvalue(t, d, 3);
		job->workload = SPI_getvalue(t, d, 4);
		job->implementation = SPI_getvalue(t, d, 5);
		job->protocol = SPI_getvalue(t, d, 6);
		job->timeout_ms = DatumGetFloat8(DirectFunctionCall1(numeric_float8,
															 SPI_getbinval(t, d, 7, &isnull)));
		MemoryContextSwitchTo(old);
		found = true;
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	return found;
}

/* Protocol overrides of a job ({"warmup_ms": ...}) into the request. */
static void
apply_protocol(kb_request *req, const char *protocol_json)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *p;
	const ki_value *v;

	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	p = ki_parse(&a, protocol_json, strlen(protocol_json), &errs);
	if (p == NULL)
		return;
	if ((v = ki_get(p, "warmup_ms")) && v->type == KI_NUMBER)
		req->warmup_ms = v->u.num;
	if ((v = ki_get(p, "rep_ms")) && v->type == KI_NUMBER)
		req->rep_ms = v->u.num;
	if ((v = ki_get(p, "flush_bytes")) && v->type == KI_NUMBER)
		req->flush_bytes = (int64_t) v->u.num;
	if ((v = ki_get(p, "max_samples")) && v->type == KI_NUMBER)
		req->max_samples = (int64_t) v->u.num;
	if ((v = ki_get(p, "seed")) && v->type == KI_NUMBER)
		req->seed = (uint64_t) v->u.num;
	if ((v = ki_get(p, "check")) && (v->type == KI_TRUE || v->type == KI_FALSE))
		req->check = v->type == KI_TRUE;
}

/* Parse, validate and store one manifest text from the kernels library. */
static void
store_text(const char *json, const char *source, Datum raw_samples)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	ki_stored	out[3];

	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	doc = ki_parse(&a, json, strlen(json), &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON from the kernels library");
	if (ki_ingest_tree(&a, doc, source, raw_samples, out, &errs) < 0)
		ki_pg_report(&errs, "manifest from the kernels library");
}

/* The kept raw samples as an int8[] datum, or 0. */
static Datum
raw_samples_datum(const kb_result *res)
{
	Datum	   *elems;
	int64		i,
				n = 0;

	if (res->nsamples <= 0 || res->samples_ns == NULL)
		return (Datum) 0;
	elems = palloc(sizeof(Datum) * res->nsamples);
	for (i = 0; i < res->nsamples; i++)
		if (res->sample_kept == NULL || res->sample_kept[i])
			elems[n++] = Int64GetDatum((int64) llround(res->samples_ns[i]));
	if (n == 0)
		return (Datum) 0;
	return PointerGetDatum(construct_array(elems, (int) n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* Store what a run produced and finish the job, in one transaction. */
static void
finish_job(const claimed_job *job, const char *status, const kb_result *res, const char *error)
{
	Datum		args[5];
	Oid			types[5] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	bool		have_run = res && res->composite_json != NULL;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "storing a run");
	if (have_run)
	{
		if (res->operation_json)
			store_text(res->operation_json, "kbench", (Datum) 0);
		if (res->workload_json)
			store_text(res->workload_json, "kbench", (Datum) 0);
		if (res->implementation_json)
			store_text(res->implementation_json, "kbench", (Datum) 0);
		store_text(res->composite_json, "kbench", raw_samples_datum(res));
	}
	args[0] = Int64GetDatum(job->id);
	args[1] = CStringGetTextDatum(status);
	if (have_run)
	{
		args[2] = CStringGetTextDatum(kb_result_run_status(res));
		args[3] = CStringGetTextDatum(res->run_digest);
	}
	else
	{
		nulls[2] = 'n';
		nulls[3] = 'n';
	}
	if (error && error[0])
		args[4] = CStringGetTextDatum(error);
	else
		nulls[4] = 'n';
	if (SPI_execute_with_args(psprintf(
									   "WITH j AS (UPDATE %s.kbench_jobs SET status = $2, run_status = $3::%s.kbench_status,"
									   " run_digest = $4, error = $5, finished_at = pg_catalog.clock_timestamp(), progress = 1 "
									   " WHERE id = $1 RETURNING id) "
									   /* every role may LISTEN: the payload names no job; kbench_jobs shows one's own */
									   "SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j",
									   worker_schema, worker_schema),
							  5, types, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not finish job " INT64_FORMAT, job->id);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Put a job back in the queue (the worker is stopping). */
static void
requeue_job(int64 id)
{
	run_in_xact("re-queueing a job",
				psprintf("UPDATE %s.kbench_jobs SET status = 'queued', started_at = NULL, worker_pid = NULL,"
						 " error = 'interrupted by a server shutdown; re-queued' WHERE id = " INT64_FORMAT,
						 worker_schema, id));
}

/*
 * The worst case, a CUDA backend that does not return although kb_run gave
 * every wait a deadline.  Signal context, with the worker blocked inside
 * kb_run: no transaction is open and no lock is held there, so this releases
 * shared memory as proc_exit would (as bgworker_die's FATAL does from its
 * signal handler too), then leaves with _exit(1) rather than exit(): the
 * CUDA runtime's exit handlers could wait on the very call interrupted.  The
 * postmaster starts a new worker, whose recover_jobs ends the job as timeout.
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
 * Run one claimed job.  True when the worker must exit after it: a GPU job
 * that timed out may have left a kernel running (see the header comment).
 */
static bool
run_job(claimed_job *job, const char *device)
{
	kb_request	req;
	kb_result	res;
	kb_status	st;
	struct timespec now;
	const char *status;
	char	   *volatile error = NULL;

	MySlot->cancel = 0;
	MySlot->progress = 0;
	MySlot->started_at = GetCurrentTimestamp();
	pg_write_barrier();
	MySlot->job_id = job->id;
	/* a cancel that arrived between the claim and now was left pending */
	if (take_pending_cancel(job->id))
		MySlot->cancel = 1;

	kb_request_init(&req);
	req.op = job->operation;
	req.mode = job->mode;
	req.axes_json = job->workload;
	req.impl = job->implementation;
	req.device = device;
	ki_worker_prepare_request(&req, job->operation);	/* python interpreter, registered entries */
	apply_protocol(&req, job->protocol ? job->protocol : "{}");
	req.cancel = &MySlot->cancel;
	clock_gettime(CLOCK_MONOTONIC, &now);
	req.deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (job->timeout_ms * 1e6);
	req.progress = worker_progress;
	req.progress_arg = NULL;

	pgstat_report_activity(STATE_RUNNING, psprintf("running job " INT64_FORMAT ": %s %s", job->id,
												   job->operation, job->mode));
	memset(&res, 0, sizeof(res));
	if (watchdog_timeout != MAX_TIMEOUTS)
		enable_timeout_after(watchdog_timeout,
							 (int) Min(job->timeout_ms + KI_WATCHDOG_GRACE_MS, (double) INT_MAX));
	st = kb_run(&req, &res);
	if (watchdog_timeout != MAX_TIMEOUTS)
		disable_timeout(watchdog_timeout, false);
	pgstat_report_activity(STATE_IDLE, NULL);

	if (st == KB_CANCELED && got_sigterm)
	{
		kb_free_result(&res);
		requeue_job(job->id);
		MySlot->job_id = 0;
		return false;
	}
	switch (st)
	{
		case KB_PASSED:
			status = "passed";
			break;
		case KB_TIMEOUT:
			status = "timeout";
			error = psprintf("stopped after the job's timeout of %.0f s%s%s%s", job->timeout_ms / 1000.0,
							 res.message[0] ? " (" : "", res.message, res.message[0] ? ")" : "");
			break;
		case KB_CANCELED:
			status = "canceled";
			error = "canceled by request";
			break;
		default:
			status = "failed";
			error = psprintf("%s: %s", kb_status_name(st), res.message[0] ? res.message : "no detail");
			break;
	}
	PG_TRY();
	{
		finish_job(job, status, &res, error);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		edata = CopyErrorData();
		MemoryContextSwitchTo(old);
		FlushErrorState();
		AbortCurrentTransaction();
		finish_job(job, "failed", NULL, psprintf("could not store the run: %s", edata->message));
	}
	PG_END_TRY();
	kb_free_result(&res);
	MySlot->job_id = 0;
	MySlot->progress = 0;
	/* a child process's timeout leaves nothing running here (src/implementations.c) */
	return st == KB_TIMEOUT && ki_is_cuda_device(device) && !ki_impl_in_child(job->implementation);
}

/* The product name the CUDA backend gives for device ("cuda:N"), or NULL. */
static char *
cuda_product(const char *device)
{
	char	   *json = kb_devices_json();
	char	   *product = NULL;
	ki_arena	a;
	ki_errors	errs;
	ki_value   *list;

	if (json == NULL)
		return NULL;
	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	list = ki_parse(&a, json, strlen(json), &errs);
	for (size_t i = 0; list && list->type == KI_ARRAY && i < list->u.arr.count; i++)
	{
		const ki_value *name = ki_get(list->u.arr.items[i], "name");
		const ki_value *p = ki_get(list->u.arr.items[i], "product");

		if (name && name->type == KI_STRING && p && p->type == KI_STRING &&
			name->u.str.len == strlen(device) && memcmp(name->u.str.ptr, device, name->u.str.len) == 0)
			product = pnstrdup(p->u.str.ptr, p->u.str.len);
	}
	kb_free(json);
	return product;
}

/* Delete finished jobs older than kernelindex.history_retention. */
static void
apply_retention(void)
{
	run_in_xact("applying the job retention",
				psprintf("SELECT %s.kbench_prune_jobs(pg_catalog.make_interval(secs => %d))", worker_schema, ki_retention_s));
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
	MySlot->pid = 0;
	MySlot->latch = NULL;
	MySlot->job_id = 0;
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

	MySlot = &ki_shared->slots[slot];
	strlcpy(device, MySlot->device, sizeof(device));
	LWLockAcquire(ki_shared->lock, LW_EXCLUSIVE);
	MySlot->pid = MyProcPid;
	MySlot->latch = MyLatch;
	MySlot->job_id = 0;
	MySlot->cancel = 0;
	LWLockRelease(ki_shared->lock);
	before_shmem_exit(release_slot, (Datum) 0);

	if (strcmp(device, "cpu") == 0)
		strlcpy(MySlot->product, "CPU (C reference, kbench cpu backend)", sizeof(MySlot->product));
	else
	{
		char		why[256];
		char	   *product;

		if (!kb_cuda_available(why, sizeof(why)))
			snprintf(MySlot->product, sizeof(MySlot->product), "unavailable: %s", why);
		else if ((product = cuda_product(device)) != NULL)
			strlcpy(MySlot->product, product, sizeof(MySlot->product));
		else
			snprintf(MySlot->product, sizeof(MySlot->product), "unavailable: %s does not exist", device);
		watchdog_timeout = RegisterTimeout(USER_TIMEOUT, device_watchdog);
	}

	BackgroundWorkerInitializeConnection(ki_database, NULL, 0);
	jobcxt = AllocSetContextCreate(TopMemoryContext, "kbench job", ALLOCSET_DEFAULT_SIZES);
	elog(LOG, "kernelindex worker for %s started in database \"%s\"", device, ki_database);

	while (!got_sigterm)
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
			ready = extension_ready();
			if (ready)
			{
				recover_jobs(device);
				if (slot == 0)
					recover_orphaned_jobs();
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
			apply_retention();
			last_retention = GetCurrentTimestamp();
		}
		ResetLatch(MyLatch);
		MemoryContextReset(jobcxt);
		if (claim_job(device, &job, jobcxt))
		{
			if (take_pending_cancel(job.id))
			{
				finish_job(&job, "canceled", NULL, "canceled before it started");
				continue;
			}
			if (run_job(&job, device))
			{
				ereport(LOG,
						(errmsg("kernelindex worker for %s exits after job " INT64_FORMAT " timed out",
								device, job.id),
						 errdetail("A kernel may still be running; a new worker starts with a fresh CUDA context.")));
				exit_code = 1;	/* the postmaster restarts the worker */
				break;
			}
			continue;			/* look for the next job at once */
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 60000L,
						 PG_WAIT_EXTENSION);
	}
	proc_exit(exit_code);		/* release_slot clears the slot */
}
