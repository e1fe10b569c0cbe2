/*
 * text.c: the JSON text kbench hands out (manifests, listings, the python
 * setup line), written with the core's writer (core/json_write.c, the
 * one the Liger mapping uses) into an arena over malloc, and taken as one
 * malloc'd string.
 */
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

ki_jw *
kb_text_open(kb_text *t)
{
	ki_arena_init_malloc(&t->a);
	ki_jw_init(&t->w, &t->a);
	return &t->w;
}

char *
kb_text_take(kb_text *t)
{
	const char *s = ki_jw_text(&t->w);
	char	   *out = NULL;

	if (s)
	{
		size_t		n = strlen(s);

		out = malloc(n + 1);
		if (out)
			memcpy(out, s, n + 1);
	}
	ki_arena_reset(&t->a);
	return out;
}
