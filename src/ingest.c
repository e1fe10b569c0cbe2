/*
 * ingest.c: the one ingest path of the catalog.  A manifest or a composite
 * {run, protocol, environment} document is validated and digested by the
 * identity core, then stored by the set-based store (src/store.c,
 * sql/22_store.sql), so a run imported from a CSV, one from the public
 * catalog and one measured by the worker go through the same code.
 *
 *   ki_ingest_tree, ki_store_manifest   for the C (kernelindex.h)
 *   kbench_ingest(doc)                  any manifest, {run, protocol,
 *                                       environment}, or kbench --json's output
 */
#include "kernelindex.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include <math.h>

#include "ingest.h"
#include "catalog_writer.h"

/*
 * Store one validated, normalized manifest; true when it was new.  The
 * caller is connected to SPI.  raw_samples may be (Datum) 0 for none.
 * A store of one (see store.c): imports stage many and flush them together.
 */
bool
ki_store_manifest(ki_kind kind, const char *digest, const ki_value *manifest,
				  const char *source, Datum raw_samples)
{
	ki_store   *s = ki_store_begin();
	ki_store_item *item = ki_store_add(s, kind, digest, manifest, source, raw_samples, NULL);
	bool		inserted;

	ki_store_flush(s);
	inserted = item->inserted;
	ki_store_end(s);
	return inserted;
}

/* Is doc a composite {run, protocol, environment} document? */
bool
ki_is_composite(const ki_value *doc)
{
	return doc && doc->type == KI_OBJECT && ki_get(doc, "kind") == NULL &&
		(ki_get(doc, "run") || ki_get(doc, "protocol") || ki_get(doc, "environment"));
}

/*
 * Validate a manifest or composite document and stage it in the store:
 * protocol and environment before the run.  Fills items[] and first[] (up
 * to three) and returns how many, or -1 with errs filled.
 */
int
ki_stage_tree(ki_store *s, ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
		   ki_store_item **items, bool *first, ki_errors *errs)
{
	if (ki_is_composite(doc))
	{
		ki_composite c;

		if (!ki_composite_validate(a, doc, &c, errs))
			return -1;
		items[0] = ki_store_add(s, KI_KIND_BENCHMARK_PROTOCOL, c.protocol_digest, c.protocol, source, (Datum) 0, &first[0]);
		items[1] = ki_store_add(s, KI_KIND_EXECUTION_ENVIRONMENT, c.environment_digest, c.environment, source, (Datum) 0, &first[1]);
		items[2] = ki_store_add(s, KI_KIND_BENCHMARK_RUN, c.run_digest, c.run, source, raw_samples, &first[2]);
		return 3;
	}
	else
	{
		ki_kind		kind;
		char		digest[KI_DIGEST_LEN + 1];

		if (ki_manifest_normalize(a, doc, &kind, errs) == NULL)
			return -1;
		ki_identity_digest(a, doc, digest);
		items[0] = ki_store_add(s, kind, digest, doc, source, (Datum) 0, &first[0]);
		return 1;
	}
}

/* Validate and store a manifest or composite document (see kernelindex.h). */
int
ki_ingest_tree(ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
			   ki_stored *out, ki_errors *errs)
{
	ki_store   *s = ki_store_begin();
	ki_store_item *items[3];
	bool		first[3];
	int			n,
				i;

	n = ki_stage_tree(s, a, doc, source, raw_samples, items, first, errs);
	if (n > 0)
	{
		ki_store_flush(s);
		for (i = 0; i < n; i++)
		{
			out[i].kind = items[i]->kind;
			strlcpy(out[i].digest, items[i]->digest, sizeof(out[i].digest));
			out[i].inserted = items[i]->inserted && first[i];
		}
	}
	ki_store_end(s);
	return n;
}

/*
 * Raw samples given as JSON numbers (ns), as an int8[] datum (each rounded
 * to the nearest ns, as the worker keeps them), leaving out the indexes in
 * discarded; (Datum) 0 when there are none.  false when they are not an
 * array of finite numbers (discarded: of indexes).
 */
bool
ki_raw_samples_from(const ki_value *samples, const ki_value *discarded, Datum *out)
{
	Datum	   *elems;
	bool	   *drop;
	size_t		i,
				n = 0;

	*out = (Datum) 0;
	if (samples == NULL || samples->type == KI_NULL)
		return true;
	if (samples->type != KI_ARRAY)
		return false;
	drop = palloc0((samples->u.arr.count + 1) * sizeof(bool));
	if (discarded && discarded->type != KI_NULL)
	{
		if (discarded->type != KI_ARRAY)
			return false;
		for (i = 0; i < discarded->u.arr.count; i++)
		{
			const ki_value *d = discarded->u.arr.items[i];

			if (d->type != KI_NUMBER || d->u.num < 0 || d->u.num != floor(d->u.num) ||
				d->u.num >= (double) samples->u.arr.count)
				return false;
			drop[(size_t) d->u.num] = true;
		}
	}
	elems = palloc((samples->u.arr.count + 1) * sizeof(Datum));
	for (i = 0; i < samples->u.arr.count; i++)
	{
		const ki_value *v = samples->u.arr.items[i];

		if (v->type != KI_NUMBER || !(v->u.num >= 0 && v->u.num < 9.2e18))
			return false;
		if (!drop[i])
			elems[n++] = Int64GetDatum((int64) llround(v->u.num));
	}
	if (n > 0)
		*out = PointerGetDatum(construct_array(elems, (int) n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	return true;
}

/* Is doc what kbench --json prints: {"status", "composite", ..., "rawSamplesNs"}? */
static bool
is_kbench_result(const ki_value *doc)
{
	return doc && doc->type == KI_OBJECT && ki_get(doc, "kind") == NULL && ki_get(doc, "composite") != NULL;
}

/*
 * Ingest a manifest, a composite run document, or what kbench --json
 * printed (its operation, workload and implementation, then its run
 * document with the kept raw samples); one row per manifest.
 */
PG_FUNCTION_INFO_V1(kbench_ingest);
Datum
kbench_ingest(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	const char *source = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	ki_stored	out[6];
	ki_catalog_writer writer;
	int			n = 0,
				i;

	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("cannot ingest a null document")));
	InitMaterializedSRF(fcinfo, 0);
	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	doc = ki_pg_arg_tree(fcinfo, 0, &a, &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "JSON");
	SPI_connect();
	ki_catalog_writer_begin(&writer);
	if (is_kbench_result(doc))
	{
		static const char *const parts[] = {"operation", "workload", "implementation", "composite"};
		ki_store   *s = ki_store_begin();
		ki_store_item *items[6];
		bool		first[6];
		Datum		raw;
		size_t		p;

		if (!ki_raw_samples_from(ki_get(doc, "rawSamplesNs"), ki_get(doc, "discardedSamples"), &raw))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid kbench result: rawSamplesNs must be an array of non-negative numbers and discardedSamples one of their indexes")));
		if (!ki_is_composite(ki_get(doc, "composite")))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid kbench result: composite must be a {run, protocol, environment} document")));
		for (p = 0; p < lengthof(parts); p++)
		{
			ki_value   *part = (ki_value *) ki_get(doc, parts[p]);
			int			k;

			if (part == NULL || part->type == KI_NULL)
				continue;
			k = ki_stage_tree(s, &a, part, source, p == 3 ? raw : (Datum) 0, items + n, first + n, &errs);
			if (k < 0)
				ki_pg_report(&errs, psprintf("%s of the kbench result", parts[p]));
			n += k;
		}
		ki_store_flush(s);
		for (i = 0; i < n; i++)
		{
			out[i].kind = items[i]->kind;
			strlcpy(out[i].digest, items[i]->digest, sizeof(out[i].digest));
			out[i].inserted = items[i]->inserted && first[i];
		}
		ki_store_end(s);
	}
	else
	{
		n = ki_ingest_tree(&a, doc, source, (Datum) 0, out, &errs);
		if (n < 0)
			ki_pg_report(&errs, ki_is_composite(doc) ? "run document" : "manifest");
	}
	ki_catalog_writer_end(&writer);
	SPI_finish();
	for (i = 0; i < n; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = CStringGetTextDatum(ki_kind_name(out[i].kind));
		values[1] = CStringGetTextDatum(out[i].digest);
		values[2] = BoolGetDatum(out[i].inserted);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
