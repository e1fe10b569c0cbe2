/*
 * import.h: what the two imports of the catalog share (src/import.c): an
 * import's kbench_imports row and its counts, the manifests staged in the
 * store and the lines that wait for its answer, the export's own rows in
 * batches, the rejected lines, the withdrawals applied at the end.  Used by
 * src/catalog_import.c (a kernelindex.dev export) and src/liger_import.c
 * (Liger-Kernel's CSV).  The caller is connected to SPI throughout.
 */
#ifndef KI_IMPORT_H
#define KI_IMPORT_H

#include "kernelindex.h"
#include "store.h"
#include "catalog_writer.h"
#include "memory.h"

#include "fmgr.h"
#include "nodes/pg_list.h"

typedef struct import_counts
{
	int64		id;
	int64		lines;
	int64		inserted;
	int64		present;
	int64		skipped;
	int64		rejected;
	ki_memory_counts memory;	/* memory observations (src/memory.c) */
} import_counts;

/*
 * An import in progress: the store its manifests are staged in, the lines
 * whose count waits for the store's answer, and the export's own rows
 * (plain rows and the rows beside manifests), all flushed together every
 * IMPORT_BATCH lines: one statement per kind and table, not one per line.
 */
#define IMPORT_BATCH 2000

typedef struct pending_line
{
	ki_store_item *item;		/* the line's manifest (a composite's run) */
	bool		first;			/* the first line of this import to stage it */
} pending_line;

typedef struct row_batch
{
	Datum	   *a;				/* text */
	Datum	   *b;				/* text */
	Datum	   *row;			/* jsonb */
	int			count;
	int			cap;
} row_batch;

/* A retraction or supersession read from an export line, applied at the end. */
typedef struct withdrawal
{
	int64		lineno;
	char	   *digest;
	char	   *retracted_at;
	char	   *retraction_reason;
	char	   *superseded_by;
	char	   *supersession_reason;
} withdrawal;

/* (catalog_import.h names the type for the catalog import's callers.) */
typedef struct import_state import_state;

struct import_state
{
	import_counts c;
	ki_store   *store;
	MemoryContext cxt;			/* the import's (the lines array) */
	MemoryContext batchcxt;		/* the row batches; reset at each flush */
	MemoryContext linecxt;		/* one line's parse; reset after each line */
	ki_arena	arena;			/* one line's tree; rewound for each line */
	pending_line *lines;
	int			nlines;
	int			cap;
	row_batch	plain;			/* kbench_catalog_rows: table, row id, row */
	row_batch	source;			/* kbench_catalog_source_rows: digest, table, row */
	List	   *withdrawals;	/* of withdrawal, in st->cxt */
	ki_catalog_writer writer;	/* the import writes as the extension's owner */
	ki_memory_batch *memory;	/* the Liger import's memory observations, or NULL */
	/* rejected and skipped lines, stored at each flush */
	Datum	   *rej_line;
	Datum	   *rej_reason;
	Datum	   *rej_skipped;
	int			nrej;
	int			caprej;
};

/*
 * What a rejection reason quotes of its line, at most KI_QUOTE_MAX
 * characters and a marker saying how much was left out (issue 24: a reason
 * is for finding the line, not a copy of it).  A whole reason is cut at
 * KI_REASON_MAX characters the same way, whatever it quotes.
 */
#define KI_QUOTE_MAX 200
#define KI_REASON_MAX 1000

/* A clipped copy of s (len bytes; s need not end there), at most limit characters. */
const char *ki_import_clip_to(const char *s, size_t len, int limit);
/* s clipped to KI_QUOTE_MAX characters ("" for NULL). */
const char *ki_import_clip(const char *s);

/* Start an import of kind ("catalog", "liger") from source (may be NULL): its row, its store. */
void		ki_import_init(import_state *st, const char *kind, const char *source);
/* Record a rejected (or skipped) line; stored with the next flush. */
void		ki_import_reject(import_state *st, int64 line, const char *reason, bool skipped);
/* A line whose manifest waits in the store: counted inserted or present at the flush. */
void		ki_import_count_line(import_state *st, ki_store_item *item, bool first);
/* Add a row (two text keys and the row as jsonb) to a batch. */
void		ki_import_batch_add(import_state *st, row_batch *b, const char *x, const char *y, const ki_value *row);
/* Store what is staged and count the lines that waited for it. */
void		ki_import_flush(import_state *st);
/* A string member of a row, copied into the import's memory, or NULL. */
char	   *ki_import_row_string(import_state *st, const ki_value *row, const char *key);
/* Flush, apply the withdrawals, record the counts, end the writer. */
void		ki_import_done(import_state *st);
/* The (import_id, lines, inserted, present, skipped, rejected) row. */
Datum		ki_import_counts_tuple(FunctionCallInfo fcinfo, const import_counts *c);

#endif							/* KI_IMPORT_H */
