/*
 * liger_build.c: the six manifests of one mapped Liger row, each written
 * as JSON text, then parsed, validated, normalized and digested by the
 * core: OperationSpec, ImplementationRevision, WorkloadCase,
 * BenchmarkProtocol, ExecutionEnvironment, BenchmarkRun.
 */
#include "liger_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HARNESS_NOTES_TAIL \
	", via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread). " \
	"The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each " \
	"run's labels. Comparable only within one kernel, workload, timed pass, and GPU."

static bool
is_literal_dim(const char *d)
{
	return isdigit((unsigned char) d[0]);
}

static bool
is_derived(const ki_liger_kernel *k, const char *name)
{
	if (k->derived)
		for (const ki_liger_derived *d = k->derived; d->name; d++)
			if (strcmp(d->name, name) == 0)
				return true;
	return false;
}

/* A binding as the core's builder takes a workload (variable axes and scalars; no derived axes yet). */
static void
case_of(const ki_liger_binding *b, ki_spec_case *c)
{
	memset(c, 0, sizeof *c);
	c->dtype = b->dtype;
	c->naxes = b->naxes;
	for (int i = 0; i < b->naxes; i++)
	{
		c->axis[i] = b->axis[i];
		c->value[i] = b->value[i];
	}
	c->nscalars = b->nscalars;
	for (int i = 0; i < b->nscalars; i++)
	{
		c->scalar[i] = b->scalar[i];
		c->scalar_dtype[i] = "fp32";
		c->scalar_value[i] = b->scalar_value[i];
	}
}

const char *
ki_liger_case_key(ki_arena *a, const ki_liger_binding *b)
{
	ki_spec_case c;

	case_of(b, &c);
	return ki_spec_case_key(a, &c);
}

/* Parse, validate, normalize and digest one manifest's text. */
static bool
finish(ki_liger_build *bd, ki_jw *w, ki_liger_part part, ki_kind want)
{
	ki_errors	errs;
	ki_value   *doc,
			   *norm;
	ki_kind		kind = KI_KIND_UNKNOWN;

	if (bd->a->failed)
	{
		bd->reason = "out of memory";
		return false;
	}
	ki_errors_init(&errs, bd->a);
	doc = ki_parse(bd->a, w->buf.data, w->buf.len, &errs);
	norm = doc ? ki_manifest_normalize(bd->a, doc, &kind, &errs) : NULL;
	if (norm == NULL || kind != want)
	{
		if (errs.count > 0)
			bd->reason = ki_liger_afmt(bd->a, "invalid %s manifest: %s%s%s (%s)",
							  ki_liger_part_names[part], errs.items[0].path,
							  errs.items[0].path[0] ? ": " : "", errs.items[0].message,
							  errs.items[0].rule);
		else
			bd->reason = ki_liger_afmt(bd->a, "invalid %s manifest", ki_liger_part_names[part]);
		return false;
	}
	bd->out->manifest[part] = norm;
	ki_identity_digest(bd->a, norm, bd->out->digest[part]);
	return true;
}

/* Add the symbolic (non-derived) axes of a signature, first use first. */
static void
collect_axes(const ki_liger_kernel *k, const ki_liger_tensor *ts, const char **names, int *n, int max)
{
	for (const ki_liger_tensor *t = ts; t->name; t++)
		for (int d = 0; t->dims[d]; d++)
		{
			const char *dim = t->dims[d];
			bool		seen = false;

			if (is_literal_dim(dim) || is_derived(k, dim))
				continue;
			for (int i = 0; i < *n; i++)
				if (strcmp(names[i], dim) == 0)
					seen = true;
			if (!seen && *n < max)
				names[(*n)++] = dim;
		}
}

/* A kernel's operation as the core's builder takes it. */
static void
op_of(ki_arena *a, const ki_liger_kernel *k, ki_spec_op *op)
{
	const char *axes[2 * KI_SPEC_MAX_AXES];
	int			naxes = 0;

	memset(op, 0, sizeof *op);
	collect_axes(k, k->inputs, axes, &naxes, 2 * KI_SPEC_MAX_AXES);
	collect_axes(k, k->outputs, axes, &naxes, 2 * KI_SPEC_MAX_AXES);
	op->name = k->slug;
	op->title = k->title;
	op->description = k->description;
	op->source_url = ki_liger_cat(a, KI_LIGER_REPO_URL "/blob/" KI_LIGER_SCRIPTS_COMMIT
								  "/benchmark/scripts/benchmark_", k->csv_name, ".py", (char *) NULL);
	op->family = k->family;
	for (int i = 0; i < naxes; i++)
		op->axes[op->naxes++] = (ki_spec_axis) {axes[i], NULL};
	if (k->derived)
		for (const ki_liger_derived *d = k->derived; d->name && op->naxes < 2 * KI_SPEC_MAX_AXES; d++)
			op->axes[op->naxes++] = *d;
	op->inputs = k->inputs;
	for (const ki_liger_tensor *t = k->inputs; t->name; t++)
		op->ninputs++;
	op->outputs = k->outputs;
	for (const ki_liger_tensor *t = k->outputs; t->name; t++)
		op->noutputs++;
}

bool
ki_liger_build_operation(ki_liger_build *bd, const ki_liger_kernel *k)
{
	ki_jw		w;
	ki_spec_op	op;

	op_of(bd->a, k, &op);
	ki_jw_init(&w, bd->a);
	ki_spec_write_operation(&w, &op);
	return finish(bd, &w, KI_LIGER_OPERATION, KI_KIND_OPERATION_SPEC);
}

bool
ki_liger_build_implementation(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_provider *p)
{
	ki_jw		w;

	ki_jw_init(&w, bd->a);
	ki_jw_manifest(&w, "ImplementationRevision",
				   ki_kebab(bd->a, ki_liger_cat(bd->a, "liger-bench-", k->csv_name, "-", p->provider, (char *) NULL)),
				   ki_liger_cat(bd->a, k->title, " · ", p->title, (char *) NULL));
	ki_jw_kstr(&w, "description", p->description);
	if (p->baseline)
	{
		ki_jw_key(&w, "labels");
		ki_jw_obj(&w);
		ki_jw_kstr(&w, "role", "baseline");
		ki_jw_end_obj(&w);
	}
	ki_jw_key(&w, "sourceRefs");
	ki_jw_arr(&w);
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "url", KI_LIGER_REPO_URL);
	ki_jw_end_obj(&w);
	ki_jw_end_arr(&w);
	ki_jw_spec(&w);
	ki_jw_key(&w, "projectRevision");
	ki_jw_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "operation");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "specDigest", bd->out->digest[KI_LIGER_OPERATION]);
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "callable");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "language", p->language);
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "support");
	ki_jw_obj(&w);
	ki_jw_key(&w, "hardwareArchitectures");
	ki_jw_arr(&w);
	ki_jw_end_arr(&w);
	ki_jw_key(&w, "dtypes");
	ki_jw_arr(&w);
	ki_jw_end_arr(&w);
	ki_jw_end_obj(&w);
	if (p->pip_package)
	{
		ki_jw_key(&w, "buildVariants");
		ki_jw_arr(&w);
		ki_jw_obj(&w);
		ki_jw_kstr(&w, "name", "pip");
		ki_jw_key(&w, "install");
		ki_jw_obj(&w);
		ki_jw_kstr(&w, "kind", "pip");
		ki_jw_kstr(&w, "package", p->pip_package);
		ki_jw_end_obj(&w);
		ki_jw_end_obj(&w);
		ki_jw_end_arr(&w);
	}
	ki_jw_key(&w, "licensing");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "declared", p->declared);
	if (p->concluded)
		ki_jw_kstr(&w, "concluded", p->concluded);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	return finish(bd, &w, KI_LIGER_IMPLEMENTATION, KI_KIND_IMPLEMENTATION_REVISION);
}

bool
ki_liger_build_workload(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_binding *b)
{
	ki_jw		w;
	ki_liger_env env;
	ki_spec_op	op;
	ki_spec_case c;
	const char *why;

	/* bind the axes, then the derived ones in table order */
	case_of(b, &c);
	env.n = 0;
	for (int i = 0; i < b->naxes; i++)
	{
		env.name[env.n] = b->axis[i];
		env.value[env.n++] = b->value[i];
	}
	if (k->derived)
		for (const ki_liger_derived *d = k->derived; d->name; d++)
		{
			double		v;

			if (!ki_liger_eval_expression(d->expression, &env, &v) || env.n >= KI_LIGER_MAX_AXES * 2 ||
				c.nderived >= KI_SPEC_MAX_AXES)
			{
				bd->reason = ki_liger_afmt(bd->a, "derived axis %s = %s cannot be computed", d->name, d->expression);
				return false;
			}
			env.name[env.n] = d->name;
			env.value[env.n++] = v;
			c.derived[c.nderived] = d->name;
			c.derived_value[c.nderived++] = v;
		}
	op_of(bd->a, k, &op);
	ki_jw_init(&w, bd->a);
	why = ki_spec_write_workload(&w, bd->a, &op, &c, bd->out->digest[KI_LIGER_OPERATION]);
	if (why)
	{
		bd->reason = why;
		return false;
	}
	return finish(bd, &w, KI_LIGER_WORKLOAD, KI_KIND_WORKLOAD_CASE);
}

bool
ki_liger_build_protocol(ki_liger_build *bd, const ki_liger_mode *m)
{
	ki_jw		w;

	ki_jw_init(&w, bd->a);
	ki_jw_manifest(&w, "BenchmarkProtocol",
				   ki_kebab(bd->a, ki_liger_cat(bd->a, "liger-bench-do-bench-", m->mode, (char *) NULL)),
				   ki_liger_cat(bd->a, "Liger benchmark harness · ", m->mode, " pass", (char *) NULL));
	ki_jw_spec(&w);
	ki_jw_key(&w, "harness");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "name", "Liger-Kernel benchmark scripts");
	ki_jw_kstr(&w, "repository", KI_LIGER_REPO_URL);
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "measurement");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "timer", "cuda_events");
	ki_jw_kstr(&w, "primaryStatistic", "median");
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "comparability");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "family", "liger_kernel_bench");
	ki_jw_kstr(&w, "notes", ki_liger_cat(bd->a, "Timed: ", m->timed, HARNESS_NOTES_TAIL, (char *) NULL));
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	return finish(bd, &w, KI_LIGER_PROTOCOL, KI_KIND_BENCHMARK_PROTOCOL);
}

bool
ki_liger_build_environment(ki_liger_build *bd, const char *gpu_name, const ki_liger_hardware *hw)
{
	ki_jw		w;
	const char *shown = strncmp(gpu_name, "NVIDIA ", 7) == 0 ? gpu_name + 7 : gpu_name;

	ki_jw_init(&w, bd->a);
	ki_jw_manifest(&w, "ExecutionEnvironment",
				   ki_kebab(bd->a, ki_liger_cat(bd->a, "liger-bench-", gpu_name, (char *) NULL)),
				   ki_liger_cat(bd->a, "Liger benchmark host · ", shown, (char *) NULL));
	ki_jw_spec(&w);
	ki_jw_key(&w, "hardware");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "vendor", hw->vendor);
	ki_jw_kstr(&w, "product", hw->product);
	ki_jw_kstr(&w, "architecture", hw->architecture);
	if (hw->form_factor)
		ki_jw_kstr(&w, "formFactor", hw->form_factor);
	ki_jw_end_obj(&w);
	ki_jw_key(&w, "software");
	ki_jw_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	return finish(bd, &w, KI_LIGER_ENVIRONMENT, KI_KIND_EXECUTION_ENVIRONMENT);
}

/* kernel/mode/provider/gpu slug/case key/timestamp slug: a row's identity. */
const char *
ki_liger_external_id(ki_arena *a, const ki_liger_kernel *k, const ki_liger_row *row, const char *key)
{
	return ki_liger_cat(a, k->csv_name, "/", row->kernel_operation_mode, "/", row->kernel_provider, "/",
			   ki_kebab(a, row->gpu_name), "/", key, "/", ki_kebab(a, row->timestamp), (char *) NULL);
}

bool
ki_liger_build_run(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_row *row, const char *key,
				   const ki_liger_timing *t)
{
	ki_arena   *a = bd->a;
	ki_jw		w;
	const char *external_id = ki_liger_external_id(a, k, row, key);

	bd->out->external_id = external_id;

	ki_jw_init(&w, a);
	ki_jw_manifest(&w, "BenchmarkRun",
				   ki_kebab(a, ki_liger_cat(a, "liger-", k->csv_name, "-", row->kernel_operation_mode, "-",
								   row->kernel_provider, "-", row->gpu_name, "-", key, "-",
								   row->timestamp, (char *) NULL)),
				   ki_liger_cat(a, k->title, " · ", row->kernel_provider, " · ",
						   row->kernel_operation_mode, (char *) NULL));
	ki_jw_key(&w, "labels");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "liger_version", row->liger_version);
	ki_jw_end_obj(&w);
	ki_jw_spec(&w);
	ki_jw_kstr(&w, "implementationDigest", bd->out->digest[KI_LIGER_IMPLEMENTATION]);
	ki_jw_kstr(&w, "workloadDigest", bd->out->digest[KI_LIGER_WORKLOAD]);
	ki_jw_kstr(&w, "protocolDigest", bd->out->digest[KI_LIGER_PROTOCOL]);
	ki_jw_kstr(&w, "environmentDigest", bd->out->digest[KI_LIGER_ENVIRONMENT]);
	ki_jw_kstr(&w, "status", "passed");
	ki_jw_key(&w, "timing");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "primaryStatistic", "median");
	ki_jw_key(&w, "latencyNs");
	ki_jw_obj(&w);
	ki_jw_knum(&w, "median", ki_liger_js_round(t->ms50 * 1e6));
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	if (t->spread)
	{
		static const char *const stat[2] = {"p20", "p80"};
		double		v[2] = {t->ms20, t->ms80};

		ki_jw_key(&w, "measurements");
		ki_jw_arr(&w);
		for (int i = 0; i < 2; i++)
		{
			ki_jw_obj(&w);
			ki_jw_kstr(&w, "metric", "latency");
			ki_jw_kstr(&w, "unit", "ns");
			ki_jw_kstr(&w, "statistic", stat[i]);
			ki_jw_knum(&w, "value", ki_liger_js_round(v[i] * 1e6));
			ki_jw_end_obj(&w);
		}
		ki_jw_end_arr(&w);
	}
	ki_jw_key(&w, "sourceNative");
	ki_jw_obj(&w);
	ki_jw_kstr(&w, "source", "liger-kernel-bench");
	ki_jw_kstr(&w, "benchmark", ki_liger_cat(a, k->csv_name, "/", row->kernel_operation_mode, (char *) NULL));
	ki_jw_kstr(&w, "externalId", external_id);
	ki_jw_key(&w, "metrics");
	ki_jw_obj(&w);
	ki_jw_knum(&w, "ms_50", t->ms50);
	if (t->spread)
	{
		ki_jw_knum(&w, "ms_20", t->ms20);
		ki_jw_knum(&w, "ms_80", t->ms80);
	}
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	ki_jw_kstr(&w, "observedAt", t->observed_at);
	ki_jw_end_obj(&w);
	ki_jw_end_obj(&w);
	return finish(bd, &w, KI_LIGER_RUN, KI_KIND_BENCHMARK_RUN);
}
