/*
 * cost.c: the bytes and FLOPs of one call of a pass, from the registry's
 * cost formulas (each operation's entry in ops/<op>.c), evaluated by the
 * core's ki_cost_eval; and the formulas as JSON for the extension, which
 * loads the same texts into kbench_operation_costs.  A formula is written
 * once, in the registry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

bool
kb_case_cost(const kb_case *cs, double *bytes, double *flops, char *err, size_t errlen)
{
	const kb_op *op = cs->op;
	const char *names[KB_MAX_AXES + 1];
	double		values[KB_MAX_AXES + 1];
	int			n = 0;

	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
		{
			names[n] = op->axes[i].name;
			values[n++] = (double) cs->ax[i];
		}
	names[n] = "dtype_bytes";
	values[n++] = (double) kb_dtype_size(cs->dtype);
	*bytes = *flops = 0;
	return ki_cost_eval(op->cost_bytes[cs->mode], names, values, n, bytes, err, errlen) &&
		ki_cost_eval(op->cost_flops[cs->mode], names, values, n, flops, err, errlen);
}

/* One object per pass of op (every pass, or its modes only): its bytes and FLOPs texts, as kbench_operation_costs holds them. */
static void
costs_of(ki_jw *w, const kb_op *op, bool modes_only)
{
	for (int m = 0; m < KB_MODE_COUNT; m++)
	{
		if (modes_only && (!op->modes[m] || !op->cost_bytes[m] || !op->cost_flops[m]))
			continue;
		ki_jw_obj(w);
		ki_jw_kstr(w, "operation", op->name);
		ki_jw_kstr(w, "mode", kb_mode_name(m));
		ki_jw_kstr(w, "bytes", op->cost_bytes[m]);
		ki_jw_kstr(w, "flops", op->cost_flops[m]);
		ki_jw_kstr(w, "compute", op->cost_compute);
		ki_jw_kstr(w, "note", op->cost_note[m]);
		ki_jw_end_obj(w);
	}
}

char *
kb_costs_json(void)
{
	kb_text		t;
	ki_jw	   *w = kb_text_open(&t);

	ki_jw_arr(w);
	/*
	 * The C operations only: the extension seeds kbench_operation_costs from this; the operations
	 * defined as data (kernels/ops/defs) carry the texts the schema already seeds for Liger's
	 * operations (sql/schema/43_roofline.sql; test/suites/operations.sh checks they are equal).
	 */
	for (int i = 0; i < KB_OP_COUNT; i++)
		costs_of(w, kb_op_at(i), false);
	ki_jw_end_arr(w);
	return kb_text_take(&t);
}

char *
kb_op_costs_json(const char *name)
{
	kb_text		t;
	ki_jw	   *w = kb_text_open(&t);
	const kb_op *op = kb_find_op(name);

	ki_jw_arr(w);
	if (op)
		costs_of(w, op, true);
	ki_jw_end_arr(w);
	return kb_text_take(&t);
}
