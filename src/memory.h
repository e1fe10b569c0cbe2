/*
 * memory.h: storing memory observations (sql/15_memory.sql) from the Liger
 * import and the catalog import.  Callers are connected to SPI.
 */
#ifndef KI_MEMORY_H
#define KI_MEMORY_H

#include "kernelindex.h"
#include "liger/liger.h"

/* What one import did with memory observations (kbench_imports.memory_*). */
typedef struct ki_memory_counts
{
	int64		inserted;
	int64		present;
	int64		rejected;
} ki_memory_counts;

/*
 * The observations of mapped Liger memory rows (outcome
 * KI_LIGER_MAPPED_MEMORY), staged in memory and stored together by one
 * INSERT ... SELECT FROM unnest(...) ... ON CONFLICT DO NOTHING, in the order
 * they were added: the same rows, in the same order, as one INSERT a row.
 * Flush after the store that holds their manifests.
 */
typedef struct ki_memory_batch ki_memory_batch;

ki_memory_batch *ki_memory_batch_begin(void);	/* in CurrentMemoryContext */
/* Stage the observation of res, found on physical line `line`. */
void		ki_memory_batch_add(ki_memory_batch *b, const ki_liger_result *res, long line);
int			ki_memory_batch_pending(const ki_memory_batch *b);
/* Store what is staged; *inserted: how many were new, *present: already there. */
void		ki_memory_batch_flush(ki_memory_batch *b, int64 *inserted, int64 *present);

/*
 * Import one "memory_observations" row of a catalog export: store the
 * protocol and environment manifests it carries (checked against its
 * digests), then the observation.  Returns NULL and sets *inserted, or the
 * reason the row is rejected.
 */
const char *ki_import_memory_row(ki_arena *a, ki_value *row, bool *inserted);

/* Record an import's memory counts in kbench_imports. */
void		ki_memory_import_finish(int64 import_id, const ki_memory_counts *mc);

#endif							/* KI_MEMORY_H */
