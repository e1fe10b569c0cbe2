/*
 * liger_text.c: string helpers of the Liger mapping: concatenation and
 * formatting into the arena, numbers as JavaScript reads and rounds them
 * (the slug form of names is the core's ki_kebab).
 */
#include "liger_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Concatenate NUL-terminated strings (ended by NULL) into the arena. */
char *
ki_liger_cat(ki_arena *a,...)
{
	va_list		ap;
	size_t		n = 0;
	char	   *out,
			   *p;
	const char *s;

	va_start(ap, a);
	while ((s = va_arg(ap, const char *)) != NULL)
		n += strlen(s);
	va_end(ap);
	out = ki_alloc(a, n + 1);
	if (out == NULL)
		return NULL;
	p = out;
	va_start(ap, a);
	while ((s = va_arg(ap, const char *)) != NULL)
	{
		size_t		l = strlen(s);

		memcpy(p, s, l);
		p += l;
	}
	va_end(ap);
	*p = '\0';
	return out;
}

const char *
ki_liger_afmt(ki_arena *a, const char *fmt,...)
{
	char		msg[600];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ki_strndup(a, msg, strlen(msg));
}

/*
 * A decimal number as JavaScript's Number() reads one from text: optional
 * blanks around [+-] digits [. digits] [e[+-]digits].  Anything else (empty
 * text included) is not a number here.
 */
bool
ki_liger_parse_number(const char *s, double *out)
{
	const char *p = s;
	const char *start;
	bool		digits = false;
	char	   *end;
	char		tmp[64];
	size_t		n;

	while (*p == ' ' || *p == '\t')
		p++;
	start = p;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char) *p))
		p++, digits = true;
	if (*p == '.')
	{
		p++;
		while (isdigit((unsigned char) *p))
			p++, digits = true;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		const char *e = p + 1;

		if (*e == '+' || *e == '-')
			e++;
		if (!isdigit((unsigned char) *e))
			return false;
		while (isdigit((unsigned char) *e))
			e++;
		p = e;
	}
	n = (size_t) (p - start);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0' || n >= sizeof tmp)
		return false;
	memcpy(tmp, start, n);
	tmp[n] = '\0';
	*out = strtod(tmp, &end);
	return end == tmp + n && isfinite(*out);
}

/* Math.round: the nearest integer, halves toward +infinity. */
double
ki_liger_js_round(double v)
{
	double		r = floor(v);

	if (v - r >= 0.5)
		r += 1;
	return r;
}
