/*
 * json_write.c: the manifest writer.  kbench (kernels/) and the Liger
 * mapping (src/liger/) write every manifest as JSON text with it, then hand
 * the text to the core, which parses, validates, normalizes and
 * canonicalizes it; so the text needs only to be valid JSON with the right
 * values, and numbers are written in the canonical form already.
 */
#include "ki_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Start an empty document whose text lives in the arena. */
void
ki_jw_init(ki_jw *w, ki_arena *a)
{
	ki_buf_init(&w->buf, a, 1024);
	w->need_comma = false;
}

/* Comma before a value or key when one came before at this level. */
static void
sep(ki_jw *w)
{
	if (w->need_comma)
		ki_buf_putc(&w->buf, ',');
	w->need_comma = true;
}

/* A JSON string literal (RFC 8259 escapes: '"', '\\' and control characters). */
static void
put_string(ki_jw *w, const char *s)
{
	ki_buf_putc(&w->buf, '"');
	for (const unsigned char *p = (const unsigned char *) s; p && *p; p++)
	{
		if (*p == '"' || *p == '\\')
		{
			ki_buf_putc(&w->buf, '\\');
			ki_buf_putc(&w->buf, (char) *p);
		}
		else if (*p < 0x20)
		{
			char		esc[8];

			snprintf(esc, sizeof esc, "\\u%04x", *p);
			ki_buf_puts(&w->buf, esc);
		}
		else
			ki_buf_putc(&w->buf, (char) *p);
	}
	ki_buf_putc(&w->buf, '"');
}

void
ki_jw_raw(ki_jw *w, const char *s)
{
	ki_buf_puts(&w->buf, s);
}

void
ki_jw_obj(ki_jw *w)
{
	sep(w);
	ki_buf_putc(&w->buf, '{');
	w->need_comma = false;
}

void
ki_jw_end_obj(ki_jw *w)
{
	ki_buf_putc(&w->buf, '}');
	w->need_comma = true;
}

void
ki_jw_arr(ki_jw *w)
{
	sep(w);
	ki_buf_putc(&w->buf, '[');
	w->need_comma = false;
}

void
ki_jw_end_arr(ki_jw *w)
{
	ki_buf_putc(&w->buf, ']');
	w->need_comma = true;
}

void
ki_jw_key(ki_jw *w, const char *k)
{
	sep(w);
	put_string(w, k);
	ki_buf_putc(&w->buf, ':');
	w->need_comma = false;
}

void
ki_jw_str(ki_jw *w, const char *s)
{
	sep(w);
	put_string(w, s);
}

/* The canonical (ECMAScript) form of d; null when d is not finite. */
void
ki_jw_num(ki_jw *w, double d)
{
	char		b[32];

	sep(w);
	if (!isfinite(d))
	{
		ki_buf_puts(&w->buf, "null");
		return;
	}
	ki_format_number(d, b);
	ki_buf_puts(&w->buf, b);
}

/* Every int64 exactly (numbers past 2^53 lose nothing in the text; the parser reads a double). */
void
ki_jw_int(ki_jw *w, int64_t v)
{
	char		b[32];

	sep(w);
	snprintf(b, sizeof b, "%lld", (long long) v);
	ki_buf_puts(&w->buf, b);
}

void
ki_jw_bool(ki_jw *w, bool b)
{
	sep(w);
	ki_buf_puts(&w->buf, b ? "true" : "false");
}

void
ki_jw_json(ki_jw *w, const char *json)
{
	sep(w);
	ki_buf_puts(&w->buf, json ? json : "null");
}

void
ki_jw_kstr(ki_jw *w, const char *k, const char *s)
{
	ki_jw_key(w, k);
	ki_jw_str(w, s);
}

void
ki_jw_kint(ki_jw *w, const char *k, int64_t v)
{
	ki_jw_key(w, k);
	ki_jw_int(w, v);
}

void
ki_jw_knum(ki_jw *w, const char *k, double d)
{
	ki_jw_key(w, k);
	ki_jw_num(w, d);
}

/* Begin a manifest: the envelope, with the metadata object open after its name and title. */
void
ki_jw_manifest(ki_jw *w, const char *kind, const char *name, const char *title)
{
	ki_jw_obj(w);
	ki_jw_kstr(w, "apiVersion", KI_API_VERSION);
	ki_jw_kstr(w, "kind", kind);
	ki_jw_key(w, "metadata");
	ki_jw_obj(w);
	ki_jw_kstr(w, "name", name);
	ki_jw_kstr(w, "title", title);
}

/* Close the metadata and open the spec. */
void
ki_jw_spec(ki_jw *w)
{
	ki_jw_end_obj(w);
	ki_jw_key(w, "spec");
	ki_jw_obj(w);
}

/* The text so far, NUL-terminated, in the arena; NULL when an allocation failed. */
const char *
ki_jw_text(ki_jw *w)
{
	const char *s = ki_buf_cstr(&w->buf);

	return w->buf.arena->failed ? NULL : s;
}
