/*
 * import.c: what the two imports of the catalog share (import.h): an
 * import's kbench_imports row, marked with the role that runs it, and its
 * counts; the manifests staged in the store and the lines that wait for its
 * answer; the export's own rows in batches (kbench__store_catalog_rows,
 * kbench__store_source_rows); the rejected lines, clipped; the retractions
 * and supersessions, applied once every run is stored.  All flushed
 * together every IMPORT_BATCH lines.
 */
#include "kernelindex.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "import.h"

/*
 * The import's row, marked with the role that runs it (importer: the caller,
 * before the writer switched to the owner), which alone with kbench_admin
 * reads its rejections (sql/90_privileges.sql).
 */
static int64
start_import(const char *kind, const char *source, Oid importer)
{
	Datum		args[3];
	Oid			types[3] = {TEXTOID, TEXTOID, NAMEOID};
	char		nulls[3] = {' ', ' ', ' '};
	bool		isnull;

	args[0] = CStringGetTextDatum(kind);
	if (source)
		args[1] = CStringGetTextDatum(source);
	else
		nulls[1] = 'n';
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(GetUserNameFromId(importer, false)));
	if (SPI_execute_with_args(psprintf("INSERT INTO %s.kbench_imports (kind, source, imported_by) VALUES ($1, $2, $3) RETURNING id",
									   ki_ext_schema()),
							  3, types, args, nulls, false, 1) != SPI_OK_INSERT_RETURNING)
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
									   ki_ext_schema()), 6, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the import's counts");
	ki_memory_import_finish(c->id, &c->memory);
}

Datum
ki_import_counts_tuple(FunctionCallInfo fcinfo, const import_counts *c)
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

const char *
ki_import_clip_to(const char *s, size_t len, int limit)
{
	int			cut;

	if (s == NULL)
		return "";
	if (len <= (size_t) limit)	/* bytes: at most that many characters */
		return pnstrdup(s, len);	/* s need not end at len (a JSON string's bytes) */
	cut = Min(pg_mbcharcliplen(s, (int) Min(len, (size_t) PG_INT32_MAX), limit), (int) len);
	if ((size_t) cut == len)
		return pnstrdup(s, len);
	return psprintf("%.*s... (%d more characters)", cut, s, pg_mbstrlen_with_len(s + cut, (int) (len - cut)));
}

const char *
ki_import_clip(const char *s)
{
	return ki_import_clip_to(s, s ? strlen(s) : 0, KI_QUOTE_MAX);
}

/* Record a rejected (or skipped) line; stored with the next flush. */
void
ki_import_reject(import_state *st, int64 line, const char *reason, bool skipped)
{
	MemoryContext old;

	reason = ki_import_clip_to(reason, strlen(reason), KI_REASON_MAX);
	old = MemoryContextSwitchTo(st->batchcxt);

	if (st->nrej == st->caprej)
	{
		st->caprej = st->caprej ? st->caprej * 2 : 256;
		st->rej_line = st->rej_line ? repalloc(st->rej_line, st->caprej * sizeof(Datum)) : palloc(st->caprej * sizeof(Datum));
		st->rej_reason = st->rej_reason ? repalloc(st->rej_reason, st->caprej * sizeof(Datum)) : palloc(st->caprej * sizeof(Datum));
		st->rej_skipped = st->rej_skipped ? repalloc(st->rej_skipped, st->caprej * sizeof(Datum)) : palloc(st->caprej * sizeof(Datum));
	}
	st->rej_line[st->nrej] = Int64GetDatum(line);
	st->rej_reason[st->nrej] = CStringGetTextDatum(reason);
	st->rej_skipped[st->nrej] = BoolGetDatum(skipped);
	st->nrej++;
	MemoryContextSwitchTo(old);
	if (skipped)
		st->c.skipped++;
	else
		st->c.rejected++;
}

/* Store the recorded rejections in one statement. */
static void
flush_rejections(import_state *st)
{
	Datum		args[4];
	Oid			types[4] = {INT8OID, INT8ARRAYOID, TEXTARRAYOID, BOOLARRAYOID};
	int			dims[1] = {st->nrej};
	int			lbs[1] = {1};

	if (st->nrej == 0)
		return;
	args[0] = Int64GetDatum(st->c.id);
	args[1] = PointerGetDatum(construct_md_array(st->rej_line, NULL, 1, dims, lbs, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[2] = PointerGetDatum(construct_md_array(st->rej_reason, NULL, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	args[3] = PointerGetDatum(construct_md_array(st->rej_skipped, NULL, 1, dims, lbs, BOOLOID, 1, true, TYPALIGN_CHAR));
	if (SPI_execute_with_args("SELECT _kernelindex.store_rejections($1, $2, $3, $4)",
							  4, types, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not record the import's rejections");
	st->nrej = 0;
	st->caprej = 0;
	st->rej_line = st->rej_reason = st->rej_skipped = NULL;
}

/* The import's arena: blocks from the import's context, kept across lines. */
static void *
import_alloc(void *ctx, size_t size)
{
	return MemoryContextAllocExtended((MemoryContext) ctx, size, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
}

static void
import_free(void *ctx, void *ptr)
{
	(void) ctx;
	pfree(ptr);
}

void
ki_import_init(import_state *st, const char *kind, const char *source)
{
	memset(st, 0, sizeof(*st));
	ki_catalog_writer_begin(&st->writer);
	st->c.id = start_import(kind, source, st->writer.save_userid);
	st->cxt = CurrentMemoryContext;
	st->store = ki_store_begin();
	st->batchcxt = AllocSetContextCreate(CurrentMemoryContext, "kbench import batch", ALLOCSET_DEFAULT_SIZES);
	/* a keeper block that holds a whole line: no malloc and free per line */
	st->linecxt = AllocSetContextCreate(CurrentMemoryContext, "kbench import line", 0, 512 * 1024, 8 * 1024 * 1024);
	ki_arena_init(&st->arena, import_alloc, import_free, st->cxt);
}

void
ki_import_count_line(import_state *st, ki_store_item *item, bool first)
{
	if (st->nlines == st->cap)
	{
		st->cap = st->cap ? st->cap * 2 : IMPORT_BATCH;
		st->lines = st->lines ? repalloc(st->lines, st->cap * sizeof(pending_line))
			: MemoryContextAlloc(st->cxt, st->cap * sizeof(pending_line));
	}
	st->lines[st->nlines].item = item;
	st->lines[st->nlines].first = first;
	st->nlines++;
}

void
ki_import_batch_add(import_state *st, row_batch *b, const char *x, const char *y, const ki_value *row)
{
	MemoryContext old = MemoryContextSwitchTo(st->batchcxt);

	if (b->count == b->cap)
	{
		b->cap = b->cap ? b->cap * 2 : 256;
		b->a = b->a ? repalloc(b->a, b->cap * sizeof(Datum)) : palloc(b->cap * sizeof(Datum));
		b->b = b->b ? repalloc(b->b, b->cap * sizeof(Datum)) : palloc(b->cap * sizeof(Datum));
		b->row = b->row ? repalloc(b->row, b->cap * sizeof(Datum)) : palloc(b->cap * sizeof(Datum));
	}
	b->a[b->count] = CStringGetTextDatum(x);
	b->b[b->count] = CStringGetTextDatum(y);
	MemoryContextSwitchTo(old);
	{
		/* built where the line's garbage goes, copied into the batch */
		Jsonb	   *jb = ki_tree_to_jsonb(row);

		b->row[b->count] = PointerGetDatum(MemoryContextAlloc(st->batchcxt, VARSIZE(jb)));
		memcpy(DatumGetPointer(b->row[b->count]), jb, VARSIZE(jb));
	}
	b->count++;
}

/* Insert a batch of rows through its store function; how many were new. */
static uint64
batch_insert(row_batch *b, const char *function)
{
	Datum		args[3];
	Oid			types[3] = {TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID};
	int			dims[1] = {b->count};
	int			lbs[1] = {1};
	bool		isnull;
	Datum		n;

	if (b->count == 0)
		return 0;
	args[0] = PointerGetDatum(construct_md_array(b->a, NULL, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_md_array(b->b, NULL, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_md_array(b->row, NULL, 1, dims, lbs, JSONBOID, -1, false, TYPALIGN_INT));
	if (SPI_execute_with_args(psprintf("SELECT _kernelindex.%s($1, $2, $3)", function),
							  3, types, args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "%s failed", function);
	n = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	b->count = 0;
	return isnull ? 0 : (uint64) DatumGetInt64(n);
}

/* Store what is staged and count the lines that waited for it. */
void
ki_import_flush(import_state *st)
{
	uint64		n;
	int			i;

	ki_store_flush(st->store);
	if (st->memory)
	{
		int64		inserted,
					present;

		/* after the store that holds the manifests they name */
		ki_memory_batch_flush(st->memory, &inserted, &present);
		st->c.memory.inserted += inserted;
		st->c.inserted += inserted;
		st->c.memory.present += present;
		st->c.present += present;
	}
	for (i = 0; i < st->nlines; i++)
	{
		if (st->lines[i].first && st->lines[i].item->inserted)
			st->c.inserted++;
		else
			st->c.present++;
	}
	st->nlines = 0;
	n = batch_insert(&st->plain, "store_catalog_rows");
	st->c.inserted += (int64) n;
	st->c.present -= (int64) n; /* every plain row was counted present when kept */
	batch_insert(&st->source, "store_source_rows");
	flush_rejections(st);
	MemoryContextReset(st->batchcxt);
	memset(&st->plain, 0, sizeof(st->plain));
	memset(&st->source, 0, sizeof(st->source));
}

/* A string member of a row, copied into the import's memory, or NULL. */
char *
ki_import_row_string(import_state *st, const ki_value *row, const char *key)
{
	const ki_value *v = ki_get(row, key);

	if (v == NULL || v->type != KI_STRING)
		return NULL;
	return MemoryContextStrdup(st->cxt, pnstrdup(v->u.str.ptr, v->u.str.len));
}

/* The retractions and supersessions of the import, once every run is stored. */
static void
apply_withdrawals(import_state *st)
{
	ListCell   *lc;
	Oid			types[5] = {TEXTOID, TIMESTAMPTZOID, TEXTOID, TEXTOID, TEXTOID};
	char	   *sql = pstrdup("SELECT _kernelindex.withdraw($1, $2, $3, $4, $5)");

	foreach(lc, st->withdrawals)
	{
		withdrawal *w = lfirst(lc);
		Datum		args[5];
		char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
		bool		isnull;

		args[0] = CStringGetTextDatum(w->digest);
		if (w->retracted_at)
			args[1] = DirectFunctionCall3(timestamptz_in, CStringGetDatum(w->retracted_at),
										  ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
		else
			nulls[1] = 'n';
		args[2] = w->retraction_reason ? CStringGetTextDatum(w->retraction_reason) : (Datum) 0;
		nulls[2] = w->retraction_reason ? ' ' : 'n';
		args[3] = w->superseded_by ? CStringGetTextDatum(w->superseded_by) : (Datum) 0;
		nulls[3] = w->superseded_by ? ' ' : 'n';
		args[4] = w->supersession_reason ? CStringGetTextDatum(w->supersession_reason) : (Datum) 0;
		nulls[4] = w->supersession_reason ? ' ' : 'n';
		if (SPI_execute_with_args(sql, 5, types, args, nulls, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "_kernelindex.withdraw failed");
		if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			ki_import_reject(st, w->lineno,
							 psprintf("supersession: run %s is not in the catalog", ki_import_clip(w->superseded_by)), false);
	}
}

void
ki_import_done(import_state *st)
{
	ki_import_flush(st);
	apply_withdrawals(st);
	flush_rejections(st);
	ki_store_end(st->store);
	MemoryContextDelete(st->batchcxt);
	MemoryContextDelete(st->linecxt);
	finish_import(&st->c);
	ki_catalog_writer_end(&st->writer);
}
