/*
 * fuzz_identity.c: libFuzzer target for the identity core.
 *
 * Any bytes go through the strict parser; a parsed document is written
 * canonically, parsed again and written again, which must give the same
 * bytes (RFC 8785 output is a fixed point), then validated and normalized as
 * a manifest and as a composite run document, and digested when valid.
 * Built with ASan and UBSan by test/fuzz/run.sh.
 */
#include "ki_json.h"

#include <stdlib.h>
#include <string.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc,
			   *again;
	ki_buf		c1,
				c2;
	ki_kind		kind;
	ki_composite comp;
	char		digest[KI_DIGEST_LEN + 1];

	ki_arena_init_malloc(&a);
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

	ki_errors_init(&errs, &a);
	if (ki_manifest_normalize(&a, doc, &kind, &errs) != NULL)
		ki_identity_digest(&a, doc, digest);
	else if (errs.count == 0)
		abort();
	ki_errors_init(&errs, &a);
	if (!ki_composite_validate(&a, again, &comp, &errs) && errs.count == 0)
		abort();
	ki_arena_reset(&a);
	return 0;
}
