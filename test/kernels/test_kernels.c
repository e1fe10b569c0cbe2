/*
 * test_kernels.c: C unit tests of kernels/ (TAP lines "ok N - ..." /
 * "not ok N - ..."), run on the CPU: the float64 references against
 * independent facts (moments, gradient sums, finite differences), the
 * statistics, the manifests (through the identity core), the seed
 * digests, request validation, and kb_run's control paths (repeat,
 * cancel, deadline, progress).  TAP_START offsets the numbering.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "kbench.h"
#include "ki_json.h"
#include "ops/cpu_rows.h"
#include "ops/megatron_cross_entropy.h"
#include "ops/distill_jsd_loss.h"

static int	ntest;
static int	nfail;

static void
ok(int cond, const char *fmt,...)
{
	va_list		ap;

	printf("%sok %d - ", cond ? "" : "not ", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		nfail++;
}

static double
urand(uint64_t i)
{
	return (double) kb_uniform(42, 7, i);
}

/* ------------------------------------------------------------ the CPU implementations' exp */

/*
 * kb_expf (kernels/ops/cpu_rows.h) against libm's double exp: within 2 ulp
 * of the correctly rounded value over [-87, 88] (the range it is exact in
 * the normal floats), 0.25 ulp steps through [-20, 20] where softmaxes live,
 * and its clamps.
 */
static void
test_expf(void)
{
	double		worst = 0,
				worst_x = 0;
	int			n = 0;

	for (int pass = 0; pass < 2; pass++)
	{
		double		lo = pass ? -20.0 : -87.0,
					hi = pass ? 20.0 : 88.0,
					step = pass ? 1.0 / 4096.0 : 1.0 / 64.0;

		for (double x = lo; x <= hi; x += step, n++)
		{
			float		xf = (float) x;
			double		ref = exp((double) xf);
			double		ulp = ldexp(1.0, ilogb(ref) - 23);
			double		e = fabs((double) kb_expf(xf) - ref) / ulp;

			if (e > worst)
				worst = e, worst_x = xf;
		}
	}
	ok(worst <= 2.0, "kb_expf within 2 ulp of exp over %d points of [-87, 88] (worst %.2f ulp at %.6g)",
	   n, worst, worst_x);
	ok(kb_expf(0.0f) == 1.0f && fabs((double) kb_expf(1.0f) - 2.718281828459045) <= 2.4e-7,
	   "kb_expf(0) = 1 exactly, kb_expf(1) = e within an ulp");
	ok(kb_expf(-200.0f) > 0 && kb_expf(-200.0f) < 2e-38f && isfinite(kb_expf(200.0f)) && kb_expf(200.0f) > 1e38f,
	   "kb_expf clamps: a large negative argument gives a value under 2e-38, a large positive one a finite 1.65e38");
}

/* ------------------------------------------------------------ references */

static void
test_layer_norm_ref(void)
{
	enum { H = 257 };
	double		x[H], w[H], b[H], y[H], dy[H], dx[H], dxp[H], mean, rstd, m = 0, v = 0;
	double		maxerr = 0;

	for (int j = 0; j < H; j++)
	{
		x[j] = 3 + 2 * urand(j);
		w[j] = 1;
		b[j] = 0;
		dy[j] = urand(1000 + j);
	}
	kb_layer_norm_ref_row(x, w, b, H, y, &mean, &rstd);
	for (int j = 0; j < H; j++)
		m += y[j];
	m /= H;
	for (int j = 0; j < H; j++)
		v += (y[j] - m) * (y[j] - m);
	v /= H;
	ok(fabs(m) < 1e-12 && fabs(v - 1) < 1e-4, "layer_norm reference: a row has mean 0 and variance 1 before the affine (mean %.2g, var %.8f)", m, v);

	/* dx against central differences of L = sum(dy * y) with random w, b. */
	for (int j = 0; j < H; j++)
	{
		w[j] = 1 + 0.5 * urand(2000 + j);
		b[j] = urand(3000 + j);
	}
	kb_layer_norm_ref_row_backward(x, w, dy, H, dx, NULL, NULL);
	for (int j = 0; j < H; j += 16)
	{
		double		h = 1e-6, lp = 0, lm = 0, xs = x[j];

		x[j] = xs + h;
		kb_layer_norm_ref_row(x, w, b, H, y, &mean, &rstd);
		for (int k = 0; k < H; k++)
			lp += dy[k] * y[k];
		x[j] = xs - h;
		kb_layer_norm_ref_row(x, w, b, H, y, &mean, &rstd);
		for (int k = 0; k < H; k++)
			lm += dy[k] * y[k];
		x[j] = xs;
		dxp[j] = (lp - lm) / (2 * h);
		if (fabs(dxp[j] - dx[j]) > maxerr)
			maxerr = fabs(dxp[j] - dx[j]);
	}
	ok(maxerr < 1e-6, "layer_norm reference: dx matches finite differences (max error %.2g)", maxerr);
}

static void
test_ce_ref(void)
{
	enum { V = 1000 };
	double		z[V], g[V], sum = 0, loss;

	for (int j = 0; j < V; j++)
		z[j] = 4 * urand(j);
	loss = kb_megatron_ce_ref_row(z, V, 17, 1.0, g);
	for (int j = 0; j < V; j++)
		sum += g[j];
	ok(fabs(sum) < 1e-12, "megatron_cross_entropy reference: the gradient of a row sums to zero (%.2g)", sum);
	ok(loss > 0 && g[17] < 0, "megatron_cross_entropy reference: loss positive, gradient negative at the target");
	{
		double		h = 1e-6, zs = z[3], lp, lm;

		z[3] = zs + h;
		lp = kb_megatron_ce_ref_row(z, V, 17, 1.0, NULL);
		z[3] = zs - h;
		lm = kb_megatron_ce_ref_row(z, V, 17, 1.0, NULL);
		z[3] = zs;
		ok(fabs((lp - lm) / (2 * h) - g[3]) < 1e-7, "megatron_cross_entropy reference: gradient matches finite differences");
	}
}

static void
test_jsd_ref(void)
{
	enum { V = 50 };
	double		x[V], y[V], dx[V], mx = -1e9, s = 0, loss, maxerr = 0;

	for (int j = 0; j < V; j++)
	{
		x[j] = 2 * urand(j);
		mx = fmax(mx, x[j]);
	}
	for (int j = 0; j < V; j++)
		s += exp(x[j] - mx);
	for (int j = 0; j < V; j++)
		x[j] -= mx + log(s);
	loss = kb_jsd_ref_row(x, x, V, 0.5, dx);
	{
		double		gmax = 0;

		for (int j = 0; j < V; j++)
			gmax = fmax(gmax, fabs(dx[j]));
		ok(fabs(loss) < 1e-15 && gmax < 1e-15, "jsd reference: identical distributions give loss 0 and gradient 0");
	}
	for (int j = 0; j < V; j++)
		y[j] = x[(j * 7) % V];
	kb_jsd_ref_row(x, y, V, 0.5, dx);
	for (int j = 0; j < V; j++)
	{
		double		h = 1e-6, xs = x[j], lp, lm;

		x[j] = xs + h;
		lp = kb_jsd_ref_row(x, y, V, 0.5, NULL);
		x[j] = xs - h;
		lm = kb_jsd_ref_row(x, y, V, 0.5, NULL);
		x[j] = xs;
		maxerr = fmax(maxerr, fabs((lp - lm) / (2 * h) - dx[j]));
	}
	ok(maxerr < 1e-8, "jsd reference: gradient matches finite differences (max error %.2g)", maxerr);
	loss = kb_jsd_ref_row(x, y, V, 0.5, NULL);
	ok(loss > 0 && loss <= log(2) + 1e-12, "jsd reference: 0 < JSD <= log 2 for different distributions (%.4f)", loss);
	/* the backward: the gradient of the loss of log_softmax(z) in z, at z = x (already log-probabilities) */
	{
		double		dz[V], z[V], lz[V], sum = 0;

		kb_jsd_ref_row(x, y, V, 0.5, dx);
		kb_jsd_ref_row_backward(x, dx, V, dz);
		maxerr = 0;
		for (int j = 0; j < V; j++)
		{
			double		h = 1e-6, f[2];

			sum += dz[j];
			for (int side = 0; side < 2; side++)
			{
				double		m = -1e9, se = 0;

				for (int k = 0; k < V; k++)
					z[k] = x[k] + (k == j ? (side ? -h : h) : 0);
				for (int k = 0; k < V; k++)
					m = fmax(m, z[k]);
				for (int k = 0; k < V; k++)
					se += exp(z[k] - m);
				for (int k = 0; k < V; k++)
					lz[k] = z[k] - m - log(se);
				f[side] = kb_jsd_ref_row(lz, y, V, 0.5, NULL);
			}
			maxerr = fmax(maxerr, fabs((f[0] - f[1]) / (2 * h) - dz[j]));
		}
		ok(maxerr < 1e-8, "jsd backward reference: grad_logits matches finite differences through log_softmax (max error %.2g)", maxerr);
		ok(fabs(sum) < 1e-12, "jsd backward reference: grad_logits sums to 0 over a row (%.2g)", sum);
	}
}

/* Total distillation loss of tiny double inputs; grads when gx/gw are not NULL. */
static double
distill_total(int T, int V, int H, int Hs, const double *xs, const double *ws, const double *xt, const double *wt,
			  const int64_t *tg, double *gx, double *gw)
{
	double		total = 0;
	double		zs[16], zt[16], dz[16];

	if (gx)
		memset(gx, 0, sizeof(double) * T * Hs);
	if (gw)
		memset(gw, 0, sizeof(double) * V * Hs);
	for (int t = 0; t < T; t++)
	{
		for (int v = 0; v < V; v++)
		{
			zs[v] = zt[v] = 0;
			for (int i = 0; i < Hs; i++)
				zs[v] += xs[t * Hs + i] * ws[v * Hs + i];
			for (int i = 0; i < H; i++)
				zt[v] += xt[t * H + i] * wt[v * H + i];
		}
		total += kb_distill_jsd_ref_token(zs, zt, V, tg[t], T, dz);
		for (int v = 0; v < V; v++)
			for (int i = 0; i < Hs; i++)
			{
				if (gx)
					gx[t * Hs + i] += dz[v] * ws[v * Hs + i];
				if (gw)
					gw[v * Hs + i] += dz[v] * xs[t * Hs + i];
			}
	}
	return total;
}

static void
test_distill_ref(void)
{
	enum { T = 3, V = 7, H = 8, Hs = 4 };
	double		xs[T * Hs], ws[V * Hs], xt[T * H], wt[V * H], gx[T * Hs], gw[V * Hs];
	int64_t		tg[T] = {1, 6, 3};
	double		ex = 0, ew = 0, h = 1e-6;

	for (int i = 0; i < T * Hs; i++)
		xs[i] = urand(i);
	for (int i = 0; i < V * Hs; i++)
		ws[i] = urand(100 + i);
	for (int i = 0; i < T * H; i++)
		xt[i] = urand(200 + i);
	for (int i = 0; i < V * H; i++)
		wt[i] = urand(300 + i);
	distill_total(T, V, H, Hs, xs, ws, xt, wt, tg, gx, gw);
	for (int i = 0; i < T * Hs; i++)
	{
		double		s = xs[i], lp, lm;

		xs[i] = s + h;
		lp = distill_total(T, V, H, Hs, xs, ws, xt, wt, tg, NULL, NULL);
		xs[i] = s - h;
		lm = distill_total(T, V, H, Hs, xs, ws, xt, wt, tg, NULL, NULL);
		xs[i] = s;
		ex = fmax(ex, fabs((lp - lm) / (2 * h) - gx[i]));
	}
	for (int i = 0; i < V * Hs; i++)
	{
		double		s = ws[i], lp, lm;

		ws[i] = s + h;
		lp = distill_total(T, V, H, Hs, xs, ws, xt, wt, tg, NULL, NULL);
		ws[i] = s - h;
		lm = distill_total(T, V, H, Hs, xs, ws, xt, wt, tg, NULL, NULL);
		ws[i] = s;
		ew = fmax(ew, fabs((lp - lm) / (2 * h) - gw[i]));
	}
	ok(ex < 1e-8, "distill_jsd_loss reference: grad_student_input matches finite differences (max error %.2g)", ex);
	ok(ew < 1e-8, "distill_jsd_loss reference: grad_student_weight matches finite differences (max error %.2g)", ew);
}

/*
 * megatron_cross_entropy's loss tolerance of one row against its derivation worked by hand
 * (megatron_cross_entropy.c, above ce_check): z = {2, -6, 0.5, 1}, target 2.  mx = 2, the spread
 * max(mx - z) = 8, gamma(4) = (4 + sqrt 4) u = 6u, so e_lse = 6u + 2u (2 + 1.16 * 8) + 2u |lse|
 * = (28.56 + 2 lse) u and the loss's tolerance e_lse + 2u |z_t| + u |loss| = (29.06 + 3 lse) u
 * (loss = lse - 0.5).
 */
static void
test_ce_tolerance(void)
{
	double		z[4] = {2, -6, 0.5, 1};
	double		u = 1.0 / 16777216.0;
	double		lse = log(exp(2.0) + exp(-6.0) + exp(0.5) + exp(1.0));
	double		e_lse = 0,
				tl = kb_megatron_ce_row_tol(z, 4, 2, lse - 0.5, u, &e_lse);

	ok(fabs(e_lse / u - (28.56 + 2 * lse)) < 1e-9, "megatron_cross_entropy: a row's lse error bound is the derivation's, worked by hand (%.6f u, want %.6f u)",
	   e_lse / u, 28.56 + 2 * lse);
	ok(fabs(tl / u - (29.06 + 3 * lse)) < 1e-9, "megatron_cross_entropy: a row's loss tolerance is the derivation's, worked by hand (%.6f u, want %.6f u)",
	   tl / u, 29.06 + 3 * lse);
}

/*
 * distill_jsd_loss's bound on a token's log-probabilities against its derivation worked by hand
 * (distill_jsd_loss.c, above dj_check; temperature 1): zs = {1, -3}, zt = {0.5, 2}, the |product|
 * sums as_ = {0.25, 0.5} over 4 terms and at = {1, 0.125} over 8, ub = 2^-8 (bf16).  E, the worst
 * logit's error, is the student's second: gamma(4) 0.5 + 3 ub = 3u + 3 ub (the teacher's are 6.83u
 * + ub/2 and 0.85u + 2 ub); the spread is the student's 1 - (-3) = 4 (the teacher's 1.5); F =
 * gamma(2) + 2u (2 + 1.16 * 4) + 2u max(|lse_s|, |lse_t|) = (17.28 + sqrt 2) u + 2u lse_t, with
 * lse_t = 2 + log(1 + e^-1.5) the larger; D = 2E + F.
 */
static void
test_dj_tolerance(void)
{
	double		zs[2] = {1, -3},
				zt[2] = {0.5, 2},
				as_[2] = {0.25, 0.5},
				at[2] = {1, 0.125};
	double		u = 1.0 / 16777216.0,
				ub = 1.0 / 256.0;
	double		lse_s = 0,
				lse_t = 0,
				D = kb_dj_log_bound(zs, zt, as_, at, 2, 4, 8, ub, &lse_s, &lse_t);
	double		want_t = 2 + log(1 + exp(-1.5)),
				want = (6 + 17.28 + sqrt(2.0) + 2 * want_t) + 6 * ub / u;

	ok(fabs(lse_s - (1 + log(1 + exp(-4.0)))) < 1e-15 && fabs(lse_t - want_t) < 1e-15,
	   "distill_jsd_loss: a token's two log-sum-exps (%.15f, %.15f)", lse_s, lse_t);
	ok(fabs(D / u - want) < 1e-6, "distill_jsd_loss: a token's log-probability error bound is the derivation's, worked by hand (%.6f u, want %.6f u)",
	   D / u, want);
}

/* ------------------------------------------------------------ statistics */

static void
test_stats(void)
{
	double		v[5] = {4, 1, 100, 3, 2};
	double		s[4] = {1, 2, 3, 4};
	kb_stats	st;
	int64_t		lo, hi;

	memset(&st, 0, sizeof(st));
	kb_compute_stats(v, 5, &st);
	ok(st.median == 3 && st.minimum == 1 && st.maximum == 100 && st.mean == 22 && st.mad == 1,
	   "stats: median, min, max, mean and MAD of a small sample");
	ok(fabs(kb_quantile(s, 4, 0.2) - 1.6) < 1e-12 && fabs(kb_quantile(s, 4, 0.8) - 3.4) < 1e-12,
	   "stats: p20/p80 by linear interpolation (1.6, 3.4 of 1..4)");
	kb_median_ci_ranks(100, &lo, &hi);
	ok(lo == 40 && hi == 61, "stats: 95%% interval of the median of 100 samples is x(40)..x(61) (got %lld..%lld)",
	   (long long) lo, (long long) hi);
	kb_median_ci_ranks(5, &lo, &hi);
	ok(lo == 1 && hi == 5, "stats: fewer than 6 samples give the whole range");
	/* stdrel by hand: deviations from 22 are -18 -21 78 -19 -20, squares 7610, / 4, sqrt, / 22 */
	ok(fabs(kb_stdrel(v, 5) - sqrt(7610.0 / 4) / 22) < 1e-12 && kb_stdrel(v, 1) == 0 && kb_stdrel(s, 0) == 0 &&
	   kb_stdrel((const double[]) {-1, 1}, 2) == 0,
	   "stats: stdev/mean with the n - 1 stdev (1.98262 of the sample above), 0 for one sample, none, or a mean of 0 (got %g, %g)",
	   kb_stdrel(v, 5), kb_stdrel(v, 1));
}

static void
test_comparator(void)
{
	kb_cmp		m;
	kb_correctness c;
	double		ref[4] = {1, -2, 3, 0};
	double		got[4] = {1, -2, 3.0000001, 0};
	double		bad[4] = {1, -2, 3.04, 0};
	double		tol[4] = {1e-6, 1e-6, 1e-6, 1e-6};
	double		wide[4] = {0.05, 0.05, 0.05, 0.05};

	kb_cmp_init(&m, KB_FP32);
	kb_cmp_tol(&m, "t", ref, got, tol, 4);
	kb_cmp_finish(&m, &c);
	ok(c.matched_ratio == 1.0 && c.max_abs_error < 1e-6 && c.worst_ratio > 0.09 && c.worst_ratio < 0.11 &&
	   strcmp(c.worst_at, "t[2]") == 0,
	   "comparator: values within their tolerance match; the worst ratio and its value are kept (%g at %s)",
	   c.worst_ratio, c.worst_at);
	kb_cmp_init(&m, KB_FP32);
	kb_cmp_tol(&m, "t", ref, bad, tol, 4);
	kb_cmp_finish(&m, &c);
	ok(c.matched_ratio == 0.75 && strstr(c.detail, "t[2]") != NULL && c.worst_ratio > 1,
	   "comparator: a value outside its tolerance fails and is named (%s)", c.detail);
	kb_cmp_init(&m, KB_BF16);
	kb_cmp_tol(&m, "t", ref, bad, wide, 4);
	kb_cmp_finish(&m, &c);
	ok(c.matched_ratio == 1.0, "comparator: the same error within a wider tolerance passes");
	got[1] = NAN;
	kb_cmp_init(&m, KB_BF16);
	kb_cmp_tol(&m, "t", ref, got, wide, 4);
	kb_cmp_finish(&m, &c);
	ok(c.matched_ratio < 1.0, "comparator: NaN never matches");
}

/* ------------------------------------------------------------ manifests and digests */

static kb_status
describe(const char *op, const char *mode, const char *axes, kb_result *r)
{
	kb_request	q;

	kb_request_init(&q);
	q.op = op;
	q.mode = mode;
	q.axes_json = axes;
	return kb_describe(&q, r);
}

static void
test_seed_digests(void)
{
	struct
	{
		const char *op, *mode, *axes, *workload, *operation;
	}			seeds[] = {
		{"layer_norm", "backward", "{\"rows\":4096,\"hidden\":4096,\"dtype\":\"fp32\"}",
			"sha256:c18a03ab80eee5adfcd97f582de99ab98c459be25807cde44b48ac623ad3af23",
		"sha256:bc260cced62b2e2874a65a648a5a07ec250fe80ff7cf45f8452b2cd130a252a0"},
		{"megatron_cross_entropy", "backward", "{\"batch\":4,\"seq\":2048,\"vocab\":131072,\"dtype\":\"bf16\"}",
			"sha256:02d31ca14b489b3d3e61d5f1853d5de2fe30be5cd0308cef9704156848753d2e",
		"sha256:9efef198c06e8d940f15c6559883aede757d9608afacaea9803aab5ffbacd44a"},
		{"distill_jsd_loss", "forward", "{\"hidden\":4096,\"tokens\":8192,\"vocab\":128256,\"dtype\":\"bf16\"}",
			"sha256:517aa9063603db73b93c3dc57b38a584c48f4988426eade5cd0de1216f25b094",
		"sha256:4ce30dbf7da705e4eac1f5d2dce3a47ea0174fae11af426c422e0064be63eac5"},
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
	{
		kb_result	r;
		kb_status	st = describe(seeds[i].op, seeds[i].mode, seeds[i].axes, &r);

		ok(st == KB_PASSED && strcmp(r.workload_digest, seeds[i].workload) == 0,
		   "seed workload %s digests to Liger's (%s)", seeds[i].op, r.workload_digest);
		ok(st == KB_PASSED && strcmp(r.operation_digest, seeds[i].operation) == 0,
		   "OperationSpec %s digests to Liger's (%s)", seeds[i].op, r.operation_digest);
		kb_free_result(&r);
	}
}

/* Validate a canonical manifest text with the core and return its digest. */
static bool
core_digest(const char *text, char out[72])
{
	ki_arena	a;
	ki_errors	e;
	bool		okk;

	ki_arena_init_malloc(&a);
	ki_errors_init(&e, &a);
	okk = ki_digest_text(&a, text, strlen(text), out, &e);
	ki_arena_reset(&a);
	return okk;
}

static kb_status
quick_run(const char *op, const char *mode, const char *axes, kb_result *r)
{
	kb_request	q;

	kb_request_init(&q);
	q.op = op;
	q.mode = mode;
	q.axes_json = axes;
	q.warmup_ms = 1;
	q.rep_ms = 3;
	q.flush_bytes = 1 << 16;
	return kb_run(&q, r);
}

static void
test_runs(void)
{
	struct
	{
		const char *op, *mode, *axes;
	}			cases[] = {
		{"layer_norm", "forward", "{\"rows\":33,\"hidden\":130,\"dtype\":\"fp32\"}"},
		{"layer_norm", "backward", "{\"rows\":33,\"hidden\":130,\"dtype\":\"bf16\"}"},
		{"layer_norm", "full", "{\"rows\":9,\"hidden\":64}"},
		{"megatron_cross_entropy", "forward", "{\"seq\":5,\"batch\":3,\"vocab\":301,\"dtype\":\"bf16\"}"},
		{"megatron_cross_entropy", "backward", "{\"seq\":5,\"batch\":3,\"vocab\":301,\"dtype\":\"fp32\"}"},
		{"megatron_cross_entropy", "full", "{\"seq\":4,\"batch\":2,\"vocab\":64,\"dtype\":\"bf16\"}"},
		{"jsd", "forward", "{\"tokens\":7,\"vocab\":100,\"dtype\":\"fp32\"}"},
		{"jsd", "full", "{\"tokens\":70,\"vocab\":33,\"dtype\":\"bf16\"}"},
		{"jsd", "backward", "{\"tokens\":37,\"vocab\":1000,\"dtype\":\"fp32\"}"},
		{"jsd", "backward", "{\"tokens\":70,\"vocab\":33,\"dtype\":\"bf16\"}"},
		{"distill_jsd_loss", "forward", "{\"tokens\":6,\"hidden\":16,\"vocab\":40}"},
		{"distill_jsd_loss", "full", "{\"tokens\":3,\"hidden\":9,\"vocab\":11,\"dtype\":\"bf16\"}"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		kb_result	r;
		kb_status	st = quick_run(cases[i].op, cases[i].mode, cases[i].axes, &r);
		char		d[72] = "";
		bool		valid = r.composite_json && r.workload_json && r.implementation_json && r.operation_json;

		ok(st == KB_PASSED && r.correctness.checked && r.correctness.matched_ratio == 1.0 && r.nsamples > 0 &&
		   r.stats.samples == r.nsamples,
		   "cpu run %s %s %s passes against the float64 reference (%lld values, max rel err %.2g, %lld samples)%s%s",
		   cases[i].op, cases[i].mode, cases[i].axes, (long long) r.correctness.compared,
		   r.correctness.max_rel_error, (long long) r.nsamples, r.message[0] ? ": " : "", r.message);
		if (valid)
		{
			ki_arena	a;
			ki_errors	e;
			ki_value   *doc;
			ki_composite comp;

			ki_arena_init_malloc(&a);
			ki_errors_init(&e, &a);
			doc = ki_parse(&a, r.composite_json, strlen(r.composite_json), &e);
			valid = doc && ki_composite_validate(&a, doc, &comp, &e) &&
				strcmp(comp.run_digest, r.run_digest) == 0 &&
				core_digest(r.workload_json, d) && strcmp(d, r.workload_digest) == 0 &&
				core_digest(r.implementation_json, d) && strcmp(d, r.implementation_digest) == 0 &&
				core_digest(r.operation_json, d) && strcmp(d, r.operation_digest) == 0 &&
				strstr(r.composite_json, r.workload_digest) && strstr(r.composite_json, r.implementation_digest);
			ki_arena_reset(&a);
		}
		ok(valid, "cpu run %s %s: composite, workload, implementation and operation manifests valid in the core, digests consistent",
		   cases[i].op, cases[i].mode);
		kb_free_result(&r);
	}
}

static void
test_stability(void)
{
	kb_result	a, b;
	const char *axes = "{\"rows\":8,\"hidden\":32}";
	bool		same;

	quick_run("layer_norm", "forward", axes, &a);
	quick_run("layer_norm", "forward", axes, &b);
	same = strcmp(a.protocol_digest, b.protocol_digest) == 0 && strcmp(a.environment_digest, b.environment_digest) == 0 &&
		strcmp(a.implementation_digest, b.implementation_digest) == 0 && strcmp(a.workload_digest, b.workload_digest) == 0 &&
		strcmp(a.operation_digest, b.operation_digest) == 0 && a.protocol_digest[0];
	ok(same, "two runs of one request share protocol, environment, implementation, workload and operation digests");
	kb_free_result(&a);
	kb_free_result(&b);
	{
		kb_result	x, y;

		describe("jsd", "forward", "{\"tokens\":8,\"vocab\":16,\"dtype\":\"bf16\"}", &x);
		describe("jsd", "forward", "{\"vocab\":16,\"dtype\":\"bf16\",\"tokens\":8}", &y);
		ok(strcmp(x.workload_digest, y.workload_digest) == 0, "the workload digest does not depend on the order of the axes");
		kb_free_result(&x);
		describe("jsd", "forward", "{\"tokens\":8,\"vocab\":16,\"dtype\":\"fp32\"}", &x);
		ok(strcmp(x.workload_digest, y.workload_digest) != 0, "a different dtype is a different workload");
		kb_free_result(&x);
		kb_free_result(&y);
	}
}

static int	progress_calls;
static double progress_last;

static void
on_progress(void *arg, const kb_progress *p)
{
	(void) arg;
	progress_calls++;
	progress_last = p->fraction;
}

static void
test_control(void)
{
	kb_request	q;
	kb_result	r;
	volatile int cancel = 1;
	int			passed = 0;

	kb_request_init(&q);
	q.op = "jsd";
	q.mode = "forward";
	q.axes_json = "{\"tokens\":4,\"vocab\":32}";
	q.warmup_ms = 1;
	q.rep_ms = 1;
	q.flush_bytes = 0;
	for (int i = 0; i < 25; i++)
	{
		passed += kb_run(&q, &r) == KB_PASSED;
		kb_free_result(&r);
	}
	ok(passed == 25, "kb_run called 25 times in one process: every run passes");

	q.cancel = &cancel;
	ok(kb_run(&q, &r) == KB_CANCELED && r.composite_json == NULL, "a set cancel flag stops the run: canceled, no manifests");
	kb_free_result(&r);
	q.cancel = NULL;
	q.deadline_ns = kb_now_ns() - 1;
	ok(kb_run(&q, &r) == KB_TIMEOUT && r.composite_json && strstr(r.composite_json, "\"status\":\"timeout\""),
	   "a passed deadline gives status timeout, with a run manifest saying so");
	kb_free_result(&r);
	q.deadline_ns = 0;
	q.progress = on_progress;
	kb_run(&q, &r);
	ok(progress_calls >= 2 && progress_last == 1.0, "progress is reported and ends at 1.0 (%d calls)", progress_calls);
	kb_free_result(&r);
}

/* ------------------------------------------------------------ request validation */

static void
test_validation(void)
{
	struct
	{
		const char *op, *mode, *axes, *device, *impl;
		kb_status	want;
		const char *msg;
	}			bad[] = {
		{"layernorm", "forward", "{}", NULL, NULL, KB_INVALID_REQUEST, "(did you mean layer_norm?); kbench list"},
		{"distill_jsd_loss", "backward", "{\"tokens\":1,\"vocab\":2,\"hidden\":4}", NULL, NULL, KB_INVALID_REQUEST, "allowed: forward, full"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2,\"rows\":3}", NULL, NULL, KB_INVALID_REQUEST, "unknown axis 'rows'"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2,\"dtype\":\"fp16\"}", NULL, NULL, KB_INVALID_REQUEST, "allowed: fp32, bf16"},
		{"distill_jsd_loss", "forward", "{\"tokens\":1,\"vocab\":2,\"hidden\":4,\"dtype\":\"fp32\"}", NULL, NULL, KB_INVALID_REQUEST, "allowed: bf16"},
		{"jsd", "forward", "{\"tokens\":1}", NULL, NULL, KB_INVALID_REQUEST, "missing axis 'vocab'"},
		{"jsd", "forward", "{\"tokens\":0,\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "positive integer"},
		{"jsd", "forward", "{\"tokens\":-3,\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "positive integer"},
		{"jsd", "forward", "{\"tokens\":2.5,\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "positive integer"},
		{"jsd", "forward", "{\"tokens\":\"8\",\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "positive integer"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2", NULL, NULL, KB_INVALID_REQUEST, "not valid JSON"},
		{"jsd", "forward", "[1,2]", NULL, NULL, KB_INVALID_REQUEST, "must be a JSON object"},
		{"jsd", "forward", "{\"tokens\":1,\"tokens\":2,\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "not valid JSON"},
		{"distill_jsd_loss", "forward", "{\"tokens\":1,\"vocab\":2,\"hidden\":1}", NULL, NULL, KB_INVALID_REQUEST, "at least 2"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2}", "gpu0", NULL, KB_INVALID_REQUEST, "allowed: cpu, cuda:N"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2}", "cpu", "cuda", KB_INVALID_REQUEST, "does not run on device"},
		{"jsd", "forward", "{\"tokens\":1,\"vocab\":2}", "cpu", "triton", KB_INVALID_REQUEST, "allowed: cpu, cuda"},
		{"jsd", "forward", "{\"tokens\":3000000000,\"vocab\":2}", NULL, NULL, KB_INVALID_REQUEST, "too large"},
		{"jsd", "forward", "{\"tokens\":1048576,\"vocab\":131072}", NULL, NULL, KB_RESOURCE_EXCEEDED, "GiB of host memory"},
	};
	char		err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		kb_status	st = kb_check_request(bad[i].op, bad[i].mode, bad[i].axes, bad[i].impl, bad[i].device, err, sizeof(err));

		ok(st == bad[i].want && strstr(err, bad[i].msg) != NULL, "kb_check_request rejects %s %s %s%s%s: %s",
		   bad[i].op, bad[i].mode, bad[i].axes, bad[i].device ? " on " : "", bad[i].device ? bad[i].device : "", err);
	}
	ok(kb_check_request("layer_norm", "backward", "{\"rows\":4096,\"hidden\":4096,\"dtype\":\"fp32\"}", NULL, "cpu", err, sizeof(err)) == KB_PASSED && err[0] == '\0',
	   "kb_check_request accepts the seed layer_norm workload on the cpu");
	{
		char		why[256];
		kb_status	st = kb_check_request("jsd", "forward", "{\"tokens\":1,\"vocab\":2}", NULL, "cuda:0", err, sizeof(err));

		if (kb_cuda_available(why, sizeof(why)))
			ok(st == KB_PASSED, "kb_check_request accepts a tiny workload on cuda:0");
		else
			ok(st == KB_DEVICE_UNAVAILABLE, "without a GPU, cuda:0 is refused as unavailable (%s)", err);
	}
}

static void
test_list(void)
{
	char	   *s = kb_list_json();
	ki_arena	a;
	ki_errors	e;
	ki_value   *v;
	ki_value   *ops;

	ki_arena_init_malloc(&a);
	ki_errors_init(&e, &a);
	v = s ? ki_parse(&a, s, strlen(s), &e) : NULL;
	ops = v ? ki_get(v, "operations") : NULL;
	ok(ops && ops->type == KI_ARRAY && ops->u.arr.count == (size_t) kb_op_count() && kb_op_count() > 4 && ki_get(v, "devices"),
	   "kb_list_json is JSON with every operation (the four C ones and those defined as data) and the devices");
	ki_arena_reset(&a);
	free(s);
}

/* One name per concept: kb_impl_resolve is the only mapping of kbench's implementation names. */
static void
test_impl_names(void)
{
	kb_impl_id	id,
				v1;
	char		err[256] = "";

	ok(kb_impl_resolve("cuda/v2", "layer_norm", &id, err, sizeof(err)) == KB_PASSED && id.own && id.cuda &&
	   id.variant == 2 && strcmp(id.impl, "cuda/v2") == 0 && strcmp(id.name, "kbench-layer-norm-cuda-v2") == 0 &&
	   strcmp(id.symbol, "layer_norm_cuda/v2") == 0 && strcmp(id.title, "LayerNorm \xc2\xb7 kbench CUDA v2") == 0,
	   "cuda/v2 of layer_norm: variant 2, kbench-layer-norm-cuda-v2, layer_norm_cuda/v2");
	ok(kb_impl_resolve("cuda/v1", "layer_norm", &v1, NULL, 0) == KB_PASSED &&
	   kb_impl_resolve("cuda", "layer_norm", &id, NULL, 0) == KB_PASSED && memcmp(&id, &v1, sizeof(id)) == 0 &&
	   strcmp(id.impl, "cuda") == 0 && strcmp(id.name, "kbench-layer-norm-cuda") == 0 &&
	   strcmp(id.symbol, "layer_norm_cuda") == 0,
	   "cuda/v1 is cuda: one spelling (cuda), the name and symbol v1 always had");
	ok(kb_impl_resolve("cpu", "jsd", &id, NULL, 0) == KB_PASSED && id.own && !id.cuda &&
	   strcmp(id.name, "kbench-jsd-cpu") == 0 && id.symbol[0] == '\0',
	   "cpu of jsd: kbench-jsd-cpu, no CUDA symbol");
	ok(kb_impl_resolve("cuda/v2", "jsd", &id, err, sizeof(err)) == KB_INVALID_REQUEST &&
	   strcmp(err, "unknown variant 'v2' for jsd; allowed: v1") == 0,
	   "cuda/v2 of jsd (one kernel): refused, variants listed (%s)", err);
	ok(kb_impl_resolve("cuda/2", NULL, &id, err, sizeof(err)) == KB_INVALID_REQUEST &&
	   kb_impl_resolve("cuda/v10", NULL, &id, NULL, 0) == KB_INVALID_REQUEST &&
	   kb_impl_resolve("cuda/v2", NULL, &id, NULL, 0) == KB_PASSED && id.own && id.name[0] == '\0',
	   "without an operation: cuda/2 and cuda/v10 refused, cuda/v2 kbench's own (%s)", err);
	ok(kb_impl_resolve("torch", "jsd", &id, NULL, 0) == KB_PASSED && !id.own &&
	   kb_impl_resolve("my-kernel", NULL, &id, NULL, 0) == KB_PASSED && !id.own,
	   "torch and a registered name are not kbench's own");
}

/* ------------------------------------------------------------ input fills */

/*
 * The softmax fill (kl_div's target, tvd's p and q): each row a probability
 * vector (positive, summing to one within the dtype's rounding), the exp of
 * the log_softmax fill of the same seed and stream element by element.
 */
static void
test_softmax_fill(void)
{
	enum { R = 5, V = 301 };
	static float p[R * V], lp[R * V];
	static uint16_t pb[R * V];
	double		worst_sum = 0,
				worst_bf16 = 0,
				worst_rel = 0;
	int			positive = 1;

	kb_fill_host(p, KB_FP32, R, V, KB_INIT_SOFTMAX, 2.0, 0, 11, 3);
	kb_fill_host(lp, KB_FP32, R, V, KB_INIT_LOGSOFTMAX, 2.0, 0, 11, 3);
	kb_fill_host(pb, KB_BF16, R, V, KB_INIT_SOFTMAX, 2.0, 0, 11, 3);
	for (int r = 0; r < R; r++)
	{
		double		s = 0,
					sb = 0;

		for (int j = 0; j < V; j++)
		{
			int			i = r * V + j;

			positive &= p[i] > 0 && kb_get(pb, KB_BF16, i) > 0;
			s += p[i];
			sb += kb_get(pb, KB_BF16, i);
			worst_rel = fmax(worst_rel, fabs(p[i] - exp((double) lp[i])) / exp((double) lp[i]));
		}
		worst_sum = fmax(worst_sum, fabs(s - 1));
		worst_bf16 = fmax(worst_bf16, fabs(sb - 1));
	}
	ok(positive && worst_sum <= 1e-6 && worst_bf16 <= 1e-2,
	   "softmax fill: every value positive, each row sums to one (fp32 within %.2g, bf16 within %.2g)",
	   worst_sum, worst_bf16);
	ok(worst_rel <= 1e-6, "softmax fill: the exp of the log_softmax fill of the same seed (worst relative %.2g)",
	   worst_rel);
}

/*
 * The bool dtype (kto_loss's preference_labels): one byte a value, named
 * "bool"; the index fill with high 2 writes 0 or 1, the same draws as the
 * int64 index fill of the same seed and stream, and kb_get reads them back.
 */
static void
test_bool_fill(void)
{
	enum { N = 257 };
	static uint8_t b[N + 1];
	static int64_t i64[N];
	int			same = 1,
				ones = 0;

	b[N] = 0xAB;				/* a guard byte: the fill writes N bytes, no more */
	kb_fill_host(b, KB_BOOL, 1, N, KB_INIT_TARGETS, 1.0, 2, 7, 5);
	kb_fill_host(i64, KB_I64, 1, N, KB_INIT_TARGETS, 1.0, 2, 7, 5);
	for (int i = 0; i < N; i++)
	{
		same &= b[i] <= 1 && b[i] == i64[i] && kb_get(b, KB_BOOL, i) == (double) i64[i];
		ones += b[i];
	}
	ok(kb_dtype_size(KB_BOOL) == 1 && strcmp(kb_dtype_name(KB_BOOL), "bool") == 0 &&
	   kb_dtype_from_name("bool") == KB_BOOL,
	   "bool dtype: 1 byte, named bool");
	ok(same && b[N] == 0xAB && ones > N / 4 && ones < 3 * N / 4,
	   "bool index fill (high 2): each byte 0 or 1, the int64 fill's draws, read back by kb_get (%d of %d true)",
	   ones, N);
}

int
main(void)
{
	const char *start = getenv("TAP_START");

	ntest = start ? atoi(start) : 0;
	test_expf();
	test_softmax_fill();
	test_bool_fill();
	test_layer_norm_ref();
	test_ce_ref();
	test_ce_tolerance();
	test_dj_tolerance();
	test_jsd_ref();
	test_distill_ref();
	test_stats();
	test_comparator();
	test_seed_digests();
	test_runs();
	test_stability();
	test_control();
	test_validation();
	test_list();
	test_impl_names();
	printf("# %d failed\n", nfail);
	return nfail ? 1 : 0;
}
