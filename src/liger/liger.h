/*
 * liger.h: the Liger-Kernel benchmark CSV importer, in plain C11.
 *
 * Liger-Kernel (github.com/linkedin/Liger-Kernel) commits its benchmark
 * results as benchmark/data/all_benchmark_data.csv.  This module reads that
 * CSV (an RFC 4180 reader that reports physical line numbers) and maps each
 * speed row onto the six kernelindex.dev/v1alpha1 manifests that describe it:
 * OperationSpec, WorkloadCase, ImplementationRevision, BenchmarkProtocol,
 * ExecutionEnvironment and BenchmarkRun.  The mapping rules (per-kernel
 * tables, the GPU table, providers, timed passes) are described in
 * docs/LIGER.md.
 *
 * No PostgreSQL dependency: every allocation goes through a ki_arena, so the
 * extension can hand in a palloc-backed arena.  Nothing here exits or
 * longjmps.
 */
#ifndef KI_LIGER_H
#define KI_LIGER_H

#include "ki_json.h"

/* ---------------------------------------------------------------- CSV */

/*
 * An RFC 4180 reader over a buffer: fields separated by commas, records by
 * LF or CRLF (a lone CR also ends a record), fields optionally enclosed in
 * double quotes, a doubled quote inside a quoted field standing for one
 * quote, line breaks allowed inside quoted fields.  A UTF-8 byte order mark
 * at the start is skipped; blank lines are skipped.  Fields are copied into
 * the arena, NUL-terminated.
 */
typedef struct ki_csv_reader
{
	ki_arena   *arena;
	const char *buf;
	size_t		len;
	size_t		pos;
	long		line;			/* physical line at pos (1-based) */
	bool		failed;			/* a fatal error was reported; no more records */
} ki_csv_reader;

typedef struct ki_csv_record
{
	char	  **fields;
	size_t		count;
	long		line;			/* physical line on which the record starts */
	long		last_line;		/* physical line on which it ends */
} ki_csv_record;

typedef enum ki_csv_status
{
	KI_CSV_RECORD = 1,			/* a record was read */
	KI_CSV_END = 0,				/* no more input */
	KI_CSV_ERROR = -1			/* a fatal error (unterminated quote, garbage
								 * after a closing quote, NUL byte); *err says
								 * what and where, and the reader stops */
} ki_csv_status;

void		ki_csv_init(ki_csv_reader *r, ki_arena *a, const char *buf, size_t len);
ki_csv_status ki_csv_next(ki_csv_reader *r, ki_csv_record *rec, const char **err);

/* ---------------------------------------------------------------- rows */

#define KI_LIGER_NCOLUMNS 15

/* The columns of all_benchmark_data.csv, in upstream order. */
extern const char *const ki_liger_columns[KI_LIGER_NCOLUMNS];

/* One CSV row: the 15 columns as NUL-terminated strings, and its line. */
typedef struct ki_liger_row
{
	const char *kernel_name;
	const char *kernel_provider;
	const char *kernel_operation_mode;
	const char *metric_name;
	const char *metric_unit;
	const char *x_name;
	const char *x_label;
	const char *x_value;
	const char *y_value_50;
	const char *y_value_20;
	const char *y_value_80;
	const char *extra_benchmark_config_str;
	const char *gpu_name;
	const char *timestamp;
	const char *liger_version;
	long		line;			/* physical line in the CSV, header = 1 */
} ki_liger_row;

/*
 * A reader of Liger rows: a CSV reader plus the header's column positions.
 * The header must name every one of the 15 columns (in any order); extra
 * columns are ignored.
 */
typedef struct ki_liger_reader
{
	ki_csv_reader csv;
	int			column[KI_LIGER_NCOLUMNS];	/* position of each column */
	size_t		width;			/* fields per record (the header's) */
	long		records;		/* data records read, good or bad */
} ki_liger_reader;

typedef enum ki_liger_read_status
{
	KI_LIGER_READ_ROW = 1,		/* *row is filled */
	KI_LIGER_READ_END = 0,		/* no more input */
	KI_LIGER_READ_BAD_RECORD = -1,	/* this record is unusable (wrong column
									 * count); *err and row->line name its
									 * first line; reading may go on */
	KI_LIGER_READ_FATAL = -2	/* bad header or broken CSV; *err names the
								 * line; reading stops */
} ki_liger_read_status;

/* Read and check the header.  Returns false with *err on a bad header. */
bool		ki_liger_reader_init(ki_liger_reader *r, ki_arena *a, const char *buf, size_t len,
								 const char **err);
ki_liger_read_status ki_liger_reader_next(ki_liger_reader *r, ki_liger_row *row, const char **err);

/* ---------------------------------------------------------------- mapping */

typedef enum ki_liger_outcome
{
	KI_LIGER_MAPPED = 0,		/* all six manifests built, validated, digested */
	KI_LIGER_MAPPED_MEMORY,		/* a memory row: the five manifests other than
								 * the run, and a memory observation (no run:
								 * a BenchmarkRun needs a latency) */
	KI_LIGER_SKIPPED			/* not mapped; reason says why */
} ki_liger_outcome;

/* Index of each manifest in ki_liger_result.manifest and .digest. */
typedef enum ki_liger_part
{
	KI_LIGER_RUN = 0,
	KI_LIGER_PROTOCOL,
	KI_LIGER_ENVIRONMENT,
	KI_LIGER_WORKLOAD,
	KI_LIGER_IMPLEMENTATION,
	KI_LIGER_OPERATION,
	KI_LIGER_NPARTS
} ki_liger_part;

/* "run", "protocol", ... (the member names of the expected JSON lines). */
extern const char *const ki_liger_part_names[KI_LIGER_NPARTS];

/*
 * A memory row's observation: torch.cuda.max_memory_allocated() after the
 * timed pass, which the CSV gives in MiB (metric_unit "MB"), as bytes
 * (MiB x 2^20, a whole number).  spread is false when y_value_20 or
 * y_value_80 is not a number (p20_bytes and p80_bytes are then 0).
 */
typedef struct ki_liger_memory
{
	const char *pass;			/* kernel_operation_mode: forward, backward, full */
	int64_t		p50_bytes;
	int64_t		p20_bytes;
	int64_t		p80_bytes;
	bool		spread;
	const char *observed_at;	/* ISO 8601 UTC with milliseconds, as runs */
	const char *liger_version;
} ki_liger_memory;

typedef struct ki_liger_result
{
	ki_liger_outcome outcome;
	const char *reason;			/* why, when skipped; NULL when mapped */
	/* Normalized manifests (output of ki_manifest_normalize), when mapped. */
	ki_value   *manifest[KI_LIGER_NPARTS];
	char		digest[KI_LIGER_NPARTS][KI_DIGEST_LEN + 1];
	/*
	 * The run's source-native identity (kernel/mode/provider/gpu/case/time),
	 * the same string as run.spec.sourceNative.externalId.  Two rows with the
	 * same external id describe the same measurement: an importer keeps the
	 * first and counts the others as duplicates.
	 */
	const char *external_id;
	/* The observation, when outcome is KI_LIGER_MAPPED_MEMORY. */
	ki_liger_memory memory;
} ki_liger_result;

/*
 * Map one row.  Speed rows of a known kernel, timed pass, provider, config
 * shape and GPU become six manifests (each validated and normalized by the
 * core; the run names the digests of the other five).  Memory rows (unit
 * MB) go through the same rules and return KI_LIGER_MAPPED_MEMORY with the
 * five manifests other than the run (manifest[KI_LIGER_RUN] is NULL and its
 * digest empty), the external id and out->memory; their operation,
 * workload, implementation, protocol and environment digests are the ones
 * a speed row of the same kernel, provider, pass, sizes and GPU gets.
 * Anything not understood returns KI_LIGER_SKIPPED
 * with a reason ("unknown gpu 'X'", "unknown kernel 'X'", ...), never a
 * guess.  Everything is allocated in a (reasons may also be static
 * strings): the result does not point into the row, which may be freed.
 * Every column of the row must be non-NULL (a NULL one is skipped with a
 * reason).
 */
ki_liger_outcome ki_liger_map(ki_arena *a, const ki_liger_row *row, ki_liger_result *out);

/*
 * The Liger-Kernel commit whose benchmark scripts the operations cite
 * (metadata.sourceRefs of every OperationSpec).
 */
#define KI_LIGER_SCRIPTS_COMMIT "2120862ba532c9449e72d603ba6324310ae756e7"

#endif							/* KI_LIGER_H */
