/*
 * megatron_cross_entropy.cu: vocab-parallel cross-entropy (TP=1) for
 * Hopper.  Reference and CPU implementation: megatron_cross_entropy.c.
 *
 * Floors (N = seq·batch rows, V vocab, s bytes per logit):
 *   forward            N·V·s bytes (read the logits once)
 *   forward+backward   2·N·V·s bytes (read the logits once, write the gradient once):
 *                      4 bytes per element in bf16; 8192 x 131072 bf16 = 4.29 GB ->
 *                      1.28 ms on H100 (3.35 TB/s), 0.89 ms on H200 (4.8 TB/s); target 1.6x.
 */
#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include "../cuda/kbc.cuh"
#include "megatron_cross_entropy.h"

namespace cg = cooperative_groups;

#define CE_BLOCK 1024
#define CE_UNROLL 4

template <typename T> __device__ __forceinline__ float ce_exp(float x);
template <> __device__ __forceinline__ float ce_exp<float>(float x) { return expf(x); }
template <> __device__ __forceinline__ float ce_exp<__nv_bfloat16>(float x) { return __expf(x); }


/*
 * One block (1024 threads) per row, fused forward and backward.
 * Pass 1 streams the row once from HBM with 16-byte loads (4 in flight per
 * thread), keeping an online softmax state (max, sum of exp) per thread,
 * merged across the block; loss = lse - z[target].  The first
 * cache_chunks 16-byte chunks of the row are also kept in shared memory
 * (up to ~220 KB: 88% of a 131072-wide bf16 row), so pass 2 - the gradient
 * (softmax - onehot) * grad_loss, 16-byte stores - reads them from shared
 * memory and only the tail from L2 (one block per SM: the ~132 tails in
 * flight, 4 MB, stay in L2).  HBM traffic: read once, write once.
 * FLOPs ~9 per element (max, sub, exp twice, add, mul).
 */
template <typename T, bool BWD>
__global__ void __launch_bounds__(CE_BLOCK)
megatron_ce_kernel(const T *__restrict__ logits, const int64_t *__restrict__ target,
				   const float *__restrict__ grad_loss, float *__restrict__ loss, T *__restrict__ grad,
				   int64_t V, bool aligned, int64_t cache_chunks)
{
	constexpr int N = vec_of<T>::n;
	extern __shared__ uint4 cache[];
	__shared__ float scratch[64];
	const T    *z = logits + blockIdx.x * V;
	int64_t		nchunks = (V + N - 1) / N;
	int64_t		t = target[blockIdx.x];
	float		m = -INFINITY,
				s = 0,
				lse;

	for (int64_t base = threadIdx.x; base < nchunks; base += (int64_t) CE_UNROLL * CE_BLOCK)
	{
		float		v[CE_UNROLL][N];

#pragma unroll
		for (int u = 0; u < CE_UNROLL; u++)
		{
			int64_t		k = base + (int64_t) u * CE_BLOCK;

			if (k >= nchunks)
			{
#pragma unroll
				for (int j = 0; j < N; j++)
					v[u][j] = -INFINITY;
			}
			else if (aligned && (k + 1) * N <= V)
			{
				uint4		raw = __ldg(reinterpret_cast<const uint4 *>(z) + k);

				if (BWD && k < cache_chunks)
					cache[k] = raw;
				unpack_chunk<T>(raw, v[u]);
			}
			else
				load_chunk(z, k, V, false, v[u], -INFINITY);
		}
#pragma unroll
		for (int u = 0; u < CE_UNROLL; u++)
		{
			float		cm = v[u][0];

#pragma unroll
			for (int j = 1; j < N; j++)
				cm = fmaxf(cm, v[u][j]);
			if (cm > m)
			{
				s = m == -INFINITY ? 0.0f : s * ce_exp<T>(m - cm);
				m = cm;
			}
			if (m != -INFINITY)
#pragma unroll
				for (int j = 0; j < N; j++)
					s += ce_exp<T>(v[u][j] - m);
		}
	}
	block_softmax_merge(m, s, scratch);
	lse = m + logf(s);
	if (threadIdx.x == 0)
		loss[blockIdx.x] = lse - to_f(z[t]);
	if (!BWD)
		return;

	{
		float		g = grad_loss[blockIdx.x];
		T		   *gr = grad + blockIdx.x * V;

		for (int64_t k = threadIdx.x; k < nchunks; k += CE_BLOCK)
		{
			float		v[N];

			if (k < cache_chunks)
				unpack_chunk<T>(cache[k], v);
			else
				load_chunk(z, k, V, aligned, v, 0.0f);
#pragma unroll
			for (int j = 0; j < N; j++)
				v[j] = (ce_exp<T>(v[j] - lse) - (k * N + j == t ? 1.0f : 0.0f)) * g;
			store_chunk(gr, k, V, aligned, v);
		}
	}
}

/*
 * v2 (kbench --variant v2).  v1 measured 2.16x its floor forward and 2.01x
 * forward+backward on an H200.  Its fused kernel holds ~220 KB of shared
 * memory, so one 1024-thread block runs per SM and nothing overlaps its
 * phases (stream the row, reduce, write the gradient, start the next row);
 * at most 64 KB is in flight per SM, about what latency x bandwidth needs
 * with no slack.
 *
 * v2 splits each row over a cluster of CS blocks (CS = row bytes / 64 KB,
 * at most 8).  Each block copies its segment of the row into shared memory
 * with cp.async, all of it in one go (64 KB in flight per block, no
 * registers held), so 3 blocks per SM keep up to 192 KB in flight and
 * overlap one another's phases.  From shared memory: the segment's max and
 * sum of exp (two sweeps, no rescaling branches), merged in the block; the
 * CS partial states are exchanged through distributed shared memory and
 * merged in rank order by every block (the same lse bits everywhere);
 * the block that holds the target writes the loss; the gradient is written
 * from shared memory with 16-byte stores.  HBM traffic: the floor exactly.
 * Rows must be 16-byte aligned (v1 otherwise).  Not measured on a GPU yet.
 */
#define CE2_BLOCK 256

template <typename T, bool BWD>
__global__ void __launch_bounds__(CE2_BLOCK)
megatron_ce_v2_kernel(const T *__restrict__ logits, const int64_t *__restrict__ target,
					  const float *__restrict__ grad_loss, float *__restrict__ loss, T *__restrict__ grad,
					  int64_t V, int64_t seg_chunks)
{
	constexpr int N = vec_of<T>::n;
	extern __shared__ uint4 seg[];
	__shared__ float scratch[64];
	__shared__ float2 stat;
	cg::cluster_group cluster = cg::this_cluster();
	const int	cs = (int) cluster.num_blocks();
	const int	rank = (int) cluster.block_rank();
	const int64_t row = blockIdx.x / cs;
	const int64_t nchunks = V / N;
	const int64_t k0 = rank * seg_chunks;
	const int64_t k1 = k0 + seg_chunks < nchunks ? k0 + seg_chunks : nchunks;
	const int	n = (int) (k1 > k0 ? k1 - k0 : 0);	/* at most 7168 chunks */
	const uint4 *src = reinterpret_cast<const uint4 *>(logits + row * V) + k0;
	float		m = -INFINITY,
				s = 0,
				g = 0;
	int64_t		t;

	for (int k = threadIdx.x; k < n; k += CE2_BLOCK)
		__pipeline_memcpy_async(&seg[k], src + k, 16);
	__pipeline_commit();
	t = target[row];			/* while the copies fly */
	if (BWD)
		g = grad_loss[row];
	__pipeline_wait_prior(0);

	/* this thread's chunks only: no barrier needed before reading them */
	for (int k = threadIdx.x; k < n; k += CE2_BLOCK)
	{
		float		v[N];

		unpack_chunk<T>(seg[k], v);
#pragma unroll
		for (int j = 0; j < N; j++)
			m = fmaxf(m, v[j]);
	}
	if (m != -INFINITY)
		for (int k = threadIdx.x; k < n; k += CE2_BLOCK)
		{
			float		v[N];

			unpack_chunk<T>(seg[k], v);
#pragma unroll
			for (int j = 0; j < N; j++)
				s += ce_exp<T>(v[j] - m);
		}
	block_softmax_merge(m, s, scratch);
	if (threadIdx.x == 0)
		stat = make_float2(m, s);
	cluster.sync();				/* every block's stat written; also a barrier for seg[] */

	float		M = -INFINITY,
				S = 0,
				lse;
	const int	lane = threadIdx.x & 31;
	/* lane r reads rank r's state (one remote load per lane); merged in rank order: the same bits everywhere */
	float2		mine = lane < cs ? *cluster.map_shared_rank(&stat, lane) : make_float2(-INFINITY, 0.0f);

	cluster.barrier_arrive();	/* this block's remote reads are done; the wait is at the end */
	for (int r = 0; r < cs; r++)
		softmax_merge(M, S, __shfl_sync(0xffffffffu, mine.x, r), __shfl_sync(0xffffffffu, mine.y, r));
	lse = M + logf(S);
	if (threadIdx.x == 0 && t >= k0 * N && t < k1 * N)
		loss[row] = lse - to_f(reinterpret_cast<const T *>(seg)[t - k0 * N]);
	if (BWD)
	{
		T		   *out = grad + row * V + k0 * N;

		for (int k = threadIdx.x; k < n; k += CE2_BLOCK)
		{
			float		v[N];

			unpack_chunk<T>(seg[k], v);
#pragma unroll
			for (int j = 0; j < N; j++)
				v[j] = (ce_exp<T>(v[j] - lse) - ((k0 + k) * N + j == t ? 1.0f : 0.0f)) * g;
			store_chunk(out, k, n * N, true, v);
		}
	}
	cluster.barrier_wait();		/* keep stat alive until every block of the cluster has read it */
}

/* Launch v2; *launched false (nothing launched) when the row does not suit it. */
template <typename T>
static int
run_v2(kbc_ctx *ctx, const kb_call *c, bool *launched)
{
	int64_t		rows = c->ax[0] * c->ax[1],
				V = c->ax[2];
	constexpr int N = vec_of<T>::n;
	bool		bwd = c->mode != KB_FORWARD;
	bool		aligned = rows_aligned<T>(c->t[CE_LOGITS], V) && (!bwd || rows_aligned<T>(c->t[CE_GRAD], V));
	int64_t		cs,
				seg;

	*launched = false;
	if (!aligned || rows == 0 || !kbc_cluster_split(V / N, 1, &cs, &seg))
		return KBC_OK;
	return kbc_launch_clusters(ctx, bwd ? megatron_ce_v2_kernel<T, true> : megatron_ce_v2_kernel<T, false>,
							   rows, cs, CE2_BLOCK, (size_t) seg * 16, launched,
							   (const T *) c->t[CE_LOGITS], (const int64_t *) c->t[CE_TARGET],
							   (const float *) (bwd ? c->t[CE_GRAD_LOSS] : nullptr), (float *) c->t[CE_LOSS],
							   (T *) (bwd ? c->t[CE_GRAD] : nullptr), V, seg);
}

template <typename T>
static int
run(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		rows = c->ax[0] * c->ax[1],
				V = c->ax[2];
	constexpr int N = vec_of<T>::n;
	bool		bwd = c->mode != KB_FORWARD;
	bool		aligned = rows_aligned<T>(c->t[CE_LOGITS], V) && (!bwd || rows_aligned<T>(c->t[CE_GRAD], V));
	int64_t		nchunks = (V + N - 1) / N;
	size_t		smem = 0;
	int64_t		cache_chunks = 0;

	if (rows == 0)
		return KBC_OK;
	if (c->variant >= 2)
	{
		bool		launched;
		int			rc = run_v2<T>(ctx, c, &launched);

		if (rc != KBC_OK || launched)
			return rc;
	}
	if (bwd && aligned)
	{
		size_t		avail = ctx->smem_optin > 1024 ? ctx->smem_optin - 1024 : 0;

		cache_chunks = (int64_t) (avail / 16);
		if (cache_chunks > nchunks)
			cache_chunks = nchunks;
		smem = (size_t) cache_chunks * 16;
		KBC_CHECK(cudaFuncSetAttribute(megatron_ce_kernel<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	}
	if (bwd)
		megatron_ce_kernel<T, true><<<(unsigned) rows, CE_BLOCK, smem, ctx->stream>>>(
			(const T *) c->t[CE_LOGITS], (const int64_t *) c->t[CE_TARGET], (const float *) c->t[CE_GRAD_LOSS],
			(float *) c->t[CE_LOSS], (T *) c->t[CE_GRAD], V, aligned, cache_chunks);
	else
		megatron_ce_kernel<T, false><<<(unsigned) rows, CE_BLOCK, 0, ctx->stream>>>(
			(const T *) c->t[CE_LOGITS], (const int64_t *) c->t[CE_TARGET], nullptr,
			(float *) c->t[CE_LOSS], nullptr, V, aligned, 0);
	KBC_CHECK_LAUNCH();
	return KBC_OK;
}

int
megatron_cross_entropy_cuda(kbc_ctx *ctx, const kb_call *c, int phase)
{
	if (phase == KB_PHASE_PREPARE)
		return KBC_OK;
	return c->dtype == KB_BF16 ? run<__nv_bfloat16>(ctx, c) : run<float>(ctx, c);
}
