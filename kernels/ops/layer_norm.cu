/*
 * layer_norm.cu: LayerNorm forward and backward for Hopper (sm_90).
 * Reference and CPU implementation: layer_norm.c.  Semantics there.
 *
 * Floors (rows R, hidden H, element size s; 4096x4096 fp32 on H100 3.35 TB/s):
 *   forward   2·R·H·s bytes (read x, write y)           134 MB -> 40 us
 *   backward  3·R·H·s bytes (read x, dy; write dx)      201 MB -> 60 us (target 1.3x: 78 us)
 *   full      5·R·H·s bytes                              336 MB -> 100 us
 * (weights, mean/rstd and the dw/db partials are < 5% at these shapes.)
 */
#include <cuda_pipeline.h>

#include "../cuda/kbc.cuh"
#include "layer_norm.h"

#define LN_BLOCK 256

/*
 * Forward, one block (256 threads) per row, the row held in registers.
 * Each thread loads NV 16-byte vectors of x (4 fp32 or 8 bf16 each) once
 * from HBM; mean and variance are two block reductions over the registers
 * (two-pass variance, no cancellation); y is written with 16-byte stores.
 * Moves 2·H·s bytes per row, ~8 FLOPs per element.
 */
template <typename T, int NV>
__global__ void __launch_bounds__(LN_BLOCK)
layer_norm_forward_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
						  T *__restrict__ y, float *__restrict__ mean, float *__restrict__ rstd,
						  int64_t H, bool aligned)
{
	constexpr int N = vec_of<T>::n;
	__shared__ float scratch[32];
	int64_t		r = blockIdx.x;
	const T    *xr = x + r * H;
	int64_t		nchunks = (H + N - 1) / N;
	float		v[NV][N];
	float		s = 0,
				q = 0,
				m,
				rs;

#pragma unroll
	for (int i = 0; i < NV; i++)
	{
		int64_t		k = threadIdx.x + (int64_t) i * LN_BLOCK;

		if (k < nchunks)
			load_chunk(xr, k, H, aligned, v[i], 0.0f);
		else
#pragma unroll
			for (int j = 0; j < N; j++)
				v[i][j] = 0.0f;
#pragma unroll
		for (int j = 0; j < N; j++)
			s += v[i][j];
	}
	m = block_sum(s, scratch) / (float) H;
#pragma unroll
	for (int i = 0; i < NV; i++)
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			int64_t		e = (threadIdx.x + (int64_t) i * LN_BLOCK) * N + j;
			float		d = e < H ? v[i][j] - m : 0.0f;

			q += d * d;
		}
	rs = rsqrtf(block_sum(q, scratch) / (float) H + (float) LN_EPS);
#pragma unroll
	for (int i = 0; i < NV; i++)
	{
		int64_t		k = threadIdx.x + (int64_t) i * LN_BLOCK;
		float		wv[N],
					bv[N],
					o[N];

		if (k >= nchunks)
			continue;
		load_chunk(w, k, H, aligned, wv, 0.0f);
		load_chunk(b, k, H, aligned, bv, 0.0f);
#pragma unroll
		for (int j = 0; j < N; j++)
			o[j] = (v[i][j] - m) * rs * wv[j] + bv[j];
		store_chunk(y + r * H, k, H, aligned, o);
	}
	if (threadIdx.x == 0)
	{
		mean[r] = m;
		rstd[r] = rs;
	}
}

/*
 * Backward, persistent blocks (2 per SM) walking rows r = blockIdx.x,
 * blockIdx.x + gridDim.x, ...  Per row: x and dy loaded once (16-byte
 * loads, held in registers), c1 = mean(xhat·w·dy) and c2 = mean(w·dy) from
 * one pair of block reductions, dx = (w·dy - xhat·c1 - c2)·rstd stored with
 * 16-byte stores.  dw and db accumulate in registers across the block's
 * rows (fp32) and are written once per block as partial sums, reduced by
 * layer_norm_dwdb_kernel: 2·gridDim·H·4 extra bytes (8.6 MB at H=4096 on
 * 132 SMs, 4% of the 201 MB floor) instead of atomics.
 * Moves 3·H·s bytes per row, ~14 FLOPs per element.
 */
template <typename T, int NV>
__global__ void __launch_bounds__(LN_BLOCK)
layer_norm_backward_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ dy,
						   const float *__restrict__ mean, const float *__restrict__ rstd,
						   T *__restrict__ dx, float *__restrict__ partial, int64_t R, int64_t H, bool aligned)
{
	constexpr int N = vec_of<T>::n;
	__shared__ float scratch[32];
	int64_t		nchunks = (H + N - 1) / N;
	float		wv[NV][N],
				dwa[NV][N],
				dba[NV][N];

#pragma unroll
	for (int i = 0; i < NV; i++)
	{
		int64_t		k = threadIdx.x + (int64_t) i * LN_BLOCK;

		if (k < nchunks)
			load_chunk(w, k, H, aligned, wv[i], 0.0f);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			if (k >= nchunks)
				wv[i][j] = 0.0f;
			dwa[i][j] = dba[i][j] = 0.0f;
		}
	}
	for (int64_t r = blockIdx.x; r < R; r += gridDim.x)
	{
		float		xv[NV][N],
					gv[NV][N];
		float		m = mean[r],
					rs = rstd[r],
					c1 = 0,
					c2 = 0;

#pragma unroll
		for (int i = 0; i < NV; i++)
		{
			int64_t		k = threadIdx.x + (int64_t) i * LN_BLOCK;

			if (k < nchunks)
			{
				load_chunk(x + r * H, k, H, aligned, xv[i], 0.0f);
				load_chunk(dy + r * H, k, H, aligned, gv[i], 0.0f);
			}
			else
#pragma unroll
				for (int j = 0; j < N; j++)
					xv[i][j] = gv[i][j] = 0.0f;
		}
#pragma unroll
		for (int i = 0; i < NV; i++)
#pragma unroll
			for (int j = 0; j < N; j++)
			{
				float		xhat = (xv[i][j] - m) * rs;
				float		wdy = wv[i][j] * gv[i][j];

				c1 += xhat * wdy;
				c2 += wdy;
				dwa[i][j] += gv[i][j] * xhat;
				dba[i][j] += gv[i][j];
			}
		c1 = block_sum(c1, scratch) / (float) H;
		c2 = block_sum(c2, scratch) / (float) H;
#pragma unroll
		for (int i = 0; i < NV; i++)
		{
			int64_t		k = threadIdx.x + (int64_t) i * LN_BLOCK;
			float		o[N];

			if (k >= nchunks)
				continue;
#pragma unroll
			for (int j = 0; j < N; j++)
				o[j] = (wv[i][j] * gv[i][j] - (xv[i][j] - m) * rs * c1 - c2) * rs;
			store_chunk(dx + r * H, k, H, aligned, o);
		}
	}
	/* This block's partial dw (row 2b) and db (row 2b+1). */
#pragma unroll
	for (int i = 0; i < NV; i++)
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			int64_t		e = (threadIdx.x + (int64_t) i * LN_BLOCK) * N + j;

			if (e < H)
			{
				partial[(2 * (int64_t) blockIdx.x) * H + e] = dwa[i][j];
				partial[(2 * (int64_t) blockIdx.x + 1) * H + e] = dba[i][j];
			}
		}
}

/* Column sums of the per-block partials: one thread per column, coalesced over columns. */
template <typename T>
__global__ void
layer_norm_dwdb_kernel(const float *__restrict__ partial, int nblocks, int64_t H, T *__restrict__ dw, T *__restrict__ db)
{
	for (int64_t e = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; e < H; e += (int64_t) gridDim.x * blockDim.x)
	{
		float		a = 0,
					bsum = 0;

		for (int g = 0; g < nblocks; g++)
		{
			a += partial[(2 * (int64_t) g) * H + e];
			bsum += partial[(2 * (int64_t) g + 1) * H + e];
		}
		dw[e] = from_f<T>(a);
		db[e] = from_f<T>(bsum);
	}
}

/*
 * Backward v2 (kbench --variant v2).  v1 measured 2.03x its floor at
 * 4096x4096 fp32 on an H200: each block loads a row, waits, reduces, stores,
 * and only then loads the next row, so with 2 blocks per SM the memory
 * system is idle for most of a row's time (latency-bound, not
 * bandwidth-bound).  v2 keeps S rows of x and dy in flight per block:
 * while row i computes, rows i+1..i+S-1 are being copied into a ring of
 * shared memory with cp.async (no registers held for them).  Each thread
 * copies and later reads only its own chunks, so the ring needs no barrier;
 * the only barriers are the c1/c2 reduction's.  The grid is as many blocks
 * as fit (occupancy), not a fixed 2 per SM.  dw and db still accumulate in
 * registers and leave as per-block partials, summed by
 * layer_norm_dwdb_v2_kernel with all SMs busy (v1's column kernel ran 16
 * blocks, each thread looping over every partial row).
 * Requires 16-byte aligned rows (the host falls back to v1 otherwise).
 * Not measured on a GPU yet.
 */
template <typename T, int NV, int S, int MINB>
__global__ void __launch_bounds__(LN_BLOCK, MINB)
layer_norm_backward_v2_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ dy,
							  const float *__restrict__ mean, const float *__restrict__ rstd,
							  T *__restrict__ dx, float *__restrict__ partial, int64_t R, int64_t H)
{
	constexpr int N = vec_of<T>::n;
	extern __shared__ uint4 ring[];	/* S slots of [x | dy][NV][LN_BLOCK] 16-byte chunks */
	__shared__ float scratch[64];
	const int	tid = threadIdx.x;
	const int64_t nchunks = H / N;
	const int64_t G = gridDim.x;
	float		wv[NV][N],
				dwa[NV][N],
				dba[NV][N];

#pragma unroll
	for (int i = 0; i < NV; i++)
	{
		int64_t		k = tid + (int64_t) i * LN_BLOCK;

		if (k < nchunks)
			load_chunk(w, k, H, true, wv[i], 0.0f);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			if (k >= nchunks)
				wv[i][j] = 0.0f;
			dwa[i][j] = dba[i][j] = 0.0f;
		}
	}

	/* Copy row r into slot s (this thread's chunks); always commit a group, so counting stays uniform. */
	auto		issue = [&] (int64_t r, int s)
	{
		if (r < R)
		{
			const uint4 *xs = reinterpret_cast<const uint4 *>(x + r * H);
			const uint4 *gs = reinterpret_cast<const uint4 *>(dy + r * H);

#pragma unroll
			for (int i = 0; i < NV; i++)
			{
				int64_t		k = tid + (int64_t) i * LN_BLOCK;

				if (k < nchunks)
				{
					__pipeline_memcpy_async(&ring[((s * 2 + 0) * NV + i) * LN_BLOCK + tid], xs + k, 16);
					__pipeline_memcpy_async(&ring[((s * 2 + 1) * NV + i) * LN_BLOCK + tid], gs + k, 16);
				}
			}
		}
		__pipeline_commit();
	};

	int64_t		r = blockIdx.x;
	float		m = 0,
				rs = 0;

#pragma unroll
	for (int s = 0; s < S - 1; s++)
		issue(r + s * G, s);
	if (r < R)
	{
		m = mean[r];
		rs = rstd[r];
	}
	for (int64_t it = 0; r < R; it++, r += G)
	{
		const int	s = (int) (it % S);
		float		mn = 0,
					rn = 0,
					c1 = 0,
					c2 = 0;

		issue(r + (S - 1) * G, (int) ((it + S - 1) % S));
		if (r + G < R)
		{
			mn = mean[r + G];	/* the next row's statistics, one row ahead */
			rn = rstd[r + G];
		}
		__pipeline_wait_prior(S - 1);	/* row r's group is complete */
#pragma unroll
		for (int i = 0; i < NV; i++)
		{
			float		xv[N],
						gv[N];

			if (tid + (int64_t) i * LN_BLOCK >= nchunks)
				continue;
			unpack_chunk<T>(ring[((s * 2 + 0) * NV + i) * LN_BLOCK + tid], xv);
			unpack_chunk<T>(ring[((s * 2 + 1) * NV + i) * LN_BLOCK + tid], gv);
#pragma unroll
			for (int j = 0; j < N; j++)
			{
				float		xhat = (xv[j] - m) * rs;
				float		wdy = wv[i][j] * gv[j];

				c1 += xhat * wdy;
				c2 += wdy;
				dwa[i][j] += gv[j] * xhat;
				dba[i][j] += gv[j];
			}
		}
		block_sum2(c1, c2, scratch);
		c1 /= (float) H;
		c2 /= (float) H;
#pragma unroll
		for (int i = 0; i < NV; i++)
		{
			int64_t		k = tid + (int64_t) i * LN_BLOCK;
			float		xv[N],
						gv[N],
						o[N];

			if (k >= nchunks)
				continue;
			unpack_chunk<T>(ring[((s * 2 + 0) * NV + i) * LN_BLOCK + tid], xv);
			unpack_chunk<T>(ring[((s * 2 + 1) * NV + i) * LN_BLOCK + tid], gv);
#pragma unroll
			for (int j = 0; j < N; j++)
				o[j] = (wv[i][j] * gv[j] - (xv[j] - m) * rs * c1 - c2) * rs;
			store_chunk(dx + r * H, k, H, true, o);
		}
		m = mn;
		rs = rn;
	}
	__pipeline_wait_prior(0);
#pragma unroll
	for (int i = 0; i < NV; i++)
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			int64_t		e = (tid + (int64_t) i * LN_BLOCK) * N + j;

			if (e < H)
			{
				partial[(2 * (int64_t) blockIdx.x) * H + e] = dwa[i][j];
				partial[(2 * (int64_t) blockIdx.x + 1) * H + e] = dba[i][j];
			}
		}
}

/*
 * Column sums of the per-block partials, v2: a block of 32 columns x 32
 * row-groups, so ~H/32 blocks share the work and each thread sums
 * nblocks/32 partial rows; the 32 group sums are added in a fixed order
 * (deterministic).
 */
#define LN_DWDB_GROUPS 32
template <typename T>
__global__ void __launch_bounds__(32 * LN_DWDB_GROUPS)
layer_norm_dwdb_v2_kernel(const float *__restrict__ partial, int nblocks, int64_t H, T *__restrict__ dw,
						  T *__restrict__ db)
{
	__shared__ float sw[LN_DWDB_GROUPS][33],
				sb[LN_DWDB_GROUPS][33];
	const int	tx = threadIdx.x & 31,
				ty = threadIdx.x >> 5;
	const int64_t e = blockIdx.x * (int64_t) 32 + tx;
	float		a = 0,
				b = 0;

	if (e < H)
	{
#pragma unroll 4
		for (int g = ty; g < nblocks; g += LN_DWDB_GROUPS)
		{
			a += partial[(2 * (int64_t) g) * H + e];
			b += partial[(2 * (int64_t) g + 1) * H + e];
		}
	}
	sw[ty][tx] = a;
	sb[ty][tx] = b;
	__syncthreads();
	if (ty == 0 && e < H)
	{
		for (int k = 1; k < LN_DWDB_GROUPS; k++)
		{
			a += sw[k][tx];
			b += sb[k][tx];
		}
		dw[e] = from_f<T>(a);
		db[e] = from_f<T>(b);
	}
}

/*
 * Fallback for rows too long for the register kernels: one block per row,
 * three passes over x in global memory (L2 keeps the row), scalar loads.
 */
template <typename T>
__global__ void
layer_norm_forward_generic_kernel(const T *x, const T *w, const T *b, T *y, float *mean, float *rstd, int64_t H)
{
	__shared__ float scratch[32];
	const T    *xr = x + blockIdx.x * H;
	float		s = 0,
				q = 0,
				m,
				rs;

	for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
		s += to_f(xr[j]);
	m = block_sum(s, scratch) / (float) H;
	for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
		q += (to_f(xr[j]) - m) * (to_f(xr[j]) - m);
	rs = rsqrtf(block_sum(q, scratch) / (float) H + (float) LN_EPS);
	for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
		y[blockIdx.x * H + j] = from_f<T>((to_f(xr[j]) - m) * rs * to_f(w[j]) + to_f(b[j]));
	if (threadIdx.x == 0)
	{
		mean[blockIdx.x] = m;
		rstd[blockIdx.x] = rs;
	}
}

/* Fallback backward: one block per row; dw/db by fp32 atomics into acc[2H] (zeroed first). */
template <typename T>
__global__ void
layer_norm_backward_generic_kernel(const T *x, const T *w, const T *dy, const float *mean, const float *rstd,
								   T *dx, float *acc, int64_t H)
{
	__shared__ float scratch[32];
	int64_t		r = blockIdx.x;
	float		m = mean[r],
				rs = rstd[r],
				c1 = 0,
				c2 = 0;

	for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
	{
		float		xhat = (to_f(x[r * H + j]) - m) * rs;
		float		g = to_f(dy[r * H + j]);

		c1 += xhat * to_f(w[j]) * g;
		c2 += to_f(w[j]) * g;
		atomicAdd(&acc[j], g * xhat);
		atomicAdd(&acc[H + j], g);
	}
	c1 = block_sum(c1, scratch) / (float) H;
	c2 = block_sum(c2, scratch) / (float) H;
	for (int64_t j = threadIdx.x; j < H; j += blockDim.x)
	{
		float		xhat = (to_f(x[r * H + j]) - m) * rs;

		dx[r * H + j] = from_f<T>((to_f(w[j]) * to_f(dy[r * H + j]) - xhat * c1 - c2) * rs);
	}
}

template <typename T>
static int
forward(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	constexpr int N = vec_of<T>::n;
	int64_t		nchunks = (H + N - 1) / N;
	bool		aligned = rows_aligned<T>(c->t[LN_X], H) && rows_aligned<T>(c->t[LN_Y], H);
	const T    *x = (const T *) c->t[LN_X],
			   *w = (const T *) c->t[LN_W],
			   *b = (const T *) c->t[LN_B];
	T		   *y = (T *) c->t[LN_Y];
	float	   *mean = (float *) c->t[LN_MEAN],
			   *rstd = (float *) c->t[LN_RSTD];

#define LN_FWD(NV) layer_norm_forward_kernel<T, NV><<<(unsigned) R, LN_BLOCK, 0, ctx->stream>>>(x, w, b, y, mean, rstd, H, aligned)
	if (nchunks <= LN_BLOCK)
		LN_FWD(1);
	else if (nchunks <= 2 * LN_BLOCK)
		LN_FWD(2);
	else if (nchunks <= 4 * LN_BLOCK)
		LN_FWD(4);
	else if (nchunks <= 8 * LN_BLOCK)
		LN_FWD(8);
	else if (nchunks <= 16 * LN_BLOCK)
		LN_FWD(16);
	else
		layer_norm_forward_generic_kernel<T><<<(unsigned) R, 1024, 0, ctx->stream>>>(x, w, b, y, mean, rstd, H);
#undef LN_FWD
	KBC_CHECK_LAUNCH();
	return KBC_OK;
}

template <typename T>
static int
backward(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	constexpr int N = vec_of<T>::n;
	int64_t		nchunks = (H + N - 1) / N;
	bool		aligned = rows_aligned<T>(c->t[LN_X], H) && rows_aligned<T>(c->t[LN_DY], H) &&
		rows_aligned<T>(c->t[LN_DX], H);
	const T    *x = (const T *) c->t[LN_X],
			   *w = (const T *) c->t[LN_W],
			   *dy = (const T *) c->t[LN_DY];
	const float *mean = (const float *) c->t[LN_MEAN],
			   *rstd = (const float *) c->t[LN_RSTD];
	T		   *dx = (T *) c->t[LN_DX];
	float	   *partial = (float *) c->ws;
	int			grid = (int) (R < 2 * ctx->sm_count ? R : 2 * ctx->sm_count);

	if (grid > 1024)
		grid = 1024;				/* the workspace holds 1024 partial rows */
#define LN_BWD(NV) layer_norm_backward_kernel<T, NV><<<grid, LN_BLOCK, 0, ctx->stream>>>(x, w, dy, mean, rstd, dx, partial, R, H, aligned)
	if (nchunks <= 8 * LN_BLOCK)
	{
		if (nchunks <= LN_BLOCK)
			LN_BWD(1);
		else if (nchunks <= 2 * LN_BLOCK)
			LN_BWD(2);
		else if (nchunks <= 4 * LN_BLOCK)
			LN_BWD(4);
		else
			LN_BWD(8);
		KBC_CHECK_LAUNCH();
		layer_norm_dwdb_kernel<T><<<(unsigned) ((H + 255) / 256), 256, 0, ctx->stream>>>(partial, grid, H,
																						 (T *) c->t[LN_DW], (T *) c->t[LN_DB]);
	}
	else
	{
		KBC_CHECK(cudaMemsetAsync(partial, 0, sizeof(float) * 2 * (size_t) H, ctx->stream));
		layer_norm_backward_generic_kernel<T><<<(unsigned) R, 1024, 0, ctx->stream>>>(x, w, dy, mean, rstd, dx, partial, H);
		KBC_CHECK_LAUNCH();
		layer_norm_dwdb_kernel<T><<<(unsigned) ((H + 255) / 256), 256, 0, ctx->stream>>>(partial, 1, H,
																						 (T *) c->t[LN_DW], (T *) c->t[LN_DB]);
	}
#undef LN_BWD
	KBC_CHECK_LAUNCH();
	return KBC_OK;
}

/* v2 backward with NV chunks per thread and S rows in flight; grid from the occupancy of this instance. */
template <typename T, int NV, int S, int MINB>
static int
backward_v2_launch(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	size_t		smem = (size_t) S * 2 * NV * LN_BLOCK * sizeof(uint4);
	float	   *partial = (float *) c->ws;
	int			occ = 0;
	int64_t		grid;
	auto		kern = layer_norm_backward_v2_kernel<T, NV, S, MINB>;

	KBC_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	KBC_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, LN_BLOCK, smem));
	if (occ < 1)
		return backward<T>(ctx, c);
	grid = (int64_t) occ * ctx->sm_count;
	/* at least ~8 rows a block: every block adds 2·H·4 bytes of partials (the ring, not the grid, keeps bytes in flight) */
	if (grid > R / 8 && R / 8 >= ctx->sm_count)
		grid = R / 8;
	else if (grid > R / 8)
		grid = ctx->sm_count;
	if (grid > R)
		grid = R;
	if (grid > 1024)
		grid = 1024;			/* the workspace holds 1024 partial rows */
	kern<<<(unsigned) grid, LN_BLOCK, smem, ctx->stream>>>(
		(const T *) c->t[LN_X], (const T *) c->t[LN_W], (const T *) c->t[LN_DY],
		(const float *) c->t[LN_MEAN], (const float *) c->t[LN_RSTD], (T *) c->t[LN_DX], partial, R, H);
	KBC_CHECK_LAUNCH();
	layer_norm_dwdb_v2_kernel<T><<<(unsigned) ((H + 31) / 32), 32 * LN_DWDB_GROUPS, 0, ctx->stream>>>(
		partial, (int) grid, H, (T *) c->t[LN_DW], (T *) c->t[LN_DB]);
	KBC_CHECK_LAUNCH();
	return KBC_OK;
}

/*
 * v2 when the rows are aligned and fit the register path; v1 otherwise.
 * S: rows in flight per block: 32-64 KB of shared memory, 128 KB at NV 8
 * (deeper rings for short rows).  MINB: blocks per SM the registers must
 * allow (w, dw and db take 3·NV·N registers per thread; v1 used 118
 * registers at 4096 fp32, 2 blocks per SM; v2 at MINB 3 uses 72, no spills).
 */
template <typename T>
static int
backward_v2(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	constexpr int N = vec_of<T>::n;
	int64_t		nchunks = H / N;
	bool		aligned = rows_aligned<T>(c->t[LN_X], H) && rows_aligned<T>(c->t[LN_DY], H) &&
		rows_aligned<T>(c->t[LN_DX], H);

	if (!aligned || nchunks > 8 * LN_BLOCK || R == 0)
		return backward<T>(ctx, c);
	if (nchunks <= LN_BLOCK)
		return backward_v2_launch<T, 1, 4, 4>(ctx, c);
	if (nchunks <= 2 * LN_BLOCK)
		return backward_v2_launch<T, 2, 4, (N >= 8 ? 3 : 4)>(ctx, c);
	if (nchunks <= 4 * LN_BLOCK)
		return backward_v2_launch<T, 4, 2, (N >= 8 ? 1 : 3)>(ctx, c);
	return backward_v2_launch<T, 8, 2, 1>(ctx, c);
}

template <typename T>
static int
run(kbc_ctx *ctx, const kb_call *c, int phase)
{
	int			rc = KBC_OK;

	if (phase == KB_PHASE_PREPARE)
		return c->mode == KB_BACKWARD ? forward<T>(ctx, c) : KBC_OK;
	if (c->mode != KB_BACKWARD)
		rc = forward<T>(ctx, c);
	if (rc == KBC_OK && c->mode != KB_FORWARD)
		rc = c->variant >= 2 ? backward_v2<T>(ctx, c) : backward<T>(ctx, c);
	return rc;
}

int
layer_norm_cuda(kbc_ctx *ctx, const kb_call *c, int phase)
{
	return c->dtype == KB_BF16 ? run<__nv_bfloat16>(ctx, c, phase) : run<float>(ctx, c, phase);
}
