/*
 * distill_jsd_loss.c: chunked distillation loss (Liger's LigerFusedLinear
 * JSD distillation, benchmark_distill_jsd_loss.py): a student of hidden/2
 * and a teacher of hidden, each projected through its own vocab x hidden LM
 * head, combined as
 *   loss = sum_t [ w_hard * CE(z_s[t], target[t]) + w_soft * JSD_beta(z_s[t], z_t[t]) ] / tokens
 * with w_hard = w_soft = 0.5, beta 0.5, temperature 1, where
 *   JSD_beta = beta KL(P_t || M) + (1-beta) KL(P_s || M),  M = (1-beta) P_s + beta P_t.
 * Liger's forward computes the student gradients too (grad_student_input,
 * grad_student_weight), so:
 *   forward   loss + both student gradients (what Liger's forward times)
 *   full      forward + backward (upstream gradient 1: no extra work)
 * The gradient of the loss w.r.t. the student logits of token t is
 *   dz = [ w_hard (P_s - onehot) + w_soft (g - P_s sum(g)) ] / tokens,
 *   g  = (1-beta) P_s (log P_s - log M).
 *
 * Float64 reference, CPU implementation, check and registry entry; the
 * CUDA implementation (cuBLASLt GEMMs + fused loss kernel) is in
 * distill_jsd_loss.cu.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"
#include "distill_jsd_loss.h"

/* ------------------------------------------------------------ float64 reference */

/* One element's terms from its student and teacher log-probabilities (ls, lt): the student
 * probability, g = (1-beta) ps (ls - log m) with m = (1-beta) ps + beta pt, and the JSD term. */
static void
ref_terms(double ls, double lt, double *ps, double *g, double *jsd)
{
	double		pt = exp(lt);
	double		logm;

	*ps = exp(ls);
	logm = log((1 - DJ_BETA) * *ps + DJ_BETA * pt);
	*g = (1 - DJ_BETA) * *ps * (ls - logm);
	*jsd = DJ_BETA * pt * (lt - logm) + *g;
}

/*
 * One token from its logits: returns the token's loss (already divided by
 * tokens) and, when dz is not NULL, the gradient w.r.t. the student logits.
 */
double
kb_distill_jsd_ref_token(const double *zs, const double *zt, int64_t V, int64_t target, int64_t T, double *dz)
{
	double		ms = -INFINITY,
				mt = -INFINITY,
				ss = 0,
				st = 0,
				lse_s,
				lse_t,
				jsd = 0,
				sumg = 0;

	for (int64_t j = 0; j < V; j++)
	{
		ms = fmax(ms, zs[j] / DJ_TEMPERATURE);
		mt = fmax(mt, zt[j] / DJ_TEMPERATURE);
	}
	for (int64_t j = 0; j < V; j++)
	{
		ss += exp(zs[j] / DJ_TEMPERATURE - ms);
		st += exp(zt[j] / DJ_TEMPERATURE - mt);
	}
	lse_s = ms + log(ss);
	lse_t = mt + log(st);
	for (int64_t j = 0; j < V; j++)
	{
		double		ps,
					g,
					e;

		ref_terms(zs[j] / DJ_TEMPERATURE - lse_s, zt[j] / DJ_TEMPERATURE - lse_t, &ps, &g, &e);
		jsd += e;
		sumg += g;
	}
	if (dz)
		for (int64_t j = 0; j < V; j++)
		{
			double		ps,
						g,
						e;

			ref_terms(zs[j] / DJ_TEMPERATURE - lse_s, zt[j] / DJ_TEMPERATURE - lse_t, &ps, &g, &e);
			dz[j] = (DJ_WEIGHT_HARD * (ps - (j == target ? 1.0 : 0.0))
					 + DJ_WEIGHT_SOFT * (g - ps * sumg)) / DJ_TEMPERATURE / (double) T;
		}
	return (DJ_WEIGHT_HARD * (lse_s - zs[target] / DJ_TEMPERATURE) + DJ_WEIGHT_SOFT * jsd) / (double) T;
}

/* ------------------------------------------------------------ CPU implementation */

/* ref_terms in fp32, the CPU implementation's precision. */
static void
cpu_terms(float ls, float lt, float *ps, float *g, float *jsd)
{
	float		pt = expf(lt);
	float		logm;

	*ps = expf(ls);
	logm = logf((float) (1 - DJ_BETA) * *ps + (float) DJ_BETA * pt);
	*g = (float) (1 - DJ_BETA) * *ps * (ls - logm);
	*jsd = (float) DJ_BETA * pt * (lt - logm) + *g;
}

static int
dj_cpu(const kb_call *c, int phase)
{
	int64_t		T = c->ax[DJ_T],
				V = c->ax[DJ_V],
				H = c->ax[DJ_H],
				Hs = c->ax[DJ_HS];
	const uint16_t *xs = c->t[DJ_XS],
			   *ws = c->t[DJ_WS],
			   *xt = c->t[DJ_XT],
			   *wt = c->t[DJ_WT];
	const int64_t *target = c->t[DJ_TARGET];
	float	   *zs = c->ws,
			   *zt = zs + V,
			   *gw = zt + V;
	double		total = 0;

	if (phase == KB_PHASE_PREPARE)
		return 0;
	memset(gw, 0, sizeof(float) * (size_t) (V * Hs));
	for (int64_t t = 0; t < T; t++)
	{
		float		ms = -INFINITY,
					mt = -INFINITY,
					ss = 0,
					st = 0,
					lse_s,
					lse_t,
					jsd = 0,
					sumg = 0,
					loss;

		for (int64_t v = 0; v < V; v++)
		{
			float		a = 0,
						b = 0;

			for (int64_t k = 0; k < Hs; k++)
				a += kb_bf2f(xs[t * Hs + k]) * kb_bf2f(ws[v * Hs + k]);
			for (int64_t k = 0; k < H; k++)
				b += kb_bf2f(xt[t * H + k]) * kb_bf2f(wt[v * H + k]);
			zs[v] = a;
			zt[v] = b;
			ms = fmaxf(ms, a);
			mt = fmaxf(mt, b);
		}
		for (int64_t v = 0; v < V; v++)
		{
			ss += expf(zs[v] - ms);
			st += expf(zt[v] - mt);
		}
		lse_s = ms + logf(ss);
		lse_t = mt + logf(st);
		for (int64_t v = 0; v < V; v++)
		{
			float		ps,
						g,
						e;

			cpu_terms(zs[v] - lse_s, zt[v] - lse_t, &ps, &g, &e);
			jsd += e;
			sumg += g;
		}
		loss = ((float) DJ_WEIGHT_HARD * (lse_s - zs[target[t]]) + (float) DJ_WEIGHT_SOFT * jsd) / (float) T;
		((float *) c->t[DJ_TOKEN_LOSS])[t] = loss;
		total += loss;
		/* dz overwrites zs; grad_student_input[t] = dz @ Ws; grad_Ws += dz^T x_s[t] */
		for (int64_t v = 0; v < V; v++)
		{
			float		ps,
						g,
						e;

			cpu_terms(zs[v] - lse_s, zt[v] - lse_t, &ps, &g, &e);
			zs[v] = ((float) DJ_WEIGHT_HARD * (ps - (v == target[t] ? 1.0f : 0.0f))
					 + (float) DJ_WEIGHT_SOFT * (g - ps * sumg)) / (float) T;
		}
		for (int64_t k = 0; k < Hs; k++)
		{
			float		a = 0;

			for (int64_t v = 0; v < V; v++)
				a += zs[v] * kb_bf2f(ws[v * Hs + k]);
			((uint16_t *) c->t[DJ_GXS])[t * Hs + k] = kb_f2bf(a);
		}
		for (int64_t v = 0; v < V; v++)
			for (int64_t k = 0; k < Hs; k++)
				gw[v * Hs + k] += zs[v] * kb_bf2f(xs[t * Hs + k]);
	}
	for (int64_t i = 0; i < V * Hs; i++)
		((uint16_t *) c->t[DJ_GWS])[i] = kb_f2bf(gw[i]);
	((float *) c->t[DJ_LOSS])[0] = (float) total;
	return 0;
}

/* ------------------------------------------------------------ registry hooks */

static bool
dj_derive(int64_t *ax, int dtype, char *err, size_t errlen)
{
	(void) dtype;
	if (ax[DJ_H] < 2)
	{
		snprintf(err, errlen, "axis 'hidden' must be at least 2 (the student has hidden // 2)");
		return false;
	}
	ax[DJ_HS] = ax[DJ_H] / 2;
	return true;
}

static void
dj_plan(kb_call *c, kb_plan *p, bool cuda)
{
	int64_t		T = c->ax[DJ_T],
				V = c->ax[DJ_V],
				H = c->ax[DJ_H],
				Hs = c->ax[DJ_HS];
	static const char *const names[DJ_NT] = {"student_input", "student_weight", "teacher_input", "teacher_weight",
	"target", "loss", "grad_student_input", "grad_student_weight", "token_loss"};
	const int64_t shape[DJ_NT][2] = {{T, Hs}, {V, Hs}, {T, H}, {V, H}, {T, 1}, {1, 1}, {T, Hs}, {V, Hs}, {T, 1}};

	c->ntensors = DJ_NT;
	for (int i = 0; i < DJ_NT; i++)
	{
		p->name[i] = names[i];
		c->rows[i] = shape[i][0];
		c->cols[i] = shape[i][1];
		c->tdtype[i] = KB_BF16;
	}
	c->tdtype[DJ_TARGET] = KB_I64;
	c->tdtype[DJ_LOSS] = c->tdtype[DJ_TOKEN_LOSS] = KB_FP32;
	p->init[DJ_XS] = p->init[DJ_XT] = p->init[DJ_WS] = p->init[DJ_WT] = KB_INIT_UNIFORM;
	p->scale[DJ_XS] = p->scale[DJ_XT] = 1.0;
	p->scale[DJ_WS] = p->scale[DJ_WT] = 1.0 / 32;
	p->init[DJ_TARGET] = KB_INIT_TARGETS;
	p->modulo[DJ_TARGET] = V;
	p->is_output[DJ_LOSS] = p->is_output[DJ_GXS] = p->is_output[DJ_GWS] = true;
	if (cuda)
	{
		dj_layout	l = dj_cuda_layout(T, V, Hs, c->variant);

		c->chunk = l.chunk;
		c->ws_bytes = l.total;
	}
	else
		c->ws_bytes = (int64_t) sizeof(float) * (2 * V + V * Hs);
}

/* Fetch a whole bf16 tensor raw to the host. */
static uint16_t *
fetch_bf16(kb_backend *be, const kb_call *c, int ti)
{
	size_t		n = (size_t) (c->rows[ti] * c->cols[ti]);
	uint16_t   *h = malloc(n * 2 + 2);

	if (h && kb_be_to_host(be, h, c->t[ti], n * 2) != KBC_OK)
	{
		free(h);
		h = NULL;
	}
	return h;
}

/*
 * The check, with a tolerance derived per value (docs/KERNELS.md,
 * "Tolerances"), the reference in double throughout.  u = 2^-24 (fp32
 * arithmetic), ub = the bf16 unit (m.u_out).  Per token:
 *   logits   z = x W^T over K = Hs (student) or H (teacher) bf16 products,
 *            accumulated in fp32 and stored in bf16 (the CUDA kernels and
 *            Liger do):  e_z = kb_gamma(K) sum_k |x_k w_k| + ub |z|;  E = max e_z
 *   lse      F = kb_gamma(V) + 2u (2 + 1.16 spread) + 2u |lse| (as
 *            megatron_cross_entropy), so every log-probability (ls, lt) and
 *            log m is within D = 2E + F, and per element
 *            d = D + u (4|ls| + 4|lt| + 5|lm| + 3) bounds the error of a log
 *            and the relative error of ps, pt and m (exp and log within 2u)
 *   token_loss  (w_h 2D + w_s (sum (beta pt + (1-beta) ps) d (|lt-lm| +
 *            |ls-lm| + 2) + kb_gamma(V) sum|terms|)) / T + u |value|
 *   dz       (w_h ps d + w_s (dg + ps d |sum g| + ps G)) / T + ub |dz|, with
 *            dg = (1-beta) ps d (|ls-lm| + 2) and G = sum dg (dz stored in bf16)
 *   grad_student_input[i]   sum_v e_dz |Ws[v][i]| + kb_gamma(V) sum_v |dz Ws| + ub |value|
 *   grad_student_weight[v][i] sum_t e_dz |Xs[t][i]| + kb_gamma(T) sum_t |dz Xs| + ub |value|
 *   loss     sum of the tokens' tolerances + kb_gamma(T) sum|token_loss| + u |value|
 * These are first-order bounds (each error taken with its worst sign), so a
 * wrong beta, temperature or weight moves a value by more than its tolerance
 * long before the old rtol 1e-2 noticed.
 *
 * An implementation that returns no token_loss (Liger's
 * LigerFusedLinearJSDFunction: the total and the gradients) has its total
 * compared with the reference over every token when the case is small
 * enough for the whole reference (T V (H + Hs) <= 2e9, as grad_student_weight
 * is); above that only the sampled tokens' grad_student_input is compared, as
 * for one that returns token_loss, whose total is not compared there
 * either.  A loss or gradient not returned fails.
 */

double
kb_dj_log_bound(const double *zs, const double *zt, const double *as_, const double *at, int64_t V, int64_t ks,
				int64_t kt, double ub, double *lse_s, double *lse_t)
{
	double		u = KB_U32,
				ms = -INFINITY,
				mt = -INFINITY,
				ss = 0,
				st = 0,
				E = 0,
				spread = 0,
				F;

	for (int64_t j = 0; j < V; j++)
	{
		ms = fmax(ms, zs[j] / DJ_TEMPERATURE);
		mt = fmax(mt, zt[j] / DJ_TEMPERATURE);
		E = fmax(E, fmax(kb_gamma(ks) * as_[j] + ub * fabs(zs[j]), kb_gamma(kt) * at[j] + ub * fabs(zt[j])));
	}
	for (int64_t j = 0; j < V; j++)
	{
		ss += exp(zs[j] / DJ_TEMPERATURE - ms);
		st += exp(zt[j] / DJ_TEMPERATURE - mt);
		spread = fmax(spread, fmax(ms - zs[j] / DJ_TEMPERATURE, mt - zt[j] / DJ_TEMPERATURE));
	}
	*lse_s = ms + log(ss);
	*lse_t = mt + log(st);
	F = kb_gamma(V) + 2 * u * (2 + 1.16 * spread) + 2 * u * fmax(fabs(*lse_s), fabs(*lse_t));
	return 2 * E + F;
}

/* One token's tolerances: dz's (edz, V values) and its loss's (returned); zs, zt the logits,
 * as_, at their sums of |products|, over ks and kt terms; dz the reference gradient. */
static double
dj_token_tol(const double *zs, const double *zt, const double *as_, const double *at, int64_t V, int64_t ks,
			 int64_t kt, int64_t target, int64_t T, double ub, const double *dz, double *edz)
{
	double		u = KB_U32,
				lse_s,
				lse_t,
				D = kb_dj_log_bound(zs, zt, as_, at, V, ks, kt, ub, &lse_s, &lse_t),
				sumg = 0,
				G = 0,
				tabs = 0,
				terr = 0,
				loss = 0;

	/* first pass: sum g, G, the loss's terms */
	for (int64_t j = 0; j < V; j++)
	{
		double		ls = zs[j] / DJ_TEMPERATURE - lse_s,
					lt = zt[j] / DJ_TEMPERATURE - lse_t,
					ps = exp(ls),
					pt = exp(lt),
					lm = log((1 - DJ_BETA) * ps + DJ_BETA * pt),
					d = D + u * (4 * fabs(ls) + 4 * fabs(lt) + 5 * fabs(lm) + 3),
					g = (1 - DJ_BETA) * ps * (ls - lm);

		sumg += g;
		G += (1 - DJ_BETA) * ps * d * (fabs(ls - lm) + 2);
		tabs += fabs(DJ_BETA * pt * (lt - lm)) + fabs(g);
		terr += (DJ_BETA * pt + (1 - DJ_BETA) * ps) * d * (fabs(lt - lm) + fabs(ls - lm) + 2);
		loss += DJ_BETA * pt * (lt - lm) + g;
	}
	loss = (DJ_WEIGHT_HARD * (lse_s - zs[target] / DJ_TEMPERATURE) + DJ_WEIGHT_SOFT * loss) / (double) T;
	for (int64_t j = 0; j < V; j++)
	{
		double		ls = zs[j] / DJ_TEMPERATURE - lse_s,
					lt = zt[j] / DJ_TEMPERATURE - lse_t,
					ps = exp(ls),
					pt = exp(lt),
					lm = log((1 - DJ_BETA) * ps + DJ_BETA * pt),
					d = D + u * (4 * fabs(ls) + 4 * fabs(lt) + 5 * fabs(lm) + 3),
					dg = (1 - DJ_BETA) * ps * d * (fabs(ls - lm) + 2);

		edz[j] = (DJ_WEIGHT_HARD * ps * d + DJ_WEIGHT_SOFT * (dg + ps * d * fabs(sumg) + ps * G)) / DJ_TEMPERATURE / (double) T
			+ ub * fabs(dz[j]);
	}
	return (DJ_WEIGHT_HARD * 2 * D + DJ_WEIGHT_SOFT * (terr + kb_gamma(V) * tabs)) / (double) T + u * fabs(loss);
}

static int
dj_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out)
{
	int64_t		T = c->ax[DJ_T],
				V = c->ax[DJ_V],
				H = c->ax[DJ_H],
				Hs = c->ax[DJ_HS];
	double		per_token = (double) V * (double) (H + 2 * Hs);
	int			maxrows = per_token * 16 <= 4e9 ? 16 : per_token * 4 <= 4e9 ? 4 : 2;
	bool		full = (double) T * per_token <= 2e9;
	int64_t    *rows = malloc(sizeof(int64_t) * (size_t) (full ? T : maxrows));
	int			nr;
	uint16_t   *ws = fetch_bf16(be, c, DJ_WS),
			   *wt = fetch_bf16(be, c, DJ_WT);
	/* xs, xt, zs, zt, their |product| sums, dz, its tolerance, gx, gx's tolerance, gx got */
	double	   *xs = malloc(sizeof(double) * (size_t) (3 * Hs + H + 6 * V + Hs));
	double	   *xt = xs + Hs,
			   *zs = xt + H,
			   *zt = zs + V,
			   *as_ = zt + V,
			   *at = as_ + V,
			   *dz = at + V,
			   *edz = dz + V,
			   *gx = edz + V,
			   *tgx = gx + Hs,
			   *got_gx = tgx + Hs;
	double	   *gw = full ? calloc((size_t) (V * Hs) * 2, sizeof(double)) : NULL;
	double	   *tgw = gw ? gw + V * Hs : NULL;
	double		total = 0,
				total_abs = 0,
				total_tol = 0,
				got,
				u = KB_U32;
	kb_cmp		m;
	int			rc = 0,
				tl_given = kb_returned(be, c, p, DJ_TOKEN_LOSS),
				gx_given = kb_returned(be, c, p, DJ_GXS),
				gw_given = kb_returned(be, c, p, DJ_GWS),
				loss_given = kb_returned(be, c, p, DJ_LOSS);

	if (tl_given < 0 || gx_given < 0 || gw_given < 0 || loss_given < 0)
		rc = -1;
	if (rc || !rows || !ws || !wt || !xs || (full && !gw))
	{
		free(rows);
		free(ws);
		free(wt);
		free(xs);
		free(gw);
		return -1;
	}
	if (full)
	{
		for (int64_t t = 0; t < T; t++)
			rows[t] = t;
		nr = (int) T;
	}
	else
		nr = kb_sample_rows(T, maxrows, rows);
	kb_cmp_init(&m, KB_BF16);
	if (!gx_given)
		kb_cmp_missing(&m, "grad_student_input");
	if (!gw_given)
		kb_cmp_missing(&m, "grad_student_weight");
	if (!loss_given)
		kb_cmp_missing(&m, "loss");
	for (int k = 0; k < nr && rc == 0; k++)
	{
		int64_t		t = rows[k];
		double		tg,
					lr,
					lg,
					tl;

		rc |= kb_fetch_rows(be, c, DJ_XS, t, 1, xs);
		rc |= kb_fetch_rows(be, c, DJ_XT, t, 1, xt);
		rc |= kb_fetch_rows(be, c, DJ_TARGET, t, 1, &tg);
		if (tl_given)
			rc |= kb_fetch_rows(be, c, DJ_TOKEN_LOSS, t, 1, &lg);
		if (gx_given)
			rc |= kb_fetch_rows(be, c, DJ_GXS, t, 1, got_gx);
		for (int64_t v = 0; v < V && rc == 0; v++)
		{
			double		a = 0,
						b = 0,
						aa = 0,
						ba = 0;

			for (int64_t i = 0; i < Hs; i++)
			{
				double		x = xs[i] * kb_bf2f(ws[v * Hs + i]);

				a += x;
				aa += fabs(x);
			}
			for (int64_t i = 0; i < H; i++)
			{
				double		x = xt[i] * kb_bf2f(wt[v * H + i]);

				b += x;
				ba += fabs(x);
			}
			zs[v] = a;
			zt[v] = b;
			as_[v] = aa;
			at[v] = ba;
		}
		if (rc)
			break;
		lr = kb_distill_jsd_ref_token(zs, zt, V, (int64_t) tg, T, dz);
		tl = dj_token_tol(zs, zt, as_, at, V, Hs, H, (int64_t) tg, T, m.u_out, dz, edz);
		total += lr;
		total_abs += fabs(lr);
		total_tol += tl;
		for (int64_t i = 0; i < Hs; i++)
			gx[i] = tgx[i] = 0;
		for (int64_t v = 0; v < V; v++)
			for (int64_t i = 0; i < Hs; i++)
			{
				double		w = kb_bf2f(ws[v * Hs + i]);

				gx[i] += dz[v] * w;
				tgx[i] += edz[v] * fabs(w) + kb_gamma(V) * fabs(dz[v] * w);
			}
		for (int64_t i = 0; i < Hs; i++)
			tgx[i] += m.u_out * fabs(gx[i]);
		if (gw)
			for (int64_t v = 0; v < V; v++)
				for (int64_t i = 0; i < Hs; i++)
				{
					gw[v * Hs + i] += dz[v] * xs[i];
					tgw[v * Hs + i] += edz[v] * fabs(xs[i]) + kb_gamma(T) * fabs(dz[v] * xs[i]);
				}
		m.row = t;
		if (tl_given)
			kb_cmp_tol(&m, "token_loss", &lr, &lg, &tl, 1);
		if (gx_given)
			kb_cmp_tol(&m, "grad_student_input", gx, got_gx, tgx, Hs);
	}
	m.row = -1;
	if (rc == 0 && full)
	{
		double	   *g = malloc(sizeof(double) * (size_t) (V * Hs));

		rc |= g ? kb_fetch_rows(be, c, DJ_GWS, 0, V, g) : -1;
		rc |= kb_fetch_rows(be, c, DJ_LOSS, 0, 1, &got);
		if (rc == 0)
		{
			double		tt = total_tol + kb_gamma(T) * total_abs + u * fabs(total);

			for (int64_t i = 0; i < V * Hs; i++)
				tgw[i] += m.u_out * fabs(gw[i]);
			if (gw_given)
				kb_cmp_tol(&m, "grad_student_weight", gw, g, tgw, V * Hs);
			if (loss_given)
				kb_cmp_tol(&m, "loss", &total, &got, &tt, 1);
		}
		free(g);
	}
	free(rows);
	free(ws);
	free(wt);
	free(xs);
	free(gw);
	if (rc)
		return -1;
	kb_cmp_finish(&m, out);
	return 0;
}

const kb_op kb_op_distill_jsd_loss = {
	.id = KB_OP_DISTILL_JSD,
	.name = "distill_jsd_loss",
	.slug = "distill-jsd-loss",
	.title = "Chunked distillation JSD loss",
	.description = "Distillation loss combining hard cross-entropy and soft JSD between a hidden/2 student and a hidden teacher, each projected through its own LM head (equal hard/soft weights).",
	.source_url = "https://github.com/linkedin/Liger-Kernel/blob/2120862ba532c9449e72d603ba6324310ae756e7/benchmark/scripts/benchmark_distill_jsd_loss.py",
	.family = "jsd",
	.modes = {true, false, true},
	.timed = {
		"the forward pass, which also computes grad_student_input and grad_student_weight as Liger's chunked forward does (beta 0.5, temperature 1, hard/soft weights 0.5, normalised by tokens)",
		"",
		"the forward pass followed by the backward pass (upstream gradient 1: the backward does no extra work, as in Liger)",
	},
	.naxes = 4,
	.axes = {
		{"tokens", "variable", NULL},
		{"vocab", "variable", NULL},
		{"hidden", "variable", NULL},
		{"student_hidden", "derived", "hidden // 2"},
	},
	.title_axes = {"tokens", "hidden", "vocab", NULL},
	.ndtypes = 1,
	.dtypes = {KB_BF16},
	.ninputs = 5,
	.inputs = {
		{"student_input", {"tokens", "student_hidden", NULL}, "float"},
		{"student_weight", {"vocab", "student_hidden", NULL}, "float"},
		{"teacher_input", {"tokens", "hidden", NULL}, "float"},
		{"teacher_weight", {"vocab", "hidden", NULL}, "float"},
		{"target", {"tokens", NULL}, "int64"},
	},
	.noutputs = 1,
	.outputs = {{"loss", {"1", NULL}, "float"}},
	.nscalars = 2,
	.scalars = {{"weight_hard_loss", "fp32", 0.5}, {"weight_soft_loss", "fp32", 0.5}},
	.c_path = "kernels/ops/distill_jsd_loss.c",
	.cu_path = "kernels/ops/distill_jsd_loss.cu",
	.cu_symbol = "distill_jsd_loss_cuda",
	.variant_notes = {
		"v1: one 1024-thread block per token, the two logits rows read three times",
		"v2: each token split over a thread-block cluster of up to 8 blocks, both rows' segments copied "
		"asynchronously into shared memory (read once from HBM), 8 instead of 10 MUFU operations per element, "
		"statistics exchanged through distributed shared memory; chunks of up to 4 GiB of logits (the "
		"8192-token seed is one chunk: larger GEMMs, grad_student_weight written in bf16 by its GEMM, no fp32 "
		"accumulator)",
	},
	.derive = dj_derive,
	.plan = dj_plan,
	/* the floors: bytes and FLOPs of one call of each pass (cost.c; kbench_operation_costs) */
	.cost_bytes = {
		"dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * "
		"tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens",
		"dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * "
		"tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens",
		"dtype_bytes * (tokens * (hidden / 2 + hidden) + vocab * (hidden / 2 + hidden)) + 8 * "
		"tokens + dtype_bytes * (tokens * hidden / 2 + vocab * hidden / 2) + 4 * tokens",
	},
	.cost_flops = {
		"2 * tokens * vocab * (3 * hidden / 2 + hidden)",
		"2 * tokens * vocab * (3 * hidden / 2 + hidden)",
		"2 * tokens * vocab * (3 * hidden / 2 + hidden)",
	},
	.cost_compute = "tensor",
	.cost_note = {
		"four GEMMs (student and teacher logits, student input and weight gradients); inputs, "
		"weights, targets read once, gradients written once (kernels/ops/distill_jsd_loss.c, "
		"with 2 bytes generalised to dtype_bytes)",
		"as forward (kernels/ops/distill_jsd_loss.c has one cost)",
		"as forward (kernels/ops/distill_jsd_loss.c has one cost)",
	},
	.cpu = dj_cpu,
	.check = dj_check,
};
