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
 * Store the observation of a mapped Liger memory row (outcome
 * KI_LIGER_MAPPED_MEMORY; its five manifests already stored), found on
 * physical line `line`.  True when new, false when already there.
 */
bool		ki_store_memory_observation(const ki_liger_result *res, long line);

/*
 * Import one "memory_observations" row of a catalog export: store the
 * protocol and environment manifests it carries (checked against its
 * digests), then the observation.  Returns NULL and sets *inserted, or the
 * reason the row is rejected.
 */
const char *ki_import_memory_row(ki_arena *a, ki_value *row, bool *inserted);

/*
 * Whether the installed extension has kbench_memory_observations (a 0.1.0
 * install running this library has not: its imports skip memory rows).
 */
bool		ki_memory_available(void);

/* Record an import's memory counts in kbench_imports (when available). */
void		ki_memory_import_finish(int64 import_id, const ki_memory_counts *mc);

#endif							/* KI_MEMORY_H */
