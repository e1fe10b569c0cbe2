/*
 * parse.c: a request (operation, mode, axes, dtype, implementation, device)
 * parsed and validated against the registry into a kb_case.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "ki_json.h"
#include "opdef.h"

/* Largest value of one axis, and of one tensor's element count. */
#define KB_AXIS_MAX ((int64_t) 1 << 31)
#define KB_ELEMS_MAX ((int64_t) 1 << 38)

/* "a, b, c" of the op's variable axes (plus dtype when with_dtype). */
static void
axes_list(const kb_op *op, bool with_dtype, char *out, size_t len)
{
	size_t		n = 0;

	out[0] = '\0';
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", op->axes[i].name);
	if (with_dtype && n < len)
		snprintf(out + n, len - n, ", dtype");
}

static void
dtypes_list(const kb_op *op, char *out, size_t len)
{
	size_t		n = 0;

	out[0] = '\0';
	for (int i = 0; i < op->ndtypes; i++)
		n += snprintf(out + n, n < len ? len - n : 0, "%s%s", i ? ", " : "", kb_dtype_name(op->dtypes[i]));
}

static void
modes_list(const kb_op *op, char *out, size_t len)
{
	size_t		n = 0;

	out[0] = '\0';
	for (int i = 0; i < KB_MODE_COUNT; i++)
		if (op->modes[i])
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", kb_mode_name(i));
}

/* Index of a variable axis by name, or -1. */
static int
axis_index(const kb_op *op, const char *name)
{
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0 && strcmp(op->axes[i].name, name) == 0)
			return i;
	return -1;
}

/* Parse a positive decimal integer; false on anything else. */
static bool
parse_size(const char *s, int64_t *out)
{
	char	   *end;
	long long	v;

	if (!s || !*s || !isdigit((unsigned char) s[0]))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* Record one axis or the dtype from a key and a textual value. */
static kb_status
set_axis(kb_case *cs, bool *seen, bool *dtype_seen, const char *key, const char *val,
		 bool val_is_number, char *err, size_t errlen)
{
	const kb_op *op = cs->op;
	char		allowed[256];
	int			i;

	if (strcmp(key, "dtype") == 0)
	{
		int			dt = kb_dtype_from_name(val);
		bool		ok = false;

		if (*dtype_seen)
		{
			kb_seterr(err, errlen, "dtype given twice");
			return KB_INVALID_REQUEST;
		}
		for (int k = 0; dt >= 0 && k < op->ndtypes; k++)
			ok |= op->dtypes[k] == dt;
		if (!ok || val_is_number)
		{
			dtypes_list(op, allowed, sizeof(allowed));
			kb_seterr(err, errlen, "dtype '%s' is not supported by %s; allowed: %s", val, op->name, allowed);
			return KB_INVALID_REQUEST;
		}
		cs->dtype = dt;
		*dtype_seen = true;
		return KB_PASSED;
	}
	i = axis_index(op, key);
	if (i < 0)
	{
		axes_list(op, true, allowed, sizeof(allowed));
		kb_seterr(err, errlen, "unknown axis '%s' for %s; allowed: %s", key, op->name, allowed);
		return KB_INVALID_REQUEST;
	}
	if (seen[i])
	{
		kb_seterr(err, errlen, "axis '%s' given twice", key);
		return KB_INVALID_REQUEST;
	}
	if (!parse_size(val, &cs->ax[i]) || cs->ax[i] <= 0)
	{
		kb_seterr(err, errlen, "axis '%s' must be a positive integer, got '%s'", key, val);
		return KB_INVALID_REQUEST;
	}
	if (cs->ax[i] > KB_AXIS_MAX)
	{
		kb_seterr(err, errlen, "axis '%s' = %s is too large; at most %lld", key, val, (long long) KB_AXIS_MAX);
		return KB_INVALID_REQUEST;
	}
	seen[i] = true;
	return KB_PASSED;
}

/* Walk a JSON object of axes through the core's strict parser. */
static kb_status
parse_axes_json(kb_case *cs, bool *seen, bool *dtype_seen, const char *text, char *err, size_t errlen)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *v;
	kb_status	st = KB_PASSED;

	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	v = ki_parse(&a, text, strlen(text), &errs);
	if (!v)
	{
		kb_seterr(err, errlen, "axes are not valid JSON: %s",
			   errs.count ? errs.items[0].message : "parse error");
		st = KB_INVALID_REQUEST;
	}
	else if (v->type != KI_OBJECT)
	{
		kb_seterr(err, errlen, "axes must be a JSON object such as {\"rows\": 4096, \"dtype\": \"fp32\"}");
		st = KB_INVALID_REQUEST;
	}
	else
	{
		for (size_t i = 0; i < v->u.obj.count && st == KB_PASSED; i++)
		{
			ki_member  *m = &v->u.obj.members[i];
			char		key[128];
			char		val[128];
			bool		isnum = false;

			snprintf(key, sizeof(key), "%.*s", (int) m->key.len, m->key.ptr);
			if (m->value->type == KI_STRING)
				snprintf(val, sizeof(val), "%.*s", (int) m->value->u.str.len, m->value->u.str.ptr);
			else if (m->value->type == KI_NUMBER)
			{
				double		d = m->value->u.num;

				isnum = true;
				if (d == (double) (long long) d && d > -9.2e18 && d < 9.2e18)
					snprintf(val, sizeof(val), "%lld", (long long) d);
				else
					snprintf(val, sizeof(val), "%g", d);
			}
			else
				snprintf(val, sizeof(val), "(a JSON %s)",
						 m->value->type == KI_OBJECT ? "object" :
						 m->value->type == KI_ARRAY ? "array" : "literal");
			if (strcmp(key, "dtype") != 0 && m->value->type != KI_NUMBER)
			{
				if (axis_index(cs->op, key) >= 0)
				{
					kb_seterr(err, errlen, "axis '%s' must be a positive integer, got '%s'", key, val);
					st = KB_INVALID_REQUEST;
					break;
				}
			}
			st = set_axis(cs, seen, dtype_seen, key, val, isnum, err, errlen);
		}
	}
	ki_arena_reset(&a);
	return st;
}

/* Parse the device string "cpu" or "cuda:N". */
static bool
parse_device(const char *s, kb_case *cs)
{
	int64_t		n;

	if (!s || strcmp(s, "cpu") == 0)
	{
		cs->cuda = false;
		cs->device = 0;
		return true;
	}
	if (strncmp(s, "cuda:", 5) == 0 && parse_size(s + 5, &n) && n < 1024)
	{
		cs->cuda = true;
		cs->device = (int) n;
		return true;
	}
	if (strcmp(s, "cuda") == 0)
	{
		cs->cuda = true;
		cs->device = 0;
		return true;
	}
	return false;
}

kb_status
kb_parse_case(const kb_request *req, kb_case *cs, char *err, size_t errlen)
{
	bool		seen[KB_MAX_AXES] = {false};
	bool		dtype_seen = false;
	char		allowed[1024];
	kb_status	st;
	const char *impl = req->impl;

	memset(cs, 0, sizeof(*cs));
	cs->op = kb_find_op(req->op);
	if (!cs->op)
	{
		char		near[256];

		/* the nearest names, not all of them: kbench list and kbench_device_operations list every one */
		kb_op_suggest(req->op, near, sizeof(near));
		kb_seterr(err, errlen, "unknown operation '%s'%s%s%s; kbench list, or kbench_device_operations in SQL, "
				  "lists every operation; one is added as a definition: in kernels/ops/defs, with kbench --op-file, "
				  "or in SQL with kbench_register_operation (docs/OPERATIONS.md)", req->op ? req->op : "", near[0] ? " (did you mean " : "", near,
				  near[0] ? "?)" : "");
		return KB_INVALID_REQUEST;
	}
	cs->mode = kb_mode_from_name(req->mode);
	if (cs->mode < 0 || !cs->op->modes[cs->mode])
	{
		modes_list(cs->op, allowed, sizeof(allowed));
		kb_seterr(err, errlen, "mode '%s' is not defined for %s; allowed: %s",
			   req->mode ? req->mode : "", cs->op->name, allowed);
		return KB_INVALID_REQUEST;
	}
	cs->dtype = cs->op->dtypes[0];
	if (req->axes_json)
	{
		st = parse_axes_json(cs, seen, &dtype_seen, req->axes_json, err, errlen);
		if (st != KB_PASSED)
			return st;
	}
	for (int i = 0; i < req->naxes; i++)
	{
		if (!req->keys || !req->values || !req->keys[i] || !req->values[i])
		{
			kb_seterr(err, errlen, "axis %d has no key or value", i);
			return KB_INVALID_REQUEST;
		}
		st = set_axis(cs, seen, &dtype_seen, req->keys[i], req->values[i], false, err, errlen);
		if (st != KB_PASSED)
			return st;
	}
	for (int i = 0; i < cs->op->naxes; i++)
		if (strcmp(cs->op->axes[i].role, "variable") == 0 && !seen[i])
		{
			axes_list(cs->op, false, allowed, sizeof(allowed));
			kb_seterr(err, errlen, "missing axis '%s' for %s (required: %s; optional: dtype)",
				   cs->op->axes[i].name, cs->op->name, allowed);
			return KB_INVALID_REQUEST;
		}
	if (cs->op->def && !kb_opdef_derive(cs->op, cs->ax, err, errlen))
		return KB_INVALID_REQUEST;
	if (cs->op->derive && !cs->op->derive(cs->ax, cs->dtype, err, errlen))
		return KB_INVALID_REQUEST;
	/* Every tensor must stay addressable. */
	for (int i = 0; i < cs->op->ninputs; i++)
	{
		const kb_tensor_def *t = &cs->op->inputs[i];
		double		elems = 1;

		for (int k = 0; k < KI_SPEC_MAX_DIMS && t->dims[k]; k++)
			for (int j = 0; j < cs->op->naxes; j++)
				if (strcmp(cs->op->axes[j].name, t->dims[k]) == 0)
					elems *= (double) cs->ax[j];
		if (elems > (double) KB_ELEMS_MAX)
		{
			kb_seterr(err, errlen, "tensor '%s' would have %.0f elements; at most %lld",
				   t->name, elems, (long long) KB_ELEMS_MAX);
			return KB_INVALID_REQUEST;
		}
	}
	if (!parse_device(req->device, cs))
	{
		kb_seterr(err, errlen, "unknown device '%s'; allowed: cpu, cuda:N", req->device);
		return KB_INVALID_REQUEST;
	}
	/* a user's operation (--op-file, kbench_register_operation) has no built-in baseline */
	for (int i = 0; impl && cs->op->def && cs->op->def->added && i < kb_builtin_python_count; i++)
		if (strcmp(impl, kb_builtin_python[i]) == 0)
		{
			kb_seterr(err, errlen, "%s has no built-in '%s' implementation: it is a user's operation (%s), and kbench's "
					  "baselines are for its own definitions; run your own (python:FILE:FUNCTION, or a name registered "
					  "with kbench_register_implementation)", cs->op->name, impl, cs->op->def->file);
			return KB_INVALID_REQUEST;
		}
	if (req->cuda_graph && !cs->cuda)
	{
		kb_seterr(err, errlen, "cuda_graph timing needs a CUDA device (cuda:N): the CPU is timed call by call");
		return KB_INVALID_REQUEST;
	}
	/* python and library implementations (impl.c) */
	switch (kb_ext_parse(req, cs, err, errlen))
	{
		case 1:
			if (req->cuda_graph)
			{
				kb_seterr(err, errlen, "cuda_graph timing is for kbench's own CUDA kernels (cuda, cuda/vN): '%s' runs in a "
						  "child process that times each of its calls itself", impl);
				return KB_INVALID_REQUEST;
			}
			return KB_PASSED;
		case -1:
			return KB_INVALID_REQUEST;
		default:
			break;
	}
	/* kbench's own: cpu, cuda, cuda/vN (impl_name.c), on the device it runs on */
	st = kb_impl_resolve(impl ? impl : cs->cuda ? "cuda" : "cpu", cs->op->name, &cs->impl, err, errlen);
	if (st != KB_PASSED)
		return st;
	if (!cs->impl.own)
	{
		kb_seterr(err, errlen, "unknown implementation '%s'; allowed: cpu, cuda, cuda/vN, huggingface, torch, liger, python or library (with an entry), or a registered name", impl);
		return KB_INVALID_REQUEST;
	}
	if (cs->op->def)
	{
		/* an operation defined as data has no kbench implementation (cpu) and no CUDA kernel yet */
		kb_seterr(err, errlen, "%s has no %s in kbench (it is defined as data, %s): run a python implementation "
				  "(%s)", cs->op->name,
				  cs->cuda ? "CUDA kernel (GPU runs of it: not measured on a GPU yet)" : "own cpu implementation",
				  cs->op->def->added ? cs->op->def->file : "kernels/ops/defs",
				  cs->op->def->added ? "your own: python:FILE:FUNCTION, or a name registered with kbench_register_implementation"
				  : "huggingface, torch, liger, or your own");
		return KB_INVALID_REQUEST;
	}
	if (cs->impl.cuda != cs->cuda)
	{
		kb_seterr(err, errlen, "implementation '%s' does not run on device '%s' (cpu runs on cpu, cuda and cuda/vN on cuda:N)",
				  impl, req->device ? req->device : "cpu");
		return KB_INVALID_REQUEST;
	}
	cs->variant = cs->impl.variant;
	return KB_PASSED;
}
