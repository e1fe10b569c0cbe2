/*
 * compare.c: paired A/B comparisons from SQL.
 *
 *   kbench_compare(...)        queue ONE job that times A and B interleaved on
 *                              one device (kernels/compare.c); its comparison row
 *   kbench_paired_ratio(a, b)  the paired statistics of kernels/stats.c over
 *                              per-round values: ratio of medians, bootstrap
 *                              95% interval, verdict
 *
 * The worker (src/worker.c) runs the job and stores both runs and the
 * result in the comparison row, in one transaction.
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "estimate.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

#include "../kernels/kbench.h"

#define MIN_ROUNDS 3
#define MAX_ROUNDS 1000

/* Queue a paired comparison; returns its id. */
PG_FUNCTION_INFO_V1(kbench_compare);
Datum
kbench_compare(PG_FUNCTION_ARGS)
{
	KiJobRequest r;
	int			rounds;
	double		same_pct;
	int64		cid,
				job;
	bool		isnull;
	char	   *caller;
	Datum		args[12];
	Oid			types[12] = {INT8OID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, INT4OID,
	FLOAT8OID, INT8OID, NAMEOID};
	char		nulls[12] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	StringInfoData cmp;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation, mode and workload must not be null"),
				 errhint("For example kbench_compare('layer_norm', 'forward', '{\"rows\": 64, \"hidden\": 256}', 'cpu', 'huggingface').")));
	rounds = PG_ARGISNULL(5) ? -1 : PG_GETARG_INT32(5);
	if (rounds < MIN_ROUNDS || rounds > MAX_ROUNDS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rounds must be between %d and %d, got %s", MIN_ROUNDS, MAX_ROUNDS,
						PG_ARGISNULL(5) ? "NULL" : psprintf("%d", rounds)),
				 errdetail("A round times a block of A's calls and a block of B's; the interval needs at least 3.")));
	same_pct = PG_ARGISNULL(8) ? NAN : PG_GETARG_FLOAT8(8);
	if (!(same_pct > 0 && same_pct < 100))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("same_pct must be a number of percent between 0 and 100, got %s",
						PG_ARGISNULL(8) ? "NULL" : psprintf("%g", same_pct)),
				 errdetail("B is the same as A when the 95%% interval of the ratio lies within 1 -+ same_pct/100 (default 2).")));

	memset(&r, 0, sizeof(r));
	r.op = text_to_cstring(PG_GETARG_TEXT_PP(0));
	r.mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	r.workload = PG_GETARG_JSONB_P(2);
	r.impl = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
	r.b_set = true;
	r.impl_b = PG_ARGISNULL(4) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(4));
	r.device = PG_ARGISNULL(6) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(6));
	r.protocol = PG_ARGISNULL(7) ? NULL : PG_GETARG_JSONB_P(7);
	r.timeout = PG_ARGISNULL(9) ? NULL : PG_GETARG_INTERVAL_P(9);
	r.max_minutes = PG_ARGISNULL(10) ? 0 : PG_GETARG_FLOAT8(10);
	if (!PG_ARGISNULL(10) && r.max_minutes == 0)
		r.max_minutes = -1;		/* refused as not positive */

	/* the comparison's id first: the job carries it */
	SPI_connect();
	if (ki_spi_as_owner(psprintf("SELECT pg_catalog.nextval(%s::pg_catalog.regclass)",
								 quote_literal_cstr(psprintf("%s.kbench_comparisons_id_seq", ki_ext_schema()))),
						0, NULL, NULL, NULL, false) != SPI_OK_SELECT)
		elog(ERROR, "could not number the comparison");
	cid = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();

	initStringInfo(&cmp);
	appendStringInfo(&cmp, "{\"id\": " INT64_FORMAT ", \"b\": ", cid);
	if (r.impl_b)
		escape_json(&cmp, r.impl_b);
	else
		appendStringInfoString(&cmp, "null");
	appendStringInfo(&cmp, ", \"rounds\": %d, \"same_pct\": %.17g}", rounds, same_pct);
	r.comparison = cmp.data;
	job = ki_queue_job(&r);

	caller = GetUserNameFromId(GetUserId(), false);
	args[0] = Int64GetDatum(cid);
	args[1] = CStringGetTextDatum(r.op);
	args[2] = CStringGetTextDatum(r.mode);
	args[3] = JsonbPGetDatum(r.workload);
	args[4] = r.impl ? CStringGetTextDatum(r.impl) : (Datum) 0;
	nulls[4] = r.impl ? ' ' : 'n';
	args[5] = r.impl_b ? CStringGetTextDatum(r.impl_b) : (Datum) 0;
	nulls[5] = r.impl_b ? ' ' : 'n';
	args[6] = CStringGetTextDatum(r.device);
	args[7] = r.protocol ? JsonbPGetDatum(r.protocol) : (Datum) 0;
	nulls[7] = r.protocol ? ' ' : 'n';
	args[8] = Int32GetDatum(rounds);
	args[9] = Float8GetDatum(same_pct);
	args[10] = Int64GetDatum(job);
	args[11] = DirectFunctionCall1(namein, CStringGetDatum(caller));
	SPI_connect();
	if (ki_spi_as_owner(psprintf("INSERT INTO %s.kbench_comparisons (id, operation, mode, workload, a, b, device,"
								 " protocol, rounds, same_pct, job_id, owner) VALUES ($1, $2, $3, $4, $5, $6, $7,"
								 " coalesce($8, '{}'::pg_catalog.jsonb), $9, $10, $11, $12)", ki_ext_schema()),
						12, types, args, nulls, false) != SPI_OK_INSERT)
		elog(ERROR, "could not record the comparison");
	SPI_finish();
	PG_RETURN_INT64(cid);
}

/* float8[] without NULLs into a palloc'd C array; n set. */
static double *
float_array(ArrayType *a, const char *what, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *v;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(a, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, n);
	v = palloc(sizeof(double) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain NULL", what),
					 errdetail("Element %d is NULL.", i + 1)));
		v[i] = DatumGetFloat8(elems[i]);
		if (!isfinite(v[i]) || v[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must hold finite times of zero or more", what),
					 errdetail("Element %d is %g.", i + 1, v[i])));
	}
	return v;
}

/* The paired statistics of per-round values a and b. */
PG_FUNCTION_INFO_V1(kbench_paired_ratio);
Datum
kbench_paired_ratio(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	double	   *a,
			   *b;
	int			na,
				nb;
	double		same_pct;
	kb_paired	p;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "kbench_paired_ratio must return a record");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("a_ns and b_ns must not be null"),
				 errhint("Give each round's time of A and of B, in the same order: kbench_paired_ratio('{10, 11, 10}', '{12, 12, 13}').")));
	same_pct = PG_ARGISNULL(2) ? NAN : PG_GETARG_FLOAT8(2);
	if (!(same_pct > 0 && same_pct < 100))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("same_pct must be a number of percent between 0 and 100"),
				 errdetail("B is the same as A when the 95%% interval of the ratio lies within 1 -+ same_pct/100 (default 2).")));
	a = float_array(PG_GETARG_ARRAYTYPE_P(0), "a_ns", &na);
	b = float_array(PG_GETARG_ARRAYTYPE_P(1), "b_ns", &nb);
	if (na != nb || na < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a_ns and b_ns must hold one value per round each, got %d and %d", na, nb),
				 errdetail("Round k's A and B are a_ns[k] and b_ns[k]: they are resampled together.")));
	kb_paired_ratio(a, b, na, same_pct, &p);
	values[0] = Float8GetDatum(p.a_median);
	values[1] = Float8GetDatum(p.b_median);
	values[2] = Float8GetDatum(p.ratio);
	nulls[2] = isnan(p.ratio);
	values[3] = Float8GetDatum(p.low);
	nulls[3] = p.verdict == NULL;
	values[4] = Float8GetDatum(p.high);
	nulls[4] = p.verdict == NULL;
	values[5] = p.verdict ? CStringGetTextDatum(p.verdict) : (Datum) 0;
	nulls[5] = p.verdict == NULL;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
