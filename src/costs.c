/*
 * costs.c: the registry's cost formulas for SQL.  The bytes and FLOPs of
 * each pass of kbench's operations are written once, in the kernels
 * registry (kernels/ops/<op>.c); kbench__registry_costs() hands the same
 * texts to sql/43_roofline.sql, which loads them into kbench_operation_costs.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/fmgrprotos.h"

#include "../kernels/kbench.h"

PG_FUNCTION_INFO_V1(kbench__registry_costs);
Datum
kbench__registry_costs(PG_FUNCTION_ARGS)
{
	char	   *json = kb_costs_json();
	Datum		d;

	if (json == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	d = DirectFunctionCall1(jsonb_in, CStringGetDatum(pstrdup(json)));
	kb_free(json);
	PG_RETURN_DATUM(d);
}
