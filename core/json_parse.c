/*
 * json_parse.c: a strict RFC 8259 parser into ki_value trees.
 *
 * Strict means: UTF-8 checked (no overlong forms, no encoded surrogates),
 * lone \u surrogates rejected, duplicate member names rejected and reported
 * by path, numbers read as IEEE doubles with overflow rejected, the document
 * at most KI_MAX_DOCUMENT_BYTES long and KI_MAX_DEPTH deep.  Strings without
 * escapes point into the input text, which must outlive the tree.
 */
#include "ki_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct frame
{
	const char *key;			/* member name, or NULL for an array item */
	size_t		keylen;
	size_t		index;
} frame;

typedef struct parser
{
	ki_arena   *arena;
	ki_errors  *errs;
	const char *start;
	const char *p;
	const char *end;
	int			depth;
	frame		frames[KI_MAX_DEPTH + 2];
	/* scratch stack shared by all open containers */
	void	  **stack;
	size_t		stack_len;
	size_t		stack_cap;
} parser;

static ki_value *parse_value(parser *ps);

/* Append ".key" (or the bracketed form) to a path. */
void
ki_path_key(ki_buf *b, const char *key, size_t len)
{
	bool		plain = len > 0;
	size_t		i;

	for (i = 0; i < len && plain; i++)
	{
		unsigned char c = (unsigned char) key[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '-'))
			plain = false;
	}
	if (plain)
	{
		if (b->len > 0)
			ki_buf_putc(b, '.');
		ki_buf_put(b, key, len);
	}
	else
	{
		ki_buf_puts(b, "[\"");
		for (i = 0; i < len; i++)
		{
			unsigned char c = (unsigned char) key[i];

			if (c == '"' || c == '\\')
				ki_buf_putc(b, '\\');
			if (c < 0x20)
			{
				char		hex[8];

				snprintf(hex, sizeof(hex), "\\u%04x", c);
				ki_buf_puts(b, hex);
			}
			else
				ki_buf_putc(b, (char) c);
		}
		ki_buf_puts(b, "\"]");
	}
}

/* Append "[index]" to a path. */
void
ki_path_index(ki_buf *b, size_t index)
{
	char		tmp[32];
	int			n = 0,
				i;

	do
	{
		tmp[n++] = (char) ('0' + index % 10);
		index /= 10;
	} while (index > 0);
	ki_buf_putc(b, '[');
	for (i = n - 1; i >= 0; i--)
		ki_buf_putc(b, tmp[i]);
	ki_buf_putc(b, ']');
}

static void
render(ki_buf *b, const ki_path *p)
{
	if (p == NULL)
		return;
	render(b, p->parent);
	if (p->key)
		ki_path_key(b, p->key, p->keylen);
	else
		ki_path_index(b, p->index);
}

/* The text of a path. */
const char *
ki_path_render(ki_arena *a, const ki_path *p)
{
	ki_buf		b;

	ki_buf_init(&b, a, 64);
	render(&b, p);
	return ki_buf_cstr(&b);
}

/* The path of the innermost open container (and its current item when deep). */
static const char *
current_path(parser *ps, int upto)
{
	ki_buf		b;
	int			i;

	ki_buf_init(&b, ps->arena, 64);
	for (i = 1; i <= upto && i <= ps->depth; i++)
	{
		frame	   *f = &ps->frames[i];

		if (f->key)
			ki_path_key(&b, f->key, f->keylen);
		else
			ki_path_index(&b, f->index);
	}
	return ki_buf_cstr(&b);
}

static void
fail(parser *ps, ki_status st, const char *rule, const char *msg)
{
	if (ps->errs->count == 0)
		ki_errors_add(ps->errs, st, current_path(ps, ps->depth), rule,
					  (long) (ps->p - ps->start), "%s at byte %ld", msg,
					  (long) (ps->p - ps->start));
}

static bool
stack_push(parser *ps, void *item)
{
	if (ps->stack_len == ps->stack_cap)
	{
		size_t		cap = ps->stack_cap ? ps->stack_cap * 2 : 64;
		void	  **stack = ki_alloc(ps->arena, cap * sizeof(void *));

		if (stack == NULL)
			return false;
		if (ps->stack_len)
			memcpy(stack, ps->stack, ps->stack_len * sizeof(void *));
		ps->stack = stack;
		ps->stack_cap = cap;
	}
	ps->stack[ps->stack_len++] = item;
	return true;
}

static inline void
skip_ws(parser *ps)
{
	while (ps->p < ps->end &&
		   (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
		ps->p++;
}

/* Length of the valid UTF-8 sequence at s (limit bytes available), 0 if invalid. */
static int
utf8_seq_len(const unsigned char *s, size_t limit)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (limit >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF)
	{
		if (limit < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
			return 0;
		if (c == 0xE0 && s[1] < 0xA0)
			return 0;			/* overlong */
		if (c == 0xED && s[1] >= 0xA0)
			return 0;			/* encoded surrogate */
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4)
	{
		if (limit < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
			(s[3] & 0xC0) != 0x80)
			return 0;
		if (c == 0xF0 && s[1] < 0x90)
			return 0;			/* overlong */
		if (c == 0xF4 && s[1] >= 0x90)
			return 0;			/* above U+10FFFF */
		return 4;
	}
	return 0;
}

static int
hex4(const char *s)
{
	int			v = 0;
	int			i;

	for (i = 0; i < 4; i++)
	{
		char		c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t
put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80)
	{
		out[0] = (char) cp;
		return 1;
	}
	if (cp < 0x800)
	{
		out[0] = (char) (0xC0 | (cp >> 6));
		out[1] = (char) (0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000)
	{
		out[0] = (char) (0xE0 | (cp >> 12));
		out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char) (0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char) (0xF0 | (cp >> 18));
	out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char) (0x80 | (cp & 0x3F));
	return 4;
}

#define ONES ((uint64_t) 0x0101010101010101ULL)
#define HIGHS ((uint64_t) 0x8080808080808080ULL)

/*
 * Which of the 8 bytes in w need a closer look in a string: a quote, a
 * backslash, a control character, or a byte of a multi-byte character?
 * Nonzero when any does.  A borrow can mark bytes above the first such byte
 * but never below it, so on a little-endian machine the lowest set bit is
 * the first byte to look at.
 */
static inline uint64_t
word_special(uint64_t w)
{
	uint64_t	q = w ^ (ONES * '"');
	uint64_t	b = w ^ (ONES * '\\');

	return (((q - ONES) & ~q) | ((b - ONES) & ~b) | (w - ONES * 0x20) | w) & HIGHS;
}

/* The offset in w of the first byte word_special marked (mask nonzero). */
static inline int
first_marked(uint64_t mask)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_ctzll(mask) >> 3;
#else
	(void) mask;
	return 0;					/* look from the word's first byte */
#endif
}

/* Parse a string token (ps->p at the opening quote) into *out. */
static bool
parse_string(parser *ps, ki_str *out)
{
	const unsigned char *s = (const unsigned char *) ps->p + 1;
	const unsigned char *end = (const unsigned char *) ps->end;
	const unsigned char *q = s;
	char	   *buf;
	size_t		n = 0;

	/* fast path: no escapes; eight plain ASCII bytes at a time */
	while (q < end)
	{
		uint64_t	w;
		unsigned char c;

		while (end - q >= 8)
		{
			uint64_t	mask;

			memcpy(&w, q, 8);
			mask = word_special(w);
			if (mask)
			{
				q += first_marked(mask);
				break;
			}
			q += 8;
		}
		if (q >= end)
			break;
		c = *q;

		if (c == '"')
		{
			out->ptr = (const char *) s;
			out->len = (size_t) (q - s);
			out->plain = true;	/* no escape, no control: nothing to escape */
			ps->p = (const char *) q + 1;
			return true;
		}
		if (c == '\\')
			break;
		if (c < 0x20)
		{
			ps->p = (const char *) q;
			fail(ps, KI_ERR_SYNTAX, "syntax", "control character in string");
			return false;
		}
		if (c < 0x80)
			q++;
		else
		{
			int			l = utf8_seq_len(q, (size_t) (end - q));

			if (l == 0)
			{
				ps->p = (const char *) q;
				fail(ps, KI_ERR_SYNTAX, "utf8", "invalid UTF-8");
				return false;
			}
			q += l;
		}
	}
	if (q >= end)
	{
		ps->p = (const char *) q;
		fail(ps, KI_ERR_SYNTAX, "syntax", "unterminated string");
		return false;
	}

	/* slow path: decode escapes into a copy (never longer than the source) */
	buf = ki_alloc(ps->arena, (size_t) (end - s) + 1);
	if (buf == NULL)
		return false;
	memcpy(buf, s, (size_t) (q - s));
	n = (size_t) (q - s);
	while (q < end)
	{
		unsigned char c = *q;

		if (c == '"')
		{
			buf[n] = '\0';
			out->ptr = buf;
			out->len = n;
			out->plain = false;
			ps->p = (const char *) q + 1;
			return true;
		}
		if (c < 0x20)
		{
			ps->p = (const char *) q;
			fail(ps, KI_ERR_SYNTAX, "syntax", "control character in string");
			return false;
		}
		if (c == '\\')
		{
			if (q + 1 >= end)
				break;
			switch (q[1])
			{
				case '"':
					buf[n++] = '"';
					break;
				case '\\':
					buf[n++] = '\\';
					break;
				case '/':
					buf[n++] = '/';
					break;
				case 'b':
					buf[n++] = '\b';
					break;
				case 'f':
					buf[n++] = '\f';
					break;
				case 'n':
					buf[n++] = '\n';
					break;
				case 'r':
					buf[n++] = '\r';
					break;
				case 't':
					buf[n++] = '\t';
					break;
				case 'u':
					{
						int			cp;

						if (end - q < 6 || (cp = hex4((const char *) q + 2)) < 0)
						{
							ps->p = (const char *) q;
							fail(ps, KI_ERR_SYNTAX, "syntax", "invalid \\u escape");
							return false;
						}
						if (cp >= 0xD800 && cp <= 0xDBFF)
						{
							int			lo;

							if (end - q < 12 || q[6] != '\\' || q[7] != 'u' ||
								(lo = hex4((const char *) q + 8)) < 0xDC00 || lo > 0xDFFF)
							{
								ps->p = (const char *) q;
								fail(ps, KI_ERR_SYNTAX, "utf8", "lone surrogate in \\u escape");
								return false;
							}
							cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
							q += 6;
						}
						else if (cp >= 0xDC00 && cp <= 0xDFFF)
						{
							ps->p = (const char *) q;
							fail(ps, KI_ERR_SYNTAX, "utf8", "lone surrogate in \\u escape");
							return false;
						}
						n += put_utf8(buf + n, (unsigned) cp);
						q += 6;
						continue;
					}
				default:
					ps->p = (const char *) q;
					fail(ps, KI_ERR_SYNTAX, "syntax", "invalid escape");
					return false;
			}
			q += 2;
			continue;
		}
		if (c < 0x80)
			buf[n++] = (char) *q++;
		else
		{
			int			l = utf8_seq_len(q, (size_t) (end - q));

			if (l == 0)
			{
				ps->p = (const char *) q;
				fail(ps, KI_ERR_SYNTAX, "utf8", "invalid UTF-8");
				return false;
			}
			memcpy(buf + n, q, (size_t) l);
			n += (size_t) l;
			q += l;
		}
	}
	ps->p = (const char *) end;
	fail(ps, KI_ERR_SYNTAX, "syntax", "unterminated string");
	return false;
}

/* Parse a number token as an IEEE double, the way JSON.parse reads it. */
#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

static int
bit_length(u128 x)
{
	int			n = 0;

	if (x >> 64)
	{
		x >>= 64;
		n = 64;
	}
	return n + (x ? 64 - __builtin_clzll((uint64_t) x) : 0);
}

/*
 * m / 10^k (k = -e in 0..21, m > 2^53: up to 19 digits) rounded to the
 * nearest double, ties to even, in exact integer arithmetic: the quotient
 * Q of m 2^sh by 10^k is made at least 2^54, so it carries the 53 bits of
 * the result, a rounding bit and more below it, and the remainder says
 * whether anything nonzero lies further down.  The result, at least
 * 2^53 10^-21, is normal, so ldexp is exact.  Returns false outside that
 * range (strtod decides).
 */
static bool
exact_decimal(uint64_t m, int e, double *out)
{
	u128		d = 1,
				n,
				q,
				r,
				low,
				half;
	uint64_t	mant;
	int			k = -e,
				sh,
				drop,
				i;

	if (e > 0 || e < -21 || m == 0)
		return false;
	for (i = 0; i < k; i++)
		d *= 10;
	sh = 55 + bit_length(d) - bit_length(m);
	if (sh < 0)
		sh = 0;
	n = (u128) m << sh;
	q = n / d;
	r = n % d;
	drop = bit_length(q) - 53;
	mant = (uint64_t) (q >> drop);
	low = q & (((u128) 1 << drop) - 1);
	half = (u128) 1 << (drop - 1);
	if (low > half || (low == half && (r != 0 || (mant & 1))))
		mant++;
	if (mant == (UINT64_C(1) << 53))
	{
		mant >>= 1;
		drop++;
	}
	*out = ldexp((double) mant, drop - sh);
	return true;
}
#else
static bool
exact_decimal(uint64_t m, int e, double *out)
{
	(void) m;
	(void) e;
	(void) out;
	return false;
}
#endif

/*
 * Clinger's fast path: a number s..q (already checked against the grammar)
 * whose significant digits make an integer m <= 2^53 and whose decimal
 * exponent e has |e| <= 22 is m * 10^e or m / 10^-e, one correctly rounded
 * IEEE operation on two exact operands: the double strtod would return.
 * Up to 19 digits with -21 <= e <= 0 go to exact_decimal.  Returns false
 * (strtod decides) for anything else.
 */
static bool
fast_decimal(const char *s, const char *q, double *out)
{
	const char *p = s;
	bool		neg = false;
	uint64_t	m = 0;
	int			digits = 0;		/* significant digits in m */
	int			e = 0;
	double		v;

	if (*p == '-')
	{
		neg = true;
		p++;
	}
	for (; p < q && *p >= '0' && *p <= '9'; p++)
	{
		if (m == 0 && *p == '0')
			continue;
		if (++digits > 19)
			return false;
		m = m * 10 + (uint64_t) (*p - '0');
	}
	if (p < q && *p == '.')
		for (p++; p < q && *p >= '0' && *p <= '9'; p++)
		{
			e--;
			if (m == 0 && *p == '0')
				continue;
			if (++digits > 19)
				return false;
			m = m * 10 + (uint64_t) (*p - '0');
		}
	if (p < q)					/* e or E, an optional sign, digits */
	{
		bool		eneg = false;
		int			x = 0;

		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		for (; p < q; p++)
		{
			x = x * 10 + (*p - '0');
			if (x > 400)
				return false;
		}
		e += eneg ? -x : x;
	}
	if (m <= (UINT64_C(1) << 53) && e >= -22 && e <= 22)
		v = e >= 0 ? (double) m * ki_exact_pow10[e] : (double) m / ki_exact_pow10[-e];
	else if (!exact_decimal(m, e, &v))
		return false;
	*out = neg ? -v : v;
	return true;
}

static bool
parse_number(parser *ps, double *out)
{
	const char *s = ps->p;
	const char *q = s;
	const char *end = ps->end;
	bool		simple = true;
	char		tmp[64];
	char	   *copy = tmp;
	size_t		len;

	if (q < end && *q == '-')
		q++;
	if (q >= end || !(*q >= '0' && *q <= '9'))
	{
		fail(ps, KI_ERR_SYNTAX, "syntax", "invalid number");
		return false;
	}
	if (*q == '0')
		q++;
	else
		while (q < end && *q >= '0' && *q <= '9')
			q++;
	if (q < end && *q == '.')
	{
		simple = false;
		q++;
		if (q >= end || !(*q >= '0' && *q <= '9'))
		{
			ps->p = q;
			fail(ps, KI_ERR_SYNTAX, "syntax", "invalid number");
			return false;
		}
		while (q < end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < end && (*q == 'e' || *q == 'E'))
	{
		simple = false;
		q++;
		if (q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || !(*q >= '0' && *q <= '9'))
		{
			ps->p = q;
			fail(ps, KI_ERR_SYNTAX, "syntax", "invalid number");
			return false;
		}
		while (q < end && *q >= '0' && *q <= '9')
			q++;
	}
	len = (size_t) (q - s);
	/* integers of at most 15 digits are exact in a double */
	if (simple && len <= 15)
	{
		const char *d = s;
		int64_t		v = 0;
		bool		neg = false;

		if (*d == '-')
		{
			neg = true;
			d++;
		}
		for (; d < q; d++)
			v = v * 10 + (*d - '0');
		*out = neg ? (v == 0 ? -0.0 : -(double) v) : (double) v;
		ps->p = q;
		return true;
	}
	if (fast_decimal(s, q, out))
	{
		ps->p = q;
		return true;
	}
	if (len >= sizeof(tmp))
	{
		copy = ki_alloc(ps->arena, len + 1);
		if (copy == NULL)
			return false;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	*out = strtod(copy, NULL);
	if (isinf(*out))
	{
		fail(ps, KI_ERR_NUMBER, "number_range", "number out of the range of a double");
		return false;
	}
	ps->p = q;
	return true;
}

static bool
keys_equal(const ki_str *a, const ki_str *b)
{
	return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

static int
member_cmp_bytes(const void *x, const void *y)
{
	const ki_member *a = *(ki_member * const *) x;
	const ki_member *b = *(ki_member * const *) y;
	size_t		n = a->key.len < b->key.len ? a->key.len : b->key.len;
	int			c = memcmp(a->key.ptr, b->key.ptr, n);

	if (c != 0)
		return c;
	return a->key.len < b->key.len ? -1 : a->key.len > b->key.len;
}

/* The first duplicate name among an object's members, or NULL. */
static const ki_str *
find_duplicate(ki_arena *a, ki_member *m, size_t n)
{
	size_t		i,
				j;

	if (n < 2)
		return NULL;
	if (n <= 16)
	{
		for (i = 1; i < n; i++)
			for (j = 0; j < i; j++)
				if (keys_equal(&m[i].key, &m[j].key))
					return &m[i].key;
		return NULL;
	}
	else
	{
		ki_member **sorted = ki_alloc(a, n * sizeof(ki_member *));

		if (sorted == NULL)
			return NULL;
		for (i = 0; i < n; i++)
			sorted[i] = &m[i];
		qsort(sorted, n, sizeof(ki_member *), member_cmp_bytes);
		for (i = 1; i < n; i++)
			if (keys_equal(&sorted[i]->key, &sorted[i - 1]->key))
				return &sorted[i]->key;
		return NULL;
	}
}

static ki_value *
parse_container(parser *ps, bool is_object)
{
	ki_value   *v = ki_new_value(ps->arena, is_object ? KI_OBJECT : KI_ARRAY);
	size_t		base = ps->stack_len;
	size_t		count = 0;
	frame	   *f;
	char		close = is_object ? '}' : ']';

	if (v == NULL)
		return NULL;
	if (ps->depth >= KI_MAX_DEPTH)
	{
		fail(ps, KI_ERR_TOO_DEEP, "depth", "nesting deeper than 64 levels");
		return NULL;
	}
	ps->depth++;
	f = &ps->frames[ps->depth];
	f->key = NULL;
	f->keylen = 0;
	f->index = 0;
	ps->p++;					/* opening bracket */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close)
		ps->p++;
	else
	{
		for (;;)
		{
			ki_value   *item;

			if (is_object)
			{
				ki_member  *m = ki_alloc(ps->arena, sizeof(ki_member));

				if (m == NULL)
					return NULL;
				if (ps->p >= ps->end || *ps->p != '"')
				{
					fail(ps, KI_ERR_SYNTAX, "syntax", "expected a member name");
					return NULL;
				}
				if (!parse_string(ps, &m->key))
					return NULL;
				f->key = m->key.ptr;
				f->keylen = m->key.len;
				skip_ws(ps);
				if (ps->p >= ps->end || *ps->p != ':')
				{
					fail(ps, KI_ERR_SYNTAX, "syntax", "expected ':'");
					return NULL;
				}
				ps->p++;
				skip_ws(ps);
				if ((m->value = parse_value(ps)) == NULL)
					return NULL;
				if (!stack_push(ps, m))
					return NULL;
			}
			else
			{
				f->index = count;
				if ((item = parse_value(ps)) == NULL)
					return NULL;
				if (!stack_push(ps, item))
					return NULL;
			}
			count++;
			skip_ws(ps);
			if (ps->p < ps->end && *ps->p == ',')
			{
				ps->p++;
				skip_ws(ps);
				continue;
			}
			if (ps->p < ps->end && *ps->p == close)
			{
				ps->p++;
				break;
			}
			fail(ps, KI_ERR_SYNTAX, "syntax",
				 is_object ? "expected ',' or '}'" : "expected ',' or ']'");
			return NULL;
		}
	}

	if (is_object)
	{
		ki_member  *members = ki_alloc(ps->arena, (count ? count : 1) * sizeof(ki_member));
		const ki_str *dup;
		size_t		i;

		if (members == NULL)
			return NULL;
		for (i = 0; i < count; i++)
			members[i] = *(ki_member *) ps->stack[base + i];
		v->u.obj.members = members;
		v->u.obj.count = count;
		if ((dup = find_duplicate(ps->arena, members, count)) != NULL)
		{
			ki_buf		b;

			ki_buf_init(&b, ps->arena, 64);
			ki_buf_puts(&b, current_path(ps, ps->depth - 1));
			ki_path_key(&b, dup->ptr, dup->len);
			ki_errors_add(ps->errs, KI_ERR_DUPLICATE, ki_buf_cstr(&b), "duplicate_member",
						  (long) (ps->p - ps->start), "duplicate member name \"%.*s\"",
						  (int) (dup->len > 200 ? 200 : dup->len), dup->ptr);
			return NULL;
		}
	}
	else
	{
		ki_value  **items = ki_alloc(ps->arena, (count ? count : 1) * sizeof(ki_value *));
		size_t		i;

		if (items == NULL)
			return NULL;
		for (i = 0; i < count; i++)
			items[i] = (ki_value *) ps->stack[base + i];
		v->u.arr.items = items;
		v->u.arr.count = count;
	}
	ps->stack_len = base;
	ps->depth--;
	return v;
}

static ki_value *
parse_value(parser *ps)
{
	ki_value   *v;

	if (ps->p >= ps->end)
	{
		fail(ps, KI_ERR_SYNTAX, "syntax", "unexpected end of input");
		return NULL;
	}
	switch (*ps->p)
	{
		case '{':
			return parse_container(ps, true);
		case '[':
			return parse_container(ps, false);
		case '"':
			v = ki_new_value(ps->arena, KI_STRING);
			if (v == NULL || !parse_string(ps, &v->u.str))
				return NULL;
			return v;
		case 't':
			if (ps->end - ps->p >= 4 && memcmp(ps->p, "true", 4) == 0)
			{
				ps->p += 4;
				return ki_new_value(ps->arena, KI_TRUE);
			}
			break;
		case 'f':
			if (ps->end - ps->p >= 5 && memcmp(ps->p, "false", 5) == 0)
			{
				ps->p += 5;
				return ki_new_value(ps->arena, KI_FALSE);
			}
			break;
		case 'n':
			if (ps->end - ps->p >= 4 && memcmp(ps->p, "null", 4) == 0)
			{
				ps->p += 4;
				return ki_new_value(ps->arena, KI_NULL);
			}
			break;
		case 'N':
		case 'I':
			fail(ps, KI_ERR_NUMBER, "number_range", "NaN and Infinity are not JSON numbers");
			return NULL;
		default:
			if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			{
				double		d;

				if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] == 'I')
				{
					fail(ps, KI_ERR_NUMBER, "number_range", "NaN and Infinity are not JSON numbers");
					return NULL;
				}
				if (!parse_number(ps, &d))
					return NULL;
				return ki_new_number(ps->arena, d);
			}
			break;
	}
	fail(ps, KI_ERR_SYNTAX, "syntax", "unexpected character");
	return NULL;
}

/* Parse JSON text strictly into a tree (see ki_json.h). */
ki_value *
ki_parse(ki_arena *a, const char *text, size_t len, ki_errors *errs)
{
	parser		ps;
	ki_value   *v;

	if (len > KI_MAX_DOCUMENT_BYTES)
	{
		ki_errors_add(errs, KI_ERR_TOO_LARGE, "", "size", -1,
					  "document of %zu bytes exceeds the limit of %d bytes",
					  len, KI_MAX_DOCUMENT_BYTES);
		return NULL;
	}
	memset(&ps, 0, sizeof(ps));
	ps.arena = a;
	ps.errs = errs;
	ps.start = ps.p = text;
	ps.end = text + len;
	skip_ws(&ps);
	v = parse_value(&ps);
	if (v != NULL)
	{
		skip_ws(&ps);
		if (ps.p != ps.end)
		{
			fail(&ps, KI_ERR_SYNTAX, "syntax", "trailing characters after the document");
			v = NULL;
		}
	}
	if (a->failed)
	{
		if (errs->count == 0)
			ki_errors_add(errs, KI_ERR_NOMEM, "", "memory", -1, "out of memory");
		return NULL;
	}
	if (v == NULL && errs->count == 0)
		ki_errors_add(errs, KI_ERR_SYNTAX, "", "syntax", -1, "invalid JSON");
	return v;
}

/* A new value of type t (zeroed). */
ki_value *
ki_new_value(ki_arena *a, ki_type t)
{
	ki_value   *v = ki_alloc(a, sizeof(ki_value));

	if (v == NULL)
		return NULL;
	memset(v, 0, sizeof(*v));
	v->type = t;
	return v;
}

/* A new number value. */
ki_value *
ki_new_number(ki_arena *a, double d)
{
	ki_value   *v = ki_new_value(a, KI_NUMBER);

	if (v)
		v->u.num = d;
	return v;
}

/* A new string value holding a copy of s. */
ki_value *
ki_new_string(ki_arena *a, const char *s, size_t len)
{
	ki_value   *v = ki_new_value(a, KI_STRING);

	if (v == NULL)
		return NULL;
	v->u.str.ptr = ki_strndup(a, s, len);
	v->u.str.len = len;
	v->u.str.plain = false;
	return v->u.str.ptr ? v : NULL;
}

/* Look up a member by name. */
ki_value *
ki_get(const ki_value *obj, const char *key)
{
	size_t		len = strlen(key);
	size_t		i;

	if (obj == NULL || obj->type != KI_OBJECT)
		return NULL;
	for (i = 0; i < obj->u.obj.count; i++)
	{
		const ki_member *m = &obj->u.obj.members[i];

		if (m->key.len == len && memcmp(m->key.ptr, key, len) == 0)
			return m->value;
	}
	return NULL;
}

static bool
check_utf8(const ki_str *s)
{
	const unsigned char *p = (const unsigned char *) s->ptr;
	size_t		i = 0;

	while (i < s->len)
	{
		int			l = utf8_seq_len(p + i, s->len - i);

		if (l == 0)
			return false;
		i += (size_t) l;
	}
	return true;
}

static bool
check_tree(const ki_value *v, int depth, ki_errors *errs, ki_buf *path)
{
	size_t		i;
	size_t		mark = path->len;

	switch (v->type)
	{
		case KI_NUMBER:
			if (!isfinite(v->u.num))
			{
				ki_errors_add(errs, KI_ERR_NUMBER, ki_buf_cstr(path), "number_range", -1,
							  "NaN and infinities are not JSON numbers");
				return false;
			}
			return true;
		case KI_STRING:
			if (!check_utf8(&v->u.str))
			{
				ki_errors_add(errs, KI_ERR_SYNTAX, ki_buf_cstr(path), "utf8", -1, "invalid UTF-8");
				return false;
			}
			return true;
		case KI_ARRAY:
		case KI_OBJECT:
			if (depth >= KI_MAX_DEPTH)
			{
				ki_errors_add(errs, KI_ERR_TOO_DEEP, ki_buf_cstr(path), "depth", -1,
							  "nesting deeper than %d levels", KI_MAX_DEPTH);
				return false;
			}
			if (v->type == KI_ARRAY)
			{
				for (i = 0; i < v->u.arr.count; i++)
				{
					ki_path_index(path, i);
					if (!check_tree(v->u.arr.items[i], depth + 1, errs, path))
						return false;
					path->len = mark;
				}
			}
			else
			{
				const ki_str *dup = find_duplicate(errs->arena, v->u.obj.members, v->u.obj.count);

				if (dup)
				{
					ki_path_key(path, dup->ptr, dup->len);
					ki_errors_add(errs, KI_ERR_DUPLICATE, ki_buf_cstr(path), "duplicate_member", -1,
								  "duplicate member name \"%.*s\"",
								  (int) (dup->len > 200 ? 200 : dup->len), dup->ptr);
					return false;
				}
				for (i = 0; i < v->u.obj.count; i++)
				{
					const ki_member *m = &v->u.obj.members[i];

					ki_path_key(path, m->key.ptr, m->key.len);
					if (!check_utf8(&m->key))
					{
						ki_errors_add(errs, KI_ERR_SYNTAX, ki_buf_cstr(path), "utf8", -1, "invalid UTF-8 in a member name");
						return false;
					}
					if (!check_tree(m->value, depth + 1, errs, path))
						return false;
					path->len = mark;
				}
			}
			return true;
		default:
			return true;
	}
}

/* Check a caller-built tree against the parser's guarantees. */
bool
ki_check_tree(const ki_value *v, ki_errors *errs)
{
	ki_buf		path;

	ki_buf_init(&path, errs->arena, 64);
	return check_tree(v, 0, errs, &path);
}
