/*
 * liger_import.c: kbench_import_liger(csv text), Liger-Kernel's
 * all_benchmark_data.csv: each record mapped by src/liger/ (its operation,
 * workload, implementation and run, or a memory observation), then
 * ingested through the store (src/ingest.c) and the import's bookkeeping
 * (src/import.c); memory observations through src/memory.c.
 */
#include "kernelindex.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "import.h"

/* Import Liger-Kernel's benchmark CSV (the whole file as text). */
PG_FUNCTION_INFO_V1(kbench_import_liger);
Datum
kbench_import_liger(PG_FUNCTION_ARGS)
{
	text	   *csv;
	const char *source;
	import_state ist;
	import_counts *c = &ist.c;
	ki_arena	a;
	ki_liger_reader reader;
	const char *err = NULL;
	MemoryContext rowcxt,
				oldcxt;

	/* not STRICT (source may be NULL); kbench_import_liger_file(NULL) comes here too */
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("cannot import a null Liger-Kernel CSV"),
				 errdetail("The CSV text, or the file kbench_import_liger_file read, is null."),
				 errhint("Pass the text of all_benchmark_data.csv, or the path of a file the server can read.")));
	csv = PG_GETARG_TEXT_PP(0);
	source = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	ki_pg_arena_init(&a);
	if (!ki_liger_reader_init(&reader, &a, VARDATA_ANY(csv), VARSIZE_ANY_EXHDR(csv), &err))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("not a Liger-Kernel benchmark CSV: %s", err),
				 errhint("The header must name the columns of all_benchmark_data.csv: kernel_name, kernel_provider, "
						 "kernel_operation_mode, metric_name, metric_unit, x_name, x_label, x_value, y_value_50, "
						 "y_value_20, y_value_80, extra_benchmark_config_str, gpu_name, timestamp, liger_version.")));
	SPI_connect();
	ki_import_init(&ist, "liger", source);
	ist.memory = ki_memory_batch_begin();
	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "kbench liger row", 0, 512 * 1024, 8 * 1024 * 1024);
	for (;;)
	{
		ki_liger_row row;
		ki_liger_read_status st;
		ki_liger_result res;
		ki_arena   *ra = &ist.arena;
		int			p;

		st = ki_liger_reader_next(&reader, &row, &err);
		if (st == KI_LIGER_READ_END)
			break;
		if (st == KI_LIGER_READ_FATAL)
		{
			c->lines++;
			ki_import_reject(&ist, reader.csv.line, ki_import_clip(err), false);
			break;
		}
		c->lines++;
		if (st == KI_LIGER_READ_BAD_RECORD)
		{
			ki_import_reject(&ist, row.line, ki_import_clip(err), false);	/* the record's line, not the reader's */
			continue;
		}
		CHECK_FOR_INTERRUPTS();
		oldcxt = MemoryContextSwitchTo(rowcxt);
		ki_arena_rewind(ra);
		ki_liger_map(ra, &row, &res);
		if (res.outcome == KI_LIGER_SKIPPED)
		{
			if (strcmp(row.metric_name, "memory") == 0)
				c->memory.rejected++;
			ki_import_reject(&ist, row.line, ki_import_clip(res.reason), true);
		}
		else
		{
			/* dependencies first, so nothing is left unresolved */
			static const int order[KI_LIGER_NPARTS] = {
				KI_LIGER_OPERATION, KI_LIGER_WORKLOAD, KI_LIGER_IMPLEMENTATION,
				KI_LIGER_PROTOCOL, KI_LIGER_ENVIRONMENT, KI_LIGER_RUN
			};
			static const ki_kind kinds[KI_LIGER_NPARTS] = {
				KI_KIND_BENCHMARK_RUN, KI_KIND_BENCHMARK_PROTOCOL, KI_KIND_EXECUTION_ENVIRONMENT,
				KI_KIND_WORKLOAD_CASE, KI_KIND_IMPLEMENTATION_REVISION, KI_KIND_OPERATION_SPEC
			};

			for (p = 0; p < KI_LIGER_NPARTS; p++)
			{
				int			part = order[p];
				bool		first;
				ki_store_item *item;

				if (res.manifest[part] == NULL)
					continue;	/* a memory row has no run */
				item = ki_store_add(ist.store, kinds[part], res.digest[part], res.manifest[part],
									source ? source : "liger-kernel-bench", (Datum) 0, &first);
				if (part == KI_LIGER_RUN)
					ki_import_count_line(&ist, item, first);
			}
			if (res.outcome == KI_LIGER_MAPPED_MEMORY)
			{
				/* stored with the next flush, after the manifests it names by digest */
				ki_memory_batch_add(ist.memory, &res, row.line);
			}
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(rowcxt);
		if (ki_store_pending(ist.store) >= IMPORT_BATCH ||
			(ist.memory && ki_memory_batch_pending(ist.memory) >= IMPORT_BATCH))
			ki_import_flush(&ist);
	}
	{
		import_counts done;

		ki_import_done(&ist);
		done = *c;
		SPI_finish();
		PG_RETURN_DATUM(ki_import_counts_tuple(fcinfo, &done));
	}
}
