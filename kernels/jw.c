/*
 * jw.c: a small JSON text writer.  kbench builds every manifest as text
 * with it and then hands the text to the identity core, which parses,
 * validates, normalizes and canonicalizes it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "ki_json.h"

/* Reset a writer to the empty document. */
void
kb_jw_init(kb_jw *w)
{
	memset(w, 0, sizeof(*w));
}

/* Append n bytes, growing the buffer; remembers an allocation failure. */
static void
put(kb_jw *w, const char *s, size_t n)
{
	if (w->oom)
		return;
	if (w->len + n + 1 > w->cap)
	{
		size_t		cap = w->cap ? w->cap * 2 : 256;
		char	   *nb;

		while (cap < w->len + n + 1)
			cap *= 2;
		nb = realloc(w->buf, cap);
		if (!nb)
		{
			w->oom = true;
			return;
		}
		w->buf = nb;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

/* Comma before a value or key when one came before at this level. */
static void
sep(kb_jw *w)
{
	if (w->need_comma)
		put(w, ",", 1);
	w->need_comma = true;
}

void
kb_jw_raw(kb_jw *w, const char *s)
{
	put(w, s, strlen(s));
}

void
kb_jw_obj(kb_jw *w)
{
	sep(w);
	put(w, "{", 1);
	w->need_comma = false;
}

void
kb_jw_end_obj(kb_jw *w)
{
	put(w, "}", 1);
	w->need_comma = true;
}

void
kb_jw_arr(kb_jw *w)
{
	sep(w);
	put(w, "[", 1);
	w->need_comma = false;
}

void
kb_jw_end_arr(kb_jw *w)
{
	put(w, "]", 1);
	w->need_comma = true;
}

/* Write a JSON string literal (escaping per RFC 8259). */
static void
put_string(kb_jw *w, const char *s)
{
	put(w, "\"", 1);
	for (; s && *s; s++)
	{
		unsigned char ch = (unsigned char) *s;
		char		esc[8];

		if (ch == '"' || ch == '\\')
		{
			esc[0] = '\\';
			esc[1] = (char) ch;
			put(w, esc, 2);
		}
		else if (ch < 0x20)
		{
			snprintf(esc, sizeof(esc), "\\u%04x", ch);
			put(w, esc, 6);
		}
		else
			put(w, (const char *) &ch, 1);
	}
	put(w, "\"", 1);
}

void
kb_jw_key(kb_jw *w, const char *k)
{
	sep(w);
	put_string(w, k);
	put(w, ":", 1);
	w->need_comma = false;
}

void
kb_jw_str(kb_jw *w, const char *s)
{
	sep(w);
	put_string(w, s);
}

/* Shortest %g form that reads back to the same double; null when not finite. */
void
kb_jw_num(kb_jw *w, double d)
{
	char		b[40];

	sep(w);
	if (!isfinite(d))
	{
		put(w, "null", 4);
		return;
	}
	for (int prec = 1; prec <= 17; prec++)
	{
		snprintf(b, sizeof(b), "%.*g", prec, d);
		if (strtod(b, NULL) == d)
			break;
	}
	put(w, b, strlen(b));
}

void
kb_jw_int(kb_jw *w, int64_t v)
{
	char		b[32];

	sep(w);
	snprintf(b, sizeof(b), "%lld", (long long) v);
	put(w, b, strlen(b));
}

void
kb_jw_bool(kb_jw *w, bool b)
{
	sep(w);
	kb_jw_raw(w, b ? "true" : "false");
}

void
kb_jw_json(kb_jw *w, const char *json)
{
	sep(w);
	kb_jw_raw(w, json ? json : "null");
}

void
kb_jw_kstr(kb_jw *w, const char *k, const char *s)
{
	kb_jw_key(w, k);
	kb_jw_str(w, s);
}

void
kb_jw_kint(kb_jw *w, const char *k, int64_t v)
{
	kb_jw_key(w, k);
	kb_jw_int(w, v);
}

void
kb_jw_knum(kb_jw *w, const char *k, double d)
{
	kb_jw_key(w, k);
	kb_jw_num(w, d);
}

/* Hand the text to the caller; NULL when an allocation failed. */
char *
kb_jw_take(kb_jw *w)
{
	char	   *s = w->buf;

	if (w->oom)
	{
		free(s);
		s = NULL;
	}
	else if (!s)
		s = calloc(1, 1);
	kb_jw_init(w);
	return s;
}

/* Begin a manifest: the envelope and its metadata name and title. */
void
kb_jw_manifest(kb_jw *w, const char *kind, const char *name, const char *title)
{
	kb_jw_init(w);
	kb_jw_obj(w);
	kb_jw_kstr(w, "apiVersion", KI_API_VERSION);
	kb_jw_kstr(w, "kind", kind);
	kb_jw_key(w, "metadata");
	kb_jw_obj(w);
	kb_jw_kstr(w, "name", name);
	kb_jw_kstr(w, "title", title);
}

/* Close the metadata and open the spec. */
void
kb_jw_spec(kb_jw *w)
{
	kb_jw_end_obj(w);
	kb_jw_key(w, "spec");
	kb_jw_obj(w);
}
