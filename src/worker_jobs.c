/*
 * worker_jobs.c: the statements the worker runs on kbench_jobs and the
 * catalog, each in a transaction of its own: find the extension, claim a
 * job, store a run's manifests and finish its job, re-queue, retention.
 */
#include "kernelindex.h"
#include "security.h"
#include "implementations.h"
#include "estimate.h"
#include "store.h"
#include "worker.h"
#include "fleet.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "miscadmin.h"
#include "commands/dbcommands.h"

char	   *ki_worker_schema = NULL;

/* Run sql (no arguments) in a transaction of its own. */
void
ki_run_in_xact(const char *what, const char *sql)
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
 * Is the extension installed in this database, at the library's version?
 * Remembers its schema.  A database whose extension is not updated yet
 * (ALTER EXTENSION kernelindex UPDATE) is skipped, with one LOG line per
 * installed version, and served once it is updated.
 */
bool
ki_worker_extension_ready(void)
{
	static char skipped[NAMEDATALEN] = "";
	const char *installed = NULL;
	bool		ok;

	StartTransactionCommand();
	ok = OidIsValid(get_extension_oid("kernelindex", true));
	if (ok && !ki_ext_version_current(&installed))
	{
		if (strcmp(skipped, installed) != 0)
			ereport(LOG,
					(errmsg("kernelindex worker skips database \"%s\": kernelindex %s is installed but the library is %s",
							get_database_name(MyDatabaseId), installed, KI_VERSION),
					 errhint("Run ALTER EXTENSION kernelindex UPDATE; the worker serves the database then.")));
		strlcpy(skipped, installed, sizeof(skipped));
		ok = false;
	}
	else if (ok)
	{
		skipped[0] = '\0';
		ki_worker_schema = MemoryContextStrdup(TopMemoryContext, ki_ext_schema());

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

/* Claim the oldest queued job of the device; false when there is none. */
bool
ki_claim_job(const char *device, claimed_job *job, MemoryContext cxt)
{
	static ki_kept claim_plan;
	SPIPlanPtr	plan = NULL;
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
	if (why == NULL)
		plan = ki_kept_plan(&claim_plan, "_kernelindex",
							 "SELECT id, operation, mode, workload::text, implementation, protocol::text,"
							 " extract(epoch FROM timeout) * 1000, comparison::text, attempts FROM _kernelindex.claim($1, $2)",
							 2, types);
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
		job->comparison = SPI_getvalue(t, d, 8);	/* NULL: a run */
		job->attempt = DatumGetInt32(SPI_getbinval(t, d, 9, &isnull));
		MemoryContextSwitchTo(old);
		found = true;
	}
	SPI_finish();
	/* the job's operation may be one registered in SQL (src/operations.c) */
	if (found)
		ki_sync_operations();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	return found;
}

/*
 * Stage one manifest of the kernels library as it handed it over: validated,
 * normalized and digested by the identity core in kb_run (kernels/manifests.c,
 * kb_manifest_finish), in this process, and written as its canonical text.
 * It is parsed back into a tree for the store and not validated or digested a
 * second time.  That is safe because nothing outside this process wrote it:
 * an implementation that runs in a child (python, a library; docs/BYO.md)
 * sends only its measurements over the socket, and kb_run validates the
 * manifests built from them here, before returning.  Anything else is a bug
 * of ours: the text must parse and name the kind expected.
 */
static void
stage_validated(ki_store *s, const ki_value *doc, ki_kind want, const char *digest, const char *what,
				Datum raw_samples)
{
	const ki_value *k = doc && doc->type == KI_OBJECT ? ki_get(doc, "kind") : NULL;

	if (k == NULL || k->type != KI_STRING || ki_kind_from_name(k->u.str.ptr, k->u.str.len) != want ||
		strlen(digest) != KI_DIGEST_LEN)
		elog(ERROR, "the kernels library handed over a %s that is not a validated %s", what, ki_kind_name(want));
	ki_store_add(s, want, digest, doc, "kbench", raw_samples, NULL);
}

static ki_value *
parse_handed(ki_arena *a, const char *json, const char *what)
{
	ki_errors	errs;
	ki_value   *doc;

	ki_errors_init(&errs, a);
	doc = ki_parse(a, json, strlen(json), &errs);
	if (doc == NULL)
		ki_pg_report(&errs, psprintf("%s from the kernels library", what));
	return doc;
}

/* The manifests of a run, as kb_run handed them over, in one store and one flush. */
static void
store_run_manifests(const kb_result *res, Datum raw_samples)
{
	ki_arena	a;
	ki_store   *s = ki_store_begin();
	ki_value   *composite;

	ki_pg_arena_init(&a);
	if (res->operation_json)
		stage_validated(s, parse_handed(&a, res->operation_json, "operation"),
						KI_KIND_OPERATION_SPEC, res->operation_digest, "operation", (Datum) 0);
	if (res->workload_json)
	{
		ki_value   *w = parse_handed(&a, res->workload_json, "workload");
		const ki_value *k = w && w->type == KI_OBJECT ? ki_get(w, "kind") : NULL;
		ki_kind		kind = k && k->type == KI_STRING ? ki_kind_from_name(k->u.str.ptr, k->u.str.len) : KI_KIND_UNKNOWN;

		stage_validated(s, w, kind == KI_KIND_WORKLOAD_SUITE ? KI_KIND_WORKLOAD_SUITE : KI_KIND_WORKLOAD_CASE,
						res->workload_digest, "workload", (Datum) 0);
	}
	if (res->implementation_json)
		stage_validated(s, parse_handed(&a, res->implementation_json, "implementation"),
						KI_KIND_IMPLEMENTATION_REVISION, res->implementation_digest, "implementation", (Datum) 0);
	composite = parse_handed(&a, res->composite_json, "run document");
	if (composite == NULL || composite->type != KI_OBJECT)
		elog(ERROR, "the kernels library handed over a run document that is not an object");
	stage_validated(s, ki_get(composite, "protocol"), KI_KIND_BENCHMARK_PROTOCOL, res->protocol_digest,
					"protocol", (Datum) 0);
	stage_validated(s, ki_get(composite, "environment"), KI_KIND_EXECUTION_ENVIRONMENT,
					res->environment_digest, "environment", (Datum) 0);
	stage_validated(s, ki_get(composite, "run"), KI_KIND_BENCHMARK_RUN, res->run_digest, "run", raw_samples);
	ki_store_flush(s);
	ki_store_end(s);
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

/* Store a run's manifests and raw samples (inside the finishing transaction, connected to SPI). */
void
ki_store_result(const kb_result *res)
{
	if (res == NULL || res->composite_json == NULL)
		return;
	store_run_manifests(res, raw_samples_datum(res));
}

/*
 * Finish the job row and NOTIFY (inside the finishing transaction,
 * connected to SPI): its run (res, may be NULL), and where it stopped: a
 * passed job is done (progress 1); any other keeps the phase and progress
 * this worker's slot shows, that is where it stopped.
 *
 * Only while the job is still this worker's attempt: running, claimed by
 * this process, with the attempt count of its claim.  Once another has
 * ended or re-queued it (a recovery, a sibling's claim of the retry), the
 * row is not this worker's to write: false, logged, and the caller rolls
 * back what it stored (ki_end_xact).
 */
bool
ki_end_job(const claimed_job *job, const char *status, const kb_result *res, const char *error)
{
	static ki_kept end_plan;
	SPIPlanPtr	plan;
	Datum		args[9];
	Oid			types[9] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, FLOAT4OID, INT4OID, INT4OID};
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	bool		have_run = res && res->composite_json != NULL;
	bool		done = strcmp(status, "passed") == 0;
	const char *phase = done ? "done" : ki_phase_name(ki_my_slot ? ki_my_slot->phase : KI_PHASE_NONE);

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
	/* a job that never got going (canceled before it started) keeps its recorded phase */
	if (phase)
		args[5] = CStringGetTextDatum(phase);
	else
		nulls[5] = 'n';
	args[6] = Float4GetDatum(done ? 1.0f : ki_my_slot && phase ? ki_my_slot->progress : 0.0f);
	if (!done && !phase)
		nulls[6] = 'n';
	args[7] = Int32GetDatum(job->attempt);
	args[8] = Int32GetDatum(MyProcPid);
	plan = ki_kept_plan(&end_plan, ki_worker_schema,
						psprintf("WITH j AS (UPDATE %s.kbench_jobs SET status = $2, run_status = $3::%s.kbench_status,"
								 " run_digest = $4, error = $5, finished_at = pg_catalog.clock_timestamp(),"
								 " phase = coalesce($6, phase), progress = coalesce($7, progress) "
								 " WHERE id = $1 AND attempts = $8 AND worker_pid = $9 AND status = 'running' AND agent IS NULL"
								 " RETURNING id) "
								 /* every role may LISTEN: the payload names no job; kbench_jobs shows one's own */
								 "SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j",
								 ki_worker_schema, ki_worker_schema),
						9, types);
	if (SPI_execute_plan(plan, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not finish job " INT64_FORMAT, job->id);
	if (SPI_processed == 0)
	{
		ereport(LOG,
				(errmsg("kernelindex worker does not record the end (%s) of job " INT64_FORMAT ": it is no longer this worker's attempt",
						status, job->id),
				 errdetail("Attempt %d was claimed by pid %d; the job was ended or re-queued since (a recovery), or claimed again.",
						   job->attempt, MyProcPid)));
		return false;
	}
	return true;
}

/* End the finishing transaction (connected to SPI): commit, or roll back what it stored. */
void
ki_end_xact(bool commit)
{
	SPI_finish();
	PopActiveSnapshot();
	if (commit)
		CommitTransactionCommand();
	else
		AbortCurrentTransaction();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Store what a run produced and finish the job, in one transaction. */
void
ki_finish_job(const claimed_job *job, const char *status, const kb_result *res, const char *error)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "storing a run");
	/* a confirmation rerun is judged by its job (sql/51_confirmations.sql); reset at commit */
	ki_set_storing_job(job->id);
	ki_store_result(res);
	ki_set_storing_job(0);
	ki_end_xact(ki_end_job(job, status, res, error));
}

/* Put this worker's job back in the queue (the worker is stopping), if still its attempt, and free its slot. */
void
ki_requeue_job(const claimed_job *job)
{
	ki_run_in_xact("re-queueing a job",
				psprintf("UPDATE %s.kbench_jobs SET status = 'queued', started_at = NULL, worker_pid = NULL, phase = 'queued',"
						 " error = 'interrupted by a server shutdown; re-queued' WHERE id = " INT64_FORMAT
						 " AND attempts = %d AND worker_pid = %d AND status = 'running' AND agent IS NULL",
						 ki_worker_schema, job->id, job->attempt, MyProcPid));
	ki_my_slot->job_id = 0;
	ki_my_slot->phase = KI_PHASE_NONE;
}

/* Delete finished jobs older than kernelindex.history_retention. */
void
ki_apply_retention(void)
{
	ki_run_in_xact("applying the job retention",
				psprintf("SELECT %s.kbench_prune_jobs(pg_catalog.make_interval(secs => %d))", ki_worker_schema, ki_retention_s));
	/* and the jobs of kbench agents gone silent, should no agent be left to claim (sql/85_fleet.sql) */
	ki_run_in_xact("recovering the jobs of lost agents",
					   pstrdup("SELECT _kernelindex.recover_agent_jobs()"));
}
