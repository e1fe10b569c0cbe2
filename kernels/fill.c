/*
 * fill.c: the values of a run's tensors in host memory: one element read or
 * stored by dtype, and a tensor filled from the counter-based generator
 * (kb_abi.h, the same values the CUDA fill writes on the device).  The cpu
 * and child backends fill with it; the checks read host copies with it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kb_int.h"

/* Store v into element i of a host buffer. */
void
kb_set(void *p, int dtype, int64_t i, double v)
{
	if (dtype == KB_FP32)
		((float *) p)[i] = (float) v;
	else if (dtype == KB_BF16)
		((uint16_t *) p)[i] = kb_f2bf((float) v);
	else if (dtype == KB_I32)
		((int32_t *) p)[i] = (int32_t) v;
	else if (dtype == KB_BOOL)
		((uint8_t *) p)[i] = v != 0;	/* torch.bool's byte: 0 or 1 */
	else
		((int64_t *) p)[i] = (int64_t) v;
}

double
kb_get(const void *p, int dtype, int64_t i)
{
	if (dtype == KB_FP32)
		return ((const float *) p)[i];
	if (dtype == KB_BF16)
		return kb_bf2f(((const uint16_t *) p)[i]);
	if (dtype == KB_I32)
		return (double) ((const int32_t *) p)[i];
	if (dtype == KB_BOOL)
		return ((const uint8_t *) p)[i] != 0;
	return (double) ((const int64_t *) p)[i];
}

/* Rows [r0, r1) of a tensor of rows x cols filled from the generator. */
static void
fill_rows(void *p, int dtype, int64_t r0, int64_t r1, int64_t cols, int init,
		  double scale, int64_t modulo, uint64_t seed, uint32_t stream)
{
	int64_t		i0 = r0 * cols,
				n = r1 * cols;

	switch (init)
	{
		case KB_INIT_ZERO:
			memset((char *) p + (size_t) i0 * kb_dtype_size(dtype), 0, (size_t) (n - i0) * kb_dtype_size(dtype));
			break;
		case KB_INIT_UNIFORM:
			for (int64_t i = i0; i < n; i++)
				kb_set(p, dtype, i, (float) scale * kb_uniform(seed, stream, (uint64_t) i));
			break;
		case KB_INIT_LOGSOFTMAX:
		case KB_INIT_SOFTMAX:
			/* softmax: exp of the log_softmax row (a probability vector: kl_div's target, tvd's p and q) */
			for (int64_t r = r0; r < r1; r++)
			{
				double		mx = -INFINITY,
							sum = 0,
							lse;

				for (int64_t j = 0; j < cols; j++)
					mx = fmax(mx, (float) scale * kb_uniform(seed, stream, (uint64_t) (r * cols + j)));
				for (int64_t j = 0; j < cols; j++)
					sum += exp((float) scale * kb_uniform(seed, stream, (uint64_t) (r * cols + j)) - mx);
				lse = mx + log(sum);
				for (int64_t j = 0; j < cols; j++)
				{
					double		lp = (float) scale * kb_uniform(seed, stream, (uint64_t) (r * cols + j)) - lse;

					kb_set(p, dtype, r * cols + j, init == KB_INIT_SOFTMAX ? exp(lp) : lp);
				}
			}
			break;
		case KB_INIT_TARGETS:
			/* int64 (targets, ids), int32 (fused_moe's expert indices) or bool (high 2: kto_loss's labels) */
			for (int64_t i = i0; i < n; i++)
				kb_set(p, dtype == KB_I32 || dtype == KB_BOOL ? dtype : KB_I64, i,
					   (double) (kb_hash(seed, stream, (uint64_t) i) % (uint64_t) modulo));
			break;
		default:
			break;
	}
}

void
kb_fill_host(void *p, int dtype, int64_t rows, int64_t cols, int init,
			 double scale, int64_t modulo, uint64_t seed, uint32_t stream)
{
	fill_rows(p, dtype, 0, rows, cols, init, scale, modulo, seed, stream);
}

/*
 * A backend's fill when its tensors are in host memory (cpu, child): in
 * blocks of about a million elements, polling the run's cancel between
 * them (issue 29: a cancel reaches a job while it generates its inputs,
 * which for a large tensor takes seconds), the values the same as one fill.
 */
int
kb_host_fill(kb_backend *be, void *p, int dtype, int64_t rows, int64_t cols, int init,
			 double scale, int64_t modulo, uint64_t seed, uint32_t stream)
{
	int64_t		step = cols > 0 && cols < (1 << 20) ? (1 << 20) / cols : 1;

	for (int64_t r = 0; r < rows; r += step)
	{
		if (be->req && kb_req_stopping(be->req))
		{
			snprintf(be->err, sizeof(be->err), "canceled while generating the inputs");
			return KBC_ERROR;
		}
		fill_rows(p, dtype, r, r + step < rows ? r + step : rows, cols, init, scale, modulo, seed, stream);
	}
	return KBC_OK;
}
