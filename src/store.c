/*
 * store.c: the one store of the catalog, set-based.
 *
 * Everything that enters the catalog (kbench_ingest, the catalog and Liger
 * imports, the worker) is validated, normalized and digested by the core,
 * then added here.  A store stages the manifests in memory, one list per
 * kind, each digest once; ki_store_flush() hands each list to one SQL
 * function (sql/22_store.sql) that runs one INSERT ... SELECT ... ON
 * CONFLICT DO NOTHING for the kind and returns the digests that were new.
 * Records and history are kept by statement-level triggers, so a flush of
 * a thousand runs costs one trigger call, not a thousand.
 *
 * A store lives in the memory context it was made in (a function call's):
 * nothing of it outlives the call, so an aborted statement, transaction or
 * subtransaction leaves nothing behind to be trusted by the next one.
 */
#include "kernelindex.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "store.h"

/* The kinds' tables, in the order a flush stores them: what is referred to first. */
typedef enum store_group
{
	G_OPERATIONS,
	G_PROJECTS,
	G_WORKLOADS,
	G_IMPLEMENTATIONS,
	G_PROTOCOLS,
	G_ENVIRONMENTS,
	G_SERVING,
	G_RUNS,
	G_NGROUPS
} store_group;

static const char *const group_function[G_NGROUPS] = {
	"store_operations", "store_projects", "store_workloads",
	"store_implementations", "store_protocols", "store_environments",
	"store_serving", "store_runs",
};

typedef struct store_entry
{
	char		digest[KI_DIGEST_LEN + 1];	/* hash key */
	ki_store_item *item;
} store_entry;

typedef struct store_list
{
	ki_store_item **items;
	int			count;
	int			cap;
} store_list;

struct ki_store
{
	MemoryContext cxt;
	HTAB	   *seen;			/* digest -> item, for the store's life */
	store_list	lists[G_NGROUPS];
	int			pending;
};

static store_group
group_of(ki_kind kind)
{
	switch (kind)
	{
		case KI_KIND_OPERATION_SPEC:
			return G_OPERATIONS;
		case KI_KIND_SOFTWARE_PROJECT:
			return G_PROJECTS;
		case KI_KIND_WORKLOAD_CASE:
		case KI_KIND_WORKLOAD_SUITE:
			return G_WORKLOADS;
		case KI_KIND_IMPLEMENTATION_REVISION:
			return G_IMPLEMENTATIONS;
		case KI_KIND_BENCHMARK_PROTOCOL:
			return G_PROTOCOLS;
		case KI_KIND_EXECUTION_ENVIRONMENT:
			return G_ENVIRONMENTS;
		case KI_KIND_BENCHMARK_RUN:
			return G_RUNS;
		default:
			return G_SERVING;
	}
}

ki_store *
ki_store_begin(void)
{
	ki_store   *s = palloc0(sizeof(ki_store));
	HASHCTL		hctl;

	s->cxt = AllocSetContextCreate(CurrentMemoryContext, "kbench store", ALLOCSET_DEFAULT_SIZES);
	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = KI_DIGEST_LEN + 1;
	hctl.entrysize = sizeof(store_entry);
	hctl.hcxt = s->cxt;
	s->seen = hash_create("kbench store digests", 1024, &hctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	return s;
}

void
ki_store_end(ki_store *s)
{
	MemoryContextDelete(s->cxt);
	pfree(s);
}

int
ki_store_pending(const ki_store *s)
{
	return s->pending;
}

ki_store_item *
ki_store_add(ki_store *s, ki_kind kind, const char *digest, const ki_value *manifest,
			 const char *source, Datum raw_samples, bool *first)
{
	store_entry *e;
	bool		found;
	ki_store_item *item;
	store_list *l;
	MemoryContext old;

	e = hash_search(s->seen, digest, HASH_ENTER, &found);
	if (found)
	{
		item = e->item;
		/* raw samples given for a run met before and not stored yet go with it */
		if (raw_samples != (Datum) 0 && item->raw_samples == NULL && item->manifest != (Datum) 0)
		{
			old = MemoryContextSwitchTo(s->cxt);
			item->raw_samples = DatumGetCString(OidFunctionCall1(F_ARRAY_OUT, raw_samples));
			MemoryContextSwitchTo(old);
		}
		if (first)
			*first = false;
		return item;
	}
	{
		/* built in the caller's context (its garbage dies there), kept here */
		Jsonb	   *jb = ki_tree_to_jsonb(manifest);

		old = MemoryContextSwitchTo(s->cxt);
		item = palloc0(sizeof(ki_store_item));
		item->manifest = PointerGetDatum(palloc(VARSIZE(jb)));
		memcpy(DatumGetPointer(item->manifest), jb, VARSIZE(jb));
	}
	item->kind = kind;
	strlcpy(item->digest, digest, sizeof(item->digest));
	item->source = source ? pstrdup(source) : NULL;
	if (raw_samples != (Datum) 0)
		item->raw_samples = DatumGetCString(OidFunctionCall1(F_ARRAY_OUT, raw_samples));
	e->item = item;
	l = &s->lists[group_of(kind)];
	if (l->count == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 64;
		l->items = l->items ? repalloc(l->items, l->cap * sizeof(ki_store_item *))
			: palloc(l->cap * sizeof(ki_store_item *));
	}
	l->items[l->count++] = item;
	s->pending++;
	MemoryContextSwitchTo(old);
	if (first)
		*first = true;
	return item;
}

static Datum
text_array(Datum *elems, bool *nulls, int n)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
}

/*
 * The statement that stores a kind, prepared once per process and kept
 * (src/kept_plans.c).  The plan cache re-plans it when what it depends on
 * changes (the function replaced or dropped and made again by ALTER
 * EXTENSION UPDATE or DROP and CREATE EXTENSION: the statement names it by
 * schema and name, and is parsed again from its text); the functions are
 * plpgsql (sql/code/22_store.sql), whose statements' plans are kept too.
 */
static SPIPlanPtr
group_plan(store_group g, int nargs, Oid *types)
{
	static ki_kept group_plans[G_NGROUPS];

	if (group_plans[g].plan != NULL)
		return group_plans[g].plan;
	return ki_kept_plan(&group_plans[g], "_kernelindex",
						psprintf("SELECT d FROM _kernelindex.%s($1, $2, $3%s) d", group_function[g],
								 nargs == 4 ? ", $4" : ""),
						nargs, types);
}

/* Store one kind's list through its SQL function; mark what was new. */
static void
flush_list(ki_store *s, store_group g)
{
	store_list *l = &s->lists[g];
	MemoryContext work = AllocSetContextCreate(s->cxt, "kbench store flush", ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(work);
	Datum	   *digests = palloc(l->count * sizeof(Datum));
	Datum	   *manifests = palloc(l->count * sizeof(Datum));
	Datum	   *sources = palloc(l->count * sizeof(Datum));
	Datum	   *extra = palloc(l->count * sizeof(Datum));
	bool	   *source_nulls = palloc(l->count * sizeof(bool));
	bool	   *extra_nulls = palloc(l->count * sizeof(bool));
	bool		with_kind = g == G_WORKLOADS || g == G_SERVING;
	bool		with_raw = g == G_RUNS;
	Datum		args[4];
	Oid			types[4] = {TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID, TEXTARRAYOID};
	int			nargs = (with_kind || with_raw) ? 4 : 3;
	int			dims[1] = {l->count};
	int			lbs[1] = {1};
	int			i;
	uint64		r;

	for (i = 0; i < l->count; i++)
	{
		ki_store_item *it = l->items[i];

		digests[i] = CStringGetTextDatum(it->digest);
		manifests[i] = it->manifest;
		source_nulls[i] = it->source == NULL;
		sources[i] = it->source ? CStringGetTextDatum(it->source) : (Datum) 0;
		extra_nulls[i] = false;
		if (with_kind)
			extra[i] = CStringGetTextDatum(ki_kind_name(it->kind));
		else if (with_raw && it->raw_samples)
			extra[i] = CStringGetTextDatum(it->raw_samples);
		else
		{
			extra[i] = (Datum) 0;
			extra_nulls[i] = true;
		}
	}
	args[0] = text_array(digests, NULL, l->count);
	args[1] = PointerGetDatum(construct_md_array(manifests, NULL, 1, dims, lbs, JSONBOID, -1, false, TYPALIGN_INT));
	args[2] = text_array(sources, source_nulls, l->count);
	args[3] = text_array(extra, extra_nulls, l->count);
	if (SPI_execute_plan(group_plan(g, nargs, types), args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "%s failed", group_function[g]);
	for (r = 0; r < SPI_processed; r++)
	{
		char	   *d = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
		store_entry *e = hash_search(s->seen, d, HASH_FIND, NULL);

		if (e)
			e->item->inserted = true;
	}
	SPI_freetuptable(SPI_tuptable);
	/* what is stored is known by its digest; its manifest is no longer needed */
	for (i = 0; i < l->count; i++)
	{
		pfree(DatumGetPointer(l->items[i]->manifest));
		l->items[i]->manifest = (Datum) 0;
		l->items[i]->stored = true;
	}
	l->count = 0;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work);
}

/* At most this many manifests other than runs are looked up before their kinds' functions run. */
#define KNOWN_PROBE_MAX 16

/*
 * Take out of the lists the manifests other than runs that are stored
 * already, by one call of _kernelindex.stored_digests (sql/code/22_store.sql)
 * rather than one call of each kind's function: what a job stores besides its
 * run is there after its first job.  Only for a few manifests (a job, an
 * ingest); an import's thousands go to their functions, which probe too.
 * What is taken out is stored and not inserted, as its function would say.
 */
static void
drop_known(ki_store *s)
{
	static ki_kept known_plan;
	Oid			types[2] = {TEXTARRAYOID, INT4ARRAYOID};
	Datum		digests[KNOWN_PROBE_MAX];
	Datum		groups[KNOWN_PROBE_MAX];
	Datum		args[2];
	int			n = 0;
	int			lists = 0;
	int			dims[1];
	int			lbs[1] = {1};
	int			g;
	uint64		r;
	MemoryContext work;
	MemoryContext old;

	for (g = 0; g < G_NGROUPS; g++)
		if (g != G_RUNS && s->lists[g].count > 0)
		{
			n += s->lists[g].count;
			lists++;
		}
	/* one kind's list is one call either way */
	if (lists < 2 || n > KNOWN_PROBE_MAX)
		return;
	work = AllocSetContextCreate(s->cxt, "kbench store probe", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(work);
	n = 0;
	for (g = 0; g < G_NGROUPS; g++)
	{
		if (g == G_RUNS)
			continue;
		for (int i = 0; i < s->lists[g].count; i++)
		{
			digests[n] = CStringGetTextDatum(s->lists[g].items[i]->digest);
			groups[n++] = Int32GetDatum(g);
		}
	}
	dims[0] = n;
	args[0] = text_array(digests, NULL, n);
	args[1] = PointerGetDatum(construct_md_array(groups, NULL, 1, dims, lbs, INT4OID, 4, true, TYPALIGN_INT));
	if (SPI_execute_plan(ki_kept_plan(&known_plan, "_kernelindex",
									  "SELECT d FROM _kernelindex.stored_digests($1, $2) d", 2, types),
						 args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "_kernelindex.stored_digests failed");
	for (r = 0; r < SPI_processed; r++)
	{
		char	   *d = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1);
		store_entry *e = hash_search(s->seen, d, HASH_FIND, NULL);

		if (e && !e->item->stored)
		{
			pfree(DatumGetPointer(e->item->manifest));
			e->item->manifest = (Datum) 0;
			e->item->stored = true;
		}
	}
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(work);
	/* the lists keep what is left to store, in order */
	for (g = 0; g < G_NGROUPS; g++)
	{
		store_list *l = &s->lists[g];
		int			k = 0;

		if (g == G_RUNS)
			continue;
		for (int i = 0; i < l->count; i++)
			if (!l->items[i]->stored)
				l->items[k++] = l->items[i];
			else
				s->pending--;
		l->count = k;
	}
}

void
ki_store_flush(ki_store *s)
{
	int			g;

	if (s->pending == 0)
		return;
	drop_known(s);
	for (g = 0; g < G_NGROUPS; g++)
		if (s->lists[g].count > 0)
			flush_list(s, (store_group) g);
	s->pending = 0;
}
