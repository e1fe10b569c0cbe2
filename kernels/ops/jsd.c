/*
 * jsd.c: generalized Jensen-Shannon divergence loss between student and
 * teacher log-probabilities over tokens x vocab, beta 0.5, batchmean, as
 * Liger's benchmark_jsd.py runs LigerJSD.  With X = student log-probs
 * (log Q), Y = teacher log-probs (log P) and M = beta P + (1-beta) Q:
 *   loss = sum_rows sum_j [beta P (Y - log M) + (1-beta) Q (X - log M)] / tokens
 *   dX   = (1-beta) Q (X - log M) / tokens
 * Liger's forward computes the loss and dX together; its backward only
 * scales dX by the upstream gradient g (skipped when that is 1).  Liger's
 * script makes X as log_softmax of a leaf Z and times its backward with a
 * random scalar g (benchmark/scripts/utils.py, run_speed_benchmark), so its
 * backward scales dX and goes on into log_softmax's backward:
 * dZ = g (dX - exp(X) sum_j dX), per row.
 *   forward   loss and dX
 *   backward  dZ from the forward's dX (the forward prepared, untimed) and g (grad_loss)
 *   full      forward + backward (upstream gradient 1: no extra work; dZ not computed)
 *
 * Float64 reference, CPU implementation, check and registry entry; the
 * CUDA kernels are in jsd.cu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"
#include "jsd.h"

/* ------------------------------------------------------------ float64 reference */

/* One row: its loss contribution (not yet divided by tokens), dX * tokens in dx (may be NULL). */
double
kb_jsd_ref_row(const double *x, const double *y, int64_t V, double beta, double *dx)
{
	double		loss = 0;

	for (int64_t j = 0; j < V; j++)
	{
		double		q = exp(x[j]),
					p = exp(y[j]);
		double		logm = log(beta * p + (1 - beta) * q);

		loss += beta * p * (y[j] - logm) + (1 - beta) * q * (x[j] - logm);
		if (dx)
			dx[j] = (1 - beta) * q * (x[j] - logm);
	}
	return loss;
}

/* One row of log_softmax's backward: dz = dx - exp(x) sum(dx), x the log-probabilities. */
void
kb_jsd_ref_row_backward(const double *x, const double *dx, int64_t V, double *dz)
{
	double		s = 0;

	for (int64_t j = 0; j < V; j++)
		s += dx[j];
	for (int64_t j = 0; j < V; j++)
		dz[j] = dx[j] - exp(x[j]) * s;
}

/* ------------------------------------------------------------ CPU implementation */

static void
jsd_cpu_forward(const kb_call *c)
{
	int64_t		T = c->ax[0],
				V = c->ax[1];
	int			dt = c->dtype;
	float		inv = 1.0f / (float) T;
	double		total = 0;

	for (int64_t r = 0; r < T; r++)
	{
		double		acc = 0;	/* accumulated in double (docs/KERNELS.md, "Tolerances") */

		for (int64_t j = 0; j < V; j++)
		{
			float		x = (float) kb_get(c->t[JSD_X], dt, r * V + j);
			float		y = (float) kb_get(c->t[JSD_Y], dt, r * V + j);
			float		q = expf(x),
						p = expf(y);
			float		logm = logf((float) JSD_BETA * p + (1.0f - (float) JSD_BETA) * q);

			acc += (float) JSD_BETA * p * (y - logm) + (1.0f - (float) JSD_BETA) * q * (x - logm);
			kb_set(c->t[JSD_DX], dt, r * V + j, (1.0f - (float) JSD_BETA) * q * (x - logm) * inv);
		}
		((float *) c->t[JSD_ROW_LOSS])[r] = (float) (acc / (double) T);
		total += acc / (double) T;
	}
	((float *) c->t[JSD_LOSS])[0] = (float) total;
}

/* The scaled dX through log_softmax's backward, from the stored dX: the row sum in double, the rest in float. */
static void
jsd_cpu_backward(const kb_call *c)
{
	int64_t		T = c->ax[0],
				V = c->ax[1];
	int			dt = c->dtype;
	float		g = ((const float *) c->t[JSD_G])[0];

	for (int64_t r = 0; r < T; r++)
	{
		double		s = 0;
		float		sf;

		for (int64_t j = 0; j < V; j++)
			s += (double) (float) kb_get(c->t[JSD_DX], dt, r * V + j);
		sf = (float) s;
		for (int64_t j = 0; j < V; j++)
		{
			float		x = (float) kb_get(c->t[JSD_X], dt, r * V + j);
			float		d = (float) kb_get(c->t[JSD_DX], dt, r * V + j);

			kb_set(c->t[JSD_DZ], dt, r * V + j, g * (d - expf(x) * sf));
		}
	}
}

static int
jsd_cpu(const kb_call *c, int phase)
{
	if (phase == KB_PHASE_PREPARE)
	{
		if (c->mode == KB_BACKWARD)
			jsd_cpu_forward(c);		/* the dX the backward reads, untimed */
		return 0;
	}
	if (c->mode == KB_BACKWARD)
		jsd_cpu_backward(c);
	else
		jsd_cpu_forward(c);		/* full: the backward does no extra work (upstream gradient 1) */
	return 0;
}

/* ------------------------------------------------------------ registry hooks */

static void
jsd_plan(kb_call *c, kb_plan *p, bool cuda)
{
	int64_t		T = c->ax[0],
				V = c->ax[1];
	static const char *const names[JSD_NT] = {"student_log_probs", "teacher_log_probs", "loss", "grad_input", "row_loss",
	"grad_logits", "grad_loss"};
	bool		backward = c->mode == KB_BACKWARD;

	(void) cuda;
	/* forward and full: the tensors they always had (grad_logits is the backward's) */
	c->ntensors = backward ? JSD_NT : JSD_DZ;
	for (int i = 0; i < c->ntensors; i++)
	{
		p->name[i] = names[i];
		c->rows[i] = T;
		c->cols[i] = V;
		c->tdtype[i] = c->dtype;
	}
	c->rows[JSD_LOSS] = 1;
	c->cols[JSD_LOSS] = c->cols[JSD_ROW_LOSS] = 1;
	c->tdtype[JSD_LOSS] = c->tdtype[JSD_ROW_LOSS] = KB_FP32;
	if (backward)
	{
		/* the loss's upstream gradient: a random scalar, as Liger's script draws it */
		c->rows[JSD_G] = c->cols[JSD_G] = 1;
		c->tdtype[JSD_G] = KB_FP32;
		p->init[JSD_G] = KB_INIT_UNIFORM;
		p->scale[JSD_G] = 1.0;
	}
	p->init[JSD_X] = p->init[JSD_Y] = KB_INIT_LOGSOFTMAX;
	p->scale[JSD_X] = p->scale[JSD_Y] = 2.0;
	/* the backward's loss, row_loss and grad_input are the prepared forward's, not compared */
	p->is_output[JSD_LOSS] = p->is_output[JSD_DX] = !backward;
	if (backward)
		p->is_output[JSD_DZ] = true;
	/* Per-block partial sums of the loss (deterministic reduction). */
	c->ws_bytes = sizeof(double) * 4096;
}

/*
 * The check, with a tolerance derived per value (docs/KERNELS.md,
 * "Tolerances").  Per element, with p = e^y, q = e^x, lm = log(beta p +
 * (1 - beta) q), computed in fp32: exp and log within 2u, so (x - lm) is
 * within u (|x| + 2|lm| + 3) and a term's rounding is at most
 * e(x) = u (4|x| + 5|lm| + 3) times its weight:
 *   grad_input  (1 - beta) q e(x) / T + uo |value|
 *   row_loss    (kb_gamma(V) sum|t| + sum [beta p e(y) + (1 - beta) q e(x)]) / T + u |value|
 *   loss        the sum of the rows' tolerances + kb_gamma(T) sum|row_loss|
 *   grad_logits (backward) dz = g (dx - q S) with S = sum dx over the row: the stored
 *               dx's tolerance t(dx), S within e_S = kb_gamma(V) sum|dx| + sum t(dx), so
 *               |g| (t(dx) + q (e_S + 4u |S|) + 3u |dx - q S|) + uo |value|
 * The row loss of two close distributions is a small difference of large
 * terms: its tolerance follows the terms (sum|t|), not its own size.
 *
 * An implementation that returns only the total loss (Liger's LigerJSD: a
 * scalar and the gradient) has no row_loss: its total is compared with the
 * float64 reference over every row (the same tolerance, from the
 * reference's rows), its grad_input on the sampled rows as ever.  One that
 * returns row_loss has it checked per row as before.  A loss, grad_input or
 * grad_logits not returned fails.
 */

/* One row's reference: its loss (/ T) in *lr, dX (/ T) in ref and dX's tolerances in tol
 * (V values each); returns the row loss's tolerance. */
static double
jsd_row_ref(const double *x, const double *y, int64_t V, int64_t T, double u_out, double *lr, double *ref,
			double *tol)
{
	double		u = KB_U32,
				tabs = 0,
				terr = 0;

	*lr = kb_jsd_ref_row(x, y, V, JSD_BETA, ref) / (double) T;
	for (int64_t j = 0; j < V; j++)
	{
		double		q = exp(x[j]),
					pp = exp(y[j]),
					lm = log(JSD_BETA * pp + (1 - JSD_BETA) * q),
					ex = u * (4 * fabs(x[j]) + 5 * fabs(lm) + 3),
					ey = u * (4 * fabs(y[j]) + 5 * fabs(lm) + 3);

		tabs += fabs(JSD_BETA * pp * (y[j] - lm)) + fabs((1 - JSD_BETA) * q * (x[j] - lm));
		terr += JSD_BETA * pp * ey + (1 - JSD_BETA) * q * ex;
		ref[j] /= (double) T;
		tol[j] = (1 - JSD_BETA) * q * ex / (double) T + u_out * fabs(ref[j]);
	}
	return (kb_gamma(V) * tabs + terr) / (double) T + u * fabs(*lr);
}

/* The backward: grad_logits on the sampled rows, from the reference's dX (not the stored one). */
static int
jsd_check_backward(kb_backend *be, const kb_call *c, const kb_plan *p, kb_cmp *m, double *x)
{
	int64_t		T = c->ax[0],
				V = c->ax[1];
	int64_t		rows[32];
	int			nr = kb_sample_rows(T, 32, rows);
	double	   *y = x + V,
			   *ref = x + 2 * V,
			   *got = x + 3 * V,
			   *tol = x + 4 * V,
			   *dz = x + 5 * V,
			   *tdz = x + 6 * V,
				u = KB_U32,
				g;
	int			given = kb_returned(be, c, p, JSD_DZ);

	if (given < 0 || kb_fetch_rows(be, c, JSD_G, 0, 1, &g))
		return -1;
	if (!given)
	{
		kb_cmp_missing(m, "grad_logits");
		return 0;
	}
	for (int k = 0; k < nr; k++)
	{
		double		lr,
					s = 0,
					sabs = 0,
					stol = 0;

		m->row = rows[k];
		if (kb_fetch_rows(be, c, JSD_X, rows[k], 1, x) || kb_fetch_rows(be, c, JSD_Y, rows[k], 1, y) ||
			kb_fetch_rows(be, c, JSD_DZ, rows[k], 1, got))
			return -1;
		(void) jsd_row_ref(x, y, V, T, m->u_out, &lr, ref, tol);
		kb_jsd_ref_row_backward(x, ref, V, dz);
		for (int64_t j = 0; j < V; j++)
		{
			s += ref[j];
			sabs += fabs(ref[j]);
			stol += tol[j];
		}
		for (int64_t j = 0; j < V; j++)
		{
			tdz[j] = fabs(g) * (tol[j] + exp(x[j]) * (kb_gamma(V) * sabs + stol + 4 * u * fabs(s)) + 3 * u * fabs(dz[j]));
			dz[j] *= g;
			tdz[j] += m->u_out * fabs(dz[j]);
		}
		kb_cmp_tol(m, "grad_logits", dz, got, tdz, V);
	}
	m->row = -1;
	return 0;
}

static int
jsd_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out)
{
	int64_t		T = c->ax[0],
				V = c->ax[1];
	int64_t		rows[32];
	int			nr = kb_sample_rows(T, 32, rows);
	double	   *x = malloc(sizeof(double) * (size_t) V * 7);
	double	   *y = x + V,
			   *ref = x + 2 * V,
			   *got = x + 3 * V,
			   *tol = x + 4 * V;
	double		total_ref = 0,
				total_rows = 0,
				total_got = 0,
				total_tol = 0,
				rows_abs = 0,
				ref_abs = 0,
				u = KB_U32;
	double	   *rl = malloc(sizeof(double) * (size_t) T);
	kb_cmp		m;
	int			rc = 0,
				rl_given = 0,
				dx_given = 0,
				loss_given = 0;

	if (!x || !rl)
	{
		free(x);
		free(rl);
		return -1;
	}
	kb_cmp_init(&m, c->dtype);
	if (c->mode == KB_BACKWARD)
	{
		rc = jsd_check_backward(be, c, p, &m, x);
		goto done;
	}
	/* which outputs the implementation returned (a python one may leave row_loss out) */
	if ((rl_given = kb_returned(be, c, p, JSD_ROW_LOSS)) < 0 || (dx_given = kb_returned(be, c, p, JSD_DX)) < 0 ||
		(loss_given = kb_returned(be, c, p, JSD_LOSS)) < 0)
	{
		rc = -1;
		goto done;
	}
	if (!dx_given)
		kb_cmp_missing(&m, "grad_input");
	for (int k = 0; k < nr && rc == 0; k++)
	{
		double		lr,
					lg,
					tl;

		m.row = rows[k];
		rc |= kb_fetch_rows(be, c, JSD_X, rows[k], 1, x);
		rc |= kb_fetch_rows(be, c, JSD_Y, rows[k], 1, y);
		if (dx_given)
			rc |= kb_fetch_rows(be, c, JSD_DX, rows[k], 1, got);
		if (rl_given)
			rc |= kb_fetch_rows(be, c, JSD_ROW_LOSS, rows[k], 1, &lg);
		if (rc)
			break;
		tl = jsd_row_ref(x, y, V, T, m.u_out, &lr, ref, tol);
		if (dx_given)
			kb_cmp_tol(&m, "grad_input", ref, got, tol, V);
		if (rl_given)
			kb_cmp_tol(&m, "row_loss", &lr, &lg, &tl, 1);
		total_ref += lr;
		total_tol += tl;
		ref_abs += fabs(lr);
	}
	m.row = -1;
	if (rc == 0 && !loss_given)
		kb_cmp_missing(&m, "loss");
	else if (rc == 0 && rl_given)
	{
		/* The total: against the reference when every row was checked, else
		 * against the sum of the kernel's own per-row losses. */
		rc |= kb_fetch_rows(be, c, JSD_ROW_LOSS, 0, T, rl);
		rc |= kb_fetch_rows(be, c, JSD_LOSS, 0, 1, &total_got);
		for (int64_t r = 0; r < T; r++)
		{
			total_rows += rl[r];
			rows_abs += fabs(rl[r]);
		}
		if (rc == 0)
		{
			double		tt = kb_gamma(T) * rows_abs + u * fabs(total_rows) + (nr == T ? total_tol : 0);

			kb_cmp_tol(&m, "loss", nr == T ? &total_ref : &total_rows, &total_got, &tt, 1);
		}
	}
	else if (rc == 0)
	{
		/* no row_loss: the total against the reference over every row (the sample was every row when nr == T) */
		if (nr != T)
		{
			total_ref = total_tol = ref_abs = 0;
			for (int64_t r = 0; r < T && rc == 0; r++)
			{
				double		lr;

				rc |= kb_fetch_rows(be, c, JSD_X, r, 1, x);
				rc |= kb_fetch_rows(be, c, JSD_Y, r, 1, y);
				if (rc == 0)
				{
					total_tol += jsd_row_ref(x, y, V, T, m.u_out, &lr, ref, tol);
					total_ref += lr;
					ref_abs += fabs(lr);
				}
			}
		}
		rc |= kb_fetch_rows(be, c, JSD_LOSS, 0, 1, &total_got);
		if (rc == 0)
		{
			double		tt = kb_gamma(T) * ref_abs + u * fabs(total_ref) + total_tol;

			kb_cmp_tol(&m, "loss", &total_ref, &total_got, &tt, 1);
		}
	}
done:
	free(x);
	free(rl);
	if (rc)
		return -1;
	kb_cmp_finish(&m, out);
	return 0;
}

const kb_op kb_op_jsd = {
	.id = KB_OP_JSD,
	.name = "jsd",
	.slug = "jsd",
	.title = "Jensen-Shannon divergence loss",
	.description = "Generalized JSD between student and teacher log-probabilities over tokens\xc3\x97vocab; the benchmark generates fp32 log-probs.",
	.source_url = "https://github.com/linkedin/Liger-Kernel/blob/2120862ba532c9449e72d603ba6324310ae756e7/benchmark/scripts/benchmark_jsd.py",
	.family = "jsd",
	.modes = {true, true, true},
	.timed = {
		"the forward pass (loss and grad_input together, as Liger's forward computes them; beta 0.5, batchmean)",
		"Liger's script's backward (the forward prepared, untimed): grad_input scaled by the random scalar "
		"grad_loss, then log_softmax's backward: grad_logits = grad_loss * (grad_input - "
		"exp(student_log_probs) * rowsum(grad_input))",
		"the forward pass followed by the backward pass (upstream gradient 1: the backward does no extra work, as in Liger)",
	},
	.naxes = 2,
	.axes = {{"tokens", "variable", NULL}, {"vocab", "variable", NULL}},
	.title_axes = {"tokens", "vocab", NULL},
	.ndtypes = 2,
	.dtypes = {KB_FP32, KB_BF16},
	.ninputs = 2,
	.inputs = {
		{"student_log_probs", {"tokens", "vocab", NULL}, "float"},
		{"teacher_log_probs", {"tokens", "vocab", NULL}, "float"},
	},
	.noutputs = 1,
	.outputs = {{"loss", {"1", NULL}, "float"}},
	.c_path = "kernels/ops/jsd.c",
	.cu_path = "kernels/ops/jsd.cu",
	.cu_symbol = "jsd_cuda",
	.plan = jsd_plan,
	/* the floors: bytes and FLOPs of one call of each pass (cost.c; kbench_operation_costs) */
	.cost_bytes = {
		"3 * dtype_bytes * tokens * vocab + 4 * tokens + 4",
		"3 * dtype_bytes * tokens * vocab + 4",
		"3 * dtype_bytes * tokens * vocab + 4 * tokens + 4",
	},
	.cost_flops = {"12 * tokens * vocab", "5 * tokens * vocab", "12 * tokens * vocab"},
	.cost_compute = "vector",
	.cost_note = {
		"read X and Y, write dX (Liger computes the gradient in the forward pass; "
		"kernels/ops/jsd.c)",
		"read the student log-probs, grad_input and grad_loss, write grad_logits; per element the row sum's "
		"add, an exp, two multiplies and a subtract (the scale by grad_loss and log_softmax's backward, "
		"fused; kernels/ops/jsd.c)",
		"as forward (the backward does no extra work for an upstream gradient of 1; kernels/ops/jsd.c)",
	},
	.cpu = jsd_cpu,
	.check = jsd_check,
};
