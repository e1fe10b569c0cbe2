/*
 * memory.c: memory observations into kbench_memory_observations
 * (sql/15_memory.sql), from the Liger CSV's memory rows and from the
 * "memory_observations" rows of a catalog export.  The manifests they name
 * go through the catalog's one ingest path first; the observation itself
 * is a typed row, not a manifest.
 */
#include "memory.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "utils/array.h"
#include "utils/memutils.h"

static ki_kept import_plan;

/* The columns of kbench_memory_observations a batch fills, as arrays. */
enum
{
	MB_EXTERNAL_ID, MB_OPERATION, MB_WORKLOAD, MB_IMPLEMENTATION, MB_PROTOCOL, MB_ENVIRONMENT,
	MB_PASS, MB_P50, MB_P20, MB_P80, MB_VERSION, MB_OBSERVED_AT, MB_LINE, MB_NCOLS
};

struct ki_memory_batch
{
	MemoryContext cxt;			/* the staged values; reset at each flush */
	Datum	   *values[MB_NCOLS];
	bool	   *nulls[MB_NCOLS];
	int			count;
	int			cap;
};

ki_memory_batch *
ki_memory_batch_begin(void)
{
	ki_memory_batch *b = palloc0(sizeof(ki_memory_batch));

	b->cxt = AllocSetContextCreate(CurrentMemoryContext, "kbench memory batch", ALLOCSET_DEFAULT_SIZES);
	return b;
}

int
ki_memory_batch_pending(const ki_memory_batch *b)
{
	return b->count;
}

void
ki_memory_batch_add(ki_memory_batch *b, const ki_liger_result *res, long line)
{
	const ki_liger_memory *m = &res->memory;
	MemoryContext old = MemoryContextSwitchTo(b->cxt);
	int			i = b->count,
				c;

	Assert(res->outcome == KI_LIGER_MAPPED_MEMORY);
	if (b->count == b->cap)
	{
		b->cap = b->cap ? b->cap * 2 : 256;
		for (c = 0; c < MB_NCOLS; c++)
		{
			b->values[c] = b->values[c] ? repalloc(b->values[c], b->cap * sizeof(Datum)) : palloc(b->cap * sizeof(Datum));
			b->nulls[c] = b->nulls[c] ? repalloc(b->nulls[c], b->cap * sizeof(bool)) : palloc(b->cap * sizeof(bool));
		}
	}
	for (c = 0; c < MB_NCOLS; c++)
		b->nulls[c][i] = false;
	b->values[MB_EXTERNAL_ID][i] = CStringGetTextDatum(res->external_id);
	b->values[MB_OPERATION][i] = CStringGetTextDatum(res->digest[KI_LIGER_OPERATION]);
	b->values[MB_WORKLOAD][i] = CStringGetTextDatum(res->digest[KI_LIGER_WORKLOAD]);
	b->values[MB_IMPLEMENTATION][i] = CStringGetTextDatum(res->digest[KI_LIGER_IMPLEMENTATION]);
	b->values[MB_PROTOCOL][i] = CStringGetTextDatum(res->digest[KI_LIGER_PROTOCOL]);
	b->values[MB_ENVIRONMENT][i] = CStringGetTextDatum(res->digest[KI_LIGER_ENVIRONMENT]);
	b->values[MB_PASS][i] = CStringGetTextDatum(m->pass);
	b->values[MB_P50][i] = Int64GetDatum(m->p50_bytes);
	b->values[MB_P20][i] = Int64GetDatum(m->p20_bytes);
	b->values[MB_P80][i] = Int64GetDatum(m->p80_bytes);
	if (!m->spread)
		b->nulls[MB_P20][i] = b->nulls[MB_P80][i] = true;
	b->values[MB_VERSION][i] = CStringGetTextDatum(m->liger_version);
	b->values[MB_OBSERVED_AT][i] = CStringGetTextDatum(m->observed_at);
	b->values[MB_LINE][i] = Int64GetDatum((int64) line);
	b->count++;
	MemoryContextSwitchTo(old);
}

void
ki_memory_batch_flush(ki_memory_batch *b, int64 *inserted, int64 *present)
{
	Datum		args[MB_NCOLS];
	Oid			types[MB_NCOLS];
	int			dims[1] = {b->count};
	int			lbs[1] = {1};
	int			c;
	int64		n;
	MemoryContext old;

	*inserted = *present = 0;
	if (b->count == 0)
		return;
	old = MemoryContextSwitchTo(b->cxt);
	for (c = 0; c < MB_NCOLS; c++)
	{
		bool		int8col = c == MB_P50 || c == MB_P20 || c == MB_P80 || c == MB_LINE;

		types[c] = int8col ? INT8ARRAYOID : TEXTARRAYOID;
		args[c] = PointerGetDatum(int8col ?
								  construct_md_array(b->values[c], b->nulls[c], 1, dims, lbs, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE) :
								  construct_md_array(b->values[c], b->nulls[c], 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	}
	/* in the order staged, as one INSERT a row stored them (sql/15_memory.sql) */
	if (SPI_execute_with_args("SELECT _kernelindex.store_memory_observations($1, $2, $3, $4, $5, $6, $7, $8, "
									   "$9, $10, $11, $12, $13)",
							  MB_NCOLS, types, args, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not store the memory observations");
	{
		bool		isnull;

		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	*inserted = n;
	*present = b->count - n;
	MemoryContextSwitchTo(old);
	MemoryContextReset(b->cxt);
	memset(b->values, 0, sizeof(b->values));
	memset(b->nulls, 0, sizeof(b->nulls));
	b->count = b->cap = 0;
}

/* Store the manifest row[key] (when present) and check it digests to row[digest_key]. */
static const char *
store_carried(ki_arena *a, ki_value *row, const char *key, ki_kind want, const char *digest_key)
{
	ki_value   *m = (ki_value *) ki_get(row, key);
	const ki_value *d = ki_get(row, digest_key);
	ki_errors	errs;
	ki_stored	out[3];
	int			n;

	if (m == NULL || m->type == KI_NULL)
		return NULL;
	{
		const ki_value *kind = m->type == KI_OBJECT ? ki_get(m, "kind") : NULL;
		const char *want_name = ki_kind_name(want);

		/* checked first, so that nothing else (a composite run document) is stored */
		if (kind == NULL || kind->type != KI_STRING || kind->u.str.len != strlen(want_name) ||
			memcmp(kind->u.str.ptr, want_name, kind->u.str.len) != 0)
			return psprintf("invalid memory observation: %s is not a %s manifest", key, want_name);
	}
	ki_errors_init(&errs, a);
	n = ki_ingest_tree(a, m, "kernelindex-catalog", (Datum) 0, out, &errs);
	if (n < 0)
		return psprintf("invalid %s manifest: %s%s%s (rule %s)", key, errs.items[0].message,
						errs.items[0].path[0] ? " at " : "", errs.items[0].path, errs.items[0].rule);
	Assert(n == 1 && out[0].kind == want);
	if (d == NULL || d->type != KI_STRING || d->u.str.len != KI_DIGEST_LEN ||
		memcmp(d->u.str.ptr, out[0].digest, KI_DIGEST_LEN) != 0)
		return psprintf("digest mismatch: %s says %.*s but the %s manifest digests to %s", digest_key,
						d && d->type == KI_STRING ? (int) d->u.str.len : 7,
						d && d->type == KI_STRING ? d->u.str.ptr : "nothing", key, out[0].digest);
	return NULL;
}

const char *
ki_import_memory_row(ki_arena *a, ki_value *row, bool *inserted)
{
	const char *reason;
	ki_value	copy = *row;
	ki_member  *kept;
	size_t		i,
				n = 0;
	Datum		arg;
	Oid			types[1] = {JSONBOID};
	SPIPlanPtr	plan;
	bool		isnull;
	char	   *outcome;

	*inserted = false;
	if ((reason = store_carried(a, row, "protocol", KI_KIND_BENCHMARK_PROTOCOL, "protocolDigest")) != NULL ||
		(reason = store_carried(a, row, "environment", KI_KIND_EXECUTION_ENVIRONMENT, "environmentDigest")) != NULL)
		return reason;
	/* the observation's own fields, without the manifests */
	kept = ki_alloc(a, (row->u.obj.count + 1) * sizeof(ki_member));
	for (i = 0; i < row->u.obj.count; i++)
	{
		const ki_member *mb = &row->u.obj.members[i];

		if (!((mb->key.len == 8 && memcmp(mb->key.ptr, "protocol", 8) == 0) ||
			  (mb->key.len == 11 && memcmp(mb->key.ptr, "environment", 11) == 0)))
			kept[n++] = *mb;
	}
	copy.u.obj.members = kept;
	copy.u.obj.count = n;
	plan = ki_kept_plan(&import_plan, "_kernelindex", "SELECT _kernelindex.memory_import($1)", 1, types);
	arg = JsonbPGetDatum(ki_tree_to_jsonb(&copy));
	if (SPI_execute_plan(plan, &arg, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not import a memory observation");
	outcome = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (strcmp(outcome, "inserted") == 0)
		*inserted = true;
	else if (strcmp(outcome, "present") != 0)
		return outcome;
	return NULL;
}

void
ki_memory_import_finish(int64 import_id, const ki_memory_counts *mc)
{
	Datum		args[4];
	Oid			types[4] = {INT8OID, INT8OID, INT8OID, INT8OID};

	args[0] = Int64GetDatum(import_id);
	args[1] = Int64GetDatum(mc->inserted);
	args[2] = Int64GetDatum(mc->present);
	args[3] = Int64GetDatum(mc->rejected);
	if (SPI_execute_with_args(psprintf("UPDATE %s.kbench_imports SET memory_inserted = $2, memory_present = $3, "
									   "memory_rejected = $4 WHERE id = $1", ki_ext_schema()),
							  4, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the import's memory counts");
}
