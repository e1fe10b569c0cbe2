/*
 * operations.c: a user's own operations from SQL (issue 26 item 4,
 * docs/OPERATIONS.md "Registering an operation").
 *
 *   kbench_register_operation(path)   (kbench_admin) a definition file in
 *                                     kernels/ops/defs' format, under
 *                                     kernelindex.implementation_directory,
 *                                     and its reference.file: both read once,
 *                                     judged by the kernels library as
 *                                     kbench --op-file judges them, and kept,
 *                                     text and sha256, in
 *                                     kbench_registered_operations
 *   kbench_unregister_operation(name) (kbench_admin) takes one out again
 *   ki_sync_operations()              the registry of this process follows
 *                                     that table, as the current snapshot
 *                                     sees it
 *
 * The kernels library's registry is per process.  Every backend call that
 * hands an operation's name to it (queueing a job, describing one, the
 * registry as jsonb) and the worker's claim call ki_sync_operations first:
 * it reads the names and digests of what is registered (a few rows) and,
 * when they differ from what this process loaded, takes every registered
 * operation out of the registry and adds the table's again.  So the
 * registry follows transactions: an operation registered in a transaction
 * that rolls back is gone from the backend that registered it at its next
 * call, and one registered by another session appears at the next call
 * after that session commits.  What a run uses is the text stored at
 * registration, never the files again: a worker runs the reference's bytes
 * as they were registered.
 */
#include "kernelindex.h"
#include "implementations.h"
#include "security.h"


#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* "name=definition digest+reference digest;..." of what this process added, or NULL: reload at the next sync */
static char *loaded = NULL;

/* Reload every registered operation into this process's registry; the caller is connected to SPI. */
static void
reload(void)
{
	kb_forget_added_ops();
	if (SPI_execute(psprintf("SELECT name, definition, reference_source, reference_file, source_file"
							 " FROM %s.kbench_registered_operations ORDER BY name", ki_ext_schema()),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read kbench_registered_operations");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		char	   *name = SPI_getvalue(t, d, 1);
		char	   *def = SPI_getvalue(t, d, 2);
		char	   *ref = SPI_getvalue(t, d, 3);
		char	   *ref_file = SPI_getvalue(t, d, 4);
		char	   *file = SPI_getvalue(t, d, 5);
		char		err[1024];

		if (kb_add_op_def(file, def, ref, ref_file, NULL, 0, err, sizeof(err)) != 0)
			ereport(WARNING,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("registered operation \"%s\" is not available", name),
					 errdetail("%s.", err),
					 errhint("Register it again (kbench_register_operation) or take it out (kbench_unregister_operation).")));
	}
}

void
ki_sync_operations(void)
{
	static ki_kept names_plan;
	StringInfoData fp;
	const char *schema;

	SPI_connect();
	schema = ki_ext_schema();
	if (SPI_execute_plan(ki_kept_plan(&names_plan, schema,
									  psprintf("SELECT name, definition_digest, reference_digest FROM %s.kbench_registered_operations"
											   " ORDER BY name", schema), 0, NULL),
						 NULL, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read kbench_registered_operations");
	initStringInfo(&fp);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *r = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3);

		appendStringInfo(&fp, "%s=%s+%s;", SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1),
						 SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2), r ? r : "");
	}
	if (loaded == NULL || strcmp(loaded, fp.data) != 0)
	{
		if (loaded)
			pfree(loaded);
		loaded = NULL;			/* an error while reloading reloads again next time */
		reload();
		loaded = MemoryContextStrdup(TopMemoryContext, fp.data);
	}
	SPI_finish();
}

/*
 * _kernelindex.register_operation(path): store a definition and its
 * reference and return the operation's name.  SECURITY DEFINER (the
 * extension's owner writes the tables); EXECUTE for kbench_admin only, the
 * front kbench_register_operation says which role is needed.
 */
PG_FUNCTION_INFO_V1(kbench_register_operation);
Datum
kbench_register_operation(PG_FUNCTION_ARGS)
{
	char	   *path,
			   *dir,
			   *file;
	char		name[64];
	char		err[1024];
	kb_op_source src;
	char	   *costs;
	Datum		args[8];
	Oid			types[8] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the definition's path must not be null"),
				 errhint("For example kbench_register_operation('/srv/kbench/affine.json') (docs/OPERATIONS.md).")));
	path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	/* nothing is resolved as the owner in a schema that others may create in (src/security.c) */
	ki_require_safe_schema();
	dir = ki_registration_directory();
	if (path[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the definition's path \"%s\" must be absolute", path)));
	file = ki_registered_file(path, dir, "the definition", "Operations");

	/* both files read as a registered implementation's: under the directory, without a symbolic link */
	if (kb_read_op_def(file, dir, &src, err, sizeof(err)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot register the operation of \"%s\"", file),
				 errdetail("%s.", err)));

	/*
	 * Judged against kbench's own operations only: a name registered before
	 * is replaced.  Whatever happens, the registry is reloaded at the next
	 * sync (this transaction may still roll back).
	 */
	if (loaded)
		pfree(loaded);
	loaded = NULL;
	kb_forget_added_ops();
	if (kb_add_op_def(file, src.def, src.ref, src.ref_path, name, sizeof(name), err, sizeof(err)) != 0)
	{
		kb_op_source_free(&src);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot register the operation of \"%s\"", file),
				 errdetail("%s.", err)));
	}

	SPI_connect();
	args[0] = CStringGetTextDatum(name);
	args[1] = CStringGetTextDatum(src.def);
	args[2] = CStringGetTextDatum(src.def_digest);
	if (src.ref)
	{
		args[3] = CStringGetTextDatum(src.ref);
		args[4] = CStringGetTextDatum(src.ref_path);
		args[5] = CStringGetTextDatum(src.ref_digest);
	}
	else
		nulls[3] = nulls[4] = nulls[5] = 'n';
	args[6] = CStringGetTextDatum(file);
	kb_op_source_free(&src);
	if (SPI_execute_with_args(psprintf("INSERT INTO %s.kbench_registered_operations"
									   " (name, definition, definition_digest, reference_source, reference_file,"
									   " reference_digest, source_file, registered_by)"
									   " VALUES ($1, $2, $3, $4, $5, $6, $7, session_user)"
									   " ON CONFLICT ON CONSTRAINT kbench_registered_operations_pkey DO UPDATE SET"
									   " definition = EXCLUDED.definition, definition_digest = EXCLUDED.definition_digest,"
									   " reference_source = EXCLUDED.reference_source, reference_file = EXCLUDED.reference_file,"
									   " reference_digest = EXCLUDED.reference_digest, source_file = EXCLUDED.source_file,"
									   " registered_by = EXCLUDED.registered_by, registered_at = EXCLUDED.registered_at",
									   ki_ext_schema()),
							  7, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not register the operation");

	/* its floors and roofline: the cost texts of the definition, as kbench evaluates them */
	costs = kb_op_costs_json(name);
	if (costs == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	args[1] = CStringGetTextDatum(costs);
	kb_free(costs);
	if (SPI_execute_with_args(psprintf("DELETE FROM %s.kbench_operation_costs WHERE operation = $1 AND NOT seeded",
									   ki_ext_schema()), 1, types, args, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args(psprintf("INSERT INTO %s.kbench_operation_costs (operation, mode, bytes, flops, compute, note)"
									   " SELECT e->>'operation', e->>'mode', e->>'bytes', e->>'flops', e->>'compute', e->>'note'"
									   " FROM pg_catalog.jsonb_array_elements($2::pg_catalog.jsonb) e"
									   " WHERE e->>'operation' = $1"
									   " ON CONFLICT ON CONSTRAINT kbench_operation_costs_pkey DO NOTHING",
									   ki_ext_schema()), 2, types, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not store the operation's costs");
	SPI_finish();
	kb_forget_added_ops();
	PG_RETURN_TEXT_P(cstring_to_text(name));
}

/* _kernelindex.unregister_operation(name): true when it was registered.  Its runs stay. */
PG_FUNCTION_INFO_V1(kbench_unregister_operation);
Datum
kbench_unregister_operation(PG_FUNCTION_ARGS)
{
	Datum		args[1];
	Oid			types[1] = {TEXTOID};
	bool		found;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the operation's name must not be null")));
	ki_require_safe_schema();
	args[0] = PG_GETARG_DATUM(0);
	SPI_connect();
	/* a name that is not registered writes nothing (so it answers false on a standby too) */
	if (SPI_execute_with_args(psprintf("SELECT 1 FROM %s.kbench_registered_operations WHERE name = $1",
									   ki_ext_schema()), 1, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read kbench_registered_operations");
	if (SPI_processed == 0)
	{
		SPI_finish();
		PG_RETURN_BOOL(false);
	}
	if (SPI_execute_with_args(psprintf("DELETE FROM %s.kbench_registered_operations WHERE name = $1",
									   ki_ext_schema()), 1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not unregister the operation");
	found = SPI_processed > 0;
	if (found &&
		SPI_execute_with_args(psprintf("DELETE FROM %s.kbench_operation_costs WHERE operation = $1 AND NOT seeded",
									   ki_ext_schema()), 1, types, args, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove the operation's costs");
	SPI_finish();
	PG_RETURN_BOOL(found);
}
