/*
 * catalog.c: the one ingest path of the catalog, and the imports built on it.
 *
 *   kbench_ingest(doc)                  any manifest, or {run, protocol, environment}
 *   kbench_import_catalog_staged()      a kernelindex.dev JSON-lines export,
 *                                       \copy'd into kbench_import_staging
 *   kbench_import_liger(csv text)       Liger-Kernel's all_benchmark_data.csv
 *
 * Everything is validated and digested by the identity core, then stored by
 * the set-based store (src/store.c, sql/22_store.sql), so a run imported
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
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include <math.h>

#include "liger/liger.h"
#include "store.h"
#include "catalog_import.h"
#include "catalog_writer.h"
#include "memory.h"

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
static bool
is_composite(const ki_value *doc)
{
	return doc && doc->type == KI_OBJECT && ki_get(doc, "kind") == NULL &&
		(ki_get(doc, "run") || ki_get(doc, "protocol") || ki_get(doc, "environment"));
}

/*
 * Validate a manifest or composite document and stage it in the store:
 * protocol and environment before the run.  Fills items[] and first[] (up
 * to three) and returns how many, or -1 with errs filled.
 */
static int
stage_tree(ki_store *s, ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
		   ki_store_item **items, bool *first, ki_errors *errs)
{
	if (is_composite(doc))
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

	n = stage_tree(s, a, doc, source, raw_samples, items, first, errs);
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
static bool
raw_samples_from(const ki_value *samples, const ki_value *discarded, Datum *out)
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

		if (!raw_samples_from(ki_get(doc, "rawSamplesNs"), ki_get(doc, "discardedSamples"), &raw))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid kbench result: rawSamplesNs must be an array of non-negative numbers and discardedSamples one of their indexes")));
		if (!is_composite(ki_get(doc, "composite")))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid kbench result: composite must be a {run, protocol, environment} document")));
		for (p = 0; p < lengthof(parts); p++)
		{
			ki_value   *part = (ki_value *) ki_get(doc, parts[p]);
			int			k;

			if (part == NULL || part->type == KI_NULL)
				continue;
			k = stage_tree(s, &a, part, source, p == 3 ? raw : (Datum) 0, items + n, first + n, &errs);
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
			ki_pg_report(&errs, is_composite(doc) ? "run document" : "manifest");
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

/* ---------------------------------------------------------------- imports */

typedef struct import_counts
{
	int64		id;
	int64		lines;
	int64		inserted;
	int64		present;
	int64		skipped;
	int64		rejected;
	ki_memory_counts memory;	/* memory observations (src/memory.c) */
} import_counts;

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

/*
 * An import in progress: the store its manifests are staged in, the lines
 * whose count waits for the store's answer, and the export's own rows
 * (plain rows and the rows beside manifests), all flushed together every
 * IMPORT_BATCH lines: one statement per kind and table, not one per line.
 */
#define IMPORT_BATCH 2000

typedef struct pending_line
{
	ki_store_item *item;		/* the line's manifest (a composite's run) */
	bool		first;			/* the first line of this import to stage it */
} pending_line;

typedef struct row_batch
{
	Datum	   *a;				/* text */
	Datum	   *b;				/* text */
	Datum	   *row;			/* jsonb */
	int			count;
	int			cap;
} row_batch;

/* A retraction or supersession read from an export line, applied at the end. */
typedef struct withdrawal
{
	int64		lineno;
	char	   *digest;
	char	   *retracted_at;
	char	   *retraction_reason;
	char	   *superseded_by;
	char	   *supersession_reason;
} withdrawal;

struct import_state
{
	import_counts c;
	ki_store   *store;
	MemoryContext cxt;			/* the import's (the lines array) */
	MemoryContext batchcxt;		/* the row batches; reset at each flush */
	MemoryContext linecxt;		/* one line's parse; reset after each line */
	ki_arena	arena;			/* one line's tree; rewound for each line */
	pending_line *lines;
	int			nlines;
	int			cap;
	row_batch	plain;			/* kbench_catalog_rows: table, row id, row */
	row_batch	source;			/* kbench_catalog_source_rows: digest, table, row */
	List	   *withdrawals;	/* of withdrawal, in st->cxt */
	ki_catalog_writer writer;	/* the import writes as the extension's owner */
	ki_memory_batch *memory;	/* the Liger import's memory observations, or NULL */
	/* rejected and skipped lines, stored at each flush */
	Datum	   *rej_line;
	Datum	   *rej_reason;
	Datum	   *rej_skipped;
	int			nrej;
	int			caprej;
};

/*
 * What a rejection reason quotes of its line, at most KI_QUOTE_MAX
 * characters and a marker saying how much was left out (issue 24: a reason
 * is for finding the line, not a copy of it).  A whole reason is cut at
 * KI_REASON_MAX characters the same way, whatever it quotes.
 */
#define KI_QUOTE_MAX 200
#define KI_REASON_MAX 1000

static const char *
clip_to(const char *s, size_t len, int limit)
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

static const char *
clip(const char *s)
{
	return clip_to(s, s ? strlen(s) : 0, KI_QUOTE_MAX);
}

/* Record a rejected (or skipped) line; stored with the next flush. */
static void
record_rejection(import_state *st, int64 line, const char *reason, bool skipped)
{
	MemoryContext old;

	reason = clip_to(reason, strlen(reason), KI_REASON_MAX);
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
	if (SPI_execute_with_args(psprintf("SELECT %s.kbench__store_rejections($1, $2, $3, $4)", ki_ext_schema()),
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

static void
import_init(import_state *st, const char *kind, const char *source)
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

static void
count_line(import_state *st, ki_store_item *item, bool first)
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

static void
batch_add(import_state *st, row_batch *b, const char *x, const char *y, const ki_value *row)
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
	if (SPI_execute_with_args(psprintf("SELECT %s.%s($1, $2, $3)", ki_ext_schema(), function),
							  3, types, args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "%s failed", function);
	n = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	b->count = 0;
	return isnull ? 0 : (uint64) DatumGetInt64(n);
}

/* Store what is staged and count the lines that waited for it. */
static void
import_flush(import_state *st)
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
	n = batch_insert(&st->plain, "kbench__store_catalog_rows");
	st->c.inserted += (int64) n;
	st->c.present -= (int64) n; /* every plain row was counted present when kept */
	batch_insert(&st->source, "kbench__store_source_rows");
	flush_rejections(st);
	MemoryContextReset(st->batchcxt);
	memset(&st->plain, 0, sizeof(st->plain));
	memset(&st->source, 0, sizeof(st->source));
}

/* A string member of a row, copied into the import's memory, or NULL. */
static char *
row_string(import_state *st, const ki_value *row, const char *key)
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
	char	   *sql = psprintf("SELECT %s.kbench__withdraw($1, $2, $3, $4, $5)", ki_ext_schema());

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
			elog(ERROR, "kbench__withdraw failed");
		if (!DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			record_rejection(st, w->lineno,
							 psprintf("supersession: run %s is not in the catalog", clip(w->superseded_by)), false);
	}
}

static void
import_done(import_state *st)
{
	import_flush(st);
	apply_withdrawals(st);
	flush_rejections(st);
	ki_store_end(st->store);
	MemoryContextDelete(st->batchcxt);
	MemoryContextDelete(st->linecxt);
	finish_import(&st->c);
	ki_catalog_writer_end(&st->writer);
}

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
	batch_add(st, &st->plain, table, ki_buf_cstr(&idbuf), row);
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
	batch_add(st, &st->source, digest, table, &copy);
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
		record_rejection(st, lineno, psprintf("bad JSON: %s%s%s", errs.items[0].message,
											 errs.items[0].path[0] ? " at " : "", clip(errs.items[0].path)), false);
		return;
	}
	table = ki_get(doc, "table");
	row = ki_get(doc, "row");
	if (table == NULL || table->type != KI_STRING || row == NULL || row->type != KI_OBJECT)
	{
		record_rejection(st, lineno, "not a catalog export line: expected {\"table\": ..., \"row\": {...}}", false);
		return;
	}
	tname = pnstrdup(table->u.str.ptr, table->u.str.len);
	manifest = ki_get(row, "manifest");
	for (t = 0; t < lengthof(export_tables); t++)
	{
		const ki_value *stored_digest;
		ki_store_item *items[3];
		bool		first[3];
		int			n;
		Datum		raw = (Datum) 0;
		const char *digest;

		if (strcmp(tname, export_tables[t].table) != 0)
			continue;
		if (manifest == NULL)
		{
			record_rejection(st, lineno, psprintf("a %s row without a manifest", clip(tname)), false);
			return;
		}
		if (export_tables[t].composite != is_composite(manifest))
		{
			record_rejection(st, lineno, export_tables[t].composite ?
							 "unknown kind: a benchmark_runs manifest must be a {run, protocol, environment} document" :
							 "unknown kind: the manifest has no known kind", false);
			return;
		}
		if (export_tables[t].composite &&
			!raw_samples_from(ki_get(row, "rawSamplesNs"), NULL, &raw))
		{
			record_rejection(st, lineno, "rawSamplesNs must be an array of non-negative numbers", false);
			return;
		}
		n = stage_tree(st->store, a, manifest, "kernelindex-catalog", raw, items, first, &errs);
		if (n < 0)
		{
			const ki_error *e = &errs.items[0];

			record_rejection(st, lineno, psprintf("%s: %s%s%s (rule %s)",
												 strcmp(e->rule, "kind") == 0 ? "unknown kind" : "invalid manifest",
												 e->message, e->path[0] ? " at " : "", clip(e->path), e->rule), false);
			return;
		}
		digest = items[n - 1]->digest;
		if (export_tables[t].column)
		{
			stored_digest = ki_get(row, export_tables[t].column);
			if (stored_digest == NULL || stored_digest->type != KI_STRING ||
				stored_digest->u.str.len != KI_DIGEST_LEN ||
				memcmp(stored_digest->u.str.ptr, digest, KI_DIGEST_LEN) != 0)
			{
				/* the manifest was valid and is stored; the line's claim is wrong */
				record_rejection(st, lineno, psprintf("digest mismatch: %s says %s but the manifest digests to %s",
													 export_tables[t].column,
													 stored_digest && stored_digest->type == KI_STRING ?
													 clip_to(stored_digest->u.str.ptr, stored_digest->u.str.len, KI_QUOTE_MAX) : "nothing",
													 digest), false);
				return;
			}
		}
		keep_source_row(st, tname, digest, a, row);
		count_line(st, items[n - 1], first[n - 1]);
		if (export_tables[t].composite &&
			((ki_get(row, "retractedAt") && ki_get(row, "retractedAt")->type == KI_STRING) ||
			 (ki_get(row, "supersededBy") && ki_get(row, "supersededBy")->type == KI_STRING)))
		{
			withdrawal *w = MemoryContextAllocZero(st->cxt, sizeof(withdrawal));
			MemoryContext old = MemoryContextSwitchTo(st->cxt);

			w->lineno = lineno;
			w->digest = pstrdup(digest);
			w->retracted_at = row_string(st, row, "retractedAt");
			w->retraction_reason = row_string(st, row, "retractionReason");
			w->superseded_by = row_string(st, row, "supersededBy");
			w->supersession_reason = row_string(st, row, "supersessionReason");
			st->withdrawals = lappend(st->withdrawals, w);
			MemoryContextSwitchTo(old);
		}
		return;
	}
	for (t = 0; t < lengthof(plain_tables); t++)
		if (strcmp(tname, plain_tables[t]) == 0)
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
			record_rejection(st, lineno, why, false);	/* its values cut by record_rejection */
		}
		else if (inserted)
			c->memory.inserted++, c->inserted++;
		else
			c->memory.present++, c->present++;
		return;
	}
	record_rejection(st, lineno, psprintf("unknown table \"%s\"", clip(tname)), false);
}

/* ------------------------------------------- a catalog import, line by line */

import_state *
ki_catalog_import_begin(const char *source)
{
	import_state *st = palloc(sizeof(import_state));

	import_init(st, "catalog", source);
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
		record_rejection(st, lineno, "bad JSON: an empty line", false);
	}
	else
		import_catalog_line(st, line, len, lineno);
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->linecxt);
	if (ki_store_pending(st->store) >= IMPORT_BATCH || st->plain.count >= IMPORT_BATCH)
		import_flush(st);
}

/*
 * Store what is left, record the counts, leave SPI and return the counts as
 * the result row (made after SPI_finish, in the caller's memory).
 */
Datum
ki_catalog_import_end(import_state *st, FunctionCallInfo fcinfo)
{
	import_counts c;

	import_done(st);
	c = st->c;
	SPI_finish();
	return counts_tuple(fcinfo, &c);
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

/* Import Liger-Kernel's benchmark CSV (the whole file as text). */
PG_FUNCTION_INFO_V1(kbench_import_liger);
Datum
kbench_import_liger(PG_FUNCTION_ARGS)
{
	text	   *csv;
	const char *source;
	import_state ist;
	import_counts *c = &ist.c;
	ki_arena	a;
	ki_liger_reader reader;
	const char *err = NULL;
	MemoryContext rowcxt,
				oldcxt;

	/* not STRICT (source may be NULL); kbench_import_liger_file(NULL) comes here too */
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("cannot import a null Liger-Kernel CSV"),
				 errdetail("The CSV text, or the file kbench_import_liger_file read, is null."),
				 errhint("Pass the text of all_benchmark_data.csv, or the path of a file the server can read.")));
	csv = PG_GETARG_TEXT_PP(0);
	source = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	ki_pg_arena_init(&a);
	if (!ki_liger_reader_init(&reader, &a, VARDATA_ANY(csv), VARSIZE_ANY_EXHDR(csv), &err))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("not a Liger-Kernel benchmark CSV: %s", err),
				 errhint("The header must name the columns of all_benchmark_data.csv: kernel_name, kernel_provider, "
						 "kernel_operation_mode, metric_name, metric_unit, x_name, x_label, x_value, y_value_50, "
						 "y_value_20, y_value_80, extra_benchmark_config_str, gpu_name, timestamp, liger_version.")));
	SPI_connect();
	import_init(&ist, "liger", source);
	ist.memory = ki_memory_batch_begin();
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "kbench liger row", 0, 512 * 1024, 8 * 1024 * 1024);
	for (;;)
	{
		ki_liger_row row;
		ki_liger_read_status st;
		ki_liger_result res;
		ki_arena   *ra = &ist.arena;
		int			p;

		st = ki_liger_reader_next(&reader, &row, &err);
		if (st == KI_LIGER_READ_END)
			break;
		if (st == KI_LIGER_READ_FATAL)
		{
			c->lines++;
			record_rejection(&ist, reader.csv.line, clip(err), false);
			break;
		}
		c->lines++;
		if (st == KI_LIGER_READ_BAD_RECORD)
		{
			record_rejection(&ist, row.line, clip(err), false);	/* the record's line, not the reader's */
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		ki_arena_rewind(ra);
		ki_liger_map(ra, &row, &res);
		if (res.outcome == KI_LIGER_SKIPPED)
		{
			if (strcmp(row.metric_name, "memory") == 0)
				c->memory.rejected++;
			record_rejection(&ist, row.line, clip(res.reason), true);
		}
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
				bool		first;
				ki_store_item *item;

				if (res.manifest[part] == NULL)
					continue;	/* a memory row has no run */
				item = ki_store_add(ist.store, kinds[part], res.digest[part], res.manifest[part],
									source ? source : "liger-kernel-bench", (Datum) 0, &first);
				if (part == KI_LIGER_RUN)
					count_line(&ist, item, first);
			}
			if (res.outcome == KI_LIGER_MAPPED_MEMORY)
			{
				/* stored with the next flush, after the manifests it names by digest */
				ki_memory_batch_add(ist.memory, &res, row.line);
			}
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
		if (ki_store_pending(ist.store) >= IMPORT_BATCH ||
			(ist.memory && ki_memory_batch_pending(ist.memory) >= IMPORT_BATCH))
			import_flush(&ist);
	}
	{
		import_counts done;

		import_done(&ist);
		done = *c;
		SPI_finish();
		PG_RETURN_DATUM(counts_tuple(fcinfo, &done));
	}
}
