/*
 * catalog_writer.c: kbench_ingest and the imports write the catalog as the
 * extension's owner (catalog_writer.h), so that a member of kbench_admin
 * who is not the owner ingests, imports, retracts and supersedes.
 *
 * Who may call them is decided by EXECUTE (sql/90_privileges.sql); what a
 * caller sends is validated in C before anything is written; reading a file
 * on the server is checked against the caller before the switch.  After
 * it, every statement runs with the owner's rights under search_path
 * pg_catalog, <extension schema>, pg_temp, and only while the extension's
 * schema is one where nobody untrusted may create objects (src/security.c):
 * no function or operator the caller made is ever resolved with the
 * owner's rights.  docs/ARCHITECTURE.md, "Name resolution and rights".
 */
#include "kernelindex.h"

#include "miscadmin.h"

#include "catalog_writer.h"
#include "security.h"

void
ki_catalog_writer_begin(ki_catalog_writer *w)
{
	Oid			owner = ki_ext_owner();
	char	   *why = NULL;

	GetUserIdAndSecContext(&w->save_userid, &w->save_sec);
	if (w->save_userid != owner && !ki_schema_is_safe(&why))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("kernelindex does not write its catalog for another role while others may create objects in its schema"),
				 errdetail("The catalog is written with the rights of the extension's owner, and %s: a function made there could run with them.", why),
				 errhint("Revoke CREATE on the schema from every role but a superuser, or install kernelindex in a schema of its own.")));
	SetUserIdAndSecContext(owner, w->save_sec | SECURITY_LOCAL_USERID_CHANGE);
	w->nest = ki_pin_search_path();
}

void
ki_catalog_writer_end(ki_catalog_writer *w)
{
	ki_unpin_search_path(w->nest);
	SetUserIdAndSecContext(w->save_userid, w->save_sec);
}
