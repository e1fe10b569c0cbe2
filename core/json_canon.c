/*
 * json_canon.c: the RFC 8785 (JSON Canonicalization Scheme) writer.
 *
 * Members sorted by UTF-16 code units, strings escaped as ECMAScript's
 * JSON.stringify does, numbers written as ECMAScript's Number::toString.
 */
#include "ki_json.h"

#include <fenv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Compare UTF-8 strings as UTF-16 code unit arrays.  Byte order of UTF-8 is
 * code point order; the two orders differ only where a character above
 * U+FFFF (a surrogate pair, D800-DBFF first) meets one in U+E000-U+FFFF.
 * At the first differing byte both strings are at the same position of a
 * common prefix, so either both bytes lead a character or both continue
 * characters with the same lead byte (and then the orders agree).
 */
int
ki_utf16_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	size_t		i;

	for (i = 0; i < n; i++)
	{
		unsigned char x = (unsigned char) a[i];
		unsigned char y = (unsigned char) b[i];

		if (x != y)
		{
			if (x >= 0xF0 && (y == 0xEE || y == 0xEF))
				return -1;
			if (y >= 0xF0 && (x == 0xEE || x == 0xEF))
				return 1;
			return x < y ? -1 : 1;
		}
	}
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

/* Round-trips when the text reads back to exactly d. */
static bool
round_trips(const char *s, double d)
{
	return strtod(s, NULL) == d;
}

/*
 * The shortest decimal digits and exponent of |d| that read back to d:
 * digits "d1d2...dk", value 0.d1...dk x 10^n.  Fills digits (NUL-ended) and
 * returns k; *n_out gets n.
 */
static int
shortest_digits(double d, char *digits, int *n_out)
{
	char		buf[40];
	int			prec;
	int			k;
	int			e;
	char	   *p;
	bool		pow2;
	int			exp2;

	/*
	 * DBL_DIG: any decimal of at most 15 significant digits survives a trip
	 * through double.  So if the 15-digit rounding round-trips, the shortest
	 * form is it with trailing zeros removed.  Otherwise try 16, then 17
	 * (which always round-trips).  The nearest rounding is the closest
	 * candidate, as ECMAScript requires; only where d is a power of two (a
	 * lower gap half the upper one) can the other neighbour of a precision
	 * round-trip when the nearest does not, so that case tries both.
	 */
	pow2 = frexp(d, &exp2) == 0.5;
	/* subnormals carry fewer digits than DBL_DIG: search from one digit */
	for (prec = d < 2.2250738585072014e-308 ? 1 : 15; prec <= 17; prec++)
	{
		snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
		if (round_trips(buf, d))
			break;
		if (pow2 && prec < 17)
		{
			int			saved = fegetround();
			bool		ok;

			fesetround(FE_UPWARD);
			snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
			fesetround(saved);
			ok = round_trips(buf, d);
			if (!ok)
			{
				fesetround(FE_DOWNWARD);
				snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
				fesetround(saved);
				ok = round_trips(buf, d);
			}
			if (ok)
				break;
		}
	}
	/* buf is "D.DDDDe+XX" */
	k = 0;
	for (p = buf; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[k++] = *p;
	e = atoi(p + 1);
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	*n_out = e + 1;
	return k;
}

static int	format_number(double d, char *out, bool fast);
static int	put_digits(uint64_t m, int s, char *digits, int *n_out);
static int	exact_digits(double d, char *digits, int *n_out);

/* 10^0 .. 10^22: every one exact in a double (the reader uses them too) */
const double ki_exact_pow10[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/*
 * shortest_digits without printf or strtod, for the common case: positive
 * d = m / 10^s for an integer m < 10^15 and s in 1..22.  The smallest s
 * whose m = rint(d * 10^s) gives back m / 10^s == d (one correctly rounded
 * division of two exact doubles: what strtod reads for that text) names
 * the shortest digits.  It cannot miss one: a candidate m' < 10^15 lies
 * within ulp(d) 10^s / 2 <= 0.12 of d 10^s, the product is within 0.12 of
 * that, so rint finds m'; and DBL_DIG (15) makes a candidate of at most 15
 * digits unique, so it is also the nearest, as ECMAScript requires.
 * Returns 0 where that does not hold (shortest_digits decides).
 */
static int
fast_digits(double d, char *digits, int *n_out)
{
	int			s;

	for (s = 1; s <= 22; s++)
	{
		double		x = d * ki_exact_pow10[s];
		uint64_t	m;

		if (!(x < 1e15))
			break;
		m = (uint64_t) rint(x);
		if (m == 0 || (double) m / ki_exact_pow10[s] != d)
			continue;
		return put_digits(m, s, digits, n_out);
	}
	return exact_digits(d, digits, n_out);
}

/*
 * The digits of m (no trailing zeros; m > 0) for value m / 10^s, as
 * shortest_digits returns them.
 */
static int
put_digits(uint64_t m, int s, char *digits, int *n_out)
{
	char		tmp[24];
	int			k = 0,
				i;

	while (m % 10 == 0)
	{
		m /= 10;
		s--;
	}
	while (m > 0)
	{
		tmp[k++] = (char) ('0' + m % 10);
		m /= 10;
	}
	for (i = 0; i < k; i++)
		digits[i] = tmp[k - 1 - i];
	digits[k] = '\0';
	*n_out = k - s;
	return k;
}

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

/*
 * shortest_digits for 16 or 17 digits, in exact integer arithmetic, where
 * fast_digits found no candidate of at most 15: positive d = f 2^-t (f a
 * 53-bit mantissa, not a power of two, 0 < t <= 120), so d 10^s = f 10^s /
 * 2^t exactly in 128 bits for s <= 22.  For p = 16, then 17: m, the nearest
 * p-digit rounding (the closest candidate, as ECMAScript requires), reads
 * back to d when its distance to d is under half d's gap (both gaps are
 * 2^-t: f is not a power of two).  Exactly half cannot happen: a midpoint
 * between two doubles below 2^53 has t + 1 decimal places ending in 5, at
 * least 18 significant digits.  Returns 0 where this does not apply.
 */
static int
exact_digits(double d, char *digits, int *n_out)
{
	uint64_t	bits;
	uint64_t	f;
	int			t,
				p;
	u128		pow10[23];

	memcpy(&bits, &d, sizeof bits);
	if ((bits >> 52) == 0 || (bits & ((UINT64_C(1) << 52) - 1)) == 0)
		return 0;				/* subnormal, or a power of two */
	f = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
	t = 1075 - (int) (bits >> 52);
	if (t <= 0 || t > 120)
		return 0;
	pow10[0] = 1;
	for (p = 1; p <= 22; p++)
		pow10[p] = pow10[p - 1] * 10;
	for (p = 16; p <= 17; p++)
	{
		int			s = p - 1 - (int) floor(log10(d));
		int			tries;

		for (tries = 0; tries < 4; tries++)
		{
			u128		n,
						q,
						r,
						half,
						dist;
			uint64_t	m;

			if (s < 0 || s > 22)
				return 0;
			n = (u128) f * pow10[s];
			q = n >> t;
			if (q >= pow10[p])
			{
				s--;
				continue;
			}
			if (q < pow10[p - 1])
			{
				s++;
				continue;
			}
			r = n & (((u128) 1 << t) - 1);
			half = (u128) 1 << (t - 1);
			m = (uint64_t) q;
			dist = r;
			if (r > half || (r == half && (m & 1)))
			{
				m++;
				dist = ((u128) 1 << t) - r;
			}
			if (m >= pow10[p])
				return 0;		/* rounded up to a power of ten */
			if (2 * dist < pow10[s])
				return put_digits(m, s, digits, n_out);
			break;				/* the nearest does not read back: p + 1 digits */
		}
		if (tries == 4)
			return 0;
	}
	return 0;
}
#else
static int
exact_digits(double d, char *digits, int *n_out)
{
	(void) d;
	(void) digits;
	(void) n_out;
	return 0;
}
#endif

/* Write d as ECMAScript Number::toString (see ki_json.h). */
int
ki_format_number(double d, char *out)
{
	return format_number(d, out, true);
}

/* The same through printf and strtod alone (the unit tests compare them). */
int
ki_format_number_slow(double d, char *out)
{
	return format_number(d, out, false);
}

static int
format_number(double d, char *out, bool fast)
{
	char		digits[24];
	int			k,
				n,
				len = 0,
				i;

	if (d == 0)
	{
		out[0] = '0';
		out[1] = '\0';
		return 1;
	}
	/* integers up to 2^53 are written exactly, and fast */
	if (fabs(d) <= 9007199254740992.0 && d == (double) (int64_t) d)
	{
		int64_t		v = (int64_t) d;
		uint64_t	u = v < 0 ? (uint64_t) (-v) : (uint64_t) v;
		char		tmp[24];
		int			n = 0;

		do
		{
			tmp[n++] = (char) ('0' + u % 10);
			u /= 10;
		} while (u > 0);
		if (v < 0)
			out[len++] = '-';
		while (n > 0)
			out[len++] = tmp[--n];
		out[len] = '\0';
		return len;
	}

	if (d < 0)
	{
		out[len++] = '-';
		d = -d;
	}
	k = fast ? fast_digits(d, digits, &n) : 0;
	if (k == 0)
		k = shortest_digits(d, digits, &n);
	if (k <= n && n <= 21)
	{
		memcpy(out + len, digits, (size_t) k);
		len += k;
		for (i = 0; i < n - k; i++)
			out[len++] = '0';
	}
	else if (0 < n && n <= 21)
	{
		memcpy(out + len, digits, (size_t) n);
		len += n;
		out[len++] = '.';
		memcpy(out + len, digits + n, (size_t) (k - n));
		len += k - n;
	}
	else if (-6 < n && n <= 0)
	{
		out[len++] = '0';
		out[len++] = '.';
		for (i = 0; i < -n; i++)
			out[len++] = '0';
		memcpy(out + len, digits, (size_t) k);
		len += k;
	}
	else
	{
		out[len++] = digits[0];
		if (k > 1)
		{
			out[len++] = '.';
			memcpy(out + len, digits + 1, (size_t) (k - 1));
			len += k - 1;
		}
		len += snprintf(out + len, 12, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
	}
	out[len] = '\0';
	return len;
}

static const char hexdigits[] = "0123456789abcdef";

#define ONES ((uint64_t) 0x0101010101010101ULL)
#define HIGHS ((uint64_t) 0x8080808080808080ULL)

/* Does any byte of w need an escape: a quote, a backslash, a control? */
static inline bool
word_needs_escape(uint64_t w)
{
	uint64_t	q = w ^ (ONES * '"');
	uint64_t	b = w ^ (ONES * '\\');

	return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((w - ONES * 0x20) & ~w)) & HIGHS;
}

/* Write a string with JSON.stringify's escapes. */
static void
write_string(const ki_str *s, ki_buf *out)
{
	const unsigned char *p = (const unsigned char *) s->ptr;
	const unsigned char *end = p + s->len;
	const unsigned char *run = p;

	ki_buf_putc(out, '"');
	if (s->plain)
		p = end;				/* the parser saw nothing to escape */
	for (; p < end; p++)
	{
		uint64_t	w;
		unsigned char c;
		const char *esc = NULL;
		char		u[6];

		while (end - p >= 8)
		{
			memcpy(&w, p, 8);
			if (word_needs_escape(w))
				break;
			p += 8;
		}
		if (p >= end)
			break;
		c = *p;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		ki_buf_put(out, (const char *) run, (size_t) (p - run));
		run = p + 1;
		switch (c)
		{
			case '"':
				esc = "\\\"";
				break;
			case '\\':
				esc = "\\\\";
				break;
			case '\b':
				esc = "\\b";
				break;
			case '\t':
				esc = "\\t";
				break;
			case '\n':
				esc = "\\n";
				break;
			case '\f':
				esc = "\\f";
				break;
			case '\r':
				esc = "\\r";
				break;
			default:
				u[0] = '\\';
				u[1] = 'u';
				u[2] = '0';
				u[3] = '0';
				u[4] = hexdigits[c >> 4];
				u[5] = hexdigits[c & 15];
				ki_buf_put(out, u, 6);
				continue;
		}
		ki_buf_puts(out, esc);
	}
	ki_buf_put(out, (const char *) run, (size_t) (end - run));
	ki_buf_putc(out, '"');
}

static int
member_cmp(const void *x, const void *y)
{
	const ki_member *a = *(ki_member * const *) x;
	const ki_member *b = *(ki_member * const *) y;

	return ki_utf16_cmp(a->key.ptr, a->key.len, b->key.ptr, b->key.len);
}

/* Append the RFC 8785 form of v to out. */
void
ki_canonical(const ki_value *v, ki_buf *out)
{
	size_t		i;

	switch (v->type)
	{
		case KI_NULL:
			ki_buf_put(out, "null", 4);
			break;
		case KI_TRUE:
			ki_buf_put(out, "true", 4);
			break;
		case KI_FALSE:
			ki_buf_put(out, "false", 5);
			break;
		case KI_NUMBER:
			{
				char		num[32];
				int			len = ki_format_number(v->u.num, num);

				ki_buf_put(out, num, (size_t) len);
				break;
			}
		case KI_STRING:
			write_string(&v->u.str, out);
			break;
		case KI_ARRAY:
			ki_buf_putc(out, '[');
			for (i = 0; i < v->u.arr.count; i++)
			{
				if (i)
					ki_buf_putc(out, ',');
				ki_canonical(v->u.arr.items[i], out);
			}
			ki_buf_putc(out, ']');
			break;
		case KI_OBJECT:
			{
				size_t		n = v->u.obj.count;
				ki_member  *small[16];
				ki_member **order = small;
				bool		sorted = true;

				if (n > 16)
				{
					order = ki_alloc(out->arena, n * sizeof(ki_member *));
					if (order == NULL)
						return;
				}
				for (i = 0; i < n; i++)
				{
					order[i] = &v->u.obj.members[i];
					if (i > 0 && sorted &&
						member_cmp(&order[i - 1], &order[i]) > 0)
						sorted = false;
				}
				if (!sorted)
				{
					/* insertion sort for the usual few members, else qsort */
					if (n <= 16)
					{
						size_t		j;

						for (i = 1; i < n; i++)
						{
							ki_member  *m = order[i];

							for (j = i; j > 0 && member_cmp(&order[j - 1], &m) > 0; j--)
								order[j] = order[j - 1];
							order[j] = m;
						}
					}
					else
						qsort(order, n, sizeof(ki_member *), member_cmp);
				}
				ki_buf_putc(out, '{');
				for (i = 0; i < n; i++)
				{
					if (i)
						ki_buf_putc(out, ',');
					write_string(&order[i]->key, out);
					ki_buf_putc(out, ':');
					ki_canonical(order[i]->value, out);
				}
				ki_buf_putc(out, '}');
				break;
			}
	}
}
