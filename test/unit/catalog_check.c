/*
 * catalog_check.c: every manifest of a kernelindex.dev catalog export
 * digests to the value the catalog stored beside it.
 *
 * Reads the JSON-lines export (decompressed) on stdin.  For each row of a
 * table that carries a manifest it validates, normalizes and digests the
 * manifest and compares with the stored digest column; benchmark_runs rows
 * hold a composite {run, protocol, environment} whose run digest is compared
 * with runDigest and whose protocol and environment must digest to what the
 * run names.  Prints TAP lines and a count of manifests checked.
 */
#include "ki_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool
str_eq(const ki_value *v, const char *s)
{
	return v && v->type == KI_STRING && v->u.str.len == strlen(s) &&
		memcmp(v->u.str.ptr, s, v->u.str.len) == 0;
}

int
main(void)
{
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		len;
	long		lineno = 0,
				manifests = 0,
				mismatches = 0,
				invalid = 0,
				nonint = 0;
	ki_arena	arena;
	struct timespec t0,
				t1;

	ki_arena_init_malloc(&arena);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((len = getline(&line, &cap, stdin)) > 0)
	{
		ki_errors	errs;
		ki_value   *doc,
				   *row,
				   *manifest;
		const ki_value *table;
		size_t		t;

		lineno++;
		ki_errors_init(&errs, &arena);
		doc = ki_parse(&arena, line, (size_t) len, &errs);
		if (doc == NULL)
		{
			fprintf(stderr, "line %ld: %s: %s\n", lineno, errs.items[0].path, errs.items[0].message);
			invalid++;
			ki_arena_reset(&arena);
			continue;
		}
		table = ki_get(doc, "table");
		row = ki_get(doc, "row");
		manifest = ki_get(row, "manifest");
		for (t = 0; t < ki_export_table_count; t++)
		{
			const ki_value *stored;
			char		digest[KI_DIGEST_LEN + 1];

			/* the tables are the format's (core/export_format.c); checked where a digest is stored */
			if (!str_eq(table, ki_export_tables[t].table) || manifest == NULL || ki_export_tables[t].column == NULL)
				continue;
			if (strstr(line, ".") && strstr(line, "e-"))
				nonint++;
			stored = ki_get(row, ki_export_tables[t].column);
			if (ki_export_tables[t].composite)
			{
				ki_composite c;

				manifests += 3;
				if (!ki_composite_validate(&arena, manifest, &c, &errs))
				{
					fprintf(stderr, "line %ld: %s: %s: %s\n", lineno, errs.items[0].path,
							errs.items[0].rule, errs.items[0].message);
					invalid++;
					break;
				}
				if (!str_eq(stored, c.run_digest))
				{
					fprintf(stderr, "line %ld: run digest %s, stored %.*s\n", lineno, c.run_digest,
							stored ? (int) stored->u.str.len : 0, stored ? stored->u.str.ptr : "");
					mismatches++;
				}
			}
			else
			{
				ki_kind		kind;

				manifests++;
				if (ki_manifest_normalize(&arena, manifest, &kind, &errs) == NULL)
				{
					fprintf(stderr, "line %ld: %s: %s: %s\n", lineno, errs.items[0].path,
							errs.items[0].rule, errs.items[0].message);
					invalid++;
					break;
				}
				ki_identity_digest(&arena, manifest, digest);
				if (!str_eq(stored, digest))
				{
					fprintf(stderr, "line %ld: %s digest %s, stored %.*s\n", lineno,
							ki_export_tables[t].table, digest,
							stored ? (int) stored->u.str.len : 0, stored ? stored->u.str.ptr : "");
					mismatches++;
				}
			}
		}
		ki_arena_reset(&arena);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	free(line);
	printf("# %ld lines, %ld manifests checked in %.0f ms\n", lineno, manifests,
		   (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	printf("%s - catalog export: every manifest valid (%ld invalid)\n", invalid ? "not ok" : "ok", invalid);
	printf("%s - catalog export: %ld manifests digest to their stored values (%ld mismatches)\n",
		   mismatches || manifests == 0 ? "not ok" : "ok", manifests, mismatches);
	(void) nonint;
	return invalid || mismatches ? 1 : 0;
}
