/*
 * workload.c: the OperationSpec and WorkloadCase of a case, described from
 * the registry tables and built by the core's builder (core/spec_text.c),
 * the one the Liger import builds them with: the same manifests, so the
 * same digests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "opdef.h"

/* The registry entry as the core's builder takes an operation; name holds "liger-<slug>". */
static void
op_of(const kb_op *op, ki_spec_op *s, char *name, size_t len)
{
	memset(s, 0, sizeof(*s));
	snprintf(name, len, "liger-%s", op->slug);
	s->name = name;
	s->title = op->title;
	s->description = op->description;
	s->source_url = op->source_url;
	s->family = op->family;
	for (int i = 0; i < op->naxes; i++)
		if (!(op->def && op->def->case_only[i]))
			s->axes[s->naxes++] = (ki_spec_axis) {
			op->axes[i].name, strcmp(op->axes[i].role, "derived") == 0 ? op->axes[i].expression : NULL
		};
	s->ninputs = op->ninputs;
	s->inputs = op->inputs;
	s->noutputs = op->noutputs;
	s->outputs = op->outputs;
}

char *
kb_operation_text(const kb_op *op)
{
	kb_text		t;
	ki_spec_op	s;
	char		name[128];

	op_of(op, &s, name, sizeof(name));
	ki_spec_write_operation(kb_text_open(&t), &s);
	return kb_text_take(&t);
}

/* Is name among the first n of list? */
static bool
listed(const char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

char *
kb_workload_text(const kb_case *cs, const char *operation_digest)
{
	const kb_op *op = cs->op;
	ki_spec_op	s;
	ki_spec_case c;
	char		name[128];
	kb_text		t;
	const char *why;

	op_of(op, &s, name, sizeof(name));
	memset(&c, 0, sizeof(c));
	c.dtype = kb_dtype_name(cs->dtype);
	/* the variable axes in title order, then any the title leaves out */
	for (int i = 0; i < KB_MAX_AXES && op->title_axes[i]; i++)
		c.axis[c.naxes++] = op->title_axes[i];
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0 && !listed(c.axis, c.naxes, op->axes[i].name))
			c.axis[c.naxes++] = op->axes[i].name;
	for (int i = 0; i < c.naxes; i++)
		for (int j = 0; j < op->naxes; j++)
			if (strcmp(op->axes[j].name, c.axis[i]) == 0)
				c.value[i] = (double) cs->ax[j];
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "derived") == 0)
		{
			c.derived[c.nderived] = op->axes[i].name;
			c.derived_value[c.nderived++] = (double) cs->ax[i];
		}
	for (int i = 0; i < op->nscalars; i++)
	{
		c.scalar[i] = op->scalars[i].name;
		c.scalar_dtype[i] = op->scalars[i].dtype;
		c.scalar_value[i] = op->scalars[i].value;
	}
	c.nscalars = op->nscalars;
	why = ki_spec_write_workload(kb_text_open(&t), &t.a, &s, &c, operation_digest);
	if (why)
	{
		free(kb_text_take(&t));
		return NULL;
	}
	return kb_text_take(&t);
}
