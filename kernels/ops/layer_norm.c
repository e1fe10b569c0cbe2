/*
 * layer_norm.c: LayerNorm over the hidden dimension of a rows x hidden
 * activation with learned weight and bias (eps 1e-6), as Liger's
 * benchmark_layer_norm.py measures it:
 *   forward   y = (x - mean) * rstd * w + b, saving mean and rstd
 *   backward  dx, dw, db from dy (the forward's mean/rstd prepared, untimed)
 *   full      forward then backward
 *
 * This file holds the float64 reference, the CPU implementation (fp32
 * accumulation), the correctness check and the registry entry.  The CUDA
 * kernels are in layer_norm.cu; the tests in test/kernels/test_kernels.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"
#include "cpu_rows.h"
#include "layer_norm.h"

/* ------------------------------------------------------------ float64 reference */

/* One row forward: y (may be NULL), mean and rstd of x. */
void
kb_layer_norm_ref_row(const double *x, const double *w, const double *b, int64_t H,
				   double *y, double *mean, double *rstd)
{
	double		m = 0,
				v = 0;

	for (int64_t j = 0; j < H; j++)
		m += x[j];
	m /= (double) H;
	for (int64_t j = 0; j < H; j++)
		v += (x[j] - m) * (x[j] - m);
	v /= (double) H;
	*mean = m;
	*rstd = 1.0 / sqrt(v + LN_EPS);
	if (y)
		for (int64_t j = 0; j < H; j++)
			y[j] = (x[j] - m) * *rstd * w[j] + b[j];
}

/* One row backward: dx, and this row's contributions added to dw, db (may be NULL). */
void
kb_layer_norm_ref_row_backward(const double *x, const double *w, const double *dy, int64_t H,
							double *dx, double *dw, double *db)
{
	double		mean,
				rstd,
				c1 = 0,
				c2 = 0;

	kb_layer_norm_ref_row(x, w, w, H, NULL, &mean, &rstd);
	for (int64_t j = 0; j < H; j++)
	{
		double		xhat = (x[j] - mean) * rstd;
		double		wdy = w[j] * dy[j];

		c1 += xhat * wdy;
		c2 += wdy;
		if (dw)
			dw[j] += dy[j] * xhat;
		if (db)
			db[j] += dy[j];
	}
	c1 /= (double) H;
	c2 /= (double) H;
	for (int64_t j = 0; j < H; j++)
	{
		double		xhat = (x[j] - mean) * rstd;

		dx[j] = (w[j] * dy[j] - xhat * c1 - c2) * rstd;
	}
}

/* ------------------------------------------------------------ CPU implementation (fp32 arithmetic, sums carried in double) */

/*
 * Rows read as float (kernels/ops/cpu_rows.h: fp32 in place, bf16 converted
 * once), sums in double over eight lanes (the backward's: float over spans
 * of at most eight terms a lane, carried in double, below), elementwise work
 * in float, in loops the compiler vectorises.
 */
static void
cpu_forward(const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	int			dt = c->dtype;
	float	   *buf = kb_row_scratch(dt, 4 * H);
	const float *w = kb_row_in(c->t[LN_W], dt, 0, H, buf),
			   *b = kb_row_in(c->t[LN_B], dt, 0, H, buf ? buf + H : NULL);

	for (int64_t r = 0; r < R; r++)
	{
		const float *x = kb_row_in(c->t[LN_X], dt, r * H, H, buf ? buf + 2 * H : NULL);
		float	   *y = kb_row_dst(c->t[LN_Y], dt, r * H, buf ? buf + 3 * H : NULL);
		float		m,
					v,
					rs;

		/* the reductions accumulate in double (docs/KERNELS.md, "Tolerances") */
		m = (float) (kb_sum_f(x, H) / (double) H);
		v = (float) (kb_sumsq_dev_f(x, m, H) / (double) H);
		rs = 1.0f / sqrtf(v + (float) LN_EPS);
		((float *) c->t[LN_MEAN])[r] = m;
		((float *) c->t[LN_RSTD])[r] = rs;
		for (int64_t j = 0; j < H; j++)
			y[j] = (x[j] - m) * rs * w[j] + b[j];
		kb_row_out(c->t[LN_Y], dt, r * H, H, y);
	}
	free(buf);
}

/*
 * dweight and dbias sum over rows: each block of LN_ROW_BLOCK rows is summed
 * in float (the products are float already), each block's sums added into the
 * double totals.  A block's float sum of B terms errs by at most (B - 1) u of
 * its magnitudes, within the check's kb_gamma(R) = (4 + sqrt(R)) u for every
 * R (B = min(8, R)), and the double updates, two loads and stores of 8 bytes a
 * column, happen once a block instead of once a row.
 */
#define LN_ROW_BLOCK 8

/*
 * One row's sums: a1 = sum xhat w dy, a2 = sum w dy, and the block's fdw +=
 * dy xhat, fdb += dy.  a1 and a2 sum in eight float lanes over chunks of
 * LN_CHUNK elements (eight terms a lane: at most 7 u of their magnitudes,
 * within the check's kb_gamma(H) for every H) added into double lanes, which
 * leaves one float -> double conversion a lane per chunk instead of two an
 * element.  restrict: the compiler may vectorise.
 */
#define LN_CHUNK (8 * KB_LANES)

static inline void
ln_row_sums(const float *restrict x, const float *restrict w, const float *restrict dy, float m, float rs,
			int64_t H, float *restrict fdw, float *restrict fdb, double *restrict a1, double *restrict a2)
{
	int64_t		j = 0;

	for (int k = 0; k < KB_LANES; k++)
		a1[k] = a2[k] = 0;
	for (; j + LN_CHUNK <= H; j += LN_CHUNK)
	{
		float		f1[KB_LANES] = {0},
					f2[KB_LANES] = {0};

		for (int64_t i = j; i < j + LN_CHUNK; i += KB_LANES)
			for (int k = 0; k < KB_LANES; k++)
			{
				float		xhat = (x[i + k] - m) * rs;
				float		wdy = w[i + k] * dy[i + k];

				f1[k] += xhat * wdy;
				f2[k] += wdy;
				fdw[i + k] += dy[i + k] * xhat;
				fdb[i + k] += dy[i + k];
			}
		for (int k = 0; k < KB_LANES; k++)
		{
			a1[k] += (double) f1[k];
			a2[k] += (double) f2[k];
		}
	}
	for (; j < H; j++)
	{
		float		xhat = (x[j] - m) * rs;
		float		wdy = w[j] * dy[j];

		a1[j % KB_LANES] += (double) (xhat * wdy);
		a2[j % KB_LANES] += (double) wdy;
		fdw[j] += dy[j] * xhat;
		fdb[j] += dy[j];
	}
}

static void
cpu_backward(const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	int			dt = c->dtype;
	double	   *dw = (double *) c->ws;
	double	   *db = dw + H;
	float	   *buf = kb_row_scratch(dt, 4 * H);
	float	   *fdw = (float *) malloc(sizeof(float) * 2 * (size_t) (H > 0 ? H : 1));
	float	   *fdb = fdw + H;
	const float *w = kb_row_in(c->t[LN_W], dt, 0, H, buf);

	memset(dw, 0, sizeof(double) * 2 * (size_t) H);
	for (int64_t r = 0; r < R; r++)
	{
		const float *x = kb_row_in(c->t[LN_X], dt, r * H, H, buf ? buf + H : NULL),
				   *dy = kb_row_in(c->t[LN_DY], dt, r * H, H, buf ? buf + 2 * H : NULL);
		float	   *dx = kb_row_dst(c->t[LN_DX], dt, r * H, buf ? buf + 3 * H : NULL);
		float		m = ((float *) c->t[LN_MEAN])[r];
		float		rs = ((float *) c->t[LN_RSTD])[r];
		double		a1[KB_LANES],
					a2[KB_LANES];
		float		c1,
					c2;
		int64_t		j;

		if (r % LN_ROW_BLOCK == 0)
			memset(fdw, 0, sizeof(float) * 2 * (size_t) H);
		ln_row_sums(x, w, dy, m, rs, H, fdw, fdb, a1, a2);
		c1 = (float) (kb_lanes_total(a1) / (double) H);
		c2 = (float) (kb_lanes_total(a2) / (double) H);
		for (j = 0; j < H; j++)
		{
			float		xhat = (x[j] - m) * rs;

			dx[j] = (w[j] * dy[j] - xhat * c1 - c2) * rs;
		}
		kb_row_out(c->t[LN_DX], dt, r * H, H, dx);
		if (r % LN_ROW_BLOCK == LN_ROW_BLOCK - 1 || r == R - 1)
			for (j = 0; j < H; j++)
			{
				dw[j] += (double) fdw[j];
				db[j] += (double) fdb[j];
			}
	}
	for (int64_t j = 0; j < H; j++)
	{
		kb_set(c->t[LN_DW], dt, j, dw[j]);
		kb_set(c->t[LN_DB], dt, j, db[j]);
	}
	free(fdw);
	free(buf);
}

static int
ln_cpu(const kb_call *c, int phase)
{
	if (phase == KB_PHASE_PREPARE)
	{
		if (c->mode == KB_BACKWARD)
			cpu_forward(c);
		return 0;
	}
	if (c->mode != KB_BACKWARD)
		cpu_forward(c);
	if (c->mode != KB_FORWARD)
		cpu_backward(c);
	return 0;
}

/* ------------------------------------------------------------ registry hooks */

static void
ln_plan(kb_call *c, kb_plan *p, bool cuda)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	int			dt = c->dtype;
	static const char *const names[LN_NT] = {"x", "weight", "bias", "y", "mean", "rstd", "dy", "dx", "dweight", "dbias"};

	c->ntensors = LN_NT;
	for (int i = 0; i < LN_NT; i++)
	{
		p->name[i] = names[i];
		c->tdtype[i] = dt;
		c->rows[i] = R;
		c->cols[i] = H;
	}
	c->rows[LN_W] = c->rows[LN_B] = c->rows[LN_DW] = c->rows[LN_DB] = 1;
	c->cols[LN_MEAN] = c->cols[LN_RSTD] = 1;
	c->tdtype[LN_MEAN] = c->tdtype[LN_RSTD] = KB_FP32;
	p->init[LN_X] = p->init[LN_W] = p->init[LN_B] = p->init[LN_DY] = KB_INIT_UNIFORM;
	p->scale[LN_X] = 2.0;
	p->scale[LN_W] = p->scale[LN_B] = p->scale[LN_DY] = 1.0;
	p->is_output[LN_Y] = c->mode != KB_BACKWARD;
	p->is_output[LN_MEAN] = p->is_output[LN_RSTD] = c->mode != KB_BACKWARD;	/* saved for the backward */
	p->is_output[LN_DX] = p->is_output[LN_DW] = p->is_output[LN_DB] = c->mode != KB_FORWARD;
	/* dw/db partial sums: per block on the GPU (at most 1024 blocks, float), one row on the CPU (double). */
	c->ws_bytes = cuda ? (int64_t) sizeof(float) * 2 * H * 1024 : (int64_t) sizeof(double) * 2 * H;
}

/*
 * The check, with a tolerance derived per value from the arithmetic
 * (docs/KERNELS.md, "Tolerances"): u is fp32's unit roundoff, uo the output
 * dtype's, g = kb_gamma(H) the relative error of a sum of H terms (of the
 * sum of their magnitudes).  For one row, with mean m, rstd rs, xhat =
 * (x - m) rs:
 *   mean   e_m  = g mean|x|                       (+ 2u |m|, stored in fp32)
 *   rstd   e_rs = g/2 + 2u, relative              (+ 2u, stored in fp32)
 *   y      rs |w| (|x - m| e_rs + e_m) + 4u (|xhat w| + |b|) + uo |y|
 *   dx     rs (4u |w dy| + e_x |c1| + |xhat| e_c1 + e_c2) + |dx| (e_rs + 4u + uo)
 *          with e_x = |xhat| e_rs + rs e_m, c1 = mean(xhat w dy), c2 = mean(w dy),
 *          e_c1 = g mean|xhat w dy| + mean(|w dy| e_x), e_c2 = g mean|w dy|
 *   dw, db sums over R rows: kb_gamma(R) sum|dy xhat| + sum |dy| e_x, kb_gamma(R) sum|dy|
 *          (+ uo |value|)
 * A LayerNorm with eps 1e-5 instead of 1e-6 moves rstd by about 3.4e-6
 * (relative, for this input's variance of 4/3): above e_rs for H up to ~8k.
 */
static int
ln_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	int64_t		rows[64];
	int			nr = kb_sample_rows(R, 64, rows);
	double	   *x = malloc(sizeof(double) * (size_t) H * 12);
	double	   *w = x + H,
			   *b = x + 2 * H,
			   *dy = x + 3 * H,
			   *ref = x + 4 * H,
			   *got = x + 5 * H,
			   *dw = x + 6 * H,
			   *db = x + 7 * H,
			   *tol = x + 8 * H,
			   *dwmag = x + 9 * H,
			   *dbmag = x + 10 * H,
			   *dwerr = x + 11 * H;
	double		mean,
				rstd,
				gm,
				gr,
				u = KB_U32,
				g = kb_gamma(H);
	kb_cmp		m;
	int			rc = 0;

	if (!x)
		return -1;
	kb_cmp_init(&m, c->dtype);
	rc |= kb_fetch_rows(be, c, LN_W, 0, 1, w);
	rc |= kb_fetch_rows(be, c, LN_B, 0, 1, b);
	for (int k = 0; k < nr && rc == 0; k++)
	{
		int64_t		r = rows[k];
		double		xabs = 0,
					e_m,
					e_rs = g / 2 + 2 * u;

		m.row = r;
		rc |= kb_fetch_rows(be, c, LN_X, r, 1, x);
		for (int64_t j = 0; j < H; j++)
			xabs += fabs(x[j]);
		e_m = g * xabs / (double) H;
		kb_layer_norm_ref_row(x, w, b, H, ref, &mean, &rstd);
		if (c->mode != KB_BACKWARD)
		{
			double		tm,
						tr;

			rc |= kb_fetch_rows(be, c, LN_Y, r, 1, got);
			rc |= kb_fetch_rows(be, c, LN_MEAN, r, 1, &gm);
			rc |= kb_fetch_rows(be, c, LN_RSTD, r, 1, &gr);
			for (int64_t j = 0; j < H; j++)
				tol[j] = rstd * fabs(w[j]) * (fabs(x[j] - mean) * e_rs + e_m)
					+ 4 * u * (fabs((x[j] - mean) * rstd * w[j]) + fabs(b[j])) + m.u_out * fabs(ref[j]);
			kb_cmp_tol(&m, "y", ref, got, tol, H);
			/* a python implementation may not return the saved mean and rstd (impl.c clears them) */
			if (p->is_output[LN_MEAN])
			{
				tm = e_m + 2 * u * fabs(mean);
				tr = rstd * (e_rs + 2 * u);
				kb_cmp_tol(&m, "mean", &mean, &gm, &tm, 1);
				kb_cmp_tol(&m, "rstd", &rstd, &gr, &tr, 1);
			}
		}
		if (c->mode != KB_FORWARD)
		{
			double		s1 = 0,
						a1 = 0,
						a2 = 0,
						ax = 0,
						e_c1,
						e_c2;

			rc |= kb_fetch_rows(be, c, LN_DY, r, 1, dy);
			for (int64_t j = 0; j < H; j++)
			{
				double		xh = (x[j] - mean) * rstd,
							wdy = w[j] * dy[j],
							e_x = fabs(xh) * e_rs + rstd * e_m;

				s1 += xh * wdy;
				a1 += fabs(xh * wdy);
				a2 += fabs(wdy);
				ax += fabs(wdy) * e_x;
			}
			s1 /= (double) H;
			e_c1 = (g * a1 + ax) / (double) H;
			e_c2 = g * a2 / (double) H;
			kb_layer_norm_ref_row_backward(x, w, dy, H, ref, NULL, NULL);
			rc |= kb_fetch_rows(be, c, LN_DX, r, 1, got);
			for (int64_t j = 0; j < H; j++)
			{
				double		xh = (x[j] - mean) * rstd,
							e_x = fabs(xh) * e_rs + rstd * e_m;

				tol[j] = rstd * (4 * u * fabs(w[j] * dy[j]) + e_x * fabs(s1) + fabs(xh) * e_c1 + e_c2)
					+ fabs(ref[j]) * (e_rs + 4 * u + m.u_out);
			}
			kb_cmp_tol(&m, "dx", ref, got, tol, H);
		}
	}
	/* dweight and dbias sum over every row: checked in full up to 2^28 elements. */
	if (rc == 0 && c->mode != KB_FORWARD && (double) R * (double) H <= (double) (1 << 28))
	{
		double		gR = kb_gamma(R);

		m.row = -1;
		memset(dw, 0, sizeof(double) * (size_t) H * 2);
		memset(dwmag, 0, sizeof(double) * (size_t) H * 3);
		for (int64_t r = 0; r < R && rc == 0; r++)
		{
			double		xabs = 0,
						e_m,
						e_rs = kb_gamma(H) / 2 + 2 * u;

			rc |= kb_fetch_rows(be, c, LN_X, r, 1, x);
			rc |= kb_fetch_rows(be, c, LN_DY, r, 1, dy);
			kb_layer_norm_ref_row_backward(x, w, dy, H, ref, dw, db);
			kb_layer_norm_ref_row(x, w, b, H, NULL, &mean, &rstd);
			for (int64_t j = 0; j < H; j++)
				xabs += fabs(x[j]);
			e_m = kb_gamma(H) * xabs / (double) H;
			for (int64_t j = 0; j < H; j++)
			{
				double		xh = (x[j] - mean) * rstd;

				dwmag[j] += fabs(dy[j] * xh);
				dbmag[j] += fabs(dy[j]);
				dwerr[j] += fabs(dy[j]) * (fabs(xh) * e_rs + rstd * e_m);
			}
		}
		for (int64_t j = 0; j < H; j++)
			tol[j] = gR * dwmag[j] + dwerr[j] + m.u_out * fabs(dw[j]);
		rc |= kb_fetch_rows(be, c, LN_DW, 0, 1, got);
		kb_cmp_tol(&m, "dweight", dw, got, tol, H);
		for (int64_t j = 0; j < H; j++)
			tol[j] = gR * dbmag[j] + m.u_out * fabs(db[j]);
		rc |= kb_fetch_rows(be, c, LN_DB, 0, 1, got);
		kb_cmp_tol(&m, "dbias", db, got, tol, H);
	}
	free(x);
	if (rc)
		return -1;
	kb_cmp_finish(&m, out);
	return 0;
}

const kb_op kb_op_layer_norm = {
	.id = KB_OP_LAYER_NORM,
	.name = "layer_norm",
	.slug = "layer-norm",
	.title = "LayerNorm",
	.description = "Layer normalization of a rows\xc3\x97hidden activation with learned weight and bias.",
	.source_url = "https://github.com/linkedin/Liger-Kernel/blob/2120862ba532c9449e72d603ba6324310ae756e7/benchmark/scripts/benchmark_layer_norm.py",
	.family = "layernorm",
	.modes = {true, true, true},
	.timed = {
		"the forward pass y = LayerNorm(x) with weight and bias, saving mean and rstd",
		"the backward pass (dx, dweight, dbias from a random upstream gradient; the forward's mean and rstd computed before timing)",
		"the forward pass followed by the backward pass",
	},
	.naxes = 2,
	.axes = {{"rows", "variable", NULL}, {"hidden", "variable", NULL}},
	.title_axes = {"rows", "hidden", NULL},
	.ndtypes = 2,
	.dtypes = {KB_FP32, KB_BF16},
	.ninputs = 3,
	.inputs = {
		{"x", {"rows", "hidden", NULL}, "float"},
		{"weight", {"hidden", NULL}, "float"},
		{"bias", {"hidden", NULL}, "float"},
	},
	.noutputs = 1,
	.outputs = {{"y", {"rows", "hidden", NULL}, "float"}},
	.nscalars = 1,
	.scalars = {{"eps", "fp32", 1e-6}},
	.c_path = "kernels/ops/layer_norm.c",
	.cu_path = "kernels/ops/layer_norm.cu",
	.cu_symbol = "layer_norm_cuda",
	.variant_notes = {
		"v1: backward with persistent blocks (2 per SM), x and dy in registers",
		"v2: backward with persistent blocks sized by occupancy, the next rows' x and dy copied "
		"asynchronously into shared memory while the current row computes, and a parallel dw/db column sum",
	},
	.plan = ln_plan,
	/* the floors: bytes and FLOPs of one call of each pass (cost.c; kbench_operation_costs) */
	.cost_bytes = {
		"dtype_bytes * (2 * rows * hidden + 2 * hidden) + 8 * rows",
		"dtype_bytes * (3 * rows * hidden + 3 * hidden) + 8 * rows",
		"dtype_bytes * (5 * rows * hidden + 5 * hidden) + 16 * rows",
	},
	.cost_flops = {"8 * rows * hidden", "14 * rows * hidden", "22 * rows * hidden"},
	.cost_compute = "vector",
	.cost_note = {
		"read x, weight, bias; write y and fp32 mean, rstd per row (kernels/ops/layer_norm.c)",
		"read x, dy, weight, mean, rstd; write dx, dweight, dbias (kernels/ops/layer_norm.c)",
		"forward + backward (kernels/ops/layer_norm.c)",
	},
	.cpu = ln_cpu,
	.check = ln_check,
};
