/*
 * common.c: what every operation's correctness check shares: tolerances by
 * dtype, element comparison, reading rows back from the device, and the
 * deterministic sample of rows checked when the full reference is too slow.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"

/*
 * Tolerances.  Every operation's check derives a tolerance per value from
 * the arithmetic (kb_cmp_tol, docs/KERNELS.md "Tolerances") with u_out and
 * kb_gamma; the worst |got - ref| / tolerance is kept with the value that
 * set it.  (rtol and atol_factor are kept in the result for its readers; no
 * check compares under them any more.)
 */
void
kb_cmp_init(kb_cmp *m, int dtype)
{
	memset(m, 0, sizeof(*m));
	m->rtol = dtype == KB_BF16 ? 1e-2 : 1e-5;
	m->atol_factor = m->rtol;
	/* bf16: 2^-8, and 1% for the double rounding of an fp32 result to bf16 */
	m->u_out = dtype == KB_BF16 ? 1.01 / 256.0 : KB_U32;
	m->row = -1;
}

double
kb_gamma(int64_t n)
{
	return KB_U32 * (4.0 + sqrt((double) (n > 0 ? n : 1)));
}

/* One value against its tolerance: counts, worst ratio, first mismatch. */
static void
cmp_one(kb_cmp *m, const char *name, int64_t i, double ref, double got, double tol)
{
	double		err = fabs(got - ref);
	double		rel = err / (fabs(ref) > 1e-30 ? fabs(ref) : 1e-30);
	double		ratio;
	bool		ok = isfinite(got) && err <= tol;

	if (!isfinite(got))
		err = rel = INFINITY;
	ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
	if (err > m->max_abs)
		m->max_abs = err;
	if (rel > m->max_rel && isfinite(ref))
		m->max_rel = rel;
	if (ratio > m->worst || (m->n == 0 && !m->worst_at[0]))
	{
		m->worst = ratio;
		snprintf(m->worst_at, sizeof(m->worst_at), "%.40s[%lld]", name, (long long) i);
	}
	m->n++;
	if (ok)
		m->matched++;
	else if (!m->detail[0])
		snprintf(m->detail, sizeof(m->detail), "%s[%lld]: got %.9g, reference %.9g (tolerance %.3g)",
				 name, (long long) i, got, ref, tol);
}

/* Values of one row (m->row >= 0) are named name[row][i], or name[row] when the row has one. */
void
kb_cmp_tol(kb_cmp *m, const char *name, const double *ref, const double *got, const double *tol, int64_t n)
{
	char		rowname[48];

	if (m->row >= 0 && n == 1)
	{
		cmp_one(m, name, m->row, ref[0], got[0], tol[0]);
		return;
	}
	if (m->row >= 0)
	{
		snprintf(rowname, sizeof(rowname), "%s[%lld]", name, (long long) m->row);
		name = rowname;
	}
	for (int64_t i = 0; i < n; i++)
		cmp_one(m, name, i, ref[i], got[i], tol[i]);
}

void
kb_cmp_finish(const kb_cmp *m, kb_correctness *out)
{
	memset(out, 0, sizeof(*out));
	out->checked = 1;
	out->compared = m->n;
	out->max_abs_error = isfinite(m->max_abs) ? m->max_abs : 1e308;
	out->max_rel_error = isfinite(m->max_rel) ? m->max_rel : 1e308;
	out->matched_ratio = m->n ? (double) m->matched / (double) m->n : 1.0;
	out->rtol = m->rtol;
	out->atol_factor = m->atol_factor;
	out->worst_ratio = isfinite(m->worst) ? m->worst : 1e308;
	snprintf(out->worst_at, sizeof(out->worst_at), "%s", m->worst_at);
	snprintf(out->detail, sizeof(out->detail), "%s", m->detail);
}

void
kb_cmp_missing(kb_cmp *m, const char *name)
{
	if (m->worst != INFINITY)
	{
		m->worst = INFINITY;
		snprintf(m->worst_at, sizeof(m->worst_at), "%.40s", name);
	}
	m->max_abs = INFINITY;
	m->n++;
	if (!m->detail[0])
		snprintf(m->detail, sizeof(m->detail), "%s: not returned by the implementation", name);
}

int
kb_returned(kb_backend *be, const kb_call *c, const kb_plan *p, int ti)
{
	unsigned char b;

	if (!c->t[ti])
		return 0;
	if (kb_be_to_host(be, &b, c->t[ti], 1) != KBC_OK)
		return -1;
	return !p->not_returned[ti];
}

int
kb_fetch_rows(kb_backend *be, const kb_call *c, int ti, int64_t row0, int64_t nrows, double *out)
{
	size_t		es = kb_dtype_size(c->tdtype[ti]);
	int64_t		n = nrows * c->cols[ti];
	void	   *tmp = malloc((size_t) n * es + 1);
	int			rc;

	/* a cancel reaches a check between two rows it reads (issue 29 item 4) */
	if (be->req && kb_req_stopping(be->req))
	{
		free(tmp);
		snprintf(be->err, sizeof(be->err), "canceled while checking against the float64 reference");
		return KBC_ERROR;
	}
	if (!tmp)
	{
		snprintf(be->err, sizeof(be->err), "out of host memory reading %s rows", "output");
		return KBC_NOMEM;
	}
	rc = kb_be_to_host(be, tmp, (const char *) c->t[ti] + (size_t) (row0 * c->cols[ti]) * es, (size_t) n * es);
	if (rc == KBC_OK)
		for (int64_t i = 0; i < n; i++)
			out[i] = kb_get(tmp, c->tdtype[ti], i);
	free(tmp);
	return rc;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return x < y ? -1 : x > y;
}

/* All rows when rows <= max; else the first, the last and hashed ones. */
int
kb_sample_rows(int64_t rows, int max, int64_t *out)
{
	int			n = 0;

	if (rows <= max)
	{
		for (int64_t r = 0; r < rows; r++)
			out[n++] = r;
		return n;
	}
	out[n++] = 0;
	out[n++] = rows - 1;
	for (uint64_t k = 0; n < max && k < 1000; k++)
	{
		int64_t		r = (int64_t) (kb_hash(0x5eedULL, 99, k) % (uint64_t) rows);
		bool		dup = false;

		for (int i = 0; i < n; i++)
			dup |= out[i] == r;
		if (!dup)
			out[n++] = r;
	}
	qsort(out, (size_t) n, sizeof(int64_t), cmp_i64);
	return n;
}
