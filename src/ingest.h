/*
 * ingest.h: the pieces of the one ingest path (src/ingest.c) that the
 * catalog import stages its lines with; the path itself, ki_ingest_tree,
 * is in kernelindex.h.  Connected to SPI.
 */
#ifndef KI_INGEST_H
#define KI_INGEST_H

#include "kernelindex.h"
#include "store.h"

/* Is doc a composite {run, protocol, environment} document? */
bool		ki_is_composite(const ki_value *doc);

/*
 * Validate a manifest or composite document and stage it in the store:
 * protocol and environment before the run.  Fills items[] and first[] (up
 * to three) and returns how many, or -1 with errs filled.
 */
int			ki_stage_tree(ki_store *s, ki_arena *a, ki_value *doc, const char *source, Datum raw_samples,
						  ki_store_item **items, bool *first, ki_errors *errs);

/*
 * Raw samples given as JSON numbers (ns), as an int8[] datum, leaving out
 * the indexes in discarded; (Datum) 0 when there are none.  false when they
 * are not an array of finite numbers (discarded: of indexes).
 */
bool		ki_raw_samples_from(const ki_value *samples, const ki_value *discarded, Datum *out);

#endif							/* KI_INGEST_H */
