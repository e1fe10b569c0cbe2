/*
 * liger_expr.c: the values of bound axes and the evaluator of derived-axis
 * expressions (integers, axis names, + - * // %, parentheses).
 */
#include "liger_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

bool
ki_liger_env_get(const ki_liger_env *env, const char *name, size_t len, double *v)
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
	const ki_liger_env *env;
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
		if (!ki_liger_env_get(e->env, s, (size_t) (e->p - s), &v))
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

bool
ki_liger_eval_expression(const char *text, const ki_liger_env *env, double *out)
{
	expr		e = {text, env, true};

	*out = expr_sum(&e);
	expr_blank(&e);
	return e.ok && *e.p == '\0';
}
