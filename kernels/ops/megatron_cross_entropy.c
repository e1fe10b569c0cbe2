/*
 * megatron_cross_entropy.c: vocab-parallel cross-entropy at TP=1, Megatron
 * layout: logits [seq, batch, vocab] (rows = seq*batch) against int64
 * targets, per-token fp32 losses loss = logsumexp(z) - z[target].
 *   forward   the per-token losses
 *   backward  forward + backward, as Liger's harness times its "backward"
 *             (grad_logits = (softmax(z) - onehot(target)) * grad_loss)
 *   full      forward + backward
 *
 * Float64 reference, CPU implementation (fp32 accumulation), check and
 * registry entry; the CUDA kernels are in megatron_cross_entropy.cu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"
#include "cpu_rows.h"
#include "megatron_cross_entropy.h"

/* ------------------------------------------------------------ float64 reference */

/* One row: the loss, and when grad is not NULL the logits' gradient scaled by g. */
double
kb_megatron_ce_ref_row(const double *z, int64_t V, int64_t target, double g, double *grad)
{
	double		mx = -INFINITY,
				sum = 0,
				lse;

	for (int64_t j = 0; j < V; j++)
		mx = fmax(mx, z[j]);
	for (int64_t j = 0; j < V; j++)
		sum += exp(z[j] - mx);
	lse = mx + log(sum);
	if (grad)
		for (int64_t j = 0; j < V; j++)
			grad[j] = (exp(z[j] - lse) - (j == target ? 1.0 : 0.0)) * g;
	return lse - z[target];
}

/* ------------------------------------------------------------ CPU implementation */

static int
ce_cpu(const kb_call *c, int phase)
{
	int64_t		N = c->ax[0] * c->ax[1],
				V = c->ax[2];
	int			dt = c->dtype;
	float	   *buf,
			   *e;

	if (phase == KB_PHASE_PREPARE)
		return 0;
	/* e: the row's exp(z - max); then, for bf16, the row as float and its gradient */
	e = (float *) malloc(sizeof(float) * (size_t) V * (dt == KB_FP32 ? 1 : 3));
	buf = dt == KB_FP32 ? NULL : e + V;
	for (int64_t r = 0; r < N; r++)
	{
		const float *z = kb_row_in(c->t[CE_LOGITS], dt, r * V, V, buf);
		int64_t		t = ((const int64_t *) c->t[CE_TARGET])[r];
		float		mx = kb_max_f(z, V),
					lse;

		/* the sum accumulates in double (docs/KERNELS.md, "Tolerances") */
		lse = mx + logf((float) kb_exp_shift_f(e, z, mx, V));
		((float *) c->t[CE_LOSS])[r] = lse - z[t];
		if (c->mode != KB_FORWARD)
		{
			float		g = ((const float *) c->t[CE_GRAD_LOSS])[r];
			float	   *gz = kb_row_dst(c->t[CE_GRAD], dt, r * V, buf ? buf + V : NULL);

			for (int64_t j = 0; j < V; j++)
				gz[j] = kb_expf(z[j] - lse) * g;
			gz[t] = (kb_expf(z[t] - lse) - 1.0f) * g;
			kb_row_out(c->t[CE_GRAD], dt, r * V, V, gz);
		}
	}
	free(e);
	return 0;
}

/* ------------------------------------------------------------ registry hooks */

static void
ce_plan(kb_call *c, kb_plan *p, bool cuda)
{
	int64_t		N = c->ax[0] * c->ax[1],
				V = c->ax[2];
	static const char *const names[CE_NT] = {"logits", "target", "loss", "grad_loss", "grad_logits"};

	(void) cuda;
	c->ntensors = CE_NT;
	for (int i = 0; i < CE_NT; i++)
	{
		p->name[i] = names[i];
		c->rows[i] = N;
		c->cols[i] = 1;
		c->tdtype[i] = KB_FP32;
	}
	c->cols[CE_LOGITS] = c->cols[CE_GRAD] = V;
	c->tdtype[CE_LOGITS] = c->tdtype[CE_GRAD] = c->dtype;
	c->tdtype[CE_TARGET] = KB_I64;
	if (c->mode == KB_FORWARD)
		c->rows[CE_GRAD] = 0;	/* not needed */
	p->init[CE_LOGITS] = KB_INIT_UNIFORM;
	p->scale[CE_LOGITS] = 4.0;
	p->init[CE_TARGET] = KB_INIT_TARGETS;
	p->modulo[CE_TARGET] = V;
	p->init[CE_GRAD_LOSS] = KB_INIT_UNIFORM;
	p->scale[CE_GRAD_LOSS] = 1.0;
	p->is_output[CE_LOSS] = true;
	p->is_output[CE_GRAD] = c->mode != KB_FORWARD;
}

/*
 * The check, with a tolerance derived per value (docs/KERNELS.md,
 * "Tolerances").  Per row, with mx = max z, S = sum exp(z - mx) and
 * lse = mx + log S, computed in fp32: exp within 2u (2 + 1.16 |x|) (the
 * bound of CUDA's __expf, which the bf16 kernels use; expf does better), so
 *   e_S   = kb_gamma(V) + 2u (2 + 1.16 max|z - mx|)      relative error of S
 *   e_lse = e_S + 2u |lse|                              absolute error of lse
 *   loss  e_lse + 2u |z_target| + u |loss|
 *   grad  |g| p (e_lse + u (|z| + |lse|) + 2u (2 + 1.16 |z - lse|)) + u |g| [target]
 *         + (u + uo) |grad|,  p = softmax(z)
 */
double
kb_megatron_ce_row_tol(const double *z, int64_t V, int64_t ti, double loss, double u, double *e_lse)
{
	double		mx = -INFINITY,
				spread = 0,
				lse = loss + z[ti];

	for (int64_t j = 0; j < V; j++)
		mx = fmax(mx, z[j]);
	for (int64_t j = 0; j < V; j++)
		spread = fmax(spread, mx - z[j]);
	*e_lse = kb_gamma(V) + 2 * u * (2 + 1.16 * spread) + 2 * u * fabs(lse);
	return *e_lse + 2 * u * fabs(z[ti]) + u * fabs(loss);
}

static int
ce_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out)
{
	int64_t		N = c->ax[0] * c->ax[1],
				V = c->ax[2];
	int64_t		rows[32];
	int			nr = kb_sample_rows(N, 32, rows);
	double	   *z = malloc(sizeof(double) * (size_t) V * 4);
	double	   *ref = z + V,
			   *got = z + 2 * V,
			   *tol = z + 3 * V;
	double		u = KB_U32;
	kb_cmp		m;
	int			rc = 0;

	(void) p;
	if (!z)
		return -1;
	kb_cmp_init(&m, c->dtype);
	for (int k = 0; k < nr && rc == 0; k++)
	{
		double		t,
					g,
					loss,
					gl,
					lse,
					e_lse,
					tl;
		int64_t		ti;

		m.row = rows[k];
		rc |= kb_fetch_rows(be, c, CE_LOGITS, rows[k], 1, z);
		rc |= kb_fetch_rows(be, c, CE_TARGET, rows[k], 1, &t);
		rc |= kb_fetch_rows(be, c, CE_GRAD_LOSS, rows[k], 1, &g);
		rc |= kb_fetch_rows(be, c, CE_LOSS, rows[k], 1, &gl);
		if (rc)
			break;
		ti = (int64_t) t;
		loss = kb_megatron_ce_ref_row(z, V, ti, g, c->mode != KB_FORWARD ? ref : NULL);
		lse = loss + z[ti];
		tl = kb_megatron_ce_row_tol(z, V, ti, loss, u, &e_lse);
		kb_cmp_tol(&m, "loss", &loss, &gl, &tl, 1);
		if (c->mode != KB_FORWARD)
		{
			rc |= kb_fetch_rows(be, c, CE_GRAD, rows[k], 1, got);
			for (int64_t j = 0; j < V; j++)
			{
				double		pj = exp(z[j] - lse);

				tol[j] = fabs(g) * pj * (e_lse + u * (fabs(z[j]) + fabs(lse)) + 2 * u * (2 + 1.16 * fabs(z[j] - lse)))
					+ (j == ti ? u * fabs(g) : 0) + (u + m.u_out) * fabs(ref[j]);
			}
			kb_cmp_tol(&m, "grad_logits", ref, got, tol, V);
		}
	}
	free(z);
	if (rc)
		return -1;
	kb_cmp_finish(&m, out);
	return 0;
}

const kb_op kb_op_megatron_cross_entropy = {
	.id = KB_OP_MEGATRON_CE,
	.name = "megatron_cross_entropy",
	.slug = "megatron-cross-entropy",
	.title = "Vocab-parallel cross-entropy, Megatron layout",
	.description = "Vocab-parallel cross-entropy over seq\xc3\x97" "batch\xc3\x97vocab bf16 logits against integer targets, returning per-token fp32 losses. Only TP=1 rows import; sharded-vocab rows would change the local logits shape.",
	.source_url = "https://github.com/linkedin/Liger-Kernel/blob/2120862ba532c9449e72d603ba6324310ae756e7/benchmark/scripts/benchmark_megatron_cross_entropy.py",
	.family = "cross-entropy",
	.modes = {true, true, true},
	.timed = {
		"the forward pass (per-token losses)",
		"the forward pass followed by the backward pass, as Liger's harness times its megatron backward (grad_logits from a random per-token upstream gradient)",
		"the forward pass followed by the backward pass",
	},
	.naxes = 3,
	.axes = {{"seq", "variable", NULL}, {"batch", "variable", NULL}, {"vocab", "variable", NULL}},
	.title_axes = {"seq", "batch", "vocab", NULL},
	.ndtypes = 2,
	.dtypes = {KB_BF16, KB_FP32},
	.ninputs = 2,
	.inputs = {
		{"logits", {"seq", "batch", "vocab"}, "float"},
		{"target", {"seq", "batch", NULL}, "int64"},
	},
	.noutputs = 1,
	.outputs = {{"loss", {"seq", "batch", NULL}, "fp32"}},
	.c_path = "kernels/ops/megatron_cross_entropy.c",
	.cu_path = "kernels/ops/megatron_cross_entropy.cu",
	.cu_symbol = "megatron_cross_entropy_cuda",
	.variant_notes = {
		"v1: one 1024-thread block per row, the row cached in shared memory up to 220 KB",
		"v2: each row split over a thread-block cluster of up to 8 blocks, each segment (64 KB, or up to "
		"112 KB for rows over 512 KB) copied asynchronously into shared memory, the softmax statistics "
		"exchanged through distributed shared memory, so the row is read from HBM once and several "
		"blocks overlap on each SM",
	},
	.plan = ce_plan,
	/* the floors: bytes and FLOPs of one call of each pass (cost.c; kbench_operation_costs) */
	.cost_bytes = {
		"dtype_bytes * batch * seq * vocab + 12 * batch * seq",
		"2 * dtype_bytes * batch * seq * vocab + 16 * batch * seq",
		"2 * dtype_bytes * batch * seq * vocab + 16 * batch * seq",
	},
	.cost_flops = {"4 * batch * seq * vocab", "9 * batch * seq * vocab", "9 * batch * seq * vocab"},
	.cost_compute = "vector",
	.cost_note = {
		"read logits, int64 targets; write fp32 losses (kernels/ops/megatron_cross_entropy.c)",
		"Liger times forward + backward here; read logits once, write the gradient "
		"(kernels/ops/megatron_cross_entropy.c)",
		"read logits once, write the gradient (kernels/ops/megatron_cross_entropy.c)",
	},
	.cpu = ce_cpu,
	.check = ce_check,
};
