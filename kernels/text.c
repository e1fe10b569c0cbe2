/*
 * text.c: the JSON text kbench hands out (manifests, listings, the python
 * setup line), written with the core's writer (core/json_write.c, the
 * one the Liger mapping uses) into an arena over malloc, and taken as one
 * malloc'd string; a manifest's text finished by the identity core
 * (validated, normalized, canonical, digested); the slug of a name.
 */
#include <ctype.h>
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

bool
kb_manifest_finish(const char *text, char **canon, char digest[72], char *err, size_t errlen)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	ki_value   *norm = NULL;
	ki_kind		kind;
	bool		ok = false;

	*canon = NULL;
	if (!text)
	{
		kb_seterr(err, errlen, "out of memory building a manifest");
		return false;
	}
	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	doc = ki_parse(&a, text, strlen(text), &errs);
	if (doc)
		norm = ki_manifest_normalize(&a, doc, &kind, &errs);
	if (norm)
	{
		ki_buf		b;

		ki_identity_digest(&a, norm, digest);
		ki_buf_init(&b, &a, 1024);
		ki_canonical(norm, &b);
		*canon = malloc(b.len + 1);
		if (*canon)
		{
			memcpy(*canon, b.data, b.len);
			(*canon)[b.len] = '\0';
			ok = !a.failed;
		}
	}
	if (!ok)
	{
		if (errs.count)
			kb_seterr(err, errlen, "manifest rejected by the identity core: %s: %s (%s)",
				   errs.items[0].path && errs.items[0].path[0] ? errs.items[0].path : "(root)",
				   errs.items[0].message, errs.items[0].rule);
		else
			kb_seterr(err, errlen, "manifest rejected by the identity core (out of memory)");
		free(*canon);
		*canon = NULL;
	}
	ki_arena_reset(&a);
	return ok;
}

void
kb_slug(const char *in, char *out, size_t len, char sep)
{
	size_t		n = 0;

	for (; *in && n + 1 < len; in++)
	{
		unsigned char ch = (unsigned char) tolower((unsigned char) *in);

		if (isalnum(ch))
			out[n++] = (char) ch;
		else if (n && out[n - 1] != sep)
			out[n++] = sep;
	}
	while (n && out[n - 1] == sep)
		n--;
	out[n] = '\0';
}
