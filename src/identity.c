/*
 * identity.c: the SQL functions of manifest identity (IDENTITY.md).
 *
 *   kbench_canonical(json|jsonb|text)      RFC 8785 text of any JSON value
 *   kbench_digest(json|jsonb|text)         sha256:<hex> of a manifest
 *   kbench_normalize(json|jsonb|text)      the normalized manifest as jsonb
 *   kbench_validate(json|jsonb|text)       every problem, as rows
 *   kbench_validate_run(json|jsonb|text)   the same for {run, protocol, environment}
 *   kbench_run_digests(json|jsonb|text)    the three digests of a run document
 */
#include "kernelindex.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

/* RFC 8785 canonical text of any JSON value. */
PG_FUNCTION_INFO_V1(kbench_canonical);
Datum
kbench_canonical(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_errors	errs;
	ki_value   *doc;
	ki_buf		out;

	ki_errors_init(&errs, a);
	doc = ki_pg_arg_tree(fcinfo, 0, a, &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON");
	ki_buf_init(&out, a, 1024);
	ki_canonical(doc, &out);
	if (a->failed)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, (int) out.len));
}

/* Digest of a manifest: validated, normalized, identity body, SHA-256. */
PG_FUNCTION_INFO_V1(kbench_digest);
Datum
kbench_digest(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_kind		kind;
	ki_value   *doc;
	char		digest[KI_DIGEST_LEN + 1];

	doc = ki_pg_manifest_arg(fcinfo, 0, a, &kind);
	ki_identity_digest(a, doc, digest);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(digest, KI_DIGEST_LEN));
}

/* The normalized manifest (metadata included) as jsonb. */
PG_FUNCTION_INFO_V1(kbench_normalize);
Datum
kbench_normalize(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_kind		kind;
	ki_value   *doc;

	doc = ki_pg_manifest_arg(fcinfo, 0, a, &kind);
	PG_RETURN_JSONB_P(ki_tree_to_jsonb(doc));
}

/* Return errs as (path, rule, message) rows of a set-returning function. */
static void
return_error_rows(FunctionCallInfo fcinfo, const ki_errors *errs)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < errs->count; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(errs->items[i].path);
		values[1] = CStringGetTextDatum(errs->items[i].rule);
		values[2] = CStringGetTextDatum(errs->items[i].message);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* Every problem of a manifest as rows; none when it is valid. */
PG_FUNCTION_INFO_V1(kbench_validate);
Datum
kbench_validate(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_errors	errs;
	ki_value   *doc;
	ki_kind		kind;

	ki_errors_init(&errs, a);
	doc = ki_pg_arg_tree(fcinfo, 0, a, &errs);
	if (doc != NULL)
		ki_manifest_normalize(a, doc, &kind, &errs);
	return_error_rows(fcinfo, &errs);
	return (Datum) 0;
}

/* Every problem of a {run, protocol, environment} document as rows. */
PG_FUNCTION_INFO_V1(kbench_validate_run);
Datum
kbench_validate_run(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_errors	errs;
	ki_value   *doc;
	ki_composite c;

	ki_errors_init(&errs, a);
	doc = ki_pg_arg_tree(fcinfo, 0, a, &errs);
	if (doc != NULL)
		ki_composite_validate(a, doc, &c, &errs);
	return_error_rows(fcinfo, &errs);
	return (Datum) 0;
}

/* The run, protocol and environment digests of a consistent run document. */
PG_FUNCTION_INFO_V1(kbench_run_digests);
Datum
kbench_run_digests(PG_FUNCTION_ARGS)
{
	ki_arena   *a = ki_pg_scratch_arena();
	ki_errors	errs;
	ki_value   *doc;
	ki_composite c;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	ki_errors_init(&errs, a);
	doc = ki_pg_arg_tree(fcinfo, 0, a, &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON");
	if (!ki_composite_validate(a, doc, &c, &errs))
		ki_pg_report(&errs, "run document");
	values[0] = CStringGetTextDatum(c.run_digest);
	values[1] = CStringGetTextDatum(c.protocol_digest);
	values[2] = CStringGetTextDatum(c.environment_digest);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
