/*
 * catalog_writer.h: the catalog written with the extension's owner's rights
 * (src/catalog_writer.c).
 *
 *   ki_catalog_writer w;
 *   ki_catalog_writer_begin(&w);     after SPI_connect(), once the caller's
 *   ... SPI: store, record the import ... own checks (file rights) are done
 *   ki_catalog_writer_end(&w);       before SPI_finish()
 *
 * The catalog's tables are written only by the extension's owner; the
 * ingest and import entry points stay SECURITY INVOKER (so that every check
 * of the caller, such as reading a server file, is of the caller), validate
 * in C, then write as the owner under the pinned search_path, as a SECURITY
 * DEFINER function would.  On error the transaction's abort restores both.
 */
#ifndef KI_CATALOG_WRITER_H
#define KI_CATALOG_WRITER_H

#include "postgres.h"

typedef struct ki_catalog_writer
{
	Oid			save_userid;
	int			save_sec;
	int			nest;			/* GUC nest level of the pinned search_path */
} ki_catalog_writer;

void		ki_catalog_writer_begin(ki_catalog_writer *w);
void		ki_catalog_writer_end(ki_catalog_writer *w);

#endif							/* KI_CATALOG_WRITER_H */
