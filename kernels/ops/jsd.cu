/*
 * jsd.cu: generalized JSD loss (beta 0.5, batchmean) and its gradient for
 * Hopper.  Reference and CPU implementation: jsd.c.
 *
 * Floor: read X and Y, write dX = 3·T·V·s bytes; 8192 x 128256 fp32 =
 * 12.6 GB -> 3.76 ms on H100 (3.35 TB/s), 2.63 ms on H200; target 1.5x.
 */
#include "../cuda/kbc.cuh"
#include "jsd.h"

#define JSD_BLOCK 512
#define JSD_UNROLL 2

/*
 * One block (512 threads) per row, one pass: X and Y streamed with 16-byte
 * loads (2 chunks of each in flight per thread), dX written with 16-byte
 * stores, the row's loss reduced in the block (fp32) and stored per row;
 * kbc_sum_fixed adds the rows in a fixed order (deterministic).  Inputs
 * are log-probabilities already, so no row statistics are needed: the row
 * is read exactly once.  ~12 FLOPs per element (2 exp, 1 log).
 */
template <typename T>
__global__ void __launch_bounds__(JSD_BLOCK)
jsd_kernel(const T *__restrict__ X, const T *__restrict__ Y, T *__restrict__ dX, float *__restrict__ row_loss,
		   int64_t V, float inv_rows, bool aligned)
{
	constexpr int N = vec_of<T>::n;
	__shared__ float scratch[32];
	int64_t		r = blockIdx.x;
	int64_t		nchunks = (V + N - 1) / N;
	float		acc = 0;

	for (int64_t base = threadIdx.x; base < nchunks; base += (int64_t) JSD_UNROLL * JSD_BLOCK)
	{
		float		x[JSD_UNROLL][N],
					y[JSD_UNROLL][N];

#pragma unroll
		for (int u = 0; u < JSD_UNROLL; u++)
		{
			int64_t		k = base + (int64_t) u * JSD_BLOCK;

			if (k < nchunks)
			{
				load_chunk(X + r * V, k, V, aligned, x[u], 0.0f);
				load_chunk(Y + r * V, k, V, aligned, y[u], 0.0f);
			}
		}
#pragma unroll
		for (int u = 0; u < JSD_UNROLL; u++)
		{
			int64_t		k = base + (int64_t) u * JSD_BLOCK;
			float		o[N];

			if (k >= nchunks)
				continue;
#pragma unroll
			for (int j = 0; j < N; j++)
			{
				float		q = expf(x[u][j]),
							p = expf(y[u][j]);
				float		logm = logf((float) JSD_BETA * p + (1.0f - (float) JSD_BETA) * q);
				float		d = (1.0f - (float) JSD_BETA) * q * (x[u][j] - logm);

				if (k * N + j < V)
					acc += (float) JSD_BETA * p * (y[u][j] - logm) + d;
				o[j] = d * inv_rows;
			}
			store_chunk(dX + r * V, k, V, aligned, o);
		}
	}
	acc = block_sum(acc, scratch);
	if (threadIdx.x == 0)
		row_loss[r] = acc * inv_rows;
}

template <typename T>
static int
run(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		rows = c->ax[0],
				V = c->ax[1];
	bool		aligned = rows_aligned<T>(c->t[JSD_X], V) && rows_aligned<T>(c->t[JSD_Y], V) &&
		rows_aligned<T>(c->t[JSD_DX], V);

	jsd_kernel<T><<<(unsigned) rows, JSD_BLOCK, 0, ctx->stream>>>(
		(const T *) c->t[JSD_X], (const T *) c->t[JSD_Y], (T *) c->t[JSD_DX], (float *) c->t[JSD_ROW_LOSS],
		V, 1.0f / (float) rows, aligned);
	KBC_CHECK_LAUNCH();
	return kbc_sum_fixed(ctx, (const float *) c->t[JSD_ROW_LOSS], rows, (float *) c->t[JSD_LOSS]);
}

int
jsd_cuda(kbc_ctx *ctx, const kb_call *c, int phase)
{
	if (phase == KB_PHASE_PREPARE)
		return KBC_OK;
	/* forward and full do the same work: Liger's backward is a no-op for an upstream gradient of 1. */
	return c->dtype == KB_BF16 ? run<__nv_bfloat16>(ctx, c) : run<float>(ctx, c);
}
