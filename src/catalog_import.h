/*
 * catalog_import.h: a catalog export imported line by line (src/catalog_import.c),
 * whatever the lines come from: the staging table, or a file read by
 * src/catalog_file.c.  The caller is connected to SPI throughout.
 */
#ifndef KI_CATALOG_IMPORT_H
#define KI_CATALOG_IMPORT_H

#include "kernelindex.h"

typedef struct import_state import_state;

import_state *ki_catalog_import_begin(const char *source);
/* One line without its newline; line NULL for an empty line. */
void		ki_catalog_import_line(import_state *st, const char *line, size_t len, int64 lineno);
/* Finish and leave SPI: the (import_id, lines, inserted, present, skipped, rejected) row. */
Datum		ki_catalog_import_end(import_state *st, FunctionCallInfo fcinfo);

#endif							/* KI_CATALOG_IMPORT_H */
