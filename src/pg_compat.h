/*
 * pg_compat.h: the one place where kernelindex asks which PostgreSQL major it is built
 * against (15, 17 and 18 are built and tested: README, "PostgreSQL versions").  Each
 * macro names what the code needs, not the version.
 */
#ifndef KI_PG_COMPAT_H
#define KI_PG_COMPAT_H

#include "storage/proc.h"

/* this backend's local transaction id: PostgreSQL 17 moved it into PGPROC's vxid */
#if PG_VERSION_NUM >= 170000
#define KI_MY_LXID (MyProc->vxid.lxid)
#else
#define KI_MY_LXID (MyProc->lxid)
#endif

#endif							/* KI_PG_COMPAT_H */
