/*
 * cost_expr.c: the cost formulas' arithmetic.  A formula (bytes moved or
 * FLOPs done by one call of an operation's pass) is an expression over the
 * workload's axes and dtype_bytes: numbers, names, + - * /, parentheses,
 * // (floor division: kbench's derived axes only; kbench_cost_eval has none),
 * least(a, b) and greatest(a, b), evaluated in float64 with the usual
 * precedence, left to right, as PostgreSQL evaluates the same text in
 * kbench_cost_eval (sql/43_roofline.sql).  kbench evaluates the registry's
 * formulas here; the extension loads the same texts into
 * kbench_operation_costs, so each formula is written once.
 */
#include "ki_json.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cx
{
	const char *p;
	const char *const *names;
	const double *values;
	int			n;
	const char *bad;			/* first problem, NULL when none */
	char		msg[160];
} cx;

static double sum(cx *e);

static void
blank(cx *e)
{
	while (*e->p == ' ')
		e->p++;
}

static void
fail(cx *e, const char *what)
{
	if (!e->bad)
	{
		snprintf(e->msg, sizeof e->msg, "%s at \"%.20s\"", what, e->p);
		e->bad = e->msg;
	}
}

/* least(a, b) / greatest(a, b): the two arguments after the name. */
static double
call2(cx *e, bool least)
{
	double		a,
				b;

	blank(e);
	if (*e->p != '(')
	{
		fail(e, "( expected");
		return 0;
	}
	e->p++;
	a = sum(e);
	blank(e);
	if (*e->p != ',')
	{
		fail(e, ", expected");
		return 0;
	}
	e->p++;
	b = sum(e);
	blank(e);
	if (*e->p != ')')
	{
		fail(e, ") expected");
		return 0;
	}
	e->p++;
	return least ? (a < b ? a : b) : (a > b ? a : b);
}

static double
factor(cx *e)
{
	blank(e);
	if (*e->p == '-' || *e->p == '+')
	{
		bool		neg = *e->p == '-';

		e->p++;
		return neg ? -factor(e) : factor(e);
	}
	if (*e->p == '(')
	{
		double		v;

		e->p++;
		v = sum(e);
		blank(e);
		if (*e->p != ')')
			fail(e, ") expected");
		else
			e->p++;
		return v;
	}
	if (isdigit((unsigned char) *e->p) || *e->p == '.')
	{
		char	   *end;
		double		v = strtod(e->p, &end);

		if (end == e->p)
			fail(e, "number expected");
		e->p = end;
		return v;
	}
	if (islower((unsigned char) *e->p) || *e->p == '_')
	{
		const char *s = e->p;
		size_t		len;

		while (islower((unsigned char) *e->p) || isdigit((unsigned char) *e->p) || *e->p == '_')
			e->p++;
		len = (size_t) (e->p - s);
		if (len == 5 && strncmp(s, "least", 5) == 0)
			return call2(e, true);
		if (len == 8 && strncmp(s, "greatest", 8) == 0)
			return call2(e, false);
		for (int i = 0; i < e->n; i++)
			if (strlen(e->names[i]) == len && strncmp(e->names[i], s, len) == 0)
				return e->values[i];
		if (!e->bad)
		{
			snprintf(e->msg, sizeof e->msg, "unknown name \"%.*s\"", (int) (len < 40 ? len : 40), s);
			e->bad = e->msg;
		}
		return 0;
	}
	fail(e, "value expected");
	return 0;
}

static double
product(cx *e)
{
	double		v = factor(e);

	for (;;)
	{
		blank(e);
		if (*e->p == '*')
		{
			e->p++;
			v *= factor(e);
		}
		else if (e->p[0] == '/' && e->p[1] == '/')
		{
			/* floor division, for derived axes ("channels // channels_per_group", as Liger's mapping writes them) */
			e->p += 2;
			v = floor(v / factor(e));
		}
		else if (*e->p == '/')
		{
			e->p++;
			v /= factor(e);
		}
		else
			return v;
	}
}

static double
sum(cx *e)
{
	double		v = product(e);

	for (;;)
	{
		blank(e);
		if (*e->p == '+')
		{
			e->p++;
			v += product(e);
		}
		else if (*e->p == '-')
		{
			e->p++;
			v -= product(e);
		}
		else
			return v;
	}
}

bool
ki_cost_eval(const char *expr, const char *const *names, const double *values, int n, double *out,
			 char *err, size_t errlen)
{
	cx			e = {expr, names, values, n, NULL, ""};

	*out = sum(&e);
	blank(&e);
	if (!e.bad && *e.p != '\0')
		fail(&e, "end expected");
	if (e.bad && err && errlen)
		snprintf(err, errlen, "cost formula \"%s\": %s", expr, e.bad);
	return e.bad == NULL;
}
