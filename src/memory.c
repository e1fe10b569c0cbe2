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

static SPIPlanPtr insert_plan = NULL;
static SPIPlanPtr import_plan = NULL;

bool
ki_store_memory_observation(const ki_liger_result *res, long line)
{
	Datum		args[14];
	char		nulls[14];
	const ki_liger_memory *m = &res->memory;

	Assert(res->outcome == KI_LIGER_MAPPED_MEMORY);
	if (insert_plan == NULL)
	{
		Oid			types[14] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID,
			INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID, INT8OID};
		SPIPlanPtr	plan = SPI_prepare(psprintf(
											   "INSERT INTO %s.kbench_memory_observations (source, external_id, operation_digest, "
											   "workload_digest, implementation_digest, protocol_digest, environment_digest, pass, "
											   "p50_bytes, p20_bytes, p80_bytes, liger_version, observed_at, source_line) "
											   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
											   "CAST($13 AS pg_catalog.timestamptz), $14) "
											   "ON CONFLICT DO NOTHING", ext_schema()),
											  14, types);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		insert_plan = plan;
	}
	memset(nulls, ' ', sizeof nulls);
	args[0] = CStringGetTextDatum("liger-kernel-bench");
	args[1] = CStringGetTextDatum(res->external_id);
	args[2] = CStringGetTextDatum(res->digest[KI_LIGER_OPERATION]);
	args[3] = CStringGetTextDatum(res->digest[KI_LIGER_WORKLOAD]);
	args[4] = CStringGetTextDatum(res->digest[KI_LIGER_IMPLEMENTATION]);
	args[5] = CStringGetTextDatum(res->digest[KI_LIGER_PROTOCOL]);
	args[6] = CStringGetTextDatum(res->digest[KI_LIGER_ENVIRONMENT]);
	args[7] = CStringGetTextDatum(m->pass);
	args[8] = Int64GetDatum(m->p50_bytes);
	args[9] = Int64GetDatum(m->p20_bytes);
	args[10] = Int64GetDatum(m->p80_bytes);
	if (!m->spread)
		nulls[9] = nulls[10] = 'n';
	args[11] = CStringGetTextDatum(m->liger_version);
	args[12] = CStringGetTextDatum(m->observed_at);
	args[13] = Int64GetDatum((int64) line);
	if (SPI_execute_plan(insert_plan, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store a memory observation");
	return SPI_processed > 0;
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
	if (import_plan == NULL)
	{
		Oid			types[1] = {JSONBOID};
		SPIPlanPtr	plan = SPI_prepare(psprintf("SELECT %s.kbench__memory_import($1)", ext_schema()), 1, types);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		SPI_keepplan(plan);
		import_plan = plan;
	}
	arg = JsonbPGetDatum(ki_tree_to_jsonb(&copy));
	if (SPI_execute_plan(import_plan, &arg, NULL, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not import a memory observation");
	outcome = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (strcmp(outcome, "inserted") == 0)
		*inserted = true;
	else if (strcmp(outcome, "present") != 0)
		return outcome;
	return NULL;
}

bool
ki_memory_available(void)
{
	bool		isnull;
	Datum		d;

	const char *name = quote_literal_cstr(psprintf("%s.kbench_memory_observations", ext_schema()));

	if (SPI_execute(psprintf("SELECT pg_catalog.to_regclass(%s) IS NOT NULL", name), true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not look for kbench_memory_observations");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return !isnull && DatumGetBool(d);
}

void
ki_memory_import_finish(int64 import_id, const ki_memory_counts *mc)
{
	Datum		args[4];
	Oid			types[4] = {INT8OID, INT8OID, INT8OID, INT8OID};

	if (!ki_memory_available())
		return;

	args[0] = Int64GetDatum(import_id);
	args[1] = Int64GetDatum(mc->inserted);
	args[2] = Int64GetDatum(mc->present);
	args[3] = Int64GetDatum(mc->rejected);
	if (SPI_execute_with_args(psprintf("UPDATE %s.kbench_imports SET memory_inserted = $2, memory_present = $3, "
									   "memory_rejected = $4 WHERE id = $1", ext_schema()),
							  4, types, args, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the import's memory counts");
}
