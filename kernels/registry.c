/*
 * registry.c: the operation registry and what is derived from it.
 *
 * Each operation's entry (axes, dtypes, tensors, hooks) sits at the bottom
 * of its own file, kernels/ops/<op>.c, beside its C reference; this file
 * lists them, parses and validates requests against them, and builds the
 * OperationSpec and WorkloadCase manifests exactly as the Liger import
 * does (same members, same values, so the same digests).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#ifndef KB_VERSION
#error "KB_VERSION is set by kernels/Makefile from kernelindex.control"
#endif
#include "ki_json.h"

extern const kb_op kb_op_layer_norm;
extern const kb_op kb_op_megatron_cross_entropy;
extern const kb_op kb_op_distill_jsd_loss;
extern const kb_op kb_op_jsd;

/* Indexed by KB_OP_*. */
const kb_op *const kb_ops[KB_OP_COUNT] = {
	&kb_op_layer_norm,
	&kb_op_megatron_cross_entropy,
	&kb_op_distill_jsd_loss,
	&kb_op_jsd,
};

static const char *const mode_names[KB_MODE_COUNT] = {"forward", "backward", "full"};
static const char *const dtype_names[KB_DTYPE_COUNT] = {"fp32", "bf16", "int64"};

/* Largest value of one axis, and of one tensor's element count. */
#define KB_AXIS_MAX ((int64_t) 1 << 31)
#define KB_ELEMS_MAX ((int64_t) 1 << 38)

const kb_op *
kb_find_op(const char *name)
{
	for (int i = 0; name && i < KB_OP_COUNT; i++)
		if (strcmp(kb_ops[i]->name, name) == 0)
			return kb_ops[i];
	return NULL;
}

const char *
kb_mode_name(int mode)
{
	return mode >= 0 && mode < KB_MODE_COUNT ? mode_names[mode] : "?";
}

int
kb_mode_from_name(const char *s)
{
	for (int i = 0; s && i < KB_MODE_COUNT; i++)
		if (strcmp(mode_names[i], s) == 0)
			return i;
	return -1;
}

const char *
kb_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < KB_DTYPE_COUNT ? dtype_names[dtype] : "?";
}

int
kb_dtype_from_name(const char *s)
{
	for (int i = 0; s && i < KB_DTYPE_COUNT; i++)
		if (strcmp(dtype_names[i], s) == 0)
			return i;
	return -1;
}

size_t
kb_dtype_size(int dtype)
{
	return dtype == KB_FP32 ? 4 : dtype == KB_BF16 ? 2 : 8;
}

const char *
kb_status_name(kb_status s)
{
	switch (s)
	{
		case KB_PASSED:
			return "passed";
		case KB_INCORRECT_NUMERICAL:
			return "incorrect_numerical";
		case KB_RUNTIME_ERROR:
			return "runtime_error";
		case KB_TIMEOUT:
			return "timeout";
		case KB_RESOURCE_EXCEEDED:
			return "resource_exceeded";
		case KB_CANCELED:
			return "canceled";
		case KB_INVALID_REQUEST:
			return "invalid_request";
		case KB_DEVICE_UNAVAILABLE:
			return "device_unavailable";
	}
	return "unknown";
}

/* snprintf into err, ignoring truncation. */
static void
seterr(char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

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
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s", n ? ", " : "", mode_names[i]);
}

static void
ops_list(char *out, size_t len)
{
	size_t		n = 0;

	out[0] = '\0';
	for (int i = 0; i < KB_OP_COUNT; i++)
		n += snprintf(out + n, n < len ? len - n : 0, "%s%s", i ? ", " : "", kb_ops[i]->name);
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
			seterr(err, errlen, "dtype given twice");
			return KB_INVALID_REQUEST;
		}
		for (int k = 0; dt >= 0 && k < op->ndtypes; k++)
			ok |= op->dtypes[k] == dt;
		if (!ok || val_is_number)
		{
			dtypes_list(op, allowed, sizeof(allowed));
			seterr(err, errlen, "dtype '%s' is not supported by %s; allowed: %s", val, op->name, allowed);
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
		seterr(err, errlen, "unknown axis '%s' for %s; allowed: %s", key, op->name, allowed);
		return KB_INVALID_REQUEST;
	}
	if (seen[i])
	{
		seterr(err, errlen, "axis '%s' given twice", key);
		return KB_INVALID_REQUEST;
	}
	if (!parse_size(val, &cs->ax[i]) || cs->ax[i] <= 0)
	{
		seterr(err, errlen, "axis '%s' must be a positive integer, got '%s'", key, val);
		return KB_INVALID_REQUEST;
	}
	if (cs->ax[i] > KB_AXIS_MAX)
	{
		seterr(err, errlen, "axis '%s' = %s is too large; at most %lld", key, val, (long long) KB_AXIS_MAX);
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
		seterr(err, errlen, "axes are not valid JSON: %s",
			   errs.count ? errs.items[0].message : "parse error");
		st = KB_INVALID_REQUEST;
	}
	else if (v->type != KI_OBJECT)
	{
		seterr(err, errlen, "axes must be a JSON object such as {\"rows\": 4096, \"dtype\": \"fp32\"}");
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
					seterr(err, errlen, "axis '%s' must be a positive integer, got '%s'", key, val);
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
int
kb_variant_count(const kb_op *op)
{
	return op->nvariants > 0 ? op->nvariants : 1;
}

/* "v1".."vN" of the operation's CUDA kernels; v1 (the default) when NULL. */
static kb_status
parse_variant(const char *s, kb_case *cs, char *err, size_t errlen)
{
	int			n = kb_variant_count(cs->op);
	char		allowed[64] = "";

	cs->variant = 1;
	if (!s)
		return KB_PASSED;
	for (int i = 1; i <= n; i++)
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%sv%d", i > 1 ? ", " : "", i);
	if (s[0] != 'v' || s[1] < '1' || s[1] > '9' || s[2] != '\0' || s[1] - '0' > n)
	{
		seterr(err, errlen, "unknown variant '%s' for %s; allowed: %s", s, cs->op->name, allowed);
		return KB_INVALID_REQUEST;
	}
	cs->variant = s[1] - '0';
	if (cs->variant > 1 && !cs->cuda)
	{
		seterr(err, errlen, "variant '%s' is a CUDA kernel variant; it needs a cuda:N device (the cpu implementation has v1 only)", s);
		return KB_INVALID_REQUEST;
	}
	return KB_PASSED;
}

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
	char		allowed[256];
	kb_status	st;
	const char *impl = req->impl;
	const char *variant = req->variant;

	memset(cs, 0, sizeof(*cs));
	cs->op = kb_find_op(req->op);
	if (!cs->op)
	{
		ops_list(allowed, sizeof(allowed));
		seterr(err, errlen, "unknown operation '%s'; allowed: %s", req->op ? req->op : "", allowed);
		return KB_INVALID_REQUEST;
	}
	cs->mode = kb_mode_from_name(req->mode);
	if (cs->mode < 0 || !cs->op->modes[cs->mode])
	{
		modes_list(cs->op, allowed, sizeof(allowed));
		seterr(err, errlen, "mode '%s' is not defined for %s; allowed: %s",
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
			seterr(err, errlen, "axis %d has no key or value", i);
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
			seterr(err, errlen, "missing axis '%s' for %s (required: %s; optional: dtype)",
				   cs->op->axes[i].name, cs->op->name, allowed);
			return KB_INVALID_REQUEST;
		}
	if (cs->op->derive && !cs->op->derive(cs->ax, cs->dtype, err, errlen))
		return KB_INVALID_REQUEST;
	/* Every tensor must stay addressable. */
	for (int i = 0; i < cs->op->ninputs; i++)
	{
		const kb_tensor_def *t = &cs->op->inputs[i];
		double		elems = 1;

		for (int k = 0; k < 3 && t->shape[k]; k++)
			for (int j = 0; j < cs->op->naxes; j++)
				if (strcmp(cs->op->axes[j].name, t->shape[k]) == 0)
					elems *= (double) cs->ax[j];
		if (elems > (double) KB_ELEMS_MAX)
		{
			seterr(err, errlen, "tensor '%s' would have %.0f elements; at most %lld",
				   t->name, elems, (long long) KB_ELEMS_MAX);
			return KB_INVALID_REQUEST;
		}
	}
	if (!parse_device(req->device, cs))
	{
		seterr(err, errlen, "unknown device '%s'; allowed: cpu, cuda:N", req->device);
		return KB_INVALID_REQUEST;
	}
	/* python and library implementations (impl.c) */
	switch (kb_ext_parse(req, cs, err, errlen))
	{
		case 1:
			return KB_PASSED;
		case -1:
			return KB_INVALID_REQUEST;
		default:
			break;
	}
	/* "cuda/v2" names the implementation and its kernel variant at once (SQL's implementation argument) */
	if (req->impl && strncmp(req->impl, "cuda/", 5) == 0)
	{
		if (req->variant && strcmp(req->variant, req->impl + 5) != 0)
		{
			seterr(err, errlen, "implementation '%s' and variant '%s' disagree", req->impl, req->variant);
			return KB_INVALID_REQUEST;
		}
		variant = req->impl + 5;
		impl = "cuda";
	}
	if (impl && strcmp(impl, cs->cuda ? "cuda" : "cpu") != 0)
	{
		if (strcmp(impl, "cuda") != 0 && strcmp(impl, "cpu") != 0)
			seterr(err, errlen, "unknown implementation '%s'; allowed: cpu, cuda, cuda/vN, huggingface, torch, liger, python or library (with an entry), or a registered name", req->impl);
		else
			seterr(err, errlen, "implementation '%s' does not run on device '%s' (cpu runs on cpu, cuda on cuda:N)",
				   req->impl, req->device ? req->device : "cpu");
		return KB_INVALID_REQUEST;
	}
	return parse_variant(variant, cs, err, errlen);
}

/* ------------------------------------------------------------ manifests */

bool
kb_manifest_finish(const char *text, char **canon, char digest[72], char *err, size_t errlen)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *doc;
	ki_value   *norm = NULL;
	ki_kind		kind;
	bool		ok = false;

	*canon = NULL;
	if (!text)
	{
		seterr(err, errlen, "out of memory building a manifest");
		return false;
	}
	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	doc = ki_parse(&a, text, strlen(text), &errs);
	if (doc)
		norm = ki_manifest_normalize(&a, doc, &kind, &errs);
	if (norm)
	{
		ki_buf		b;

		ki_identity_digest(&a, norm, digest);
		ki_buf_init(&b, &a, 1024);
		ki_canonical(norm, &b);
		*canon = malloc(b.len + 1);
		if (*canon)
		{
			memcpy(*canon, b.data, b.len);
			(*canon)[b.len] = '\0';
			ok = !a.failed;
		}
	}
	if (!ok)
	{
		if (errs.count)
			seterr(err, errlen, "manifest rejected by the identity core: %s: %s (%s)",
				   errs.items[0].path && errs.items[0].path[0] ? errs.items[0].path : "(root)",
				   errs.items[0].message, errs.items[0].rule);
		else
			seterr(err, errlen, "manifest rejected by the identity core (out of memory)");
		free(*canon);
		*canon = NULL;
	}
	ki_arena_reset(&a);
	return ok;
}

/* Write a tensor/shape description as the OperationSpec has it. */
static void
write_op_tensor(kb_jw *w, const kb_tensor_def *t)
{
	kb_jw_obj(w);
	kb_jw_kstr(w, "name", t->name);
	kb_jw_key(w, "tensor");
	kb_jw_obj(w);
	kb_jw_key(w, "shape");
	kb_jw_arr(w);
	for (int k = 0; k < 3 && t->shape[k]; k++)
	{
		if (isdigit((unsigned char) t->shape[k][0]))
			kb_jw_int(w, atoll(t->shape[k]));
		else
			kb_jw_str(w, t->shape[k]);
	}
	kb_jw_end_arr(w);
	kb_jw_kstr(w, "dtype", t->dtype);
	kb_jw_end_obj(w);
	kb_jw_end_obj(w);
}

char *
kb_operation_text(const kb_op *op)
{
	kb_jw		w;
	char		name[128];

	snprintf(name, sizeof(name), "liger-%s", op->slug);
	kb_jw_manifest(&w, "OperationSpec", name, op->title);
	kb_jw_kstr(&w, "description", op->description);
	kb_jw_key(&w, "sourceRefs");
	kb_jw_arr(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "url", op->source_url);
	kb_jw_end_obj(&w);
	kb_jw_end_arr(&w);
	kb_jw_spec(&w);
	kb_jw_kstr(&w, "family", op->family);
	kb_jw_key(&w, "axes");
	kb_jw_obj(&w);
	for (int i = 0; i < op->naxes; i++)
	{
		kb_jw_key(&w, op->axes[i].name);
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "role", op->axes[i].role);
		kb_jw_kstr(&w, "type", "integer");
		if (op->axes[i].expression)
			kb_jw_kstr(&w, "expression", op->axes[i].expression);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "inputs");
	kb_jw_arr(&w);
	for (int i = 0; i < op->ninputs; i++)
		write_op_tensor(&w, &op->inputs[i]);
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "outputs");
	kb_jw_arr(&w);
	for (int i = 0; i < op->noutputs; i++)
		write_op_tensor(&w, &op->outputs[i]);
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "semantics");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "mutation", "none");
	kb_jw_kstr(&w, "determinism", "unspecified");
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}

/* Value of the axis called name in cs (variable or derived), or -1. */
static int64_t
axis_value(const kb_case *cs, const char *name)
{
	for (int j = 0; j < cs->op->naxes; j++)
		if (strcmp(cs->op->axes[j].name, name) == 0)
			return cs->ax[j];
	return isdigit((unsigned char) name[0]) ? atoll(name) : -1;
}

/* qsort comparator for axis names (the workload name lists them sorted). */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

char *
kb_workload_text(const kb_case *cs, const char *operation_digest)
{
	const kb_op *op = cs->op;
	const char *sorted[KB_MAX_AXES];
	int			nvar = 0;
	char		name[256];
	char		title[256];
	size_t		n;
	kb_jw		w;

	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			sorted[nvar++] = op->axes[i].name;
	qsort(sorted, nvar, sizeof(sorted[0]), cmp_str);
	n = snprintf(name, sizeof(name), "liger-%s", op->slug);
	for (int i = 0; i < nvar; i++)
		n += snprintf(name + n, n < sizeof(name) ? sizeof(name) - n : 0, "-%s%lld",
					  sorted[i], (long long) axis_value(cs, sorted[i]));
	if (n < sizeof(name))
		snprintf(name + n, sizeof(name) - n, "-%s", kb_dtype_name(cs->dtype));
	n = snprintf(title, sizeof(title), "%s \xc2\xb7 ", op->title);
	for (int i = 0; op->title_axes[i] && i < KB_MAX_AXES; i++)
		n += snprintf(title + n, n < sizeof(title) ? sizeof(title) - n : 0, "%s%s=%lld",
					  i ? ", " : "", op->title_axes[i], (long long) axis_value(cs, op->title_axes[i]));
	if (n < sizeof(title))
		snprintf(title + n, sizeof(title) - n, " \xc2\xb7 %s", kb_dtype_name(cs->dtype));

	kb_jw_manifest(&w, "WorkloadCase", name, title);
	kb_jw_spec(&w);
	kb_jw_kstr(&w, "operationSpecDigest", operation_digest);
	kb_jw_key(&w, "axes");
	kb_jw_obj(&w);
	for (int i = 0; i < op->naxes; i++)
		if (strcmp(op->axes[i].role, "variable") == 0)
			kb_jw_kint(&w, op->axes[i].name, cs->ax[i]);
	kb_jw_end_obj(&w);
	kb_jw_key(&w, "tensors");
	kb_jw_obj(&w);
	for (int i = 0; i < op->ninputs; i++)
	{
		const kb_tensor_def *t = &op->inputs[i];

		kb_jw_key(&w, t->name);
		kb_jw_obj(&w);
		kb_jw_key(&w, "shape");
		kb_jw_arr(&w);
		for (int k = 0; k < 3 && t->shape[k]; k++)
			kb_jw_int(&w, axis_value(cs, t->shape[k]));
		kb_jw_end_arr(&w);
		kb_jw_kstr(&w, "dtype", strcmp(t->dtype, "float") == 0 ? kb_dtype_name(cs->dtype) : t->dtype);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_obj(&w);
	if (op->nscalars)
	{
		kb_jw_key(&w, "scalars");
		kb_jw_obj(&w);
		for (int i = 0; i < op->nscalars; i++)
		{
			kb_jw_key(&w, op->scalars[i].name);
			kb_jw_obj(&w);
			kb_jw_kstr(&w, "dtype", op->scalars[i].dtype);
			kb_jw_knum(&w, "value", op->scalars[i].value);
			kb_jw_end_obj(&w);
		}
		kb_jw_end_obj(&w);
	}
	/* Like the Liger import: the workload itself asserts no comparator;
	 * kbench's tolerances are part of its protocol and each run's result. */
	kb_jw_key(&w, "correctness");
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "comparator", "not_asserted");
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	kb_jw_end_obj(&w);
	return kb_jw_take(&w);
}

/* ------------------------------------------------------------ listing */

char *
kb_list_json(void)
{
	kb_jw		w;
	char	   *devs = kb_devices_json();

	kb_jw_init(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "version", KB_VERSION);
	kb_jw_key(&w, "operations");
	kb_jw_arr(&w);
	for (int i = 0; i < KB_OP_COUNT; i++)
	{
		const kb_op *op = kb_ops[i];
		char	   *text = kb_operation_text(op);
		char	   *canon = NULL;
		char		digest[72] = "";
		char		err[256];

		kb_jw_obj(&w);
		kb_jw_kstr(&w, "name", op->name);
		kb_jw_kstr(&w, "title", op->title);
		kb_jw_key(&w, "modes");
		kb_jw_arr(&w);
		for (int m = 0; m < KB_MODE_COUNT; m++)
			if (op->modes[m])
				kb_jw_str(&w, mode_names[m]);
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "axes");
		kb_jw_arr(&w);
		for (int a = 0; a < op->naxes; a++)
			if (strcmp(op->axes[a].role, "variable") == 0)
				kb_jw_str(&w, op->axes[a].name);
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "dtypes");
		kb_jw_arr(&w);
		for (int d = 0; d < op->ndtypes; d++)
			kb_jw_str(&w, kb_dtype_name(op->dtypes[d]));
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "implementations");
		kb_jw_arr(&w);
		kb_jw_str(&w, "cpu");
		kb_jw_str(&w, "cuda");
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "cudaVariants");
		kb_jw_arr(&w);
		for (int v = 1; v <= kb_variant_count(op); v++)
		{
			char		vn[16];

			snprintf(vn, sizeof(vn), "v%d", v);
			kb_jw_str(&w, vn);
		}
		kb_jw_end_arr(&w);
		kb_jw_kstr(&w, "reference", op->c_path);
		kb_jw_kstr(&w, "kernel", op->cu_path);
		if (kb_manifest_finish(text, &canon, digest, err, sizeof(err)))
			kb_jw_kstr(&w, "operationDigest", digest);
		free(canon);
		free(text);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "devices");
	kb_jw_json(&w, devs ? devs : "[]");
	kb_jw_end_obj(&w);
	free(devs);
	return kb_jw_take(&w);
}

void
kb_free(void *p)
{
	free(p);
}

void *
kb_xmalloc(size_t n)
{
	return malloc(n ? n : 1);
}
