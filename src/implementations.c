/*
 * implementations.c: python and library implementations from SQL.
 *
 *   kernelindex.python                    the interpreter the workers start the python
 *                                         harness with (kernels/python/kbench_harness.py)
 *   kernelindex.implementation_directory  where registered code may come from
 *   kbench_register_implementation(name, operation, entry, version)
 *                                         (kbench_admin) the ImplementationRevision of a
 *                                         file under that directory, and its name
 *
 * Code runs as the server's OS user, in a child process of the worker
 * (kernels/impl.c), never inside a backend.  Only kbench_admin registers it,
 * only from the directory the superuser allowed; a queued job names it by
 * its registered name (kbench_run(..., implementation => name)), and the
 * worker reads the entry from kbench_registered_implementations when it
 * runs the job.  Both settings are SIGHUP: postgresql.conf or ALTER SYSTEM.
 */
#include "kernelindex.h"
#include "runner.h"
#include "implementations.h"
#include "protocol.h"
#include "security.h"

#include <limits.h>
#include <stdlib.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"


char	   *ki_python = NULL;
char	   *ki_impl_directory = NULL;

void
ki_implementations_init(void)
{
	DefineCustomStringVariable("kernelindex.python",
							   "Python interpreter that runs python implementations (huggingface, torch, liger, registered files).",
							   "Empty: $KBENCH_PYTHON, else python3 on the server's PATH. It needs torch.",
							   &ki_python, "", PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("kernelindex.implementation_directory",
							   "Directory that kbench_register_implementation may register code from.",
							   "Empty: registration is refused. The code runs as the server's operating-system user.",
							   &ki_impl_directory, "", PGC_SIGHUP, 0, NULL, NULL, NULL);
}


bool
ki_impl_in_child(const char *impl)
{
	kb_impl_id	id;

	/* not kbench's own (cpu, cuda, cuda/vN) nor one it claims (kb_impl_resolve) */
	return impl != NULL && kb_impl_resolve(impl, NULL, &id, NULL, 0) == KB_PASSED && !id.own;
}

/*
 * The entry, version and recorded content digest (spec.source.contentDigest
 * of the revision registered; "" when there is none) of a registered
 * implementation (palloc'd), or false.  The caller is inside a transaction
 * and not connected to SPI.
 */
static bool
lookup_registered(const char *impl, const char *op, char **entry, char **version, char **digest)
{
	Datum		args[2];
	Oid			types[2] = {TEXTOID, TEXTOID};
	bool		found = false;
	MemoryContext cxt = CurrentMemoryContext;

	SPI_connect();
	args[0] = CStringGetTextDatum(impl);
	args[1] = CStringGetTextDatum(op);
	if (SPI_execute_with_args(psprintf("SELECT g.entry, g.version, i.manifest->'spec'->'source'->>'contentDigest'"
									   " FROM %s.kbench_registered_implementations g"
									   " LEFT JOIN %s.kbench_implementations i ON i.digest = g.implementation_digest"
									   " WHERE g.name = $1 AND g.operation = $2", ki_ext_schema(), ki_ext_schema()),
							  2, types, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read kbench_registered_implementations");
	if (SPI_processed == 1)
	{
		char	   *e = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		char	   *d = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);

		*entry = MemoryContextStrdup(cxt, e);
		*version = v ? MemoryContextStrdup(cxt, v) : NULL;
		*digest = MemoryContextStrdup(cxt, d ? d : "");
		found = true;
	}
	SPI_finish();
	return found;
}

/*
 * kernelindex.implementation_directory resolved (palloc'd in cxt), or ""
 * when it is not set or cannot be resolved: registered code then does not
 * run (kb_request.entry_directory).
 */
static char *
allowed_directory(MemoryContext cxt)
{
	char		buf[PATH_MAX];

	if (ki_impl_directory == NULL || ki_impl_directory[0] == '\0' || realpath(ki_impl_directory, buf) == NULL)
		buf[0] = '\0';
	return MemoryContextStrdup(cxt, buf);
}

/*
 * Validate a job at queue time, as kb_check_request does, with the
 * implementation resolved: built-in names, python and library entries need
 * the interpreter and the harness (a missing one is said now), registered
 * names their entry.  No device is touched for a cuda device.
 */
kb_status
ki_check_job(const char *op, const char *mode, const char *workload, const char *impl, const char *device,
			 const char *protocol, char *err, size_t errlen)
{
	kb_request	req;
	kb_status	st;

	ki_sync_operations();		/* a registered operation's name (src/operations.c) */
	kb_request_for(&req, op, mode, workload, impl, device);
	req.python = ki_python && ki_python[0] ? ki_python : NULL;
	if (protocol)
		ki_protocol_apply_text(&req, protocol);	/* what depends on it: cuda_graph's device and implementation */
	if (impl && !kb_impl_builtin(impl))
	{
		char	   *entry = NULL,
				   *version = NULL,
				   *digest = NULL;

		if (!lookup_registered(impl, op ? op : "", &entry, &version, &digest))
		{
			snprintf(err, errlen, "unknown implementation '%s': not built in (cpu, cuda, cuda/vN, huggingface, torch, "
					 "liger, Liger's other providers for their operations) and not registered for %s "
					 "(kbench_register_implementation)", impl, op ? op : "");
			return KB_INVALID_REQUEST;
		}
		req.entry = entry;
		req.impl_version = version;
		req.entry_digest = digest;
		req.entry_directory = allowed_directory(CurrentMemoryContext);
	}
	if (ki_is_cuda_device(device))
	{
		kb_result	res;

		st = kb_describe(&req, &res);
		if (st != KB_PASSED)
			snprintf(err, errlen, "%s", res.message);
		kb_free_result(&res);
		return st;
	}
	return kb_check(&req, err, errlen);
}

/*
 * Inside a transaction (not connected to SPI): the interpreter, and the
 * entry of a registered name, palloc'd (left unset when not registered).
 */
void
ki_resolve_request(kb_request *req, const char *op)
{
	char	   *e = NULL,
			   *v = NULL,
			   *d = NULL;

	ki_sync_operations();
	req->python = ki_python && ki_python[0] ? ki_python : NULL;
	if (!req->impl || kb_impl_builtin(req->impl))
		return;
	if (lookup_registered(req->impl, op, &e, &v, &d))
	{
		req->entry = e;
		req->impl_version = v;
		req->entry_digest = d;
		req->entry_directory = allowed_directory(CurrentMemoryContext);
	}
}

/*
 * In the worker, before kb_run: the interpreter, and the entry of a
 * registered name (its own short transaction) with what its file must be
 * at this run: under kernelindex.implementation_directory as it is now,
 * with the content digest recorded at registration (kb_request).  The
 * strings live until the next call.
 */
void
ki_worker_prepare_request(kb_request *req, const char *op)
{
	static char *entry = NULL;
	static char *version = NULL;
	static char *digest = NULL;
	static char *directory = NULL;

	req->python = ki_python && ki_python[0] ? ki_python : NULL;
	if (!req->impl || kb_impl_builtin(req->impl))
		return;
	if (entry)
		pfree(entry);
	if (version)
		pfree(version);
	if (digest)
		pfree(digest);
	if (directory)
		pfree(directory);
	entry = version = digest = directory = NULL;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	{
		char	   *e = NULL,
				   *v = NULL,
				   *d = NULL;

		if (lookup_registered(req->impl, op, &e, &v, &d))
		{
			entry = MemoryContextStrdup(TopMemoryContext, e);
			version = v ? MemoryContextStrdup(TopMemoryContext, v) : NULL;
			digest = MemoryContextStrdup(TopMemoryContext, d);
			directory = allowed_directory(TopMemoryContext);
		}
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	/* not registered (any more): kb_run says the implementation is unknown */
	req->entry = entry;
	req->impl_version = version;
	req->entry_digest = digest;
	req->entry_directory = directory;
}

/* realpath() of a path, palloc'd, or an error that says which. */
static char *
real_path(const char *path, const char *what)
{
	char		buf[PATH_MAX];

	if (realpath(path, buf) == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not resolve %s \"%s\": %m", what, path)));
	return pstrdup(buf);
}

/*
 * The directory that registered code (an implementation's file, an
 * operation's definition and reference) may come from, resolved; an error
 * when kernelindex.implementation_directory is not set.
 */
char *
ki_registration_directory(void)
{
	if (ki_impl_directory == NULL || ki_impl_directory[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("registering code is disabled on this server"),
				 errdetail("kernelindex.implementation_directory is not set."),
				 errhint("A superuser sets it to the directory that registered code may come from: ALTER SYSTEM SET kernelindex.implementation_directory = '/srv/kbench'; SELECT pg_reload_conf(); as statements of their own, then SHOW kernelindex.implementation_directory until it has the value (a session applies a reload between statements, once the signal reaches it), or reconnect.")));
	return real_path(ki_impl_directory, "kernelindex.implementation_directory");
}

/*
 * path (what: "the entry's file", "the definition") resolved (symbolic
 * links, ".."): an error unless it lies under dir, the registration
 * directory; kind says what may be registered from there ("Code").
 */
char *
ki_registered_file(const char *path, const char *dir, const char *what, const char *kind)
{
	char	   *file = real_path(path, what);

	if (strncmp(file, dir, strlen(dir)) != 0 || file[strlen(dir)] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("\"%s\" is not under kernelindex.implementation_directory", file),
				 errdetail("%s may be registered from \"%s\" only.", kind, dir)));
	return file;
}

/*
 * kbench_register_implementation(name, operation, entry, version): store
 * the ImplementationRevision of entry's file and register the name.
 * SECURITY DEFINER (the extension's owner writes the tables); EXECUTE for
 * kbench_admin only.
 */
PG_FUNCTION_INFO_V1(kbench_register_implementation);
Datum
kbench_register_implementation(PG_FUNCTION_ARGS)
{
	char	   *name,
			   *op,
			   *entry,
			   *version;
	char	   *dir,
			   *file,
			   *colon,
			   *rest;
	char		digest[72];
	char		err[1024];
	char	   *manifest;
	Datum		args[6];
	Oid			types[6] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	ki_stored	out[3];

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name, operation and entry must not be null"),
				 errhint("For example kbench_register_implementation('my-ln', 'layer_norm', 'python:/srv/kbench/ln.py:layer_norm').")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	op = text_to_cstring(PG_GETARG_TEXT_PP(1));
	entry = text_to_cstring(PG_GETARG_TEXT_PP(2));
	version = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));

	/* nothing is resolved as the owner in a schema that others may create in (src/security.c) */
	ki_require_safe_schema();
	if (kb_impl_builtin(name))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is the name of a built-in implementation", name),
				 errhint("Choose another name.")));
	dir = ki_registration_directory();
	/* the entry's file, resolved (symbolic links, ".."), must lie under the directory */
	rest = strchr(entry, ':');
	colon = strrchr(entry, ':');
	if (!rest || colon == rest)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("entry \"%s\" must be python:/dir/file.py:function or library:/dir/libx.so:symbol", entry)));
	file = pnstrdup(rest + 1, colon - rest - 1);
	if (file[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the file of entry \"%s\" must be an absolute path", entry)));
	file = ki_registered_file(file, dir, "the entry's file", "Code");
	/* the entry as stored names the resolved file */
	entry = psprintf("%.*s%s%s", (int) (rest - entry + 1), entry, file, colon);

	/* read as a run reads it: no symbolic link on the resolved path, under the directory */
	ki_sync_operations();		/* for an operation registered in SQL (src/operations.c) */
	manifest = kb_implementation_manifest(op, entry, name, version, dir, digest, err, sizeof(err));
	if (!manifest)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot register \"%s\": %s", name, err)));

	/* the manifest through the catalog's one ingest path */
	SPI_connect();
	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	{
		/* the tree points into its text: a palloc'd copy, freed with the transaction */
		char	   *text = pstrdup(manifest);

		kb_free(manifest);
		manifest = text;
	}
	doc = ki_parse(&a, manifest, strlen(manifest), &errs);
	if (doc == NULL)
		ki_pg_report(&errs, "implementation manifest");
	if (ki_ingest_tree(&a, doc, "kbench_register_implementation", (Datum) 0, out, &errs) < 0)
		ki_pg_report(&errs, "implementation manifest");

	args[0] = CStringGetTextDatum(name);
	args[1] = CStringGetTextDatum(op);
	args[2] = CStringGetTextDatum(entry);
	args[3] = CStringGetTextDatum(strncmp(entry, "python:", 7) == 0 ? "python" : "c");
	if (version)
		args[4] = CStringGetTextDatum(version);
	else
		nulls[4] = 'n';
	args[5] = CStringGetTextDatum(digest);
	if (SPI_execute_with_args(psprintf("INSERT INTO %s.kbench_registered_implementations"
									   " (name, operation, entry, language, version, implementation_digest, registered_by)"
									   " VALUES ($1, $2, $3, $4, $5, $6, session_user)"
									   " ON CONFLICT ON CONSTRAINT kbench_registered_implementations_pkey DO UPDATE SET entry = EXCLUDED.entry,"
									   " language = EXCLUDED.language, version = EXCLUDED.version,"
									   " implementation_digest = EXCLUDED.implementation_digest,"
									   " registered_by = EXCLUDED.registered_by, registered_at = EXCLUDED.registered_at",
									   ki_ext_schema()),
							  6, types, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not register the implementation");
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(digest));
}
