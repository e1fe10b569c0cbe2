/*
 * worker_compare.c: a paired A/B job (kbench_compare): A and B timed in
 * alternating blocks on this worker's device by the kernels library
 * (kb_compare), then, in one transaction, both runs stored through the
 * catalog's ingest path (each with its raw samples), the comparison's
 * result written into its kbench_comparisons row, and the job finished
 * (its run_digest is A's run).
 */
#include "kernelindex.h"
#include "implementations.h"
#include "estimate.h"
#include "worker.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* The job's {"id", "b", "rounds", "same_pct"}. */
typedef struct compare_args
{
	int64		id;
	char	   *b;				/* NULL: the device's own */
	int			rounds;
	double		same_pct;
} compare_args;

static bool
parse_args(const char *json, compare_args *out)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *p;
	const ki_value *v;

	memset(out, 0, sizeof(*out));
	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	p = ki_parse(&a, json, strlen(json), &errs);
	if (p == NULL || p->type != KI_OBJECT)
		return false;
	if ((v = ki_get(p, "id")) && v->type == KI_NUMBER)
		out->id = (int64) v->u.num;
	if ((v = ki_get(p, "b")) && v->type == KI_STRING)
		out->b = pnstrdup(v->u.str.ptr, v->u.str.len);
	if ((v = ki_get(p, "rounds")) && v->type == KI_NUMBER)
		out->rounds = (int) v->u.num;
	if ((v = ki_get(p, "same_pct")) && v->type == KI_NUMBER)
		out->same_pct = v->u.num;
	return out->id > 0;
}

static Datum
float_array(const double *v, int n)
{
	Datum	   *e = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		e[i] = Float8GetDatum(v[i]);
	return PointerGetDatum(construct_array(e, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* Write the comparison's result into its row (inside the finishing transaction). */
static void
store_comparison(int64 id, const kb_compare_result *r)
{
	Datum		args[13];
	Oid			types[13] = {INT8OID, TEXTOID, TEXTOID, TEXTOID, INT4OID, FLOAT8ARRAYOID, FLOAT8ARRAYOID,
	FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, FLOAT8OID, TEXTOID};
	char		nulls[13];
	bool		verdict = r->paired.verdict != NULL;

	memset(nulls, ' ', sizeof(nulls));
	args[0] = Int64GetDatum(id);
	args[1] = r->a.composite_json ? CStringGetTextDatum(r->a.run_digest) : (Datum) 0;
	nulls[1] = r->a.composite_json ? ' ' : 'n';
	args[2] = r->b.composite_json ? CStringGetTextDatum(r->b.run_digest) : (Datum) 0;
	nulls[2] = r->b.composite_json ? ' ' : 'n';
	args[3] = r->order ? CStringGetTextDatum(r->order) : (Datum) 0;
	nulls[3] = r->order ? ' ' : 'n';
	args[4] = Int32GetDatum((int32) r->calls_per_block);
	nulls[4] = r->calls_per_block > 0 ? ' ' : 'n';
	args[5] = float_array(r->a_round_ns, r->rounds);
	args[6] = float_array(r->b_round_ns, r->rounds);
	args[7] = Float8GetDatum(r->paired.a_median);
	args[8] = Float8GetDatum(r->paired.b_median);
	args[9] = Float8GetDatum(r->paired.ratio);
	args[10] = Float8GetDatum(r->paired.low);
	args[11] = Float8GetDatum(r->paired.high);
	args[12] = verdict ? CStringGetTextDatum(r->paired.verdict) : (Datum) 0;
	for (int i = 7; i <= 12; i++)
		nulls[i] = verdict ? ' ' : 'n';
	if (SPI_execute_with_args(psprintf("UPDATE %s.kbench_comparisons SET a_run = $2, b_run = $3, call_order = $4,"
									   " calls_per_block = $5, a_round_ns = $6, b_round_ns = $7, a_median_ns = $8,"
									   " b_median_ns = $9, ratio = $10, ratio_low = $11, ratio_high = $12, verdict = $13,"
									   " finished_at = pg_catalog.clock_timestamp() WHERE id = $1", ki_worker_schema),
							  13, types, args, nulls, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not store comparison " INT64_FORMAT, id);
}

/* Store both runs, the comparison and the job's end, in one transaction. */
static void
finish_compare_job(const claimed_job *job, int64 id, const char *status, const kb_compare_result *r,
				   const char *error)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "storing a comparison");
	if (r)
	{
		ki_store_result(&r->a);
		ki_store_result(&r->b);
		store_comparison(id, r);
	}
	else
		SPI_execute_with_args(psprintf("UPDATE %s.kbench_comparisons SET finished_at = pg_catalog.clock_timestamp()"
									   " WHERE id = $1", ki_worker_schema),
							  1, (Oid[]) {INT8OID}, (Datum[]) {Int64GetDatum(id)}, NULL, false, 0);
	/* the job's run is A's (when A has one, else B's) */
	ki_end_xact(ki_end_job(job, status, r ? (r->a.composite_json ? &r->a : &r->b) : NULL, error));
}

/* Run a paired A/B job; true when the worker must exit after it (as ki_run_job). */
bool
ki_run_compare_job(claimed_job *job, const char *device)
{
	kb_compare_request q;
	kb_compare_result r;
	kb_request	rb;
	compare_args args;
	kb_status	st;
	const char *status;
	char	   *volatile error = NULL;
	char	   *err;
	char	   *volatile entry_a = NULL;
	char	   *volatile version_a = NULL;
	char	   *volatile digest_a = NULL;
	char	   *volatile directory_a = NULL;
	bool		in_child;

	if (!parse_args(job->comparison, &args))
	{
		ki_finish_job(job, "failed", NULL, "invalid_request: the job's comparison is not {\"id\": ..}");
		ki_my_slot->job_id = 0;
		return false;
	}
	kb_compare_request_init(&q);
	ki_job_request(job, device, &q.a);
	/* A's registered entry, kept: resolving B's reuses the resolver's storage */
	if (q.a.entry)
		entry_a = pstrdup(q.a.entry);
	if (q.a.impl_version)
		version_a = pstrdup(q.a.impl_version);
	if (q.a.entry_digest)
		digest_a = pstrdup(q.a.entry_digest);
	if (q.a.entry_directory)
		directory_a = pstrdup(q.a.entry_directory);
	rb = q.a;
	rb.impl = args.b;
	rb.entry = NULL;
	rb.impl_version = NULL;
	ki_worker_prepare_request(&rb, job->operation);
	q.a.entry = entry_a;
	q.a.impl_version = version_a;
	q.a.entry_digest = digest_a;
	q.a.entry_directory = directory_a ? directory_a : rb.entry_directory;
	q.entry_digest_b = rb.entry_digest;
	q.impl_b = args.b;
	q.entry_b = rb.entry;
	q.impl_version_b = rb.impl_version;
	q.rounds = args.rounds;
	q.same_pct = args.same_pct;

	pgstat_report_activity(STATE_RUNNING, psprintf("running job " INT64_FORMAT ": comparing %s %s", job->id,
												   job->operation, job->mode));
	ki_watchdog_arm(job);
	st = kb_compare(&q, &r);
	ki_watchdog_disarm();
	ki_exit_if_postmaster_gone(job);
	pgstat_report_activity(STATE_IDLE, NULL);
	if (r.a.environment_digest[0])
		strlcpy(ki_my_slot->env_digest, r.a.environment_digest, sizeof(ki_my_slot->env_digest));

	if (st == KB_CANCELED && ki_got_sigterm)
	{
		kb_free_compare_result(&r);
		ki_requeue_job(job);
		return false;
	}
	ki_job_outcome(job, st, r.message, &status, &err);
	error = err;
	if (st == KB_PASSED)
		ki_my_slot->phase = KI_PHASE_STORING;
	PG_TRY();
	{
		finish_compare_job(job, args.id, status, &r, error);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		edata = CopyErrorData();
		MemoryContextSwitchTo(old);
		FlushErrorState();
		AbortCurrentTransaction();
		finish_compare_job(job, args.id, "failed", NULL, psprintf("could not store the comparison: %s", edata->message));
	}
	PG_END_TRY();
	kb_free_compare_result(&r);
	if (entry_a)
		pfree(entry_a);
	if (version_a)
		pfree(version_a);
	if (digest_a)
		pfree(digest_a);
	if (directory_a)
		pfree(directory_a);
	ki_my_slot->job_id = 0;
	ki_my_slot->progress = 0;
	ki_my_slot->phase = KI_PHASE_NONE;
	in_child = ki_impl_in_child(job->implementation) && ki_impl_in_child(args.b);
	return st == KB_TIMEOUT && ki_is_cuda_device(device) && !in_child;
}
