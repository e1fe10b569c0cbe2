/*
 * fuzz_identity.c: libFuzzer target for the identity core.
 *
 * Any bytes go through the strict parser.  Properties checked (abort() on a
 * violation, which libFuzzer reports as a crash):
 *  1. a failure says why (an error is recorded);
 *  2. the canonical form parses and is a fixed point (RFC 8785 output);
 *  3. reordering: the same document written with its members in another
 *     order and with whitespace between tokens parses to the same canonical
 *     bytes, is valid exactly when the original is, and has the same digest;
 *  4. duplicates: the document with one member of one object repeated (at a
 *     data-chosen object and member) is always rejected as a duplicate, and
 *     so is an object of 0..63 distinct members plus one repeated name, both
 *     sides of the small/large object split of the parser;
 *  5. numbers: every number of the document, and a double taken from the
 *     input's bytes, written canonically and read back is the same double
 *     (-0 reads back as 0, which RFC 8785 writes for it);
 * then the document is validated and normalized as a manifest and as a
 * composite run document, and digested when valid.
 * Built with ASan and UBSan by test/fuzz/run.sh; run in CI by
 * test/suites/fuzz.sh for a bounded time.
 */
#include "ki_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A small deterministic stream of choices drawn from the input. */
typedef struct pick
{
	const uint8_t *data;
	size_t		size,
				i;
} pick;

static unsigned
pick_next(pick *p)
{
	unsigned	v;

	if (p->size == 0)
		return 0;
	v = p->data[p->i % p->size] ^ (unsigned) (p->i * 131u);
	p->i++;
	return v;
}

static const char *const blanks[] = {"", " ", "\n", "\t", "  \r\n "};

static void
put_ws(ki_buf *b, pick *p)
{
	ki_buf_puts(b, blanks[pick_next(p) % 5]);
}

/*
 * Write v as JSON with each object's members rotated by a chosen amount and
 * whitespace between tokens.  dup_at >= 0: the dup_at-th object met (in
 * writing order, empty ones not counted) gets one of its members written
 * twice; *objects counts the non-empty objects written.
 */
static void
write_shuffled(const ki_value *v, ki_buf *b, pick *p, long dup_at, long *objects)
{
	switch (v->type)
	{
		case KI_ARRAY:
			ki_buf_putc(b, '[');
			for (size_t i = 0; i < v->u.arr.count; i++)
			{
				if (i)
					ki_buf_putc(b, ',');
				put_ws(b, p);
				write_shuffled(v->u.arr.items[i], b, p, dup_at, objects);
				put_ws(b, p);
			}
			ki_buf_putc(b, ']');
			break;
		case KI_OBJECT:
			{
				size_t		n = v->u.obj.count,
							rot = n ? pick_next(p) % n : 0,
							dup = n ? pick_next(p) % n : 0;
				bool		this_dup = n > 0 && *objects == dup_at;

				if (n > 0)
					(*objects)++;
				ki_buf_putc(b, '{');
				for (size_t k = 0; k < n + (this_dup ? 1 : 0); k++)
				{
					const ki_member *m = &v->u.obj.members[k < n ? (k + rot) % n : dup];
					ki_value	key = {.type = KI_STRING};

					key.u.str = m->key;
					if (k)
						ki_buf_putc(b, ',');
					put_ws(b, p);
					ki_canonical(&key, b);
					put_ws(b, p);
					ki_buf_putc(b, ':');
					put_ws(b, p);
					write_shuffled(m->value, b, p, dup_at, objects);
				}
				put_ws(b, p);
				ki_buf_putc(b, '}');
				break;
			}
		default:
			ki_canonical(v, b);
			break;
	}
}

/* Property 5 on one double. */
static void
number_round_trip(ki_arena *a, double d)
{
	char		text[40];
	int			len;
	ki_errors	errs;
	ki_value   *back;

	if (!isfinite(d))
		return;
	len = ki_format_number(d, text);
	ki_errors_init(&errs, a);
	back = ki_parse(a, text, (size_t) len, &errs);
	if (back == NULL || back->type != KI_NUMBER)
		abort();				/* a written number must parse */
	if (d == 0 ? back->u.num != 0 || signbit(back->u.num) : memcmp(&back->u.num, &d, sizeof d) != 0)
		abort();				/* and be the same double */
}

static void
numbers_of(ki_arena *a, const ki_value *v)
{
	if (v->type == KI_NUMBER)
		number_round_trip(a, v->u.num);
	else if (v->type == KI_ARRAY)
		for (size_t i = 0; i < v->u.arr.count; i++)
			numbers_of(a, v->u.arr.items[i]);
	else if (v->type == KI_OBJECT)
		for (size_t i = 0; i < v->u.obj.count; i++)
			numbers_of(a, v->u.obj.members[i].value);
}

/* Property 4 on a made-up object: n distinct names, then name r repeated. */
static void
synthetic_duplicate(ki_arena *a, unsigned n, unsigned r)
{
	ki_buf		b;
	ki_errors	errs;

	ki_buf_init(&b, a, 64);
	ki_buf_putc(&b, '{');
	for (unsigned i = 0; i <= n; i++)
	{
		char		m[32];

		snprintf(m, sizeof m, "%s\"k%u\":%u", i ? "," : "", i < n ? i : r, i);
		ki_buf_puts(&b, m);
	}
	ki_buf_putc(&b, '}');
	ki_errors_init(&errs, a);
	if (ki_parse(a, b.data, b.len, &errs) != NULL || errs.status != KI_ERR_DUPLICATE)
		abort();				/* a repeated name is always rejected as a duplicate */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc,
			   *again,
			   *alt;
	ki_buf		c1,
				c2,
				s,
				c3;
	ki_kind		kind,
				kind2;
	ki_composite comp;
	char		digest[KI_DIGEST_LEN + 1],
				digest2[KI_DIGEST_LEN + 1];
	pick		p = {data, size, 0};
	long		objects = 0;
	bool		valid,
				valid2;

	ki_arena_init_malloc(&a);

	/* 4 and 5 on values drawn from the bytes, whatever they parse to */
	if (size >= 2)
		synthetic_duplicate(&a, 1 + data[0] % 63, data[1] % (1 + data[0] % 63));
	if (size >= 8)
	{
		double		d;

		memcpy(&d, data + size - 8, sizeof d);
		number_round_trip(&a, d);
	}

	ki_errors_init(&errs, &a);
	doc = ki_parse(&a, (const char *) data, size, &errs);
	if (doc == NULL)
	{
		if (errs.count == 0)
			abort();			/* a failure must say why */
		ki_arena_reset(&a);
		return 0;
	}
	ki_buf_init(&c1, &a, 256);
	ki_canonical(doc, &c1);
	ki_errors_init(&errs, &a);
	again = ki_parse(&a, c1.data, c1.len, &errs);
	if (again == NULL)
		abort();				/* canonical output must parse */
	ki_buf_init(&c2, &a, 256);
	ki_canonical(again, &c2);
	if (c1.len != c2.len || memcmp(c1.data, c2.data, c1.len) != 0)
		abort();				/* and be a fixed point */
	numbers_of(&a, doc);

	/* 3: members in another order, whitespace between tokens */
	ki_buf_init(&s, &a, c1.len * 2 + 16);
	write_shuffled(doc, &s, &p, -1, &objects);
	ki_errors_init(&errs, &a);
	alt = ki_parse(&a, s.data, s.len, &errs);
	if (alt == NULL)
		abort();				/* the reordered document parses */
	ki_buf_init(&c3, &a, 256);
	ki_canonical(alt, &c3);
	if (c1.len != c3.len || memcmp(c1.data, c3.data, c1.len) != 0)
		abort();				/* to the same canonical bytes */

	/* 4: one member of one object written twice */
	if (objects > 0)
	{
		ki_buf		d;
		long		seen = 0;

		ki_buf_init(&d, &a, s.len + 64);
		write_shuffled(doc, &d, &p, (long) (pick_next(&p) % (unsigned) objects), &seen);
		ki_errors_init(&errs, &a);
		if (ki_parse(&a, d.data, d.len, &errs) != NULL || errs.status != KI_ERR_DUPLICATE)
			abort();			/* a repeated member is always rejected */
	}

	ki_errors_init(&errs, &a);
	valid = ki_manifest_normalize(&a, doc, &kind, &errs) != NULL;
	if (valid)
		ki_identity_digest(&a, doc, digest);
	else if (errs.count == 0)
		abort();
	ki_errors_init(&errs, &a);
	valid2 = ki_manifest_normalize(&a, alt, &kind2, &errs) != NULL;
	if (valid != valid2)
		abort();				/* validity does not depend on member order */
	if (valid)
	{
		ki_identity_digest(&a, alt, digest2);
		if (kind != kind2 || strcmp(digest, digest2) != 0)
			abort();			/* nor does the digest */
	}
	ki_errors_init(&errs, &a);
	if (!ki_composite_validate(&a, again, &comp, &errs) && errs.count == 0)
		abort();
	ki_arena_reset(&a);
	return 0;
}
