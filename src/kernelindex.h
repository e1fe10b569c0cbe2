/*
 * kernelindex.h: what the extension's C files share.
 */
#ifndef KERNELINDEX_H
#define KERNELINDEX_H

#include "postgres.h"
#include "fmgr.h"
#include "utils/jsonb.h"

#include "ki_json.h"

/*
 * kept_plans.c: a statement prepared once per process for the schema its
 * text names, prepared again when asked for another schema.  Connected to SPI.
 */
typedef struct ki_kept
{
	struct _SPI_plan *plan;
	char		schema[NAMEDATALEN];
} ki_kept;
struct _SPI_plan *ki_kept_plan(ki_kept *k, const char *schema, const char *sql, int nargs, Oid *types);

/* continuous.c: its GUCs, defined by _PG_init (init.c). */
void		ki_continuous_init(void);

/* An arena whose blocks are palloc'd in CurrentMemoryContext. */
void		ki_pg_arena_init(ki_arena *a);

/*
 * The backend's scratch arena, rewound: for functions that run no SQL or
 * user code while using it (see pg_json.c).
 */
ki_arena   *ki_pg_scratch_arena(void);

/*
 * Read argument argno (json, jsonb or text; the SQL signature says which)
 * into a tree.  Returns NULL with errs filled when the text is not strict
 * JSON; jsonb input cannot carry duplicates any more.
 */
ki_value   *ki_pg_arg_tree(FunctionCallInfo fcinfo, int argno, ki_arena *a, ki_errors *errs);

/* A tree from a jsonb value. */
ki_value   *ki_jsonb_to_tree(ki_arena *a, Jsonb *jb);

/* A jsonb value from a tree (numbers written as RFC 8785 numbers). */
Jsonb	   *ki_tree_to_jsonb(const ki_value *v);

/*
 * Raise the errors as one ERROR: the SQLSTATE from the first problem's
 * status, its path and rule in the message, the others in the DETAIL.
 * what names the document ("manifest", "run document", "JSON").
 */
_Noreturn void ki_pg_report(const ki_errors *errs, const char *what);

/* Parse, validate and normalize a manifest argument, or raise. */
ki_value   *ki_pg_manifest_arg(FunctionCallInfo fcinfo, int argno, ki_arena *a, ki_kind *kind);

/*
 * Store one validated, normalized manifest through the store (store.c); true
 * when it was new.  Connected to SPI.  raw_samples: an int8[] or 0.
 */
bool		ki_store_manifest(ki_kind kind, const char *digest, const ki_value *manifest,
							  const char *source, Datum raw_samples);

/* One manifest stored by ki_ingest_tree. */
typedef struct ki_stored
{
	ki_kind		kind;
	char		digest[KI_DIGEST_LEN + 1];
	bool		inserted;
} ki_stored;

/*
 * The one ingest path: validate, normalize, digest and store a manifest or
 * a composite {run, protocol, environment} document (protocol and
 * environment first; raw_samples, an int8[] or 0, go with the run).  Fills
 * out[] (up to three) and returns how many, or -1 with errs filled.
 * Connected to SPI.
 */
int			ki_ingest_tree(ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
						   ki_stored *out, ki_errors *errs);

/*
 * The extension's schema name, quoted, and its owner (src/extension.c);
 * each raises the error of ki_ext_require_current in a database whose
 * installed SQL is not the library's version.
 */
const char *ki_ext_schema(void);
Oid			ki_ext_owner(void);
Oid			ki_ext_namespace(void);

/* The one question about the installed version (src/extension.c). */
bool		ki_ext_version_current(const char **installed);
void		ki_ext_require_current(void);

#endif							/* KERNELINDEX_H */
