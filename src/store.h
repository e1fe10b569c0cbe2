/*
 * store.h: the one store of the catalog (src/store.c, sql/22_store.sql).
 *
 *   ki_store *s = ki_store_begin();           in the caller's memory context
 *   item = ki_store_add(s, kind, digest, manifest, source, raw, &first);
 *   ki_store_flush(s);                         one INSERT per kind; item->inserted
 *   ki_store_end(s);
 *
 * The caller is connected to SPI when it flushes.  A digest is staged once
 * per store; adding it again returns the same item with *first false.
 */
#ifndef KI_STORE_H
#define KI_STORE_H

#include "kernelindex.h"

typedef struct ki_store ki_store;

typedef struct ki_store_item
{
	ki_kind		kind;
	char		digest[KI_DIGEST_LEN + 1];
	Datum		manifest;		/* jsonb until stored, then 0 */
	char	   *source;
	char	   *raw_samples;	/* int8[] as text, or NULL */
	bool		stored;			/* flushed */
	bool		inserted;		/* flushed and new to the catalog */
} ki_store_item;

ki_store   *ki_store_begin(void);
void		ki_store_end(ki_store *s);
int			ki_store_pending(const ki_store *s);
ki_store_item *ki_store_add(ki_store *s, ki_kind kind, const char *digest, const ki_value *manifest,
							const char *source, Datum raw_samples, bool *first);
void		ki_store_flush(ki_store *s);

#endif							/* KI_STORE_H */
