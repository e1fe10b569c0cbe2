/*
 * liger_jw.c: the JSON text writer the Liger builders write manifests with.
 */
#include "liger_internal.h"

#include <stdio.h>

void
ki_liger_jw_init(ki_liger_jw *w, ki_arena *a)
{
	ki_buf_init(&w->buf, a, 2048);
	w->depth = 0;
	w->after_key = false;
	w->first[0] = true;
}

static void
jw_sep(ki_liger_jw *w)
{
	if (w->after_key)
	{
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && !w->first[w->depth])
		ki_buf_putc(&w->buf, ',');
	w->first[w->depth] = false;
}

static void
jw_raw_string(ki_liger_jw *w, const char *s)
{
	ki_buf_putc(&w->buf, '"');
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
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
ki_liger_jw_open(ki_liger_jw *w, char c)
{
	jw_sep(w);
	ki_buf_putc(&w->buf, c);
	if (w->depth < KI_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

void
ki_liger_jw_close(ki_liger_jw *w, char c)
{
	ki_buf_putc(&w->buf, c);
	if (w->depth > 0)
		w->depth--;
}

void
ki_liger_jw_key(ki_liger_jw *w, const char *k)
{
	jw_sep(w);
	jw_raw_string(w, k);
	ki_buf_putc(&w->buf, ':');
	w->after_key = true;
}

void
ki_liger_jw_str(ki_liger_jw *w, const char *s)
{
	jw_sep(w);
	jw_raw_string(w, s);
}

void
ki_liger_jw_num(ki_liger_jw *w, double d)
{
	char		tmp[32];

	jw_sep(w);
	ki_format_number(d, tmp);
	ki_buf_puts(&w->buf, tmp);
}

void
ki_liger_jw_kv(ki_liger_jw *w, const char *k, const char *v)
{
	ki_liger_jw_key(w, k);
	ki_liger_jw_str(w, v);
}

void
ki_liger_jw_kn(ki_liger_jw *w, const char *k, double v)
{
	ki_liger_jw_key(w, k);
	ki_liger_jw_num(w, v);
}

void
ki_liger_jw_header(ki_liger_jw *w, const char *kind)
{
	ki_liger_jw_open(w, '{');
	ki_liger_jw_kv(w, "apiVersion", KI_API_VERSION);
	ki_liger_jw_kv(w, "kind", kind);
}
