/*
 * catalog.c: the one ingest path of the catalog, and the imports built on it.
 *
 *   kbench_ingest(doc)                  any manifest, or {run, protocol, environment}
 *   kbench_import_catalog_staged()      a kernelindex.dev JSON-lines export,
 *                                       \copy'd into kbench_import_staging
 *   kbench_import_liger(csv text)       Liger-Kernel's all_benchmark_data.csv
 *
 * Everything is validated and digested by the identity core, then stored by
 * the SQL function kbench__store() (sql/20_catalog.sql), so a run imported
 * from a CSV, one from the public catalog and one measured by the worker go
 * through the same code.
 */
#include "kernelindex.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "liger/liger.h"

static SPIPlanPtr store_plan = NULL;

/*
 * Digests already stored by the import running now: an import meets the
 * same operation, protocol or environment hundreds of times and needs to
 * store it once.  Created by import_begin(), dropped by import_end() (or at
 * the next import_begin() after an error).
 */
static HTAB *import_seen = NULL;
static MemoryContext import_seen_cxt = NULL;

static void
import_begin(void)
{
	HASHCTL		hctl;

	if (import_seen_cxt)
		MemoryContextDelete(import_seen_cxt);
	import_seen_cxt = AllocSetContextCreate(TopMemoryContext, "kbench import digests", ALLOCSET_DEFAULT_SIZES);
	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = KI_DIGEST_LEN + 1;
	hctl.entrysize = KI_DIGEST_LEN + 1;
	hctl.hcxt = import_seen_cxt;
	import_seen = hash_create("kbench import digests", 8192, &hctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

static void
import_end(void)
{
	import_seen = NULL;
	if (import_seen_cxt)
		MemoryContextDelete(import_seen_cxt);
	import_seen_cxt = NULL;
}

/*
 * Store one validated, normalized manifest; true when it was new.  The
 * caller is connected to SPI.  raw_samples may be (Datum) 0 for none.
 */
bool
ki_store_manifest(ki_kind kind, const char *digest, const ki_value *manifest,
				  const char *source, Datum raw_samples)
{
	Datum		args[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	bool		isnull;
	Datum		result;
	int			rc;

	if (import_seen != NULL && raw_samples == (Datum) 0)
	{
		bool		found;

		hash_search(import_seen, digest, HASH_ENTER, &found);
		if (found)
			return false;
	}
	if (store_plan == NULL)
	{
		Oid			types[5] = {TEXTOID, TEXTOID, JSONBOID, TEXTOID, INT8ARRAYOID};
		char	   *sql = psprintf("SELECT %s.kbench__store($1, $2, $3, $4, $5)", ext_schema());
		SPIPlanPtr	plan = SPI_prepare(sql, 5, types);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		store_plan = plan;
	}
	args[0] = CStringGetTextDatum(ki_kind_name(kind));
	args[1] = CStringGetTextDatum(digest);
	args[2] = JsonbPGetDatum(ki_tree_to_jsonb(manifest));
	if (source)
		args[3] = CStringGetTextDatum(source);
	else
	{
		args[3] = (Datum) 0;
		nulls[3] = 'n';
	}
	args[4] = raw_samples;
	if (raw_samples == (Datum) 0)
		nulls[4] = 'n';
	rc = SPI_execute_plan(store_plan, args, nulls, false, 1);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "kbench__store failed: %s", SPI_result_code_string(rc));
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return !isnull && DatumGetBool(result);
}

/* Is doc a composite {run, protocol, environment} document? */
static bool
is_composite(const ki_value *doc)
{
	return doc && doc->type == KI_OBJECT && ki_get(doc, "kind") == NULL &&
		(ki_get(doc, "run") || ki_get(doc, "protocol") || ki_get(doc, "environment"));
}

/* Validate and store a manifest or composite document (see kernelindex.h). */
int
ki_ingest_tree(ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
			   ki_stored *out, ki_errors *errs)
{
	if (is_composite(doc))
	{
		ki_composite c;

		if (!ki_composite_validate(a, doc, &c, errs))
			return -1;
		out[0].kind = KI_KIND_BENCHMARK_PROTOCOL;
		strlcpy(out[0].digest, c.protocol_digest, sizeof(out[0].digest));
		out[0].inserted = ki_store_manifest(out[0].kind, c.protocol_digest, c.protocol, source, (Datum) 0);
		out[1].kind = KI_KIND_EXECUTION_ENVIRONMENT;
		strlcpy(out[1].digest, c.environment_digest, sizeof(out[1].digest));
		out[1].inserted = ki_store_manifest(out[1].kind, c.environment_digest, c.environment, source, (Datum) 0);
		out[2].kind = KI_KIND_BENCHMARK_RUN;
		strlcpy(out[2].digest, c.run_digest, sizeof(out[2].digest));
		out[2].inserted = ki_store_manifest(out[2].kind, c.run_digest, c.run, source, raw_samples);
		return 3;
	}
	else
	{
		ki_kind		kind;

		if (ki_manifest_normalize(a, doc, &kind, errs) == NULL)
			return -1;
		out[0].kind = kind;
		ki_identity_digest(a, doc, out[0].digest);
		out[0].inserted = ki_store_manifest(kind, out[0].digest, doc, source, (Datum) 0);
		return 1;
	}
}

/* Ingest a manifest or a composite run document; one row per manifest. */
PG_FUNCTION_INFO_V1(kbench_ingest);
Datum
kbench_ingest(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	const char *source = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	ki_stored	out[3];
	int			n,
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
	n = ki_ingest_tree(&a, doc, source, (Datum) 0, out, &errs);
	if (n < 0)
		ki_pg_report(&errs, is_composite(doc) ? "run document" : "manifest");
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

/* ---------------------------------------------------------------- imports */

typedef struct import_counts
{
	int64		id;
	int64		lines;
	int64		inserted;
	int64		present;
	int64		skipped;
	int64		rejected;
} import_counts;

static SPIPlanPtr reject_plan = NULL;

static void
record_rejection(import_counts *c, int64 line, const char *reason, bool skipped)
{
	Datum		args[4];

	if (reject_plan == NULL)
	{
		Oid			types[4] = {INT8OID, INT8OID, TEXTOID, BOOLOID};
		char	   *sql = psprintf("INSERT INTO %s.kbench_import_rejections (import_id, line, reason, skipped) "
								   "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", ext_schema());

		reject_plan = SPI_prepare(sql, 4, types);
		if (reject_plan == NULL)
			elog(ERROR, "SPI_prepare failed");
		SPI_keepplan(reject_plan);
	}
	args[0] = Int64GetDatum(c->id);
	args[1] = Int64GetDatum(line);
	args[2] = CStringGetTextDatum(reason);
	args[3] = BoolGetDatum(skipped);
	if (SPI_execute_plan(reject_plan, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record an import rejection");
	if (skipped)
		c->skipped++;
	else
		c->rejected++;
}

static int64
start_import(const char *kind, const char *source)
{
	Datum		args[2];
	Oid			types[2] = {TEXTOID, TEXTOID};
	char		nulls[2] = {' ', ' '};
	bool		isnull;

	args[0] = CStringGetTextDatum(kind);
	if (source)
		args[1] = CStringGetTextDatum(source);
	else
		nulls[1] = 'n';
	if (SPI_execute_with_args(psprintf("INSERT INTO %s.kbench_imports (kind, source) VALUES ($1, $2) RETURNING id",
									   ext_schema()), 2, types, args, nulls, false, 1) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not record the import");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

static void
finish_import(import_counts *c)
{
	Datum		args[6];
	Oid			types[6] = {INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};

	args[0] = Int64GetDatum(c->id);
	args[1] = Int64GetDatum(c->lines);
	args[2] = Int64GetDatum(c->inserted);
	args[3] = Int64GetDatum(c->present);
	args[4] = Int64GetDatum(c->skipped);
	args[5] = Int64GetDatum(c->rejected);
	if (SPI_execute_with_args(psprintf("UPDATE %s.kbench_imports SET finished_at = pg_catalog.clock_timestamp(), lines = $2, "
									   "inserted = $3, present = $4, skipped = $5, rejected = $6 WHERE id = $1",
									   ext_schema()), 6, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the import's counts");
}

static Datum
counts_tuple(FunctionCallInfo fcinfo, const import_counts *c)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(c->id);
	values[1] = Int64GetDatum(c->lines);
	values[2] = Int64GetDatum(c->inserted);
	values[3] = Int64GetDatum(c->present);
	values[4] = Int64GetDatum(c->skipped);
	values[5] = Int64GetDatum(c->rejected);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

/* The digest column of each manifest-bearing table of a catalog export. */
static const struct
{
	const char *table;
	const char *column;			/* NULL: the digest is computed, none is stored */
	bool		composite;
}			export_tables[] =
{
	{"operations", "semanticDigest", false},
	{"workloads", "workloadDigest", false},
	{"implementations", "implementationDigest", false},
	{"projects", NULL, false},
	{"benchmark_runs", "runDigest", true},
	{"serving_runs", "runDigest", false},
	{"serving_configurations", "configurationDigest", false},
	{"serving_stack_revisions", "stackDigest", false},
	{"serving_workloads", "workloadDigest", false},
	{"model_revisions", "modelDigest", false},
};

/* Tables of an export that carry no manifest; their rows are kept verbatim. */
static const char *const plain_tables[] = {
	"measurements", "record_events", "artifacts", "sources", "operation_aliases",
	"serving_measurements",
};

static SPIPlanPtr rows_plan = NULL;
static SPIPlanPtr source_row_plan = NULL;

static void
keep_plain_row(const char *table, const ki_value *row, import_counts *c)
{
	const ki_value *id = ki_get(row, "id");
	ki_arena	a;
	ki_buf		idbuf;
	Datum		args[3];
	Oid			types[3] = {TEXTOID, TEXTOID, JSONBOID};

	ki_pg_arena_init(&a);
	ki_buf_init(&idbuf, &a, 80);
	if (id && id->type == KI_STRING)
		ki_buf_put(&idbuf, id->u.str.ptr, id->u.str.len);
	else
		ki_canonical(row, &idbuf);	/* rows without an id: the row is its own key */
	if (rows_plan == NULL)
	{
		rows_plan = SPI_prepare(psprintf("INSERT INTO %s.kbench_catalog_rows (table_name, row_id, row) "
										 "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", ext_schema()), 3, types);
		SPI_keepplan(rows_plan);
	}
	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(ki_buf_cstr(&idbuf));
	args[2] = JsonbPGetDatum(ki_tree_to_jsonb(row));
	SPI_execute_plan(rows_plan, args, NULL, false, 0);
	if (SPI_processed > 0)
		c->inserted++;
	else
		c->present++;
}

/* Keep the export's own row (minus the manifest) beside the manifest. */
static void
keep_source_row(const char *table, const char *digest, ki_arena *a, const ki_value *row)
{
	ki_value	copy = *row;
	ki_member  *m = ki_alloc(a, (row->u.obj.count + 1) * sizeof(ki_member));
	size_t		i,
				n = 0;
	Datum		args[3];
	Oid			types[3] = {TEXTOID, TEXTOID, JSONBOID};

	for (i = 0; i < row->u.obj.count; i++)
		if (!(row->u.obj.members[i].key.len == 8 &&
			  memcmp(row->u.obj.members[i].key.ptr, "manifest", 8) == 0))
			m[n++] = row->u.obj.members[i];
	copy.u.obj.members = m;
	copy.u.obj.count = n;
	if (source_row_plan == NULL)
	{
		source_row_plan = SPI_prepare(psprintf("INSERT INTO %s.kbench_catalog_source_rows (digest, table_name, row) "
											   "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", ext_schema()), 3, types);
		SPI_keepplan(source_row_plan);
	}
	args[0] = CStringGetTextDatum(digest);
	args[1] = CStringGetTextDatum(table);
	args[2] = JsonbPGetDatum(ki_tree_to_jsonb(&copy));
	SPI_execute_plan(source_row_plan, args, NULL, false, 0);
}

/* Import one line of a catalog export. */
static void
import_catalog_line(const char *line, size_t len, int64 lineno, import_counts *c)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc,
			   *row,
			   *manifest;
	const ki_value *table;
	size_t		t;
	char	   *tname;

	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	c->lines++;
	doc = ki_parse(&a, line, len, &errs);
	if (doc == NULL)
	{
		record_rejection(c, lineno, psprintf("bad JSON: %s%s%s", errs.items[0].message,
											 errs.items[0].path[0] ? " at " : "", errs.items[0].path), false);
		return;
	}
	table = ki_get(doc, "table");
	row = ki_get(doc, "row");
	if (table == NULL || table->type != KI_STRING || row == NULL || row->type != KI_OBJECT)
	{
		record_rejection(c, lineno, "not a catalog export line: expected {\"table\": ..., \"row\": {...}}", false);
		return;
	}
	tname = pnstrdup(table->u.str.ptr, table->u.str.len);
	manifest = ki_get(row, "manifest");
	for (t = 0; t < lengthof(export_tables); t++)
	{
		const ki_value *stored_digest;
		ki_stored	out[3];
		int			n;
		const char *digest;

		if (strcmp(tname, export_tables[t].table) != 0)
			continue;
		if (manifest == NULL)
		{
			record_rejection(c, lineno, psprintf("a %s row without a manifest", tname), false);
			return;
		}
		if (export_tables[t].composite != is_composite(manifest))
		{
			record_rejection(c, lineno, export_tables[t].composite ?
							 "unknown kind: a benchmark_runs manifest must be a {run, protocol, environment} document" :
							 "unknown kind: the manifest has no known kind", false);
			return;
		}
		n = ki_ingest_tree(&a, manifest, "kernelindex-catalog", (Datum) 0, out, &errs);
		if (n < 0)
		{
			const ki_error *e = &errs.items[0];

			record_rejection(c, lineno, psprintf("%s: %s%s%s (rule %s)",
												 strcmp(e->rule, "kind") == 0 ? "unknown kind" : "invalid manifest",
												 e->message, e->path[0] ? " at " : "", e->path, e->rule), false);
			return;
		}
		digest = out[n - 1].digest;
		if (export_tables[t].column)
		{
			stored_digest = ki_get(row, export_tables[t].column);
			if (stored_digest == NULL || stored_digest->type != KI_STRING ||
				stored_digest->u.str.len != KI_DIGEST_LEN ||
				memcmp(stored_digest->u.str.ptr, digest, KI_DIGEST_LEN) != 0)
			{
				/* the manifest was valid and is stored; the line's claim is wrong */
				record_rejection(c, lineno, psprintf("digest mismatch: %s says %.*s but the manifest digests to %s",
													 export_tables[t].column,
													 stored_digest && stored_digest->type == KI_STRING ? (int) stored_digest->u.str.len : 7,
													 stored_digest && stored_digest->type == KI_STRING ? stored_digest->u.str.ptr : "nothing",
													 digest), false);
				return;
			}
		}
		keep_source_row(tname, digest, &a, row);
		if (out[n - 1].inserted)
			c->inserted++;
		else
			c->present++;
		return;
	}
	for (t = 0; t < lengthof(plain_tables); t++)
		if (strcmp(tname, plain_tables[t]) == 0)
		{
			keep_plain_row(tname, row, c);
			return;
		}
	record_rejection(c, lineno, psprintf("unknown table \"%s\"", tname), false);
}

/*
 * Import the lines waiting in kbench_import_staging (put there by \copy, or
 * by kbench_import_catalog(path)), in order; the staging table is emptied.
 */
PG_FUNCTION_INFO_V1(kbench_import_catalog_staged);
Datum
kbench_import_catalog_staged(PG_FUNCTION_ARGS)
{
	import_counts c;
	Portal		portal;
	MemoryContext linecxt,
				oldcxt;
	const char *source = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		lineno = 0;

	memset(&c, 0, sizeof(c));
	SPI_connect();
	SPI_execute(psprintf("LOCK TABLE %s.kbench_import_staging IN EXCLUSIVE MODE", ext_schema()), false, 0);
	c.id = start_import("catalog", source);
	import_begin();
	portal = SPI_cursor_open_with_args("staging",
									   psprintf("SELECT line FROM %s.kbench_import_staging ORDER BY n", ext_schema()),
									   0, NULL, NULL, NULL, true, 0);
	linecxt = AllocSetContextCreate(CurrentMemoryContext, "kbench import line", ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		uint64		i,
					nrows;
		SPITupleTable *tuptable;

		SPI_cursor_fetch(portal, true, 1000);
		nrows = SPI_processed;
		tuptable = SPI_tuptable;
		if (nrows == 0)
			break;
		for (i = 0; i < nrows; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(tuptable->vals[i], tuptable->tupdesc, 1, &isnull);

			lineno++;
			CHECK_FOR_INTERRUPTS();
			oldcxt = MemoryContextSwitchTo(linecxt);
			if (isnull)
			{
				c.lines++;
				record_rejection(&c, lineno, "bad JSON: an empty line", false);
			}
			else
			{
				text	   *t = DatumGetTextPP(d);

				import_catalog_line(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), lineno, &c);
			}
			MemoryContextSwitchTo(oldcxt);
			MemoryContextReset(linecxt);
		}
		SPI_freetuptable(tuptable);
	}
	SPI_cursor_close(portal);
	SPI_execute(psprintf("TRUNCATE %s.kbench_import_staging", ext_schema()), false, 0);
	import_end();
	finish_import(&c);
	SPI_finish();
	PG_RETURN_DATUM(counts_tuple(fcinfo, &c));
}

/* Import Liger-Kernel's benchmark CSV (the whole file as text). */
PG_FUNCTION_INFO_V1(kbench_import_liger);
Datum
kbench_import_liger(PG_FUNCTION_ARGS)
{
	text	   *csv = PG_GETARG_TEXT_PP(0);
	const char *source = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	import_counts c;
	ki_arena	a;
	ki_liger_reader reader;
	const char *err = NULL;
	MemoryContext rowcxt,
				oldcxt;

	memset(&c, 0, sizeof(c));
	ki_pg_arena_init(&a);
	if (!ki_liger_reader_init(&reader, &a, VARDATA_ANY(csv), VARSIZE_ANY_EXHDR(csv), &err))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("not a Liger-Kernel benchmark CSV: %s", err),
				 errhint("The header must name the columns of all_benchmark_data.csv: kernel_name, kernel_provider, "
						 "kernel_operation_mode, metric_name, metric_unit, x_name, x_label, x_value, y_value_50, "
						 "y_value_20, y_value_80, extra_benchmark_config_str, gpu_name, timestamp, liger_version.")));
	SPI_connect();
	c.id = start_import("liger", source);
	import_begin();
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "kbench liger row", ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		ki_liger_row row;
		ki_liger_read_status st;
		ki_liger_result res;
		ki_arena	ra;
		int			p;
		bool		any_new = false;

		st = ki_liger_reader_next(&reader, &row, &err);
		if (st == KI_LIGER_READ_END)
			break;
		if (st == KI_LIGER_READ_FATAL)
		{
			c.lines++;
			record_rejection(&c, reader.csv.line, err, false);
			break;
		}
		c.lines++;
		if (st == KI_LIGER_READ_BAD_RECORD)
		{
			record_rejection(&c, reader.csv.line, err, false);
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		ki_pg_arena_init(&ra);
		ki_liger_map(&ra, &row, &res);
		if (res.outcome == KI_LIGER_SKIPPED_MEMORY)
			record_rejection(&c, row.line, "memory row: not a timing", true);
		else if (res.outcome == KI_LIGER_SKIPPED)
			record_rejection(&c, row.line, res.reason, true);
		else
		{
			/* dependencies first, so nothing is left unresolved */
			static const int order[KI_LIGER_NPARTS] = {
				KI_LIGER_OPERATION, KI_LIGER_WORKLOAD, KI_LIGER_IMPLEMENTATION,
				KI_LIGER_PROTOCOL, KI_LIGER_ENVIRONMENT, KI_LIGER_RUN
			};
			static const ki_kind kinds[KI_LIGER_NPARTS] = {
				KI_KIND_BENCHMARK_RUN, KI_KIND_BENCHMARK_PROTOCOL, KI_KIND_EXECUTION_ENVIRONMENT,
				KI_KIND_WORKLOAD_CASE, KI_KIND_IMPLEMENTATION_REVISION, KI_KIND_OPERATION_SPEC
			};

			for (p = 0; p < KI_LIGER_NPARTS; p++)
			{
				int			part = order[p];
				bool		inserted = ki_store_manifest(kinds[part], res.digest[part], res.manifest[part],
														 source ? source : "liger-kernel-bench", (Datum) 0);

				if (part == KI_LIGER_RUN)
					any_new = inserted;
			}
			if (any_new)
				c.inserted++;
			else
				c.present++;
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
	}
	import_end();
	finish_import(&c);
	SPI_finish();
	PG_RETURN_DATUM(counts_tuple(fcinfo, &c));
}
