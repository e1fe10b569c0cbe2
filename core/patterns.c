/*
 * patterns.c: the regular expressions of the v1alpha1 schemas, as matchers.
 *
 * The schemas use eight patterns.  Each is written here as a small function
 * with the ECMAScript semantics the schemas were written for (\d is ASCII,
 * \s is JavaScript's white space, $ is the end of the input) and looked up
 * by its exact source text; an unknown pattern fails schema compilation.
 */
#include "ki_schema.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IS_LOWER(c) ((c) >= 'a' && (c) <= 'z')
#define IS_DIGIT(c) ((c) >= '0' && (c) <= '9')

/*
 * The character classes of the patterns below, one bit each, so a pattern
 * tests every byte with one load and no data-dependent branch (a digest's
 * 64 hex digits mix letters and digits at random: a branch per class
 * mispredicted on most of them).
 */
enum
{
	C_LOWER = 1,				/* a-z */
	C_DIGIT = 2,				/* 0-9 */
	C_HEX = 4,					/* 0-9 a-f */
	C_UNDERSCORE = 8,
	C_DOT = 16,
	C_DASH = 32
};

#define R10(c, v) [c] = v, [c + 1] = v, [c + 2] = v, [c + 3] = v, [c + 4] = v, \
	[c + 5] = v, [c + 6] = v, [c + 7] = v, [c + 8] = v, [c + 9] = v
static const unsigned char cls[256] = {
	R10('0', C_DIGIT | C_HEX),
	['a'] = C_LOWER | C_HEX, ['b'] = C_LOWER | C_HEX, ['c'] = C_LOWER | C_HEX,
	['d'] = C_LOWER | C_HEX, ['e'] = C_LOWER | C_HEX, ['f'] = C_LOWER | C_HEX,
	R10('g', C_LOWER), R10('q', C_LOWER),
	['_'] = C_UNDERSCORE, ['.'] = C_DOT, ['-'] = C_DASH
};

/* Are s[from..n) all of the classes in mask? */
static inline bool
all_of(const char *s, size_t from, size_t n, unsigned mask)
{
	unsigned	bad = 0;
	size_t		i;

	for (i = from; i < n; i++)
		bad |= (cls[(unsigned char) s[i]] & mask) == 0;
	return bad == 0;
}

/* ^[a-z][a-z0-9_]*$ */
static bool
pat_token(const char *s, size_t n)
{
	return n > 0 && (cls[(unsigned char) s[0]] & C_LOWER) &&
		all_of(s, 1, n, C_LOWER | C_DIGIT | C_UNDERSCORE);
}

/* ^[a-z0-9][a-z0-9._-]*$ */
static bool
pat_name(const char *s, size_t n)
{
	return n > 0 && (cls[(unsigned char) s[0]] & (C_LOWER | C_DIGIT)) &&
		all_of(s, 1, n, C_LOWER | C_DIGIT | C_DOT | C_UNDERSCORE | C_DASH);
}

/* ^[a-z0-9][a-z0-9-]*$ */
static bool
pat_slug(const char *s, size_t n)
{
	return n > 0 && (cls[(unsigned char) s[0]] & (C_LOWER | C_DIGIT)) &&
		all_of(s, 1, n, C_LOWER | C_DIGIT | C_DASH);
}

/* ^[a-z0-9_+\-*%/() ]+$ */
static bool
pat_expression(const char *s, size_t n)
{
	size_t		i;

	if (n == 0)
		return false;
	for (i = 0; i < n; i++)
		if (!(IS_LOWER(s[i]) || IS_DIGIT(s[i]) || strchr("_+-*%/() ", s[i]) != NULL) || s[i] == '\0')
			return false;
	return true;
}

/* ^sha256:[0-9a-f]{64}$ */
static bool
pat_digest(const char *s, size_t n)
{
	return n == 71 && memcmp(s, "sha256:", 7) == 0 && all_of(s, 7, n, C_HEX);
}

/* ^[0-9a-f]{40}$ */
static bool
pat_commit(const char *s, size_t n)
{
	return n == 40 && all_of(s, 0, n, C_HEX);
}

/* Length of one JavaScript \s character at s, or 0. */
static size_t
js_space(const unsigned char *s, size_t n)
{
	unsigned	cp;
	size_t		l;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return (s[0] == ' ' || (s[0] >= 0x09 && s[0] <= 0x0D)) ? 1 : 0;
	if (s[0] >= 0xC2 && s[0] <= 0xDF && n >= 2)
	{
		cp = ((s[0] & 0x1Fu) << 6) | (s[1] & 0x3Fu);
		l = 2;
	}
	else if (s[0] >= 0xE0 && s[0] <= 0xEF && n >= 3)
	{
		cp = ((s[0] & 0x0Fu) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
		l = 3;
	}
	else
		return 0;
	if (cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
		cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
		cp == 0x3000 || cp == 0xFEFF)
		return l;
	return 0;
}

/*
 * ^\d+(\.\d+)?\s?(ns|us|µs|ms|s)$ : on a match, *numlen is the length of the
 * number and *unit points at the unit.
 */
static bool
match_duration(const char *s, size_t n, size_t *numlen, const char **unit, size_t *unitlen)
{
	size_t		i = 0;
	size_t		sp;
	const char *u;
	size_t		ul;

	while (i < n && IS_DIGIT(s[i]))
		i++;
	if (i == 0)
		return false;
	if (i < n && s[i] == '.')
	{
		size_t		j = i + 1;

		while (j < n && IS_DIGIT(s[j]))
			j++;
		if (j == i + 1)
			return false;
		i = j;
	}
	*numlen = i;
	sp = js_space((const unsigned char *) s + i, n - i);
	u = s + i + sp;
	ul = n - i - sp;
	if ((ul == 2 && (memcmp(u, "ns", 2) == 0 || memcmp(u, "us", 2) == 0 || memcmp(u, "ms", 2) == 0)) ||
		(ul == 3 && memcmp(u, "\xC2\xB5s", 3) == 0) ||
		(ul == 1 && u[0] == 's'))
	{
		*unit = u;
		*unitlen = ul;
		return true;
	}
	return false;
}

static bool
pat_duration(const char *s, size_t n)
{
	size_t		numlen,
				unitlen;
	const char *unit;

	return match_duration(s, n, &numlen, &unit, &unitlen);
}

/*
 * Duration string to nanoseconds, as IDENTITY.md section 2 says: the number
 * read as a double, times the unit's factor in double, accepted only when
 * the product is an integer no larger than 2^53-1.
 */
bool
ki_parse_duration(const char *s, size_t n, double *ns)
{
	size_t		numlen,
				unitlen;
	const char *unit;
	char		tmp[64];
	char	   *num = tmp;
	double		v,
				factor;
	bool		ok;

	if (!match_duration(s, n, &numlen, &unit, &unitlen))
		return false;
	if (numlen >= sizeof(tmp))
	{
		num = malloc(numlen + 1);
		if (num == NULL)
			return false;
	}
	memcpy(num, s, numlen);
	num[numlen] = '\0';
	v = strtod(num, NULL);
	if (num != tmp)
		free(num);
	if (unitlen == 1)
		factor = 1e9;
	else if (unit[0] == 'n')
		factor = 1;
	else if (unit[0] == 'm')
		factor = 1e6;
	else
		factor = 1e3;			/* us, µs */
	v *= factor;
	ok = isfinite(v) && v == floor(v) && v <= 9007199254740991.0;
	if (ok)
		*ns = v;
	return ok;
}

static bool
leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
two(const char *s)
{
	if (!IS_DIGIT(s[0]) || !IS_DIGIT(s[1]))
		return -1;
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/*
 * The schemas' UTC instant: YYYY-MM-DDTHH:MM[:SS[.fraction]]Z with a real
 * calendar date (Gregorian leap years) and no offset other than Z.
 */
static bool
pat_datetime(const char *s, size_t n)
{
	int			y,
				mo,
				d,
				h,
				mi,
				dim;
	size_t		i;
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	if (n < 17 || s[n - 1] != 'Z')
		return false;
	for (i = 0; i < 4; i++)
		if (!IS_DIGIT(s[i]))
			return false;
	y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':')
		return false;
	mo = two(s + 5);
	d = two(s + 8);
	h = two(s + 11);
	mi = two(s + 14);
	if (mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59)
		return false;
	dim = days[mo - 1] + (mo == 2 && leap(y) ? 1 : 0);
	if (d > dim)
		return false;
	i = 16;
	if (i == n - 1)
		return true;			/* HH:MMZ */
	if (s[i] != ':' || n < 20)
		return false;
	if (two(s + 17) < 0 || two(s + 17) > 59)
		return false;
	i = 19;
	if (i == n - 1)
		return true;
	if (s[i] != '.')
		return false;
	i++;
	if (i == n - 1)
		return false;
	for (; i < n - 1; i++)
		if (!IS_DIGIT(s[i]))
			return false;
	return true;
}

static const struct
{
	const char *source;
	sch_pattern_fn fn;
}			patterns[] =
{
	{"^[a-z][a-z0-9_]*$", pat_token},
	{"^[a-z0-9][a-z0-9._-]*$", pat_name},
	{"^[a-z0-9][a-z0-9-]*$", pat_slug},
	{"^[a-z0-9_+\\-*%/() ]+$", pat_expression},
	{"^sha256:[0-9a-f]{64}$", pat_digest},
	{"^[0-9a-f]{40}$", pat_commit},
	{"^\\d+(\\.\\d+)?\\s?(ns|us|\xC2\xB5s|ms|s)$", pat_duration},
	{"^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z))$", pat_datetime},
};

/* The matcher for a pattern's source text, or NULL. */
sch_pattern_fn
ki_pattern_lookup(const char *source, size_t len)
{
	size_t		i;

	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		if (strlen(patterns[i].source) == len && memcmp(patterns[i].source, source, len) == 0)
			return patterns[i].fn;
	return NULL;
}
