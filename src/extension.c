/*
 * extension.c: where the extension lives (its schema) and who owns it, for
 * the SQL that the C code runs.  Looked up in pg_extension once per backend
 * (again if the extension is dropped and created anew).
 */
#include "kernelindex.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

static Oid	cached_ext = InvalidOid;
static char *cached_schema = NULL;
static Oid	cached_owner = InvalidOid;
static Oid	cached_namespace = InvalidOid;

static void
lookup(void)
{
	Oid			ext = get_extension_oid("kernelindex", false);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Form_pg_extension form;

	if (ext == cached_ext && cached_schema != NULL)
		return;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "extension kernelindex not found");
	form = (Form_pg_extension) GETSTRUCT(tup);
	cached_schema = MemoryContextStrdup(TopMemoryContext,
										quote_identifier(get_namespace_name(form->extnamespace)));
	cached_owner = form->extowner;
	cached_namespace = form->extnamespace;
	cached_ext = ext;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/* The extension's schema name, quoted. */
const char *
ki_ext_schema(void)
{
	lookup();
	return cached_schema;
}

/* The role that owns the extension. */
Oid
ki_ext_owner(void)
{
	lookup();
	return cached_owner;
}

/* The extension's schema. */
Oid
ki_ext_namespace(void)
{
	lookup();
	return cached_namespace;
}
