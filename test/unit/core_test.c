/*
 * core_test.c: unit tests of the identity core (no PostgreSQL).
 * Prints TAP lines.  With --numbers N it instead prints N random doubles
 * (as %.17g, one a line) followed by our canonical form, for the
 * differential check against Node.js in test/suites/core.sh.
 */
#include "ki_json.h"
#include "ki_schema.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void		ki_sha256_portable(const void *data, size_t len, unsigned char md[32]);

static int	n_test = 0,
			n_fail = 0;

static void
check(int ok, const char *what)
{
	n_test++;
	if (!ok)
		n_fail++;
	printf("%s %d - %s\n", ok ? "ok" : "not ok", n_test, what);
}

/* The canonical form of text's first len bytes, or the rule that refused them.  Only those
 * bytes: a PostgreSQL text is not terminated, so what follows them is whatever the memory holds. */
static const char *
canon_n(ki_arena *a, const char *text, size_t len)
{
	ki_errors	errs;
	ki_value   *v;
	ki_buf		b;

	ki_errors_init(&errs, a);
	v = ki_parse(a, text, len, &errs);
	if (v == NULL)
		return errs.items[0].rule;
	ki_buf_init(&b, a, 64);
	ki_canonical(v, &b);
	return ki_buf_cstr(&b);
}

static const char *
canon(ki_arena *a, const char *json)
{
	return canon_n(a, json, strlen(json));
}

/* The reader stops at its length, in every part of a number and after every kind of value,
 * however the bytes beyond it go on. */
static void
bounded_checks(ki_arena *a)
{
	static const char *const texts[][2] = {
		{"1", "12"}, {"-7", "-78"}, {"1.5", "1.55"}, {"0.25", "0.2500001"}, {"1e5", "1e55"},
		{"2E-3", "2E-31"}, {"123456789012345678", "1234567890123456789"}, {"1.5e1", "1.5e10"},
		{"[1,2]", "[1,2]3"}, {"{\"a\":1}", "{\"a\":1}9"}, {"\"ab\"", "\"ab\"\"c"}, {"true", "truex"},
	};
	int			bad = 0;
	char		first[160] = "";

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
	{
		char		want[64];

		snprintf(want, sizeof want, "%s", canon(a, texts[i][0]));
		if (strcmp(canon_n(a, texts[i][1], strlen(texts[i][0])), want) != 0 && bad++ == 0)
			snprintf(first, sizeof first, " (first: %s of %s read %s)", texts[i][0], texts[i][1],
					 canon_n(a, texts[i][1], strlen(texts[i][0])));
	}
	if (bad)
		printf("# %d misread%s\n", bad, first);
	check(bad == 0, "the reader reads its length and no further: a number's integer, fraction and exponent digits, a container, a string and a literal followed in memory by more");
}

/* The arena's blocks as its allocator handed them out, to check every allocation against. */
static struct
{
	char	   *p;
	size_t		size;
	bool		live;
}			blocks[64];
static int	nblocks;

static void *
rec_alloc(void *ctx, size_t size)
{
	char	   *p = malloc(size);

	(void) ctx;
	if (p && nblocks < 64)
	{
		blocks[nblocks].p = p;
		blocks[nblocks].size = size;
		blocks[nblocks++].live = true;
	}
	return p;
}

static void
rec_free(void *ctx, void *ptr)
{
	(void) ctx;
	for (int i = 0; i < nblocks; i++)
		if (blocks[i].p == ptr)
			blocks[i].live = false;
	free(ptr);
}

/*
 * Every allocation 16-aligned, inside a live block past its 16-byte header, and apart from every
 * other: a first allocation larger than a quarter block (its block becomes the current one), small
 * ones after it, a second large one (a dedicated block behind the current one), small ones again,
 * then the same after a rewind.  Each allocation is filled with its own byte and read back at the
 * end, so two that overlap show.
 */
static void
arena_checks(void)
{
	static const size_t sizes[] = {20000, 1, 16, 15, 17, 100, 33, 20000, 5, 16, 70000, 3, 16000, 16, 1, 40000, 7};
	ki_arena	a;
	char	   *got[64];
	size_t		len[64];
	int			n = 0,
				bad = 0;
	char		first[160] = "";

	nblocks = 0;
	ki_arena_init(&a, rec_alloc, rec_free, NULL);
	for (int round = 0; round < 2; round++)
	{
		if (round == 1)
		{
			ki_arena_rewind(&a);
			n = 0;
		}
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		{
			char	   *p = ki_alloc(&a, sizes[i]);
			bool		inside = false;

			for (int b = 0; b < nblocks && p; b++)
				if (blocks[b].live && p >= blocks[b].p + 16 && p + sizes[i] <= blocks[b].p + blocks[b].size)
					inside = true;
			if ((p == NULL || ((uintptr_t) p & 15) != 0 || !inside) && bad++ == 0)
				snprintf(first, sizeof first, " (first: round %d, allocation %zu of %zu bytes at %p)", round, i,
						 sizes[i], (void *) p);
			if (p == NULL)
				continue;
			memset(p, (int) (n + 1), sizes[i]);
			got[n] = p;
			len[n++] = sizes[i];
		}
		for (int i = 0; i < n; i++)
			for (size_t k = 0; k < len[i]; k++)
				if ((unsigned char) got[i][k] != (unsigned char) (i + 1) && bad++ == 0)
				{
					snprintf(first, sizeof first, " (first: round %d, allocation %d overwritten at byte %zu)", round, i, k);
					break;
				}
	}
	ki_arena_reset(&a);
	for (int b = 0; b < nblocks; b++)
		if (blocks[b].live && bad++ == 0)
			snprintf(first, sizeof first, " (block %d not given back by reset)", b);
	if (bad)
		printf("# %d arena faults%s\n", bad, first);
	check(bad == 0, "arena: every allocation 16-aligned, inside its block, apart from the others, after large and small ones and a rewind; reset gives every block back");
}

static const char *
num(double d)
{
	static char buf[32];

	ki_format_number(d, buf);
	return buf;
}

/* Is s[0..n) well-formed UTF-8?  The Unicode Standard's table 3-7 (Well-Formed UTF-8 Byte
 * Sequences), row by row: the first byte's range, then each following byte's. */
static bool
utf8_table_3_7(const unsigned char *s, int n)
{
	static const unsigned char rows[][8] = {
		/* lo, hi of byte 1, 2, 3, 4 (0, 0: no such byte) */
		{0x00, 0x7F}, {0xC2, 0xDF, 0x80, 0xBF}, {0xE0, 0xE0, 0xA0, 0xBF, 0x80, 0xBF},
		{0xE1, 0xEC, 0x80, 0xBF, 0x80, 0xBF}, {0xED, 0xED, 0x80, 0x9F, 0x80, 0xBF},
		{0xEE, 0xEF, 0x80, 0xBF, 0x80, 0xBF}, {0xF0, 0xF0, 0x90, 0xBF, 0x80, 0xBF, 0x80, 0xBF},
		{0xF1, 0xF3, 0x80, 0xBF, 0x80, 0xBF, 0x80, 0xBF}, {0xF4, 0xF4, 0x80, 0x8F, 0x80, 0xBF, 0x80, 0xBF},
	};
	int			i = 0;

	while (i < n)
	{
		int			r,
					len = 0;

		for (r = 0; r < (int) (sizeof(rows) / sizeof(rows[0])) && len == 0; r++)
		{
			int			k = 1;

			if (s[i] < rows[r][0] || s[i] > rows[r][1])
				continue;
			while (k < 4 && rows[r][2 * k + 1] != 0)
				k++;
			len = k;
			for (k = 1; k < len; k++)
				if (i + k >= n || s[i + k] < rows[r][2 * k] || s[i + k] > rows[r][2 * k + 1])
					return false;
		}
		if (len == 0)
			return false;
		i += len;
	}
	return true;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t
xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random double of the kinds a number writer meets (see number_checks). */
static double
random_double(int kind)
{
	uint64_t	bits = xorshift();
	double		d;
	char		t[64];

	switch (kind % 6)
	{
		case 0:					/* any bit pattern */
			memcpy(&d, &bits, sizeof d);
			break;
		case 1:					/* a short decimal: up to 15 digits */
			d = (double) (bits % 1000000000000000ULL) / pow(10, (double) (xorshift() % 30));
			break;
		case 2:					/* a full mantissa between 1e-21 and 2^53 (16 or 17 digits) */
			d = ldexp((double) (bits >> 11), (int) (xorshift() % 125) - 123);
			break;
		case 3:					/* a short decimal's neighbour */
			d = nextafter((double) (bits % 100000) / pow(10, (double) (xorshift() % 12)),
						  (xorshift() & 1) ? INFINITY : 0);
			break;
		case 4:					/* a decimal rounded to 1..19 digits */
			snprintf(t, sizeof t, "%.*e", (int) (xorshift() % 19), ldexp((double) (bits >> 11), (int) (xorshift() % 100) - 103));
			d = strtod(t, NULL);
			break;
		default:				/* a power of two (its lower gap is half the upper) */
			d = ldexp(1.0, (int) (bits % 2098) - 1074);
			break;
	}
	if (!isfinite(d))
		d = 1.0;
	return (xorshift() & 1) ? -d : d;
}

/* Random number text by the grammar: [-] int [. frac] [e exp], 1-20 and 0-22 digits. */
static void
random_number_text(char *t)
{
	int			k = 0,
				j,
				ni = xorshift() % 3 == 0 ? 0 : 1 + (int) (xorshift() % 20),
				nf = xorshift() % 2 ? 0 : 1 + (int) (xorshift() % 22);

	if (xorshift() & 1)
		t[k++] = '-';
	if (ni == 0)
		t[k++] = '0';
	for (j = 0; j < ni; j++)
		t[k++] = (char) ('0' + (j == 0 ? 1 + xorshift() % 9 : xorshift() % 10));
	if (nf > 0 || ni == 0)
	{
		int			zeros = xorshift() % 3 == 0 ? (int) (xorshift() % 10) : 0;

		t[k++] = '.';
		if (nf == 0)
			nf = 1;
		for (j = 0; j < nf; j++)
			t[k++] = (char) ('0' + (j < zeros ? 0 : xorshift() % 10));
	}
	if (xorshift() % 3 == 0)
		k += sprintf(t + k, "%s%d", (xorshift() & 1) ? "e" : "E", (int) (xorshift() % 70) - 35);
	t[k] = '\0';
}

/*
 * Does ki_parse read t otherwise than strtod (a refusal counts only where
 * strtod gives a finite double)?  Counts it in *count and describes the
 * first in first.
 */
static void
read_check(ki_arena *a, const char *t, long *count, char *first, size_t first_len)
{
	ki_errors	errs;
	ki_value   *v;
	double		r;

	ki_errors_init(&errs, a);
	v = ki_parse(a, t, strlen(t), &errs);
	r = strtod(t, NULL);
	if ((v == NULL ? isfinite(r) : memcmp(&v->u.num, &r, sizeof r) != 0) && (*count)++ == 0)
		snprintf(first, first_len, "%s read as %.17g, not %.17g", t, v ? v->u.num : NAN, r);
	ki_arena_rewind(a);
}

/*
 * The number writer's and reader's fast paths (fast_digits, exact_digits,
 * fast_decimal, exact_decimal) against the plain ones: the writer against
 * printf and strtod alone (ki_format_number_slow), the reader against
 * strtod, on n random values, then on the decimals nearest the midpoints
 * below powers of two (where a rounding carries into the exponent).
 */
static void
number_checks(ki_arena *a, long n)
{
	long		i,
				wrote = 0,
				read = 0,
				carried = 0;
	char		first[160] = "";

	for (i = 0; i < n; i++)
	{
		double		d = random_double((int) i);
		char		fast[40],
					slow[40],
					t[96];

		ki_format_number(d, fast);
		ki_format_number_slow(d, slow);
		if (strcmp(fast, slow) != 0 && wrote++ == 0)
			snprintf(first, sizeof first, "%.17g written %s, not %s", d, fast, slow);
		random_number_text(t);
		read_check(a, t, &read, first, sizeof first);
	}
	printf("# numbers: %ld random doubles written differently, %ld random texts read differently%s%s\n",
		   wrote, read, first[0] ? "; the first: " : "", first);
	check(wrote == 0, "number writer: the fast paths write what printf and strtod alone write (random doubles)");
	check(read == 0, "number reader: the fast paths read what strtod reads (random number texts)");

	first[0] = '\0';
	for (i = -60; i <= 62; i++)
	{
		int			p;

		for (p = 17; p <= 19; p++)
		{
			char		t[64];

			/* the midpoint between 2^i and the double below it, to p digits (long double holds it) */
			snprintf(t, sizeof t, "%.*Le", p - 1, ldexpl(1.0L, (int) i) * (1 - ldexpl(1.0L, -54)));
			read_check(a, t, &carried, first, sizeof first);
		}
	}
	for (i = 0; i < 20000; i++)
	{
		/* the midpoint between a random double and the next, to 17..19 digits */
		double		d = ldexp((double) (xorshift() >> 11), (int) (xorshift() % 100) - 110);
		long double mid = ((long double) d + (long double) nextafter(d, INFINITY)) / 2;
		char		t[64];

		snprintf(t, sizeof t, "%.*Le", 16 + (int) (i % 3), mid);
		read_check(a, t, &carried, first, sizeof first);
	}
	if (carried)
		printf("# first: %s\n", first);
	check(carried == 0, "number reader: decimals at the midpoints below 2^-60 .. 2^62 and between random doubles read as strtod reads them");
}

/*
 * The schemas' character-class patterns against POSIX regular expressions
 * (the C locale, so [a-z] is ASCII) on random strings of the bytes they
 * judge, their neighbours ('/' ':' '`' '{' 'A' 'g' '+' ...) and a high byte.
 */
static void
pattern_checks(void)
{
	static const char *const sources[] = {
		"^[a-z][a-z0-9_]*$", "^[a-z0-9][a-z0-9._-]*$", "^[a-z0-9][a-z0-9-]*$",
		"^sha256:[0-9a-f]{64}$", "^[0-9a-f]{40}$"
	};
	static const char alphabet[] = "0189afgzAF_.-/:`{@+ \x80";
	int			wrong = 0,
				tried = 0,
				matched = 0,
				digests = 0;
	size_t		k;
	char		first[200] = "";

	for (k = 0; k < sizeof(sources) / sizeof(sources[0]); k++)
	{
		sch_pattern_fn fn = ki_pattern_lookup(sources[k], strlen(sources[k]));
		regex_t		re;
		int			i;

		if (fn == NULL || regcomp(&re, sources[k], REG_EXTENDED | REG_NOSUB) != 0)
		{
			wrong++;
			continue;
		}
		for (i = 0; i < 40000; i++)
		{
			char		t[80];
			size_t		n = 0,
						len,
						j;
			bool		ours,
						theirs;

			/* digests: mostly the prefix and 64 characters, sometimes one more or less */
			if (k == 3 && i % 4 != 0)
			{
				memcpy(t, "sha256:", 7);
				n = 7;
				len = 71 + (i % 16 == 1) - (i % 16 == 2);
			}
			else if (k == 4 && i % 4 != 0)
				len = 40 + (i % 16 == 1) - (i % 16 == 2);
			else
				len = xorshift() % 12;
			for (j = n; j < len; j++)
				/* mostly the classes' own bytes, so whole strings match often */
				if (k >= 3)
					t[j] = (xorshift() % 128) ? "0123456789abcdef"[xorshift() % 16] :
						alphabet[xorshift() % (sizeof(alphabet) - 1)];
				else
					t[j] = alphabet[xorshift() % ((xorshift() % 8) ? 8 : sizeof(alphabet) - 1)];
			if (k == 3 && i % 16 == 3)
				t[xorshift() % 7] = '_';	/* a broken prefix */
			t[len] = '\0';
			ours = fn(t, len);
			theirs = regexec(&re, t, 0, NULL, 0) == 0;
			tried++;
			matched += theirs;
			digests += theirs && k >= 3;
			if (ours != theirs && wrong++ == 0)
				snprintf(first, sizeof first, "%s on \"%s\": ours %d", sources[k], t, ours);
		}
		regfree(&re);
	}
	printf("# patterns: %d strings, %d matching (%d digests or commits), %d judged otherwise than regexec%s%s\n",
		   tried, matched, digests, wrong, first[0] ? "; the first: " : "", first);
	check(wrong == 0 && matched > tried / 10 && digests > tried / 20,
		  "patterns: token, name, slug, digest and commit judge random strings as POSIX regexec does");
}

int
main(int argc, char **argv)
{
	ki_arena	a;
	char		digest[KI_DIGEST_LEN + 1];
	unsigned char md[32];
	char		hex[65];
	int			i;

	if (argc == 3 && strcmp(argv[1], "--numbers") == 0)
	{
		long		n = atol(argv[2]);

		for (i = 0; i < n; i++)
		{
			uint64_t	bits = xorshift();
			double		d;

			/* a mix: random bit patterns, short decimals, integers, powers of two, full mantissas */
			switch (i % 5)
			{
				case 4:
					d = ldexp((double) (bits >> 11), (int) (xorshift() % 125) - 123);
					break;
				case 0:
					memcpy(&d, &bits, sizeof d);
					break;
				case 1:
					d = (double) (int64_t) (bits % 2000000001) / pow(10, (double) (bits % 23));
					break;
				case 2:
					d = (double) (bits >> (bits % 64));
					break;
				default:
					d = ldexp(1.0, (int) (bits % 2098) - 1074);
					break;
			}
			if (!isfinite(d))
				d = 1.0;
			printf("%.17g %s\n", d, num(d));
		}
		return 0;
	}

	ki_arena_init_malloc(&a);

	/* numbers */
	number_checks(&a, 300000);
	bounded_checks(&a);
	arena_checks();
	pattern_checks();
	check(strcmp(num(-0.0), "0") == 0, "-0 is written 0");
	check(strcmp(num(5e-324), "5e-324") == 0, "5e-324, the smallest subnormal");
	check(strcmp(num(1e21), "1e+21") == 0, "1e21 in exponent form");
	check(strcmp(num(1e-7), "1e-7") == 0, "1e-7 in exponent form");
	check(strcmp(num(1e-6), "0.000001") == 0, "1e-6 in plain form");
	check(strcmp(num(9007199254740992.0), "9007199254740992") == 0, "2^53 as an integer");
	check(strcmp(canon(&a, "9007199254740993"), "9007199254740992") == 0, "2^53+1 reads as 2^53");
	check(strcmp(canon(&a, "[1.0,1e0,1]"), "[1,1,1]") == 0, "1.0, 1e0 and 1 are one number");
	check(strcmp(num(0.1), "0.1") == 0, "0.1");
	check(strcmp(canon(&a, "0.10000000000000001"), "0.1") == 0, "0.10000000000000001 is 0.1");
	check(strcmp(num(123456789012345680000.0), "123456789012345680000") == 0, "large integral double below 1e21");
	check(strcmp(num(999999999999999900000.0), "999999999999999900000") == 0, "largest doubles below 1e21 stay plain");
	check(strcmp(num(1.0048658277929109e-05), "0.000010048658277929109") == 0, "the catalog's 1.0048658277929109e-05");
	check(strcmp(num(-1.5e300), "-1.5e+300") == 0, "negative exponent form");
	check(strcmp(num(1.7976931348623157e308), "1.7976931348623157e+308") == 0, "largest double");
	check(strcmp(num(2.2250738585072014e-308), "2.2250738585072014e-308") == 0, "smallest normal");
	check(strcmp(num(4.35), "4.35") == 0, "4.35");
	check(strcmp(num(0.3), "0.3") == 0 && strcmp(num(0.1 + 0.2), "0.30000000000000004") == 0, "0.1+0.2");

	/* strings and order */
	check(strcmp(canon(&a, "\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\\\/\\u007f\""),
				 "\"\\u0000\\u001f\\b\\t\\n\\f\\r\\\"\\\\/\x7f\"") == 0, "string escapes as JSON.stringify");
	check(strcmp(canon(&a, "\"\\u00e9\\u20ac\\ud83d\\ude00\""), "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"") == 0,
		  "non-ASCII written as itself");
	check(ki_utf16_cmp("\xf0\x90\x80\x80", 4, "\xee\x80\x80", 3) < 0, "U+10000 sorts before U+E000 (UTF-16)");
	check(ki_utf16_cmp("\xef\xbf\xbf", 3, "\xf0\x9f\x98\x80", 4) > 0, "U+FFFF sorts after U+1F600 (UTF-16)");
	check(ki_utf16_cmp("\xed\x9f\xbf", 3, "\xf0\x90\x80\x80", 4) < 0, "U+D7FF sorts before U+10000");
	check(strcmp(canon(&a, "{\"b\":1,\"a\":2,\"aa\":3,\"\":4}"), "{\"\":4,\"a\":2,\"aa\":3,\"b\":1}") == 0,
		  "members sorted, shorter is not first");

	/* parser strictness */
	check(strcmp(canon(&a, "{\"a\":1,\"a\":2}"), "duplicate_member") == 0, "duplicate member rejected");
	/* the parser compares pairs up to 16 members and sorts above: both sides, each position */
	{
		int			bad = 0;

		for (int n = 2; n <= 40; n++)
			for (int r = 0; r < n - 1; r++)
			{
				char		doc[1024];
				int			len = 0;

				for (int i = 0; i < n; i++)
					len += snprintf(doc + len, sizeof(doc) - (size_t) len, "%s\"m%d\":%d", i ? "," : "{",
									i == n - 1 ? r : i, i);
				snprintf(doc + len, sizeof(doc) - (size_t) len, "}");
				bad += strcmp(canon(&a, doc), "duplicate_member") != 0;
			}
		check(bad == 0, "a repeated member name is rejected in objects of 2 to 40 members (both sides of 16)");
	}
	check(strcmp(canon(&a, "[1,]"), "syntax") == 0, "trailing comma rejected");
	check(strcmp(canon(&a, "01"), "syntax") == 0, "leading zero rejected");
	check(strcmp(canon(&a, "\"\xc0\xaf\""), "utf8") == 0, "overlong UTF-8 rejected");
	check(strcmp(canon(&a, "\"\xed\xa0\x80\""), "utf8") == 0, "encoded surrogate rejected");
	check(strcmp(canon(&a, "\"\\udc00\""), "utf8") == 0, "lone low surrogate rejected");
	check(strcmp(canon(&a, "\"\\u12g4\""), "syntax") == 0 && strcmp(canon(&a, "\"\\u00E9\\uFFFF\""), "\"\xc3\xa9\xef\xbf\xbf\"") == 0 &&
		  strcmp(canon(&a, "\"\\ud83d\\ude0g\""), "utf8") == 0, "a \\u escape's digits: upper case read, a non-hex digit refused, in a high surrogate's partner too");
	check(strcmp(canon(&a, "1e400"), "number_range") == 0, "overflow to infinity rejected");
	check(strcmp(canon(&a, "1e-400"), "0") == 0, "underflow reads as 0, as in JavaScript");
	check(strcmp(canon(&a, "\"a\tb\""), "syntax") == 0, "raw control character rejected");

	/* sha256: OpenSSL and the portable fallback agree */
	ki_sha256_hex("abc", 3, digest);
	check(strcmp(digest, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
		  "sha256(abc)");
	for (i = 0; i < 200; i++)
	{
		char		buf[200];
		int			j;

		for (j = 0; j < i; j++)
			buf[j] = (char) (xorshift() & 0xff);
		ki_sha256_hex(buf, (size_t) i, digest);
		ki_sha256_portable(buf, (size_t) i, md);
		for (j = 0; j < 32; j++)
			sprintf(hex + 2 * j, "%02x", md[j]);
		if (strcmp(digest + 7, hex) != 0)
			break;
	}
	check(i == 200, "portable sha256 equals OpenSSL for lengths 0..199");

	/* the pinned vector */
	{
		const char *m = "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"SoftwareProject\","
			"\"metadata\":{\"name\":\"v\"},\"spec\":{\"repository\":\"https://example.invalid/vector/project\","
			"\"name\":\"Vector Project\"}}";
		ki_errors	errs;

		ki_errors_init(&errs, &a);
		check(ki_digest_text(&a, m, strlen(m), digest, &errs) &&
			  strcmp(digest, "sha256:bea60af06f12216679b113d6624c5293d59bef2104ccc27cd33c992d124e039d") == 0,
			  "SoftwareProject vector digest");
	}

	/* the manifest writer (json_write.c) shared by kbench and the Liger mapping */
	{
		ki_jw		w;
		const char *s;

		ki_jw_init(&w, &a);
		ki_jw_manifest(&w, "SoftwareProject", "v", "q\"b\\s\x01 \xc2\xb7");
		ki_jw_spec(&w);
		ki_jw_kstr(&w, "repository", "https://example.invalid/vector/project");
		ki_jw_knum(&w, "n", 1e-7);
		ki_jw_key(&w, "a");
		ki_jw_arr(&w);
		ki_jw_num(&w, 0.1);
		ki_jw_int(&w, INT64_MIN);
		ki_jw_num(&w, 1.0 / 0.0);
		ki_jw_bool(&w, true);
		ki_jw_json(&w, "{\"x\":[]}");
		ki_jw_obj(&w);
		ki_jw_end_obj(&w);
		ki_jw_end_arr(&w);
		ki_jw_end_obj(&w);
		ki_jw_end_obj(&w);
		s = ki_jw_text(&w);
		check(s && strcmp(s, "{\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"kind\":\"SoftwareProject\","
						  "\"metadata\":{\"name\":\"v\",\"title\":\"q\\\"b\\\\s\\u0001 \xc2\xb7\"},"
						  "\"spec\":{\"repository\":\"https://example.invalid/vector/project\",\"n\":1e-7,"
						  "\"a\":[0.1,-9223372036854775808,null,true,{\"x\":[]},{}]}}") == 0,
			  "ki_jw: envelope, commas, escapes, canonical numbers, non-finite as null, spliced JSON");
	}

	/* cost formulas (cost_expr.c): PostgreSQL's precedence and float64 arithmetic, refusals with reasons */
	{
		const char *const names[] = {"rows", "hidden", "dtype_bytes"};
		const double values[] = {7, 5, 2};
		double		v = 0;
		char		err[200] = "";

		check(ki_cost_eval("dtype_bytes * (2 * rows * hidden + 2 * hidden) + 8 * rows", names, values, 3, &v, err, sizeof err) &&
			  v == 2 * (2 * 7 * 5 + 2 * 5) + 8 * 7, "cost formula: layer_norm forward's bytes");
		check(ki_cost_eval("3 * hidden / 2 - -rows + least(rows, hidden) * greatest(1, 2.5)", names, values, 3, &v, err, sizeof err) &&
			  v == 3.0 * 5 / 2 + 7 + 5 * 2.5, "cost formula: left to right, unary minus, real division, least, greatest");
		check(ki_cost_eval("rows // 2 + hidden // 3 * 2", names, values, 3, &v, err, sizeof err) &&
			  v == 3 + 2, "cost formula: // is floor division (derived axes: channels // channels_per_group)");
		check(!ki_cost_eval("rows::text", names, values, 3, &v, err, sizeof err) &&
			  strstr(err, "end expected") != NULL, "cost formula: a cast is refused");
		check(!ki_cost_eval("rows * vocab", names, values, 3, &v, err, sizeof err) &&
			  strstr(err, "unknown name \"vocab\"") != NULL, "cost formula: an unknown axis is refused by name");
		check(!ki_cost_eval("least(rows)", names, values, 3, &v, err, sizeof err) && !ki_cost_eval("(rows", names, values, 3, &v, NULL, 0) &&
			  !ki_cost_eval("", names, values, 3, &v, NULL, 0), "cost formula: least with one argument, an open parenthesis, nothing: refused");
	}
	{
		/* numbers against RFC 8259's grammar, by hand: number = [ "-" ] int [ frac ] [ exp ],
		 * frac = "." 1*DIGIT, exp = ("e" / "E") [ "-" / "+" ] 1*DIGIT, int = "0" / (1-9 *DIGIT);
		 * each alone and inside an array (where a character follows it) */
		static const char *const good[] = {"0", "-0", "7", "1.5", "0.25", "1e5", "1E5", "1e+5", "1E-5", "-0.0e0", "10.01e-01"};
		static const char *const bad[] = {"1.", "1.e1", "1e", "1E", "1e+", "1e-", "1.5e", "-", "+1", ".5", "-.5", "1x", "00", "-01"};
		int			wrong = 0;
		char		json[40];
		const char *first = "";

		for (int k = 0; k < (int) (sizeof(good) / sizeof(good[0])) + (int) (sizeof(bad) / sizeof(bad[0])); k++)
		{
			bool		isgood = k < (int) (sizeof(good) / sizeof(good[0]));
			const char *t = isgood ? good[k] : bad[k - (int) (sizeof(good) / sizeof(good[0]))];

			for (int inarray = 0; inarray < 2; inarray++)
			{
				const char *got;

				snprintf(json, sizeof json, inarray ? "[%s]" : "%s", t);
				got = canon(&a, json);
				if ((strcmp(got, "syntax") != 0) != isgood && wrong++ == 0)
					first = t;
			}
		}
		printf("# numbers: %d of the grammar's cases judged wrongly%s%s\n", wrong, wrong ? ", the first: " : "", first);
		check(wrong == 0, "numbers: RFC 8259's grammar by hand (a fraction and an exponent need a digit; no leading zero, plus or point)");
		/* eight NUL characters in a row, the writer's word at a time path: each written \u0000 */
		check(strcmp(canon(&a, "[\"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\",\"ab\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000cd\"]"),
					 "[\"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\",\"ab\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000cd\"]") == 0,
			  "canonical strings: eight NUL characters in a row are each escaped \\u0000 (as JSON.stringify)");
	}
	{
		/* UTF-8 in strings against the table: every byte from 0x80 up as the first of four, each
		 * of the other three from the bytes at the table's bounds (and ASCII, and lead bytes, so
		 * that sequences are cut short): the parser accepts exactly the well-formed strings */
		static const unsigned char next[] = {0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
		0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
		const int	nn = (int) sizeof(next);
		long		tried = 0,
					wrong = 0;
		char		first_wrong[64] = "";

		for (int b0 = 0x80; b0 <= 0xFF; b0++)
			for (int i1 = 0; i1 < nn; i1++)
				for (int i2 = 0; i2 < nn; i2++)
					for (int i3 = 0; i3 < nn; i3++)
					{
						unsigned char u[4] = {(unsigned char) b0, next[i1], next[i2], next[i3]};
						char		json[8] = {'"', (char) u[0], (char) u[1], (char) u[2], (char) u[3], '"', 0};
						const char *got = canon(&a, json);
						bool		accepted = strcmp(got, "utf8") != 0;

						tried++;
						if (accepted != utf8_table_3_7(u, 4) && wrong++ == 0)
							snprintf(first_wrong, sizeof first_wrong, "%02X %02X %02X %02X %s", u[0], u[1], u[2], u[3],
									 accepted ? "accepted" : "rejected");
						if (tried % 4096 == 0)
							ki_arena_reset(&a);
					}
		printf("# UTF-8: %ld strings tried, %ld judged otherwise than table 3-7%s%s\n", tried, wrong,
			   wrong ? ", the first: " : "", first_wrong);
		check(wrong == 0, "UTF-8: strings of four bytes from 0x80 up accepted exactly when table 3-7 says they are well-formed");
	}
	{
		/* the path an error names: a plain key after a dot, any other in ["..."] with '"' and '\\'
		 * escaped, a control character as \\u00XX and every other byte (UTF-8 too) as it is */
		ki_buf		b;

		ki_buf_init(&b, &a, 16);
		ki_path_key(&b, "spec", 4);
		ki_path_key(&b, "x_1-$", 5);
		ki_path_key(&b, "a b\"\\\x01\x1f\xc3\xa9~", 10);
		ki_path_key(&b, "", 0);
		check(strcmp(ki_buf_cstr(&b), "spec.x_1-$[\"a b\\\"\\\\\\u0001\\u001f\xc3\xa9~\"][\"\"]") == 0,
			  "error paths: a plain key after a dot, any other bracketed, quoted and escaped (a control character as \\u00XX, other bytes kept)");
	}
	{
		/* a rendered path mixes keys and indexes: spec.tensors[12].shape[0] (an index is never
		 * taken for a key, nor a key for an index) */
		ki_path		root = {NULL, "spec", 4, 0},
					tensors = {&root, "tensors", 7, 0},
					t12 = {&tensors, NULL, 0, 12},
					shape = {&t12, "shape", 5, 0},
					s0 = {&shape, NULL, 0, 0};

		check(strcmp(ki_path_render(&a, &s0), "spec.tensors[12].shape[0]") == 0 &&
			  strcmp(ki_path_render(&a, NULL), "") == 0,
			  "error paths: spec.tensors[12].shape[0] rendered from its keys and indexes; the root is \"\"");
	}
	ki_arena_reset(&a);
	printf("# %d tests, %d failed\n", n_test, n_fail);
	return n_fail ? 1 : 0;
}
