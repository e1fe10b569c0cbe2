/*
 * extension.c: where the extension lives (its schema) and who owns it, for
 * the SQL that the C code runs, and the one place the C asks which version
 * of the SQL is installed.
 *
 *   ki_ext_schema, ki_ext_owner, ki_ext_namespace
 *                         looked up in pg_extension once per backend (again
 *                         if the extension is dropped and created anew);
 *                         each also requires the installed version to be
 *                         the library's (ki_ext_require_current)
 *   ki_ext_version_current  whether pg_extension.extversion equals the
 *                         library's version (KI_VERSION, from
 *                         kernelindex.control); read once per transaction
 *   ki_ext_require_current  the error a SQL call of a database not yet
 *                         updated gets (ALTER EXTENSION kernelindex UPDATE);
 *                         the update's own scripts pass (pg_extension names
 *                         the version being installed while they run)
 *
 * The library serves only the SQL of its own version: the C has no branch
 * for an older schema.  A database still on an older version keeps the C
 * symbols its SQL declares (so the library loads and the update runs), and
 * every call that reaches the extension's objects gets the error.  The
 * worker asks ki_ext_version_current and skips such a database until it is
 * updated (worker_jobs.c, ki_worker_extension_ready).
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
#include "storage/proc.h"

#include "pg_compat.h"

#ifndef KI_VERSION
#error "KI_VERSION is set by the Makefile from kernelindex.control"
#endif

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

/* The installed version, read at most once per transaction. */
static LocalTransactionId version_lxid = InvalidLocalTransactionId;
static Oid	version_ext = InvalidOid;
static char version_installed[NAMEDATALEN];

static const char *
installed_version(void)
{
	Oid			ext = get_extension_oid("kernelindex", false);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Datum		d;
	bool		isnull;

	if (version_lxid == KI_MY_LXID && version_ext == ext && version_lxid != InvalidLocalTransactionId)
		return version_installed;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "extension kernelindex not found");
	d = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);
	strlcpy(version_installed, isnull ? "" : TextDatumGetCString(d), sizeof(version_installed));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	version_ext = ext;
	version_lxid = KI_MY_LXID;
	return version_installed;
}

/*
 * Is the installed extension's version the library's?  Sets *installed (may
 * be NULL) to the installed version.  Inside a transaction.
 */
bool
ki_ext_version_current(const char **installed)
{
	const char *v = installed_version();

	if (installed)
		*installed = v;
	return strcmp(v, KI_VERSION) == 0;
}

/*
 * A SQL call needs the installed SQL to be the library's version.  The
 * scripts of CREATE and ALTER EXTENSION kernelindex run with the version
 * they install in pg_extension, and step by step (0.1.0 -> 0.2.0 -> ...):
 * they pass whatever the step.
 */
void
ki_ext_require_current(void)
{
	const char *installed;

	if (creating_extension && CurrentExtensionObject == get_extension_oid("kernelindex", true))
		return;
	if (!ki_ext_version_current(&installed))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("kernelindex %s is installed but the library is %s", installed, KI_VERSION),
				 errdetail("The library serves only the SQL of its own version."),
				 errhint("Run ALTER EXTENSION kernelindex UPDATE.")));
}

/* The extension's schema name, quoted. */
const char *
ki_ext_schema(void)
{
	lookup();
	ki_ext_require_current();
	return cached_schema;
}

/* The role that owns the extension. */
Oid
ki_ext_owner(void)
{
	lookup();
	ki_ext_require_current();
	return cached_owner;
}

/* The extension's schema. */
Oid
ki_ext_namespace(void)
{
	lookup();
	ki_ext_require_current();
	return cached_namespace;
}
