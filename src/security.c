/*
 * security.c: the runner's rules for running SQL as the extension's owner
 * or in a worker, and for who may act on a job.
 *
 * Every statement the extension runs with rights its caller lacks (as the
 * extension's owner, or in a background worker as the bootstrap superuser)
 * runs with search_path pinned to pg_catalog, the extension's schema and
 * pg_temp, and names pg_catalog's functions explicitly: a function or
 * operator that another role created in its own schema, or in public,
 * is never resolved by it.  docs/ARCHITECTURE.md, "Name resolution and
 * rights"; test/suites/security.sh checks it.
 */
#include "kernelindex.h"
#include "security.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "common/int.h"
#include "miscadmin.h"
#include "utils/syscache.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

int			ki_max_job_timeout_s = 24 * 3600;
int			ki_queue_limit_per_role = 500;

void
ki_define_security_gucs(void)
{
	DefineCustomIntVariable("kernelindex.max_job_timeout",
							"Longest time limit a benchmark job may ask for.",
							"kbench_run refuses a longer timeout; a longer kernelindex.job_timeout is cut to it.",
							&ki_max_job_timeout_s, 24 * 3600, 1, 365 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.queue_limit_per_role",
							"Most jobs one role may have waiting in the queue (0: no limit but kernelindex.queue_limit).",
							"kbench_run refuses a role's new jobs beyond it.",
							&ki_queue_limit_per_role, 500, 0, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
}

char *
ki_pinned_search_path(void)
{
	return psprintf("pg_catalog, %s, pg_temp", ki_ext_schema());
}

int
ki_pin_search_path(void)
{
	int			nest = NewGUCNestLevel();

	(void) set_config_option("search_path", ki_pinned_search_path(), PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nest;
}

void
ki_unpin_search_path(int nest_level)
{
	AtEOXact_GUC(true, nest_level);
}

/* A role that may create in the schema without being trusted with the owner's rights? */
static bool
untrusted(Oid role)
{
	if (role == ROLE_PG_DATABASE_OWNER)
	{
		HeapTuple	t = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));

		if (!HeapTupleIsValid(t))
			return true;
		role = ((Form_pg_database) GETSTRUCT(t))->datdba;
		ReleaseSysCache(t);
	}
	return role != ki_ext_owner() && !superuser_arg(role);
}

bool
ki_schema_is_safe(char **why)
{
	Oid			nsp = ki_ext_namespace();
	HeapTuple	t = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	Form_pg_namespace form;
	Datum		d;
	bool		isnull;
	bool		safe = true;

	if (!HeapTupleIsValid(t))
		elog(ERROR, "cache lookup failed for schema %u", nsp);
	form = (Form_pg_namespace) GETSTRUCT(t);
	if (untrusted(form->nspowner))
	{
		*why = psprintf("schema %s belongs to role %s, who is not a superuser",
						NameStr(form->nspname), GetUserNameFromId(form->nspowner, false));
		safe = false;
	}
	d = SysCacheGetAttr(NAMESPACEOID, t, Anum_pg_namespace_nspacl, &isnull);
	if (safe && !isnull)
	{
		Acl		   *acl = DatumGetAclP(d);
		AclItem    *items = ACL_DAT(acl);
		int			i;

		for (i = 0; i < ACL_NUM(acl) && safe; i++)
			if ((ACLITEM_GET_PRIVS(items[i]) & ACL_CREATE) &&
				(items[i].ai_grantee == ACL_ID_PUBLIC || untrusted(items[i].ai_grantee)))
			{
				*why = psprintf("%s may create objects in schema %s",
								items[i].ai_grantee == ACL_ID_PUBLIC ? "every role (PUBLIC)" :
								psprintf("role %s", GetUserNameFromId(items[i].ai_grantee, false)),
								NameStr(form->nspname));
				safe = false;
			}
	}
	ReleaseSysCache(t);
	return safe;
}

void
ki_require_safe_schema(void)
{
	char	   *why = NULL;

	if (!ki_schema_is_safe(&why))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("the kernelindex runner does not run jobs while others may create objects in its schema"),
				 errdetail("Jobs run with the rights of a superuser, and %s: a function made there could run with them.", why),
				 errhint("Revoke CREATE on the schema from every role but a superuser, or install kernelindex in a schema of its own.")));
}

bool
ki_is_runner_admin(Oid role)
{
	Oid			admin;

	if (superuser_arg(role))
		return true;
	admin = get_role_oid("kbench_admin", true);
	return OidIsValid(admin) && has_privs_of_role(role, admin);
}

int64
ki_interval_usecs(const Interval *iv, const char *what, int64 max_us)
{
	int64		us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be given in months or years", what),
				 errdetail("A month has no fixed length."),
				 errhint("Give it in days, hours, minutes or seconds, for example '30 days'.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		us = (iv->day < 0 || (iv->day == 0 && iv->time < 0)) ? PG_INT64_MIN : PG_INT64_MAX;
	if (us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", what)));
	if (max_us > 0 && us > max_us)
		us = max_us;
	return us;
}
