/*
 * security.h: what the runner's SQL entry points and the worker need to run
 * SQL safely and to decide who may do what (src/security.c).
 * docs/ARCHITECTURE.md, "Name resolution and rights".
 */
#ifndef KI_SECURITY_H
#define KI_SECURITY_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* GUCs: kernelindex.max_job_timeout (seconds), kernelindex.queue_limit_per_role */
extern int	ki_max_job_timeout_s;
extern int	ki_queue_limit_per_role;

/* Define them (from _PG_init; reloadable, so with or without preload). */
void		ki_define_security_gucs(void);

/* The pinned search_path text: "pg_catalog, <extension schema>, pg_temp". */
char	   *ki_pinned_search_path(void);

/*
 * Pin search_path to ki_pinned_search_path() until ki_unpin_search_path()
 * (or the end of the (sub)transaction, on error).  Returns the GUC nest
 * level to give back.
 */
int			ki_pin_search_path(void);
void		ki_unpin_search_path(int nest_level);

/*
 * Is the extension's schema safe to resolve names in as the owner or the
 * worker: owned by a superuser (or the extension's owner), with CREATE
 * granted to nobody else?  When not, *why says who else may create there.
 */
bool		ki_schema_is_safe(char **why);

/* Raise an error unless ki_schema_is_safe(). */
void		ki_require_safe_schema(void);

/* May role act on everyone's jobs (a superuser, or a member of kbench_admin)? */
bool		ki_is_runner_admin(Oid role);

/*
 * An interval argument as microseconds: months refused (a month has no fixed
 * length), days taken as 24 hours, negative values refused, and huge values
 * capped at max_us when max_us > 0.  what names the argument in messages.
 */
int64		ki_interval_usecs(const Interval *iv, const char *what, int64 max_us);

#endif							/* KI_SECURITY_H */
