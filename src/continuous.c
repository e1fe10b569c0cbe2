/*
 * continuous.c: the arithmetic of continuous benchmarking
 * (sql/50_continuous.sql, docs/ANALYTICS.md "Continuous benchmarking").
 *
 *   kbench_segment(float8[], penalty, min_size, min_change_pct)
 *       change points of a series: PELT (optimal partitioning with pruning)
 *       under a penalised Gaussian mean-shift cost, noise from the median
 *       absolute successive difference; steps smaller than min_change_pct
 *       merged away.  Returns the 1-based first point of every segment but
 *       the first.
 *   kbench__judge(method, series float8[], threshold, min_change_pct,
 *                 window, persistence)
 *       the last point of a series against the points before it, as an
 *       alert rule's method says (percent, zscore, ttest, changepoint).
 *   kbench__copying_into(rel oid)
 *       whether the statement executing is a COPY FROM into rel, named with
 *       its schema (a restore): the alert trigger skips those (issue 24,
 *       item 7: decided by the parsed statement, never by its text).
 *   kernelindex.confirm_alerts (GUC)
 */
#include "kernelindex.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/portal.h"

static bool ki_confirm_alerts = true;

/* Called by _PG_init (init.c), before the prefix is reserved. */
void
ki_continuous_init(void)
{
	DefineCustomBoolVariable("kernelindex.confirm_alerts",
							 "Queue a confirmation rerun when an alert opens.",
							 "When on, an alert on a series that this server's workers can rerun queues one job; its result confirms or refutes the alert.",
							 &ki_confirm_alerts, true, PGC_USERSET, 0, NULL, NULL, NULL);
}

/* The elements of a float8[] (no NULLs allowed); n set. */
static double *
float8_array(ArrayType *a, int *n, const char *what)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *v;
	int			i;

	if (ARR_NDIM(a) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", what)));
	deconstruct_array(a, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, n);
	v = palloc(sizeof(double) * (*n + 1));
	for (i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", what)));
		v[i] = DatumGetFloat8(elems[i]);
		if (isnan(v[i]) || isinf(v[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%s must contain finite numbers", what)));
	}
	return v;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static double
median_of(const double *v, int n)
{
	double	   *s;
	double		m;

	if (n <= 0)
		return NAN;
	s = palloc(sizeof(double) * n);
	memcpy(s, v, sizeof(double) * n);
	qsort(s, n, sizeof(double), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	pfree(s);
	return m;
}

/*
 * The noise of a series: sigma from the median absolute successive
 * difference (a step moves one difference only), 1.4826 * med|d| / sqrt(2).
 * A series without noise gets a tiny sigma (1e-6 of its mean) so that any
 * step stands out and flat stays flat.
 */
static double
noise_sigma(const double *y, int n)
{
	double	   *d;
	double		s,
				mean = 0;
	int			i;

	for (i = 0; i < n; i++)
		mean += fabs(y[i]) / n;
	if (n < 3)
		return fmax(mean * 1e-6, 1e-12);
	d = palloc(sizeof(double) * (n - 1));
	for (i = 1; i < n; i++)
		d[i - 1] = fabs(y[i] - y[i - 1]);
	s = 1.4826 * median_of(d, n - 1) / sqrt(2.0);
	pfree(d);
	return fmax(s, fmax(mean * 1e-6, 1e-12));
}

/*
 * PELT (Killick, Fearnhead & Eckley 2012) for changes in the mean with known
 * noise: cost of a segment = its sum of squared deviations / sigma^2, plus
 * penalty per segment; segments at least min_size long.  Writes the start
 * indexes (0-based) of every segment but the first into cps, ascending;
 * returns how many.
 */
static int
pelt(const double *y, int n, double sigma, double penalty, int min_size, int *cps)
{
	double	   *s1 = palloc(sizeof(double) * (n + 1));
	double	   *s2 = palloc(sizeof(double) * (n + 1));
	double	   *f = palloc(sizeof(double) * (n + 1));
	int		   *last = palloc(sizeof(int) * (n + 1));
	int		   *cand = palloc(sizeof(int) * (n + 1));
	double	   *cost = palloc(sizeof(double) * (n + 1));
	int			ncand = 0,
				t,
				i,
				k,
				ncp;

	s1[0] = s2[0] = 0;
	for (i = 0; i < n; i++)
	{
		double		z = y[i] / sigma;

		s1[i + 1] = s1[i] + z;
		s2[i + 1] = s2[i] + z * z;
	}
	for (t = 0; t <= n; t++)
	{
		f[t] = INFINITY;
		last[t] = -1;
	}
	f[0] = -penalty;
	for (t = min_size; t <= n; t++)
	{
		int			s = t - min_size;
		double		best = INFINITY;
		int			arg = -1;

		/* the candidate that just became eligible (its own cost is known) */
		if (s == 0 || (s >= min_size && isfinite(f[s])))
			cand[ncand++] = s;
		for (i = 0; i < ncand; i++)
		{
			int			a = cand[i];
			double		len = t - a,
						sum = s1[t] - s1[a],
						c = (s2[t] - s2[a]) - sum * sum / len;

			cost[i] = f[a] + fmax(c, 0);
			if (cost[i] + penalty < best)
			{
				best = cost[i] + penalty;
				arg = a;
			}
		}
		f[t] = best;
		last[t] = arg;
		/* pruning: a start that cannot beat f[t] now never will */
		for (i = 0, k = 0; i < ncand; i++)
			if (cost[i] <= f[t])
				cand[k++] = cand[i];
		ncand = k;
	}
	ncp = 0;
	for (t = n; t > 0 && last[t] > 0; t = last[t])
		cps[ncp++] = last[t];
	/* reverse: ascending */
	for (i = 0; i < ncp / 2; i++)
	{
		int			tmp = cps[i];

		cps[i] = cps[ncp - 1 - i];
		cps[ncp - 1 - i] = tmp;
	}
	pfree(s1);
	pfree(s2);
	pfree(f);
	pfree(last);
	pfree(cand);
	pfree(cost);
	return ncp;
}

static double
mean_of(const double *y, int from, int to)
{
	double		s = 0;
	int			i;

	for (i = from; i < to; i++)
		s += y[i];
	return s / (to - from);
}

/*
 * Merge away steps smaller than min_change percent: repeatedly drop the
 * change point whose relative step between its neighbouring segments' means
 * is smallest, while that is below min_change.
 */
static int
merge_small(const double *y, int n, int *cps, int ncp, double min_change)
{
	while (ncp > 0)
	{
		int			i,
					worst = -1;
		double		smallest = INFINITY;

		for (i = 0; i < ncp; i++)
		{
			int			a = i == 0 ? 0 : cps[i - 1],
						b = cps[i],
						c = i == ncp - 1 ? n : cps[i + 1];
			double		before = mean_of(y, a, b),
						after = mean_of(y, b, c),
						step = before != 0 ? fabs(after - before) / fabs(before) * 100 : INFINITY;

			if (step < smallest)
			{
				smallest = step;
				worst = i;
			}
		}
		if (smallest >= min_change)
			break;
		for (i = worst; i < ncp - 1; i++)
			cps[i] = cps[i + 1];
		ncp--;
	}
	return ncp;
}

/* The default penalty: 3 log n (in units of the noise variance). */
static double
default_penalty(int n)
{
	return 3.0 * log((double) Max(n, 2));
}

/* Segment a series; cps gets 0-based segment starts.  Returns the count. */
static int
segment(const double *y, int n, double penalty, int min_size, double min_change, int *cps)
{
	int			ncp;

	if (n < 2 * min_size)
		return 0;
	ncp = pelt(y, n, noise_sigma(y, n), penalty, min_size, cps);
	return merge_small(y, n, cps, ncp, min_change);
}

static void
check_segment_args(double penalty, int min_size, double min_change)
{
	if (!(penalty > 0) || isinf(penalty))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("penalty must be a positive number, got %g", penalty),
				 errdetail("It is the cost of one more segment in units of the noise variance (default 3 log n).")));
	if (min_size < 2 || min_size > 10000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_size must be between 2 and 10000, got %d", min_size),
				 errdetail("It is the fewest points a segment may have (default 5).")));
	if (!(min_change >= 0) || isinf(min_change))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_change_pct must be a number of percent, 0 or more, got %g", min_change),
				 errdetail("Steps smaller than this are merged into their neighbours (default 1).")));
}

/* kbench_segment(values float8[], penalty float8, min_size int, min_change_pct float8) RETURNS int[] */
PG_FUNCTION_INFO_V1(kbench_segment);
Datum
kbench_segment(PG_FUNCTION_ARGS)
{
	int			n,
				ncp,
				i;
	double	   *y;
	double		penalty;
	int			min_size = PG_ARGISNULL(2) ? 5 : PG_GETARG_INT32(2);
	double		min_change = PG_ARGISNULL(3) ? 1 : PG_GETARG_FLOAT8(3);
	int		   *cps;
	Datum	   *out;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	y = float8_array(PG_GETARG_ARRAYTYPE_P(0), &n, "values");
	penalty = PG_ARGISNULL(1) ? default_penalty(n) : PG_GETARG_FLOAT8(1);
	check_segment_args(penalty, min_size, min_change);
	cps = palloc(sizeof(int) * (n + 1));
	ncp = segment(y, n, penalty, min_size, min_change, cps);
	out = palloc(sizeof(Datum) * (ncp + 1));
	for (i = 0; i < ncp; i++)
		out[i] = Int32GetDatum(cps[i] + 1);
	PG_RETURN_ARRAYTYPE_P(construct_array(out, ncp, INT4OID, 4, true, TYPALIGN_INT));
}

/*
 * P(|T| < t), t >= 0, for Student's t with integer df (Abramowitz & Stegun
 * 26.7.3 and 26.7.4, the finite series in cos(theta)).
 */
static double
t_central(double t, int df)
{
	double		th = atan(t / sqrt((double) df)),
				c2 = cos(th) * cos(th),
				term,
				sum;
	int			j;

	if (df % 2 == 1)
	{
		sum = 0;
		if (df > 1)
		{
			term = cos(th);
			sum = term;
			for (j = 1; j <= (df - 3) / 2; j++)
			{
				term *= c2 * (2.0 * j) / (2.0 * j + 1);
				sum += term;
			}
		}
		return 2 / M_PI * (th + sin(th) * sum);
	}
	term = 1;
	sum = 1;
	for (j = 1; j <= (df - 2) / 2; j++)
	{
		term *= c2 * (2.0 * j - 1) / (2.0 * j);
		sum += term;
	}
	return sin(th) * sum;
}

/* The p-quantile (p > 0.5) of Student's t with df degrees of freedom: bisection. */
static double
t_quantile(double p, int df)
{
	double		lo = 0,
				hi = 1;
	int			i;

	while ((1 + t_central(hi, df)) / 2 < p && hi < 1e12)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++)
	{
		double		mid = (lo + hi) / 2;

		if ((1 + t_central(mid, df)) / 2 < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* One point x against prev[0..k-1], as a method says; false when too few. */
typedef struct judged
{
	bool		flagged;
	double		base;
	double		stat;
	double		crit;
} judged;

static judged
judge_point(const char *method, double x, const double *prev, int k, double thr, double min_change, int w)
{
	judged		r = {false, NAN, NAN, NAN};
	int			i;

	if (strcmp(method, "percent") == 0)
	{
		if (k >= 1)
		{
			r.base = median_of(prev, k);
			r.stat = r.base > 0 ? (x - r.base) / r.base * 100 : NAN;
			r.crit = thr;
			r.flagged = r.base > 0 && r.stat > thr && r.stat >= min_change;
		}
	}
	else if (strcmp(method, "zscore") == 0)
	{
		if (k >= Min(w, 10) && k >= 2)
		{
			double		d2 = 0,
						sd;

			r.base = mean_of(prev, 0, k);
			for (i = 1; i < k; i++)
				d2 += (prev[i] - prev[i - 1]) * (prev[i] - prev[i - 1]);
			sd = sqrt(d2 / (k - 1) / 2);
			r.stat = sd > 0 ? (x - r.base) / sd : (x > r.base ? INFINITY : 0);
			r.crit = thr;
			r.flagged = r.base > 0 && r.stat > thr && (x - r.base) / r.base * 100 >= min_change;
		}
	}
	else if (strcmp(method, "ttest") == 0)
	{
		if (k >= Min(w, 8) && k >= 3)
		{
			double		ss = 0,
						sd;

			r.base = mean_of(prev, 0, k);
			for (i = 0; i < k; i++)
				ss += (prev[i] - r.base) * (prev[i] - r.base);
			sd = sqrt(ss / (k - 1));
			r.crit = t_quantile((1 + thr) / 2, k - 1);
			if (sd > 0)
			{
				r.stat = (x - r.base) / (sd * sqrt(1 + 1.0 / k));
				r.flagged = r.base > 0 && r.stat > r.crit && (x - r.base) / r.base * 100 >= min_change;
			}
		}
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown alert method \"%s\"", method),
				 errhint("Use percent, zscore, ttest or changepoint.")));
	return r;
}

/*
 * kbench__judge(method text, series float8[], threshold float8,
 *               min_change_pct float8, window int, persistence int,
 *               OUT flagged bool, OUT baseline_ns float8, OUT statistic float8,
 *               OUT critical float8, OUT compared int, OUT change_at int)
 *
 * series: the points of a series up to the new one (its last element),
 * oldest first: at least the window + persistence - 1 before it, when the
 * series has them.
 *   percent     the median of the window; statistic = slowdown %
 *   zscore      the mean of the window (at least min(window, 10) points),
 *               sigma from its successive differences (von Neumann); z
 *   ttest       the prediction interval mean + t(conf, k-1) sd sqrt(1 + 1/k)
 *               of the window (at least min(window, 8) points)
 *   changepoint the last window + 1 points segmented (min_size 5, default
 *               penalty); the last change point is change_at points before
 *               the end (1 = the new point); its step in % is the statistic
 * Flagged when the statistic exceeds the threshold and the point is slower
 * than its baseline by min_change_pct, for each of the last persistence
 * points (then change_at = persistence: the first of them).  The baseline
 * and statistic are the new point's.
 */
PG_FUNCTION_INFO_V1(kbench__judge);
Datum
kbench__judge(PG_FUNCTION_ARGS)
{
	TupleDesc	td;
	Datum		values[6];
	bool		nulls[6] = {false, true, true, true, false, true};
	char	   *method;
	double	   *y;
	double		thr,
				min_change;
	int			n,
				w,
				persist,
				j;
	bool		flagged = false;

	if (get_call_result_type(fcinfo, NULL, &td) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_kernelindex.judge must return a record");
	td = BlessTupleDesc(td);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(4))
		PG_RETURN_NULL();
	method = text_to_cstring(PG_GETARG_TEXT_PP(0));
	y = float8_array(PG_GETARG_ARRAYTYPE_P(1), &n, "series");
	thr = PG_GETARG_FLOAT8(2);
	min_change = PG_ARGISNULL(3) ? 0 : PG_GETARG_FLOAT8(3);
	w = Max(PG_GETARG_INT32(4), 1);
	persist = PG_ARGISNULL(5) ? 1 : Max(PG_GETARG_INT32(5), 1);
	values[4] = Int32GetDatum(0);

	if (n == 0)
		;
	else if (strcmp(method, "changepoint") == 0)
	{
		int			from = Max(0, n - 1 - w),
					m = n - from,
					ncp;
		int		   *cps = palloc(sizeof(int) * (m + 1));
		const double *z = y + from;

		ncp = segment(z, m, default_penalty(m), 5, Max(min_change, 0), cps);
		values[4] = Int32GetDatum(m - 1);
		if (ncp > 0)
		{
			int			b = cps[ncp - 1],
						a = ncp > 1 ? cps[ncp - 2] : 0;
			double		base = mean_of(z, a, b),
						after = mean_of(z, b, m),
						stat = (after - base) / base * 100;

			flagged = base > 0 && stat > thr && stat >= min_change;
			values[1] = Float8GetDatum(base);
			values[2] = Float8GetDatum(stat);
			values[3] = Float8GetDatum(thr);
			nulls[1] = nulls[2] = nulls[3] = false;
			values[5] = Int32GetDatum(m - b);
			nulls[5] = false;
		}
	}
	else
	{
		flagged = true;
		for (j = 0; j < persist; j++)
		{
			int			idx = n - 1 - j,
						from = Max(0, idx - w);
			judged		r;

			if (idx < 0)
			{
				flagged = false;
				break;
			}
			r = judge_point(method, y[idx], y + from, idx - from, thr, min_change, w);
			if (j == 0)
			{
				values[1] = Float8GetDatum(r.base);
				nulls[1] = isnan(r.base);
				values[2] = Float8GetDatum(r.stat);
				nulls[2] = isnan(r.stat);
				values[3] = Float8GetDatum(r.crit);
				nulls[3] = isnan(r.crit);
				values[4] = Int32GetDatum(idx - from);
			}
			if (!r.flagged)
			{
				flagged = false;
				break;
			}
		}
		if (flagged)
		{
			values[5] = Int32GetDatum(persist);
			nulls[5] = false;
		}
	}
	values[0] = BoolGetDatum(flagged);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(td, values, nulls)));
}

/*
 * Whether the portal executing now runs a COPY FROM into rel, the target
 * named with its schema, as pg_dump writes it.  The statement is the parsed
 * one the portal holds: a COPY TO, a COPY (query) TO, or any statement of a
 * multi-statement query string is not a COPY FROM, whatever its text says.
 * An unqualified COPY FROM is not taken for a restore (its name resolves by
 * the caller's search_path, which is not the one in force here): its runs
 * are checked, which is the safe side.
 */
PG_FUNCTION_INFO_V1(kbench__copying_into);
Datum
kbench__copying_into(PG_FUNCTION_ARGS)
{
	Oid			rel = PG_GETARG_OID(0);
	ListCell   *lc;

	if (ActivePortal == NULL || ActivePortal->commandTag != CMDTAG_COPY)
		PG_RETURN_BOOL(false);
	foreach(lc, ActivePortal->stmts)
	{
		PlannedStmt *ps = lfirst_node(PlannedStmt, lc);
		CopyStmt   *c;

		if (ps->commandType != CMD_UTILITY || ps->utilityStmt == NULL || !IsA(ps->utilityStmt, CopyStmt))
			continue;
		c = (CopyStmt *) ps->utilityStmt;
		if (c->is_from && c->relation != NULL && c->relation->schemaname != NULL &&
			RangeVarGetRelid(c->relation, NoLock, true) == rel)
			PG_RETURN_BOOL(true);
	}
	PG_RETURN_BOOL(false);
}
