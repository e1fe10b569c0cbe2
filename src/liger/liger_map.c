/*
 * liger_map.c: one Liger CSV row -> six kernelindex.dev/v1alpha1 manifests.
 *
 *   kernel_name            -> OperationSpec (per-kernel table)
 *   x_name, x_value and
 *   extra_benchmark_config -> WorkloadCase (the kernel's binder)
 *   kernel_provider        -> ImplementationRevision (provider table)
 *   kernel_operation_mode  -> BenchmarkProtocol (timed-pass table)
 *   gpu_name               -> ExecutionEnvironment (GPU rules)
 *   the row                -> BenchmarkRun naming the other five digests
 *
 * Each manifest is written as JSON text, parsed, validated and normalized
 * by the core, then digested.  docs/LIGER.md states the rules in prose.
 */
#include "liger_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ki_liger_part_names[KI_LIGER_NPARTS] = {
	"run", "protocol", "environment", "workload", "implementation", "operation"
};

/* ---------------------------------------------------------------- tables */

/* The timed pass of each kernel_operation_mode, as the protocol states it. */
typedef struct liger_mode
{
	const char *mode;
	const char *timed;
} liger_mode;

static const liger_mode liger_modes[] = {
	{"forward", "the module forward pass"},
	{"backward", "the backward pass of the module output given a random upstream gradient"},
	{"full", "the forward pass plus the backward pass"},
};

/* kernel_provider -> who implements it, in what, under which license. */
typedef struct liger_provider
{
	const char *provider;
	const char *title;			/* "<kernel title> · <this>" */
	const char *language;
	const char *description;
	const char *declared;		/* declared license */
	const char *concluded;		/* concluded license, NULL when not concluded */
	const char *pip_package;	/* NULL when not a pip build of Liger */
	bool		baseline;		/* an eager reference the benchmark compares against */
} liger_provider;

#define LIGER_BSD2 "BSD-2-Clause", "BSD-2-Clause", "liger-kernel"

static const liger_provider liger_providers[] = {
	{"liger", "Liger", "triton", "Liger-Kernel Triton implementation.", LIGER_BSD2, false},
	{"liger_fused_add_rms_norm", "Liger fused", "triton",
	 "Liger-Kernel fused add + RMSNorm Triton implementation.", LIGER_BSD2, false},
	{"liger_rms_norm", "Liger unfused", "triton",
	 "Residual add in PyTorch followed by the Liger RMSNorm Triton kernel (unfused baseline).",
	 LIGER_BSD2, false},
	{"liger_in_place", "Liger in-place", "triton",
	 "Liger-Kernel Triton implementation, in-place variant.", LIGER_BSD2, false},
	{"liger_tiled", "Liger tiled", "triton",
	 "Liger-Kernel MLP under seq-sharded tiled execution (same computation, chunked over the sequence).",
	 LIGER_BSD2, false},
	{"huggingface", "Transformers", "python", "Hugging Face Transformers reference module.",
	 "Apache-2.0", NULL, NULL, true},
	{"torch", "PyTorch", "python", "PyTorch reference module.", "BSD-3-Clause", NULL, NULL, true},
	{"torch_compile", "torch.compile", "python",
	 "PyTorch reference module compiled with torch.compile.", "BSD-3-Clause", NULL, NULL, false},
	{"megatron", "Megatron", "python", "Megatron-Core module for the benchmarked operation.",
	 "BSD-3-Clause", NULL, NULL, false},
	{"megatron-fused", "Megatron fused", "python",
	 "Megatron-Core fused_vocab_parallel_cross_entropy (fused kernel path).",
	 "BSD-3-Clause", NULL, NULL, false},
	{"megatron-unfused", "Megatron unfused", "python",
	 "Megatron-Core vocab_parallel_cross_entropy (unfused reference path).",
	 "BSD-3-Clause", NULL, NULL, true},
	{"deepspeed_tiled", "DeepSpeed tiled", "python", "DeepSpeed TiledMLP seq-sharded execution.",
	 "Apache-2.0", NULL, NULL, false},
};

#define HARNESS_NOTES_TAIL \
	", via triton.testing.do_bench with quantiles 0.5/0.2/0.8 (median with p20/p80 spread). " \
	"The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each " \
	"run's labels. Comparable only within one kernel, workload, timed pass, and GPU."

/* ---------------------------------------------------------------- strings */

/* Concatenate NUL-terminated strings (ended by NULL) into the arena. */
static char *
cat(ki_arena *a,...)
{
	va_list		ap;
	size_t		n = 0;
	char	   *out,
			   *p;
	const char *s;

	va_start(ap, a);
	while ((s = va_arg(ap, const char *)) != NULL)
		n += strlen(s);
	va_end(ap);
	out = ki_alloc(a, n + 1);
	if (out == NULL)
		return NULL;
	p = out;
	va_start(ap, a);
	while ((s = va_arg(ap, const char *)) != NULL)
	{
		size_t		l = strlen(s);

		memcpy(p, s, l);
		p += l;
	}
	va_end(ap);
	*p = '\0';
	return out;
}

static const char *
afmt(ki_arena *a, const char *fmt,...)
	__attribute__((format(printf, 2, 3)));

static const char *
afmt(ki_arena *a, const char *fmt,...)
{
	char		msg[600];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return ki_strndup(a, msg, strlen(msg));
}

/*
 * Slug form: ASCII letters lowered, every run of anything other than
 * [a-z0-9] becomes one "-", no "-" at either end, then cut to 100 bytes
 * (the cut may leave a trailing "-").
 */
static char *
kebab(ki_arena *a, const char *s)
{
	size_t		n = strlen(s);
	char	   *out = ki_alloc(a, n + 1);
	size_t		o = 0;
	bool		pending = false;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char) (c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		{
			if (pending && o > 0)
				out[o++] = '-';
			pending = false;
			out[o++] = (char) c;
		}
		else
			pending = true;
	}
	if (o > 100)
		o = 100;
	out[o] = '\0';
	return out;
}

/*
 * A decimal number as JavaScript's Number() reads one from text: optional
 * blanks around [+-] digits [. digits] [e[+-]digits].  Anything else (empty
 * text included) is not a number here.
 */
static bool
parse_number(const char *s, double *out)
{
	const char *p = s;
	const char *start;
	bool		digits = false;
	char	   *end;
	char		tmp[64];
	size_t		n;

	while (*p == ' ' || *p == '\t')
		p++;
	start = p;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char) *p))
		p++, digits = true;
	if (*p == '.')
	{
		p++;
		while (isdigit((unsigned char) *p))
			p++, digits = true;
	}
	if (!digits)
		return false;
	if (*p == 'e' || *p == 'E')
	{
		const char *e = p + 1;

		if (*e == '+' || *e == '-')
			e++;
		if (!isdigit((unsigned char) *e))
			return false;
		while (isdigit((unsigned char) *e))
			e++;
		p = e;
	}
	n = (size_t) (p - start);
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0' || n >= sizeof tmp)
		return false;
	memcpy(tmp, start, n);
	tmp[n] = '\0';
	*out = strtod(tmp, &end);
	return end == tmp + n && isfinite(*out);
}

/* Math.round: the nearest integer, halves toward +infinity. */
static double
js_round(double v)
{
	double		r = floor(v);

	if (v - r >= 0.5)
		r += 1;
	return r;
}

/* ---------------------------------------------------------------- time */

static int
days_in_month(long y, int m)
{
	static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : dim[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static long
days_from_civil(long y, int m, int d)
{
	long		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void
civil_from_days(long z, long *y, int *m, int *d)
{
	long		era,
				doe,
				yoe,
				doy,
				mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool
digits(const char *p, int n, int *out)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

/*
 * "YYYY-MM-DD HH:MM[:SS[.fff...]][Z|+HH:MM|-HH:MM]" (a "T" may stand for
 * the blank) -> "YYYY-MM-DDTHH:MM:SS.mmmZ".  Without a zone the time is UTC
 * (the upstream CSV's convention); an offset is folded into UTC; fractions
 * beyond milliseconds are cut.
 */
static const char *
utc_instant(ki_arena *a, const char *ts)
{
	int			year,
				mon,
				day,
				hh,
				mm,
				ss = 0,
				ms = 0,
				off = 0;
	const char *p = ts;
	long		days,
				secs,
				y;
	char		out[80];

	if (!digits(p, 4, &year) || p[4] != '-' || !digits(p + 5, 2, &mon) || p[7] != '-' ||
		!digits(p + 8, 2, &day) || (p[10] != ' ' && p[10] != 'T') ||
		!digits(p + 11, 2, &hh) || p[13] != ':' || !digits(p + 14, 2, &mm))
		return NULL;
	p += 16;
	if (*p == ':')
	{
		if (!digits(p + 1, 2, &ss))
			return NULL;
		p += 3;
		if (*p == '.')
		{
			int			n = 0;

			p++;
			if (!isdigit((unsigned char) *p))
				return NULL;
			while (isdigit((unsigned char) *p))
			{
				if (n < 3)
					ms = ms * 10 + (*p - '0');
				n++;
				p++;
			}
			for (; n < 3; n++)
				ms *= 10;
		}
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (*p == '+' || *p == '-')
	{
		int			oh,
					om;

		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return NULL;
		off = (oh * 60 + om) * (*p == '-' ? -1 : 1);
		p += 6;
	}
	if (*p != '\0')
		return NULL;
	if (mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon) ||
		hh > 23 || mm > 59 || ss > 59)
		return NULL;

	days = days_from_civil(year, mon, day);
	secs = days * 86400L + hh * 3600L + mm * 60L + ss - off * 60L;
	days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	secs -= days * 86400;
	civil_from_days(days, &y, &mon, &day);
	if (y < 0 || y > 9999)
		return NULL;
	snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int) y, mon, day,
			 (int) (secs / 3600), (int) ((secs / 60) % 60), (int) (secs % 60), ms);
	return ki_strndup(a, out, strlen(out));
}

/* ---------------------------------------------------------------- axes */

typedef struct axis_env
{
	int			n;
	const char *name[KI_LIGER_MAX_AXES * 2];
	double		value[KI_LIGER_MAX_AXES * 2];
} axis_env;

static bool
env_get(const axis_env *env, const char *name, size_t len, double *v)
{
	for (int i = 0; i < env->n; i++)
		if (strlen(env->name[i]) == len && memcmp(env->name[i], name, len) == 0)
		{
			*v = env->value[i];
			return true;
		}
	return false;
}

/* A derived-axis expression: integers, axis names, + - * // %, parentheses. */
typedef struct expr
{
	const char *p;
	const axis_env *env;
	bool		ok;
} expr;

static double expr_sum(expr *e);

static void
expr_blank(expr *e)
{
	while (*e->p == ' ')
		e->p++;
}

static double
expr_factor(expr *e)
{
	expr_blank(e);
	if (*e->p == '(')
	{
		double		v;

		e->p++;
		v = expr_sum(e);
		expr_blank(e);
		if (*e->p != ')')
			e->ok = false;
		else
			e->p++;
		return v;
	}
	if (isdigit((unsigned char) *e->p))
	{
		double		v = 0;

		while (isdigit((unsigned char) *e->p))
			v = v * 10 + (*e->p++ - '0');
		return v;
	}
	if (islower((unsigned char) *e->p) || *e->p == '_')
	{
		const char *s = e->p;
		double		v = 0;

		while (islower((unsigned char) *e->p) || isdigit((unsigned char) *e->p) || *e->p == '_')
			e->p++;
		if (!env_get(e->env, s, (size_t) (e->p - s), &v))
			e->ok = false;
		return v;
	}
	e->ok = false;
	return 0;
}

static double
expr_product(expr *e)
{
	double		v = expr_factor(e);

	for (;;)
	{
		expr_blank(e);
		if (e->p[0] == '/' && e->p[1] == '/')
		{
			double		r;

			e->p += 2;
			r = expr_factor(e);
			if (r == 0)
				e->ok = false;
			else
				v = floor(v / r);
		}
		else if (*e->p == '*')
		{
			e->p++;
			v *= expr_factor(e);
		}
		else if (*e->p == '%')
		{
			double		r;

			e->p++;
			r = expr_factor(e);
			if (r == 0 || fabs(v) > 9007199254740992.0 || fabs(r) > 9007199254740992.0)
				e->ok = false;
			else
				v = (double) ((int64_t) v % (int64_t) r);
		}
		else
			return v;
	}
}

static double
expr_sum(expr *e)
{
	double		v = expr_product(e);

	for (;;)
	{
		expr_blank(e);
		if (*e->p == '+')
		{
			e->p++;
			v += expr_product(e);
		}
		else if (*e->p == '-')
		{
			e->p++;
			v -= expr_product(e);
		}
		else
			return v;
	}
}

static bool
eval_expression(const char *text, const axis_env *env, double *out)
{
	expr		e = {text, env, true};

	*out = expr_sum(&e);
	expr_blank(&e);
	return e.ok && *e.p == '\0';
}

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

/* "axis<value>-..." over the axes sorted by name, then "-<dtype>". */
static char *
case_key(ki_arena *a, const ki_liger_binding *b)
{
	int			order[KI_LIGER_MAX_AXES];
	ki_buf		buf;

	for (int i = 0; i < b->naxes; i++)
		order[i] = i;
	for (int i = 1; i < b->naxes; i++)
		for (int j = i; j > 0 && strcmp(b->axis[order[j - 1]], b->axis[order[j]]) > 0; j--)
		{
			int			t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	ki_buf_init(&buf, a, 128);
	for (int i = 0; i < b->naxes; i++)
	{
		char		tmp[32];

		ki_buf_puts(&buf, b->axis[order[i]]);
		ki_format_number(b->value[order[i]], tmp);
		ki_buf_puts(&buf, tmp);
		ki_buf_putc(&buf, '-');
	}
	ki_buf_puts(&buf, b->dtype);
	return (char *) ki_buf_cstr(&buf);
}

/* ---------------------------------------------------------------- JSON writer */

typedef struct jw
{
	ki_buf		buf;
	bool		first[KI_MAX_DEPTH + 1];
	int			depth;
	bool		after_key;
} jw;

static void
jw_init(jw *w, ki_arena *a)
{
	ki_buf_init(&w->buf, a, 2048);
	w->depth = 0;
	w->after_key = false;
	w->first[0] = true;
}

static void
jw_sep(jw *w)
{
	if (w->after_key)
	{
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && !w->first[w->depth])
		ki_buf_putc(&w->buf, ',');
	w->first[w->depth] = false;
}

static void
jw_raw_string(jw *w, const char *s)
{
	ki_buf_putc(&w->buf, '"');
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
	{
		if (*p == '"' || *p == '\\')
		{
			ki_buf_putc(&w->buf, '\\');
			ki_buf_putc(&w->buf, (char) *p);
		}
		else if (*p < 0x20)
		{
			char		esc[8];

			snprintf(esc, sizeof esc, "\\u%04x", *p);
			ki_buf_puts(&w->buf, esc);
		}
		else
			ki_buf_putc(&w->buf, (char) *p);
	}
	ki_buf_putc(&w->buf, '"');
}

static void
jw_open(jw *w, char c)
{
	jw_sep(w);
	ki_buf_putc(&w->buf, c);
	if (w->depth < KI_MAX_DEPTH)
		w->depth++;
	w->first[w->depth] = true;
}

static void
jw_close(jw *w, char c)
{
	ki_buf_putc(&w->buf, c);
	if (w->depth > 0)
		w->depth--;
}

static void
jw_key(jw *w, const char *k)
{
	jw_sep(w);
	jw_raw_string(w, k);
	ki_buf_putc(&w->buf, ':');
	w->after_key = true;
}

static void
jw_str(jw *w, const char *s)
{
	jw_sep(w);
	jw_raw_string(w, s);
}

static void
jw_num(jw *w, double d)
{
	char		tmp[32];

	jw_sep(w);
	ki_format_number(d, tmp);
	ki_buf_puts(&w->buf, tmp);
}

static void
jw_kv(jw *w, const char *k, const char *v)
{
	jw_key(w, k);
	jw_str(w, v);
}

static void
jw_kn(jw *w, const char *k, double v)
{
	jw_key(w, k);
	jw_num(w, v);
}

static void
jw_header(jw *w, const char *kind)
{
	jw_open(w, '{');
	jw_kv(w, "apiVersion", KI_API_VERSION);
	jw_kv(w, "kind", kind);
}

/* ---------------------------------------------------------------- building */

typedef struct build
{
	ki_arena   *a;
	ki_liger_result *out;
	const char *reason;
} build;

/* Parse, validate, normalize and digest one manifest's text. */
static bool
finish(build *bd, jw *w, ki_liger_part part, ki_kind want)
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
			bd->reason = afmt(bd->a, "invalid %s manifest: %s%s%s (%s)",
							  ki_liger_part_names[part], errs.items[0].path,
							  errs.items[0].path[0] ? ": " : "", errs.items[0].message,
							  errs.items[0].rule);
		else
			bd->reason = afmt(bd->a, "invalid %s manifest", ki_liger_part_names[part]);
		return false;
	}
	bd->out->manifest[part] = norm;
	ki_identity_digest(bd->a, norm, bd->out->digest[part]);
	return true;
}

static void
write_dims(jw *w, const ki_liger_tensor *t, const axis_env *bound)
{
	jw_key(w, "shape");
	jw_open(w, '[');
	for (int d = 0; t->dims[d]; d++)
	{
		const char *dim = t->dims[d];

		if (is_literal_dim(dim))
			jw_num(w, strtod(dim, NULL));
		else if (bound == NULL)
			jw_str(w, dim);
		else
		{
			double		v = 0;

			env_get(bound, dim, strlen(dim), &v);
			jw_num(w, v);
		}
	}
	jw_close(w, ']');
}

static void
write_arguments(jw *w, const char *key, const ki_liger_tensor *ts)
{
	jw_key(w, key);
	jw_open(w, '[');
	for (const ki_liger_tensor *t = ts; t->name; t++)
	{
		jw_open(w, '{');
		jw_kv(w, "name", t->name);
		jw_key(w, "tensor");
		jw_open(w, '{');
		write_dims(w, t, NULL);
		jw_kv(w, "dtype", t->dtype ? t->dtype : "float");
		jw_close(w, '}');
		jw_close(w, '}');
	}
	jw_close(w, ']');
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

static bool
build_operation(build *bd, const ki_liger_kernel *k)
{
	jw			w;
	const char *axes[16];
	int			naxes = 0;

	collect_axes(k, k->inputs, axes, &naxes, 16);
	collect_axes(k, k->outputs, axes, &naxes, 16);

	jw_init(&w, bd->a);
	jw_header(&w, "OperationSpec");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", k->slug);
	jw_kv(&w, "title", k->title);
	jw_kv(&w, "description", k->description);
	jw_key(&w, "sourceRefs");
	jw_open(&w, '[');
	jw_open(&w, '{');
	jw_kv(&w, "url", cat(bd->a, KI_LIGER_REPO_URL "/blob/" KI_LIGER_SCRIPTS_COMMIT
						 "/benchmark/scripts/benchmark_", k->csv_name, ".py", (char *) NULL));
	jw_close(&w, '}');
	jw_close(&w, ']');
	jw_close(&w, '}');

	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_kv(&w, "family", k->family);
	jw_key(&w, "axes");
	jw_open(&w, '{');
	for (int i = 0; i < naxes; i++)
	{
		jw_key(&w, axes[i]);
		jw_open(&w, '{');
		jw_kv(&w, "role", "variable");
		jw_kv(&w, "type", "integer");
		jw_close(&w, '}');
	}
	if (k->derived)
		for (const ki_liger_derived *d = k->derived; d->name; d++)
		{
			jw_key(&w, d->name);
			jw_open(&w, '{');
			jw_kv(&w, "role", "derived");
			jw_kv(&w, "type", "integer");
			jw_kv(&w, "expression", d->expression);
			jw_close(&w, '}');
		}
	jw_close(&w, '}');
	write_arguments(&w, "inputs", k->inputs);
	write_arguments(&w, "outputs", k->outputs);
	jw_key(&w, "semantics");
	jw_open(&w, '{');
	jw_kv(&w, "mutation", "none");
	jw_kv(&w, "determinism", "unspecified");
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_OPERATION, KI_KIND_OPERATION_SPEC);
}

static bool
build_implementation(build *bd, const ki_liger_kernel *k, const liger_provider *p)
{
	jw			w;

	jw_init(&w, bd->a);
	jw_header(&w, "ImplementationRevision");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", kebab(bd->a, cat(bd->a, "liger-bench-", k->csv_name, "-", p->provider, (char *) NULL)));
	jw_kv(&w, "title", cat(bd->a, k->title, " · ", p->title, (char *) NULL));
	jw_kv(&w, "description", p->description);
	if (p->baseline)
	{
		jw_key(&w, "labels");
		jw_open(&w, '{');
		jw_kv(&w, "role", "baseline");
		jw_close(&w, '}');
	}
	jw_key(&w, "sourceRefs");
	jw_open(&w, '[');
	jw_open(&w, '{');
	jw_kv(&w, "url", KI_LIGER_REPO_URL);
	jw_close(&w, '}');
	jw_close(&w, ']');
	jw_close(&w, '}');

	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_key(&w, "projectRevision");
	jw_open(&w, '{');
	jw_close(&w, '}');
	jw_key(&w, "operation");
	jw_open(&w, '{');
	jw_kv(&w, "specDigest", bd->out->digest[KI_LIGER_OPERATION]);
	jw_close(&w, '}');
	jw_key(&w, "callable");
	jw_open(&w, '{');
	jw_kv(&w, "language", p->language);
	jw_close(&w, '}');
	jw_key(&w, "support");
	jw_open(&w, '{');
	jw_key(&w, "hardwareArchitectures");
	jw_open(&w, '[');
	jw_close(&w, ']');
	jw_key(&w, "dtypes");
	jw_open(&w, '[');
	jw_close(&w, ']');
	jw_close(&w, '}');
	if (p->pip_package)
	{
		jw_key(&w, "buildVariants");
		jw_open(&w, '[');
		jw_open(&w, '{');
		jw_kv(&w, "name", "pip");
		jw_key(&w, "install");
		jw_open(&w, '{');
		jw_kv(&w, "kind", "pip");
		jw_kv(&w, "package", p->pip_package);
		jw_close(&w, '}');
		jw_close(&w, '}');
		jw_close(&w, ']');
	}
	jw_key(&w, "licensing");
	jw_open(&w, '{');
	jw_kv(&w, "declared", p->declared);
	if (p->concluded)
		jw_kv(&w, "concluded", p->concluded);
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_IMPLEMENTATION, KI_KIND_IMPLEMENTATION_REVISION);
}

static bool
build_workload(build *bd, const ki_liger_kernel *k, const ki_liger_binding *b, const char *key)
{
	jw			w;
	axis_env	env;
	ki_buf		title;

	/* bind the axes, then the derived ones in table order */
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

			if (!eval_expression(d->expression, &env, &v) || env.n >= KI_LIGER_MAX_AXES * 2)
			{
				bd->reason = afmt(bd->a, "derived axis %s = %s cannot be computed", d->name, d->expression);
				return false;
			}
			env.name[env.n] = d->name;
			env.value[env.n++] = v;
		}
	for (const ki_liger_tensor *t = k->inputs; t->name; t++)
		for (int i = 0; t->dims[i]; i++)
		{
			double		v;

			if (!is_literal_dim(t->dims[i]) && !env_get(&env, t->dims[i], strlen(t->dims[i]), &v))
			{
				bd->reason = afmt(bd->a, "axis %s of tensor %s is not bound", t->dims[i], t->name);
				return false;
			}
		}

	ki_buf_init(&title, bd->a, 128);
	ki_buf_puts(&title, k->title);
	ki_buf_puts(&title, " · ");
	for (int i = 0; i < b->naxes; i++)
	{
		char		tmp[32];

		if (i)
			ki_buf_puts(&title, ", ");
		ki_buf_puts(&title, b->axis[i]);
		ki_buf_putc(&title, '=');
		ki_format_number(b->value[i], tmp);
		ki_buf_puts(&title, tmp);
	}
	ki_buf_puts(&title, " · ");
	ki_buf_puts(&title, b->dtype);

	jw_init(&w, bd->a);
	jw_header(&w, "WorkloadCase");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", kebab(bd->a, cat(bd->a, k->slug, "-", key, (char *) NULL)));
	jw_kv(&w, "title", ki_buf_cstr(&title));
	jw_close(&w, '}');

	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_kv(&w, "operationSpecDigest", bd->out->digest[KI_LIGER_OPERATION]);
	jw_key(&w, "axes");
	jw_open(&w, '{');
	for (int i = 0; i < b->naxes; i++)
		jw_kn(&w, b->axis[i], b->value[i]);
	jw_close(&w, '}');
	jw_key(&w, "tensors");
	jw_open(&w, '{');
	for (const ki_liger_tensor *t = k->inputs; t->name; t++)
	{
		jw_key(&w, t->name);
		jw_open(&w, '{');
		write_dims(&w, t, &env);
		jw_kv(&w, "dtype", t->dtype ? t->dtype : b->dtype);
		jw_close(&w, '}');
	}
	jw_close(&w, '}');
	if (b->nscalars > 0)
	{
		jw_key(&w, "scalars");
		jw_open(&w, '{');
		for (int i = 0; i < b->nscalars; i++)
		{
			jw_key(&w, b->scalar[i]);
			jw_open(&w, '{');
			jw_kv(&w, "dtype", "fp32");
			jw_kn(&w, "value", b->scalar_value[i]);
			jw_close(&w, '}');
		}
		jw_close(&w, '}');
	}
	jw_key(&w, "correctness");
	jw_open(&w, '{');
	jw_kv(&w, "comparator", "not_asserted");
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_WORKLOAD, KI_KIND_WORKLOAD_CASE);
}

static bool
build_protocol(build *bd, const liger_mode *m)
{
	jw			w;

	jw_init(&w, bd->a);
	jw_header(&w, "BenchmarkProtocol");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", kebab(bd->a, cat(bd->a, "liger-bench-do-bench-", m->mode, (char *) NULL)));
	jw_kv(&w, "title", cat(bd->a, "Liger benchmark harness · ", m->mode, " pass", (char *) NULL));
	jw_close(&w, '}');
	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_key(&w, "harness");
	jw_open(&w, '{');
	jw_kv(&w, "name", "Liger-Kernel benchmark scripts");
	jw_kv(&w, "repository", KI_LIGER_REPO_URL);
	jw_close(&w, '}');
	jw_key(&w, "measurement");
	jw_open(&w, '{');
	jw_kv(&w, "timer", "cuda_events");
	jw_kv(&w, "primaryStatistic", "median");
	jw_close(&w, '}');
	jw_key(&w, "comparability");
	jw_open(&w, '{');
	jw_kv(&w, "family", "liger_kernel_bench");
	jw_kv(&w, "notes", cat(bd->a, "Timed: ", m->timed, HARNESS_NOTES_TAIL, (char *) NULL));
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_PROTOCOL, KI_KIND_BENCHMARK_PROTOCOL);
}

static bool
build_environment(build *bd, const char *gpu_name, const ki_liger_hardware *hw)
{
	jw			w;
	const char *shown = strncmp(gpu_name, "NVIDIA ", 7) == 0 ? gpu_name + 7 : gpu_name;

	jw_init(&w, bd->a);
	jw_header(&w, "ExecutionEnvironment");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", kebab(bd->a, cat(bd->a, "liger-bench-", gpu_name, (char *) NULL)));
	jw_kv(&w, "title", cat(bd->a, "Liger benchmark host · ", shown, (char *) NULL));
	jw_close(&w, '}');
	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_key(&w, "hardware");
	jw_open(&w, '{');
	jw_kv(&w, "vendor", hw->vendor);
	jw_kv(&w, "product", hw->product);
	jw_kv(&w, "architecture", hw->architecture);
	if (hw->form_factor)
		jw_kv(&w, "formFactor", hw->form_factor);
	jw_close(&w, '}');
	jw_key(&w, "software");
	jw_open(&w, '{');
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_ENVIRONMENT, KI_KIND_EXECUTION_ENVIRONMENT);
}

typedef struct timing
{
	double		ms50,
				ms20,
				ms80;
	bool		spread;
	const char *observed_at;
} timing;

/* kernel/mode/provider/gpu slug/case key/timestamp slug: a row's identity. */
static const char *
external_id_of(ki_arena *a, const ki_liger_kernel *k, const ki_liger_row *row, const char *key)
{
	return cat(a, k->csv_name, "/", row->kernel_operation_mode, "/", row->kernel_provider, "/",
			   kebab(a, row->gpu_name), "/", key, "/", kebab(a, row->timestamp), (char *) NULL);
}

static bool
build_run(build *bd, const ki_liger_kernel *k, const ki_liger_row *row, const char *key,
		  const timing *t)
{
	ki_arena   *a = bd->a;
	jw			w;
	const char *external_id = external_id_of(a, k, row, key);

	bd->out->external_id = external_id;

	jw_init(&w, a);
	jw_header(&w, "BenchmarkRun");
	jw_key(&w, "metadata");
	jw_open(&w, '{');
	jw_kv(&w, "name", kebab(a, cat(a, "liger-", k->csv_name, "-", row->kernel_operation_mode, "-",
								   row->kernel_provider, "-", row->gpu_name, "-", key, "-",
								   row->timestamp, (char *) NULL)));
	jw_kv(&w, "title", cat(a, k->title, " · ", row->kernel_provider, " · ",
						   row->kernel_operation_mode, (char *) NULL));
	jw_key(&w, "labels");
	jw_open(&w, '{');
	jw_kv(&w, "liger_version", row->liger_version);
	jw_close(&w, '}');
	jw_close(&w, '}');

	jw_key(&w, "spec");
	jw_open(&w, '{');
	jw_kv(&w, "implementationDigest", bd->out->digest[KI_LIGER_IMPLEMENTATION]);
	jw_kv(&w, "workloadDigest", bd->out->digest[KI_LIGER_WORKLOAD]);
	jw_kv(&w, "protocolDigest", bd->out->digest[KI_LIGER_PROTOCOL]);
	jw_kv(&w, "environmentDigest", bd->out->digest[KI_LIGER_ENVIRONMENT]);
	jw_kv(&w, "status", "passed");
	jw_key(&w, "timing");
	jw_open(&w, '{');
	jw_kv(&w, "primaryStatistic", "median");
	jw_key(&w, "latencyNs");
	jw_open(&w, '{');
	jw_kn(&w, "median", js_round(t->ms50 * 1e6));
	jw_close(&w, '}');
	jw_close(&w, '}');
	if (t->spread)
	{
		static const char *const stat[2] = {"p20", "p80"};
		double		v[2] = {t->ms20, t->ms80};

		jw_key(&w, "measurements");
		jw_open(&w, '[');
		for (int i = 0; i < 2; i++)
		{
			jw_open(&w, '{');
			jw_kv(&w, "metric", "latency");
			jw_kv(&w, "unit", "ns");
			jw_kv(&w, "statistic", stat[i]);
			jw_kn(&w, "value", js_round(v[i] * 1e6));
			jw_close(&w, '}');
		}
		jw_close(&w, ']');
	}
	jw_key(&w, "sourceNative");
	jw_open(&w, '{');
	jw_kv(&w, "source", "liger-kernel-bench");
	jw_kv(&w, "benchmark", cat(a, k->csv_name, "/", row->kernel_operation_mode, (char *) NULL));
	jw_kv(&w, "externalId", external_id);
	jw_key(&w, "metrics");
	jw_open(&w, '{');
	jw_kn(&w, "ms_50", t->ms50);
	if (t->spread)
	{
		jw_kn(&w, "ms_20", t->ms20);
		jw_kn(&w, "ms_80", t->ms80);
	}
	jw_close(&w, '}');
	jw_close(&w, '}');
	jw_kv(&w, "observedAt", t->observed_at);
	jw_close(&w, '}');
	jw_close(&w, '}');
	return finish(bd, &w, KI_LIGER_RUN, KI_KIND_BENCHMARK_RUN);
}

/* ---------------------------------------------------------------- entry */

/*
 * MiB -> bytes: max_memory_allocated() is a whole number of bytes and the
 * CSV writes bytes / 2^20 in full (a power-of-two scale is exact in binary
 * floating point), so the product must be whole; anything else is refused,
 * not rounded.
 */
static bool
mib_bytes(double mib, int64_t *bytes)
{
	double		b = mib * 1048576.0;

	if (!(b > 0) || b > 9007199254740992.0 || b != floor(b))
		return false;
	*bytes = (int64_t) b;
	return true;
}

static ki_liger_outcome
skip(ki_liger_result *out, const char *reason)
{
	out->outcome = KI_LIGER_SKIPPED;
	out->reason = reason ? reason : "out of memory";
	for (int i = 0; i < KI_LIGER_NPARTS; i++)
	{
		out->manifest[i] = NULL;
		out->digest[i][0] = '\0';
	}
	out->external_id = NULL;
	return KI_LIGER_SKIPPED;
}

ki_liger_outcome
ki_liger_map(ki_arena *a, const ki_liger_row *row, ki_liger_result *out)
{
	const ki_liger_kernel *k;
	const liger_mode *mode = NULL;
	const liger_provider *prov = NULL;
	ki_liger_hardware hw;
	ki_liger_binding b;
	ki_liger_input in;
	ki_errors	errs;
	ki_value   *config;
	timing		t;
	double		x;
	const char *key;
	bool		memory;
	build		bd = {a, out, NULL};

	memset(out, 0, sizeof *out);

	{
		const char *const cols[KI_LIGER_NCOLUMNS] = {
			row->kernel_name, row->kernel_provider, row->kernel_operation_mode,
			row->metric_name, row->metric_unit, row->x_name, row->x_label, row->x_value,
			row->y_value_50, row->y_value_20, row->y_value_80,
			row->extra_benchmark_config_str, row->gpu_name, row->timestamp, row->liger_version
		};

		for (int c = 0; c < KI_LIGER_NCOLUMNS; c++)
			if (cols[c] == NULL)
				return skip(out, afmt(a, "row lacks column %s", ki_liger_columns[c]));
	}

	memory = strcmp(row->metric_name, "memory") == 0;
	if (memory)
	{
		/* torch.cuda.max_memory_allocated() / 2^20, written "MB" */
		if (strcmp(row->metric_unit, "MB") != 0)
			return skip(out, afmt(a, "memory unit '%s' is not MB", row->metric_unit));
	}
	else if (strcmp(row->metric_name, "speed") != 0)
		return skip(out, afmt(a, "unknown metric_name '%s'", row->metric_name));
	else if (strcmp(row->metric_unit, "ms") != 0)
		return skip(out, afmt(a, "speed unit '%s' is not ms", row->metric_unit));

	k = ki_liger_kernel_find(row->kernel_name);
	if (k == NULL)
		return skip(out, afmt(a, "unknown kernel '%s'", row->kernel_name));
	for (size_t i = 0; i < sizeof liger_modes / sizeof liger_modes[0]; i++)
		if (strcmp(liger_modes[i].mode, row->kernel_operation_mode) == 0)
			mode = &liger_modes[i];
	if (mode == NULL)
		return skip(out, afmt(a, "unknown kernel_operation_mode '%s'", row->kernel_operation_mode));
	for (size_t i = 0; i < sizeof liger_providers / sizeof liger_providers[0]; i++)
		if (strcmp(liger_providers[i].provider, row->kernel_provider) == 0)
			prov = &liger_providers[i];
	if (prov == NULL)
		return skip(out, afmt(a, "unknown provider '%s'", row->kernel_provider));

	ki_errors_init(&errs, a);
	config = ki_parse(a, row->extra_benchmark_config_str, strlen(row->extra_benchmark_config_str), &errs);
	if (config == NULL || config->type != KI_OBJECT)
		return skip(out, afmt(a, "extra_benchmark_config_str of %s is not a JSON object", k->csv_name));
	if (!parse_number(row->x_value, &x) || x <= 0 || x != floor(x))
		return skip(out, afmt(a, "x_value '%s' is not a positive integer", row->x_value));

	memset(&b, 0, sizeof b);
	in.arena = a;
	in.x = x;
	in.x_name = row->x_name;
	in.config = config;
	if (!k->bind(k, &in, &b))
		return skip(out, afmt(a, "config not understood for %s: %s", k->csv_name,
							  b.reason ? b.reason : "no binding"));

	if (!ki_liger_gpu_lookup(a, row->gpu_name, &hw))
		return skip(out, afmt(a, "unknown gpu '%s'", row->gpu_name));

	if (!parse_number(row->y_value_50, &t.ms50) || !(t.ms50 > 0))
		return skip(out, afmt(a, "y_value_50 '%s' is not a positive number", row->y_value_50));
	t.spread = parse_number(row->y_value_20, &t.ms20) && parse_number(row->y_value_80, &t.ms80);
	t.observed_at = utc_instant(a, row->timestamp);
	if (t.observed_at == NULL)
		return skip(out, afmt(a, "timestamp '%s' is not understood", row->timestamp));
	if (memory)
	{
		const char *bad = NULL;

		if (!mib_bytes(t.ms50, &out->memory.p50_bytes))
			bad = row->y_value_50;
		else if (t.spread && !mib_bytes(t.ms20, &out->memory.p20_bytes))
			bad = row->y_value_20;
		else if (t.spread && !mib_bytes(t.ms80, &out->memory.p80_bytes))
			bad = row->y_value_80;
		if (bad)
			return skip(out, afmt(a, "memory '%s' MiB is not a positive whole number of bytes below 2^53", bad));
		if (!t.spread)
			out->memory.p20_bytes = out->memory.p80_bytes = 0;
		out->memory.spread = t.spread;
		out->memory.pass = ki_strndup(a, row->kernel_operation_mode, strlen(row->kernel_operation_mode));
		out->memory.observed_at = t.observed_at;
		out->memory.liger_version = ki_strndup(a, row->liger_version, strlen(row->liger_version));
	}

	key = case_key(a, &b);
	if (!build_operation(&bd, k) ||
		!build_implementation(&bd, k, prov) ||
		!build_workload(&bd, k, &b, key) ||
		!build_protocol(&bd, mode) ||
		!build_environment(&bd, row->gpu_name, &hw))
		return skip(out, bd.reason);
	if (memory)
		out->external_id = external_id_of(a, k, row, key);
	else if (!build_run(&bd, k, row, key, &t))
		return skip(out, bd.reason);
	if (a->failed)
		return skip(out, "out of memory");

	out->outcome = memory ? KI_LIGER_MAPPED_MEMORY : KI_LIGER_MAPPED;
	out->reason = NULL;
	return out->outcome;
}
