/*
 * worker_jobs.c: the statements the worker runs on kbench_jobs and the
 * catalog, each in a transaction of its own: find the extension, claim a
 * job, store a run's manifests and finish its job, re-queue, retention.
 */
#include "kernelindex.h"
#include "security.h"
#include "store.h"
#include "worker.h"

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

/* Is the extension installed in this database?  Remembers its schema. */
bool
ki_worker_extension_ready(void)
{
	bool		ok;

	StartTransactionCommand();
	ok = OidIsValid(get_extension_oid("kernelindex", true));
	if (ok)
	{
		ki_worker_schema = MemoryContextStrdup(TopMemoryContext, ext_schema());

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
									ki_worker_schema), 2, types);
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

/*
 * The manifests of a run reach the store as the kernels library wrote them.
 * kernels/ built each through the identity core (kb_manifest_finish:
 * validated, normalized, digested; the {run, protocol, environment}
 * document checked as the ingest path checks one), so they are validated
 * once, there: here they are only parsed, for the jsonb the store keeps,
 * and staged under the digests kernels/ gave them (kb_result).
 */
static ki_value *
parse_kernels_json(ki_arena *a, const char *json)
{
	ki_errors	errs;
	ki_value   *doc;

	ki_errors_init(&errs, a);
	doc = ki_parse(a, json, strlen(json), &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON from the kernels library");
	return doc;
}

/* Stage one manifest (a member of doc when member is not NULL) under digest. */
static void
stage_manifest(ki_store *s, const ki_value *doc, const char *member, const char *digest, Datum raw_samples)
{
	const ki_value *m = member ? ki_get(doc, member) : doc;
	const ki_value *name = m ? ki_get(m, "kind") : NULL;
	ki_kind		kind = KI_KIND_UNKNOWN;
	bool		first;

	if (name && name->type == KI_STRING)
		kind = ki_kind_from_name(name->u.str.ptr, name->u.str.len);
	if (kind == KI_KIND_UNKNOWN)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the kernels library gave a manifest without a known kind (%s)",
						member ? member : "document")));
	(void) ki_store_add(s, kind, digest, m, "kbench", raw_samples, &first);
}

/* Store the six manifests of a run in one flush. */
static void
store_result(const kb_result *res, Datum raw_samples)
{
	ki_store   *s = ki_store_begin();
	ki_arena	a;
	ki_value   *run;

	ki_pg_arena_init(&a);
	if (res->operation_json)
		stage_manifest(s, parse_kernels_json(&a, res->operation_json), NULL, res->operation_digest, (Datum) 0);
	if (res->workload_json)
		stage_manifest(s, parse_kernels_json(&a, res->workload_json), NULL, res->workload_digest, (Datum) 0);
	if (res->implementation_json)
		stage_manifest(s, parse_kernels_json(&a, res->implementation_json), NULL, res->implementation_digest,
					   (Datum) 0);
	run = parse_kernels_json(&a, res->composite_json);
	stage_manifest(s, run, "protocol", res->protocol_digest, (Datum) 0);
	stage_manifest(s, run, "environment", res->environment_digest, (Datum) 0);
	stage_manifest(s, run, "run", res->run_digest, raw_samples);
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

/* Store what a run produced and finish the job, in one transaction. */
void
ki_finish_job(const claimed_job *job, const char *status, const kb_result *res, const char *error)
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
		store_result(res, raw_samples_datum(res));
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
									   ki_worker_schema, ki_worker_schema),
							  5, types, args, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not finish job " INT64_FORMAT, job->id);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Put a job back in the queue (the worker is stopping). */
void
ki_requeue_job(int64 id)
{
	ki_run_in_xact("re-queueing a job",
				psprintf("UPDATE %s.kbench_jobs SET status = 'queued', started_at = NULL, worker_pid = NULL,"
						 " error = 'interrupted by a server shutdown; re-queued' WHERE id = " INT64_FORMAT,
						 ki_worker_schema, id));
}

/* Delete finished jobs older than kernelindex.history_retention. */
void
ki_apply_retention(void)
{
	ki_run_in_xact("applying the job retention",
				psprintf("SELECT %s.kbench_prune_jobs(pg_catalog.make_interval(secs => %d))", ki_worker_schema, ki_retention_s));
}
