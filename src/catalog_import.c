/*
 * catalog_import.c: a kernelindex.dev catalog export (JSON lines) imported
 * line by line (catalog_import.h), whatever the lines come from:
 *
 *   kbench_import_catalog_staged()      the lines \copy'd into kbench_import_staging
 *   (src/catalog_file.c)                kbench_import_catalog_file(path), a file
 *
 * Each line is a row of an export table: a manifest-bearing row is
 * ingested (its digest checked against the one the export stored), the
 * other rows kept verbatim, memory observations stored (src/memory.c),
 * retractions and supersessions applied at the end (src/import.c).
 */
#include "kernelindex.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "catalog_import.h"
#include "import.h"
#include "ingest.h"

/* A row of an export table without a manifest, kept verbatim. */
static void
keep_plain_row(import_state *st, const char *table, const ki_value *row)
{
	const ki_value *id = ki_get(row, "id");
	ki_arena	a;
	ki_buf		idbuf;

	ki_pg_arena_init(&a);
	ki_buf_init(&idbuf, &a, 80);
	if (id && id->type == KI_STRING)
		ki_buf_put(&idbuf, id->u.str.ptr, id->u.str.len);
	else
		ki_canonical(row, &idbuf);	/* rows without an id: the row is its own key */
	ki_import_batch_add(st, &st->plain, table, ki_buf_cstr(&idbuf), row);
	st->c.present++;			/* until the flush says it was new */
}

/* Keep the export's own row (minus the manifest) beside the manifest. */
static void
keep_source_row(import_state *st, const char *table, const char *digest, ki_arena *a, const ki_value *row)
{
	ki_value	copy = *row;
	ki_member  *m = ki_alloc(a, (row->u.obj.count + 1) * sizeof(ki_member));
	size_t		i,
				n = 0;

	for (i = 0; i < row->u.obj.count; i++)
		if (!(row->u.obj.members[i].key.len == 8 &&
			  memcmp(row->u.obj.members[i].key.ptr, "manifest", 8) == 0))
			m[n++] = row->u.obj.members[i];
	copy.u.obj.members = m;
	copy.u.obj.count = n;
	ki_import_batch_add(st, &st->source, digest, table, &copy);
}

/* Import one line of a catalog export. */
static void
import_catalog_line(import_state *st, const char *line, size_t len, int64 lineno)
{
	ki_arena   *a = &st->arena;
	ki_errors	errs;
	ki_value   *doc,
			   *row,
			   *manifest;
	const ki_value *table;
	size_t		t;
	char	   *tname;

	import_counts *c = &st->c;

	ki_arena_rewind(a);
	ki_errors_init(&errs, a);
	c->lines++;
	doc = ki_parse(a, line, len, &errs);
	if (doc == NULL)
	{
		ki_import_reject(st, lineno, psprintf("bad JSON: %s%s%s", errs.items[0].message,
											 errs.items[0].path[0] ? " at " : "", ki_import_clip(errs.items[0].path)), false);
		return;
	}
	table = ki_get(doc, "table");
	row = ki_get(doc, "row");
	if (table == NULL || table->type != KI_STRING || row == NULL || row->type != KI_OBJECT)
	{
		ki_import_reject(st, lineno, "not a catalog export line: expected {\"table\": ..., \"row\": {...}}", false);
		return;
	}
	tname = pnstrdup(table->u.str.ptr, table->u.str.len);
	manifest = ki_get(row, "manifest");
	for (t = 0; t < ki_export_table_count; t++)
	{
		const ki_value *stored_digest;
		ki_store_item *items[3];
		bool		first[3];
		int			n;
		Datum		raw = (Datum) 0;
		const char *digest;

		if (strcmp(tname, ki_export_tables[t].table) != 0)
			continue;
		if (manifest == NULL)
		{
			ki_import_reject(st, lineno, psprintf("a %s row without a manifest", ki_import_clip(tname)), false);
			return;
		}
		if (ki_export_tables[t].composite != ki_is_composite(manifest))
		{
			ki_import_reject(st, lineno, ki_export_tables[t].composite ?
							 "unknown kind: a benchmark_runs manifest must be a {run, protocol, environment} document" :
							 "unknown kind: the manifest has no known kind", false);
			return;
		}
		if (ki_export_tables[t].composite &&
			!ki_raw_samples_from(ki_get(row, "rawSamplesNs"), NULL, &raw))
		{
			ki_import_reject(st, lineno, "rawSamplesNs must be an array of non-negative numbers", false);
			return;
		}
		n = ki_stage_tree(st->store, a, manifest, "kernelindex-catalog", raw, items, first, &errs);
		if (n < 0)
		{
			const ki_error *e = &errs.items[0];

			ki_import_reject(st, lineno, psprintf("%s: %s%s%s (rule %s)",
												 strcmp(e->rule, "kind") == 0 ? "unknown kind" : "invalid manifest",
												 e->message, e->path[0] ? " at " : "", ki_import_clip(e->path), e->rule), false);
			return;
		}
		digest = items[n - 1]->digest;
		if (ki_export_tables[t].column)
		{
			stored_digest = ki_get(row, ki_export_tables[t].column);
			if (stored_digest == NULL || stored_digest->type != KI_STRING ||
				stored_digest->u.str.len != KI_DIGEST_LEN ||
				memcmp(stored_digest->u.str.ptr, digest, KI_DIGEST_LEN) != 0)
			{
				/* the manifest was valid and is stored; the line's claim is wrong */
				ki_import_reject(st, lineno, psprintf("digest mismatch: %s says %s but the manifest digests to %s",
													 ki_export_tables[t].column,
													 stored_digest && stored_digest->type == KI_STRING ?
													 ki_import_clip_to(stored_digest->u.str.ptr, stored_digest->u.str.len, KI_QUOTE_MAX) : "nothing",
													 digest), false);
				return;
			}
		}
		keep_source_row(st, tname, digest, a, row);
		ki_import_count_line(st, items[n - 1], first[n - 1]);
		if (ki_export_tables[t].composite &&
			((ki_get(row, "retractedAt") && ki_get(row, "retractedAt")->type == KI_STRING) ||
			 (ki_get(row, "supersededBy") && ki_get(row, "supersededBy")->type == KI_STRING)))
		{
			withdrawal *w = MemoryContextAllocZero(st->cxt, sizeof(withdrawal));
			MemoryContext old = MemoryContextSwitchTo(st->cxt);

			w->lineno = lineno;
			w->digest = pstrdup(digest);
			w->retracted_at = ki_import_row_string(st, row, "retractedAt");
			w->retraction_reason = ki_import_row_string(st, row, "retractionReason");
			w->superseded_by = ki_import_row_string(st, row, "supersededBy");
			w->supersession_reason = ki_import_row_string(st, row, "supersessionReason");
			st->withdrawals = lappend(st->withdrawals, w);
			MemoryContextSwitchTo(old);
		}
		return;
	}
	for (t = 0; t < ki_export_plain_table_count; t++)
		if (strcmp(tname, ki_export_plain_tables[t]) == 0)
		{
			keep_plain_row(st, tname, row);
			return;
		}
	if (strcmp(tname, "memory_observations") == 0)
	{
		bool		inserted;
		const char *why = ki_import_memory_row(a, row, &inserted);

		if (why)
		{
			c->memory.rejected++;
			ki_import_reject(st, lineno, why, false);	/* its values cut by record_rejection */
		}
		else if (inserted)
			c->memory.inserted++, c->inserted++;
		else
			c->memory.present++, c->present++;
		return;
	}
	ki_import_reject(st, lineno, psprintf("unknown table \"%s\"", ki_import_clip(tname)), false);
}

/* ------------------------------------------- a catalog import, line by line */

import_state *
ki_catalog_import_begin(const char *source)
{
	import_state *st = palloc(sizeof(import_state));

	ki_import_init(st, "catalog", source);
	return st;
}

/* One line (without its newline); NULL for an empty one. */
void
ki_catalog_import_line(import_state *st, const char *line, size_t len, int64 lineno)
{
	MemoryContext old;

	CHECK_FOR_INTERRUPTS();
	old = MemoryContextSwitchTo(st->linecxt);
	if (line == NULL)
	{
		st->c.lines++;
		ki_import_reject(st, lineno, "bad JSON: an empty line", false);
	}
	else
		import_catalog_line(st, line, len, lineno);
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->linecxt);
	if (ki_store_pending(st->store) >= IMPORT_BATCH || st->plain.count >= IMPORT_BATCH)
		ki_import_flush(st);
}

/*
 * Store what is left, record the counts, leave SPI and return the counts as
 * the result row (made after SPI_finish, in the caller's memory).
 */
Datum
ki_catalog_import_end(import_state *st, FunctionCallInfo fcinfo)
{
	import_counts c;

	ki_import_done(st);
	c = st->c;
	SPI_finish();
	return ki_import_counts_tuple(fcinfo, &c);
}

/*
 * Import the lines the caller put in kbench_import_staging (by \copy), in
 * order, and delete them.  Each line is marked with the role that staged it
 * (staged_by, CURRENT_USER by default, a column kbench_admin may not write):
 * two admins staging at once each import only their own lines.
 */
PG_FUNCTION_INFO_V1(kbench_import_catalog_staged);
Datum
kbench_import_catalog_staged(PG_FUNCTION_ARGS)
{
	import_state *st;
	Portal		portal;
	const char *source = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		lineno = 0;
	Datum		result;

	Oid			argtypes[1] = {NAMEOID};
	Datum		args[1];

	/* the caller, before the import switches to the extension's owner */
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(GetUserId(), false)));
	SPI_connect();
	st = ki_catalog_import_begin(source);	/* from here on, as the extension's owner */
	SPI_execute(psprintf("LOCK TABLE %s.kbench_import_staging IN EXCLUSIVE MODE", ki_ext_schema()), false, 0);
	/* the lines sorted in memory, not on disk (the writer's GUC level takes it back) */
	(void) set_config_option("work_mem", "131072", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	portal = SPI_cursor_open_with_args("staging",
									   psprintf("SELECT line FROM %s.kbench_import_staging WHERE staged_by = $1 ORDER BY n",
												ki_ext_schema()),
									   1, argtypes, args, NULL, true, 0);
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
			text	   *t = isnull ? NULL : DatumGetTextPP(d);

			lineno++;
			ki_catalog_import_line(st, t ? VARDATA_ANY(t) : NULL, t ? VARSIZE_ANY_EXHDR(t) : 0, lineno);
		}
		SPI_freetuptable(tuptable);
	}
	SPI_cursor_close(portal);
	/*
	 * The caller's lines go, by DELETE, never by TRUNCATE: a TRUNCATE makes
	 * a new file for the table, and PostgreSQL 15 cannot recover from a crash
	 * that follows one rolled back in an unlogged table ("could not create
	 * file ...: File exists"; the staging table was unlogged before 0.3.0).
	 * The space of
	 * the lines goes back at the next vacuum.  The EXCLUSIVE lock keeps
	 * others from staging meanwhile.
	 */
	SPI_execute_with_args(psprintf("DELETE FROM %s.kbench_import_staging WHERE staged_by = $1", ki_ext_schema()),
						  1, argtypes, args, NULL, false, 0);
	result = ki_catalog_import_end(st, fcinfo);
	PG_RETURN_DATUM(result);
}
