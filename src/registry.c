/*
 * registry.c: the kernels registry for SQL, as jsonb.
 *
 *   kbench_registry()          operations, modes, axes, dtypes, implementations
 *                              (kb_list_json; kbench_device_operations reads it)
 *   kbench__registry_costs()   the bytes and FLOPs formulas of each pass
 *                              (kb_costs_json; sql/43_roofline.sql loads them
 *                              into kbench_operation_costs)
 *
 * Both are written once, in the kernels registry (kernels/ops/<op>.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/fmgrprotos.h"

#include "../kernels/kbench.h"

/* A JSON text the kernels library allocated, as jsonb; the text is freed. */
static Datum
registry_jsonb(char *json)
{
	Datum		d;

	if (json == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	d = DirectFunctionCall1(jsonb_in, CStringGetDatum(pstrdup(json)));
	kb_free(json);
	return d;
}

PG_FUNCTION_INFO_V1(kbench_registry);
Datum
kbench_registry(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(registry_jsonb(kb_list_json()));
}

PG_FUNCTION_INFO_V1(kbench__registry_costs);
Datum
kbench__registry_costs(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(registry_jsonb(kb_costs_json()));
}
