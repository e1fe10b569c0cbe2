/*
 * catalog_file.c: kbench_import_catalog(path), a catalog export read from a
 * file on the server, plain JSON lines or zstd-compressed (.zst, by libzstd:
 * no program is started and the path is never given to a shell).  The
 * lines go to the same import as the staged ones (catalog_import.h).
 * Reading a server file needs the privileges of pg_read_server_files, as
 * COPY FROM a file does.
 */
#include "kernelindex.h"

#include <zstd.h>

#include "catalog/pg_authid.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "catalog_import.h"

#define READ_CHUNK (1 << 17)

typedef struct line_splitter
{
	import_state *st;
	StringInfoData line;		/* the line being read */
	int64		lineno;
} line_splitter;

static void
emit_line(line_splitter *ls)
{
	int			len = ls->line.len;

	if (len > 0 && ls->line.data[len - 1] == '\r')
		len--;
	ls->lineno++;
	ki_catalog_import_line(ls->st, len > 0 ? ls->line.data : NULL, (size_t) len, ls->lineno);
	resetStringInfo(&ls->line);
}

/* Feed bytes; every complete line is imported. */
static void
feed(line_splitter *ls, const char *p, size_t n)
{
	while (n > 0)
	{
		const char *nl = memchr(p, '\n', n);
		size_t		take = nl ? (size_t) (nl - p) : n;

		appendBinaryStringInfo(&ls->line, p, (int) take);
		if (nl == NULL)
			return;
		emit_line(ls);
		p += take + 1;
		n -= take + 1;
	}
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t		a = strlen(s),
				b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The decompressor is freed with the call's memory, on error too. */
static void
free_dstream(void *arg)
{
	ZSTD_freeDStream((ZSTD_DStream *) arg);
}

static void
read_zst(line_splitter *ls, FILE *f, const char *path, char *in)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	MemoryContextCallback *cb;
	size_t		outsize = ZSTD_DStreamOutSize();
	char	   *out = palloc(outsize);
	size_t		rc = 0,
				n;
	bool		any = false;

	if (ds == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = free_dstream;
	cb->arg = ds;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	ZSTD_initDStream(ds);
	while ((n = fread(in, 1, READ_CHUNK, f)) > 0)
	{
		ZSTD_inBuffer ib = {in, n, 0};

		any = true;
		while (ib.pos < ib.size)
		{
			ZSTD_outBuffer ob = {out, outsize, 0};

			rc = ZSTD_decompressStream(ds, &ob, &ib);
			if (ZSTD_isError(rc))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("could not decompress \"%s\": %s", path, ZSTD_getErrorName(rc)),
						 errhint("A .zst file must hold zstd frames of JSON lines.")));
			feed(ls, out, ob.pos);
		}
	}
	if (ferror(f))
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not read file \"%s\": %m", path)));
	if (any && rc != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not decompress \"%s\": the file ends inside a zstd frame", path),
				 errdetail("The file is truncated.")));
}

static void
read_file(line_splitter *ls, FILE *f, const char *path)
{
	char	   *in = palloc(READ_CHUNK);
	size_t		n;

	if (ends_with(path, ".zst"))
		read_zst(ls, f, path, in);
	else
	{
		while ((n = fread(in, 1, READ_CHUNK, f)) > 0)
			feed(ls, in, n);
		if (ferror(f))
			ereport(ERROR, (errcode_for_file_access(), errmsg("could not read file \"%s\": %m", path)));
	}
	if (ls->line.len > 0)
		emit_line(ls);			/* a last line without a newline */
}

PG_FUNCTION_INFO_V1(kbench_import_catalog_file);
Datum
kbench_import_catalog_file(PG_FUNCTION_ARGS)
{
	char	   *path;
	FILE	   *f;
	line_splitter ls;
	Datum		result;

	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("the path of the catalog export is null")));
	path = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_SERVER_FILES))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to import a catalog export from a file on the server"),
				 errdetail("Only roles with the privileges of the \"pg_read_server_files\" role may read files on the server."),
				 errhint("Load the file from the client with \\copy into kbench_import_staging, then call kbench_import_catalog_staged().")));
	f = AllocateFile(path, PG_BINARY_R);
	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open catalog export \"%s\" for reading: %m", path)));
	SPI_connect();
	memset(&ls, 0, sizeof(ls));
	initStringInfo(&ls.line);
	ls.st = ki_catalog_import_begin(path);
	read_file(&ls, f, path);
	FreeFile(f);
	result = ki_catalog_import_end(ls.st, fcinfo);	/* leaves SPI */
	PG_RETURN_DATUM(result);
}
