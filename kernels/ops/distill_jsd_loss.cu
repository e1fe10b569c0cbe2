/*
 * distill_jsd_loss.cu: chunked distillation JSD loss for Hopper.
 * Reference and CPU implementation: distill_jsd_loss.c (semantics there).
 *
 * Floor: the four GEMMs, 2·T·V·(3·Hs + H) FLOPs; at T 8192, H 4096
 * (Hs 2048), V 128256: 2.15e13 FLOPs -> 21.8 ms at 989 dense bf16 TFLOP/s
 * (H100 SXM and H200); target 1.3x = 28.3 ms.
 *
 * Design: tokens in chunks of C (C·V·2 bytes per logits buffer, both
 * buffers within 1 GiB: C = 2048 at V = 128256, so memory stays bounded
 * whatever T is).  Per chunk, on one stream:
 *   1. z_s = X_s W_s^T    cuBLASLt, bf16 in, fp32 accumulate, bf16 out
 *   2. z_t = X_t W_t^T    cuBLASLt
 *   3. distill_jsd_loss_kernel: per token the loss and dz, in place of z_s
 *   4. dX_s = dz W_s      cuBLASLt, straight into grad_student_input
 *   5. dW_s += dz^T X_s   cuBLASLt, fp32 accumulator (beta 1 after the first chunk)
 * then dW_s is rounded to bf16 and the per-token losses summed in a fixed
 * order.  The elementwise work (3) reads the two logits rows three times
 * (~2.6 ms of HBM traffic at the seed shape, 11% of the GEMM floor).
 */
#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include "../cuda/kbc.cuh"
#include "distill_jsd_loss.h"

namespace cg = cooperative_groups;

#define DJ_BLOCK 1024

typedef __nv_bfloat16 bf16;

/* One element's terms, from its student and teacher log-probabilities ls, lt. */
typedef struct dj_term
{
	float		ps;				/* student probability */
	float		g;				/* (1-beta) ps (ls - log m), m = (1-beta) ps + beta pt */
	float		jsd;			/* beta pt (lt - log m) + g: the element's JSD term */
} dj_term;

__device__ __forceinline__ dj_term
dj_terms(float ls, float lt)
{
	const float beta = (float) DJ_BETA;
	float		ps = __expf(ls),
				pt = __expf(lt);
	float		logm = __logf((1.0f - beta) * ps + beta * pt);
	dj_term		e;

	e.ps = ps;
	e.g = (1.0f - beta) * ps * (ls - logm);
	e.jsd = beta * pt * (lt - logm) + e.g;
	return e;
}

/*
 * One block (1024 threads) per token of the chunk.  Pass 1: online
 * softmax states of both rows (16-byte loads).  Pass 2: the JSD term and
 * sum(g), g = (1-beta) P_s (log P_s - log M).  Pass 3: dz =
 * [w_hard (P_s - onehot) + w_soft (g - P_s sum(g))] / T written over z_s.
 * ~30 FLOPs per element (4 exp, 2 log); passes 2 and 3 mostly hit L2.
 */
__global__ void __launch_bounds__(DJ_BLOCK)
distill_jsd_loss_kernel(bf16 *__restrict__ zs_all, const bf16 *__restrict__ zt_all,
						const int64_t *__restrict__ target, float *__restrict__ token_loss,
						int64_t V, float inv_tokens, bool aligned)
{
	constexpr int N = 8;
	__shared__ float scratch[64];
	__shared__ float zs_target;
	bf16	   *zs = zs_all + blockIdx.x * V;
	const bf16 *zt = zt_all + blockIdx.x * V;
	int64_t		nchunks = (V + N - 1) / N;
	int64_t		t = target[blockIdx.x];
	float		ms = -INFINITY,
				ss = 0,
				mt = -INFINITY,
				st = 0,
				jsd = 0,
				sumg = 0,
				lse_s,
				lse_t;

	if (threadIdx.x == 0)
		zs_target = __bfloat162float(zs[t]);
	for (int64_t k = threadIdx.x; k < nchunks; k += DJ_BLOCK)
	{
		float		a[N],
					b[N];

		load_chunk(zs, k, V, aligned, a, -INFINITY);
		load_chunk(zt, k, V, aligned, b, -INFINITY);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			softmax_merge(ms, ss, a[j], 1.0f);
			softmax_merge(mt, st, b[j], 1.0f);
		}
	}
	block_softmax_merge(ms, ss, scratch);
	block_softmax_merge(mt, st, scratch);
	lse_s = ms + logf(ss);
	lse_t = mt + logf(st);
	for (int64_t k = threadIdx.x; k < nchunks; k += DJ_BLOCK)
	{
		float		a[N],
					b[N];

		load_chunk(zs, k, V, aligned, a, 0.0f);
		load_chunk(zt, k, V, aligned, b, 0.0f);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			dj_term		e = dj_terms(a[j] - lse_s, b[j] - lse_t);

			if (k * N + j < V)
			{
				jsd += e.jsd;
				sumg += e.g;
			}
		}
	}
	jsd = block_sum(jsd, scratch);
	sumg = block_sum(sumg, scratch);
	if (threadIdx.x == 0)
		token_loss[blockIdx.x] = ((float) DJ_WEIGHT_HARD * (lse_s - zs_target) + (float) DJ_WEIGHT_SOFT * jsd) * inv_tokens;
	for (int64_t k = threadIdx.x; k < nchunks; k += DJ_BLOCK)
	{
		float		a[N],
					b[N],
					o[N];

		load_chunk(zs, k, V, aligned, a, 0.0f);
		load_chunk(zt, k, V, aligned, b, 0.0f);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			dj_term		e = dj_terms(a[j] - lse_s, b[j] - lse_t);

			o[j] = ((float) DJ_WEIGHT_HARD * (e.ps - (k * N + j == t ? 1.0f : 0.0f))
					+ (float) DJ_WEIGHT_SOFT * (e.g - e.ps * sumg)) * inv_tokens;
		}
		store_chunk(zs, k, V, aligned, o);
	}
}

/*
 * v2 of the per-token kernel (kbench --variant v2).  v1 reads the two
 * logits rows three times (the rows in flight, ~135 MB, do not stay in
 * L2) and spends 10 MUFU operations per element (its first pass merges
 * online softmax states element by element: 2 exp per row).  v2 splits a
 * token over a thread-block cluster of CS blocks (CS = ceil(V / 16384) at
 * most 8; 8 at V 128256); each block copies its segment of both rows into
 * shared memory with cp.async (64 KB), so HBM sees one read of each row
 * and one write of dz.  Pass 1 takes the maxima, then the sums of exp (2
 * MUFU per element); passes 2 and 3 as in v1 (3 each); the cluster
 * exchanges (max, sum) pairs and then (jsd, sum g) through distributed
 * shared memory, merged in rank order by every block (the same bits
 * everywhere).  The GEMMs are unchanged.  Not measured on a GPU yet.
 */
#define DJ2_BLOCK 256

__global__ void __launch_bounds__(DJ2_BLOCK)
distill_jsd_loss_v2_kernel(bf16 *__restrict__ zs_all, const bf16 *__restrict__ zt_all,
						   const int64_t *__restrict__ target, float *__restrict__ token_loss,
						   int64_t V, int64_t seg_chunks, float inv_tokens)
{
	constexpr int N = 8;
	extern __shared__ uint4 smem[];	/* [seg_chunks] of z_s, then [seg_chunks] of z_t */
	__shared__ float scratch[64];
	__shared__ float4 stat1;
	__shared__ float2 stat2;
	cg::cluster_group cluster = cg::this_cluster();
	const int	cs = (int) cluster.num_blocks();
	const int	rank = (int) cluster.block_rank();
	const int64_t tok = blockIdx.x / cs;
	const int64_t nchunks = V / N;
	const int64_t k0 = rank * seg_chunks;
	const int64_t k1 = k0 + seg_chunks < nchunks ? k0 + seg_chunks : nchunks;
	const int	n = (int) (k1 > k0 ? k1 - k0 : 0);	/* at most 3584 chunks */
	uint4	   *a_s = smem,
			   *a_t = smem + seg_chunks;
	bf16	   *zs = zs_all + tok * V;
	const uint4 *src_s = reinterpret_cast<const uint4 *>(zs) + k0;
	const uint4 *src_t = reinterpret_cast<const uint4 *>(zt_all + tok * V) + k0;
	float		ms = -INFINITY,
				mt = -INFINITY,
				ss = 0,
				st = 0,
				jsd = 0,
				sumg = 0;
	int64_t		t;

	for (int k = threadIdx.x; k < n; k += DJ2_BLOCK)
	{
		__pipeline_memcpy_async(&a_s[k], src_s + k, 16);
		__pipeline_memcpy_async(&a_t[k], src_t + k, 16);
	}
	__pipeline_commit();
	t = target[tok];
	__pipeline_wait_prior(0);

	/* pass 1 over this thread's own chunks: maxima, then sums of exp */
	for (int k = threadIdx.x; k < n; k += DJ2_BLOCK)
	{
		float		a[N],
					b[N];

		unpack_chunk<bf16>(a_s[k], a);
		unpack_chunk<bf16>(a_t[k], b);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			ms = fmaxf(ms, a[j]);
			mt = fmaxf(mt, b[j]);
		}
	}
	for (int k = threadIdx.x; k < n; k += DJ2_BLOCK)
	{
		float		a[N],
					b[N];

		unpack_chunk<bf16>(a_s[k], a);
		unpack_chunk<bf16>(a_t[k], b);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			ss += __expf(a[j] - ms);
			st += __expf(b[j] - mt);
		}
	}
	block_softmax_merge(ms, ss, scratch);
	block_softmax_merge(mt, st, scratch);
	if (threadIdx.x == 0)
		stat1 = make_float4(ms, ss, mt, st);
	cluster.sync();

	float		Ms = -INFINITY,
				Ss = 0,
				Mt = -INFINITY,
				St = 0;
	const int	lane = threadIdx.x & 31;
	/* lane r reads rank r's state (one remote load per lane); merged in rank order: the same bits everywhere */
	float4		o1 = lane < cs ? *cluster.map_shared_rank(&stat1, lane) : make_float4(-INFINITY, 0.0f, -INFINITY, 0.0f);

	for (int r = 0; r < cs; r++)
	{
		softmax_merge(Ms, Ss, __shfl_sync(0xffffffffu, o1.x, r), __shfl_sync(0xffffffffu, o1.y, r));
		softmax_merge(Mt, St, __shfl_sync(0xffffffffu, o1.z, r), __shfl_sync(0xffffffffu, o1.w, r));
	}

	const float lse_s = Ms + logf(Ss),
				lse_t = Mt + logf(St);

	/* pass 2: the JSD term and sum(g) */
	for (int k = threadIdx.x; k < n; k += DJ2_BLOCK)
	{
		float		a[N],
					b[N];

		unpack_chunk<bf16>(a_s[k], a);
		unpack_chunk<bf16>(a_t[k], b);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			dj_term		e = dj_terms(a[j] - lse_s, b[j] - lse_t);

			jsd += e.jsd;
			sumg += e.g;
		}
	}
	block_sum2(jsd, sumg, scratch);
	if (threadIdx.x == 0)
		stat2 = make_float2(jsd, sumg);
	cluster.sync();

	float		JSD = 0,
				SUMG = 0;
	float2		o2 = lane < cs ? *cluster.map_shared_rank(&stat2, lane) : make_float2(0.0f, 0.0f);

	cluster.barrier_arrive();	/* this block's remote reads are done; the wait is at the end */
	for (int r = 0; r < cs; r++)
	{
		JSD += __shfl_sync(0xffffffffu, o2.x, r);
		SUMG += __shfl_sync(0xffffffffu, o2.y, r);
	}
	if (threadIdx.x == 0 && t >= k0 * N && t < k1 * N)
	{
		float		zs_target = __bfloat162float(reinterpret_cast<const bf16 *>(a_s)[t - k0 * N]);

		token_loss[tok] = ((float) DJ_WEIGHT_HARD * (lse_s - zs_target) + (float) DJ_WEIGHT_SOFT * JSD) * inv_tokens;
	}

	/* pass 3: dz over this block's segment of z_s (its reads came from shared memory) */
	for (int k = threadIdx.x; k < n; k += DJ2_BLOCK)
	{
		float		a[N],
					b[N],
					o[N];

		unpack_chunk<bf16>(a_s[k], a);
		unpack_chunk<bf16>(a_t[k], b);
#pragma unroll
		for (int j = 0; j < N; j++)
		{
			dj_term		e = dj_terms(a[j] - lse_s, b[j] - lse_t);

			o[j] = ((float) DJ_WEIGHT_HARD * (e.ps - ((k0 + k) * N + j == t ? 1.0f : 0.0f))
					+ (float) DJ_WEIGHT_SOFT * (e.g - e.ps * SUMG)) * inv_tokens;
		}
		store_chunk(zs + k0 * N, k, n * N, true, o);
	}
	cluster.barrier_wait();		/* keep stat1/stat2 alive until the whole cluster has read them */
}

/* Launch v2 over cc tokens; *launched false (nothing done) when the row does not suit it. */
static int
per_token_v2(kbc_ctx *ctx, bf16 *zs, const bf16 *zt, const int64_t *target, float *token_loss, int64_t cc,
			 int64_t V, float inv_tokens, bool aligned, bool *launched)
{
	int64_t		cs,
				seg;

	*launched = false;
	if (!aligned || cc == 0 || !kbc_cluster_split(V / 8, 2, &cs, &seg))
		return KBC_OK;
	return kbc_launch_clusters(ctx, distill_jsd_loss_v2_kernel, cc, cs, DJ2_BLOCK, (size_t) seg * 16 * 2, launched,
							   zs, zt, target, token_loss, V, seg, inv_tokens);
}

/* dW_s in bf16 from the fp32 accumulator. */
__global__ void
dj_round_kernel(const float *__restrict__ in, bf16 *__restrict__ out, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
		out[i] = __float2bfloat16_rn(in[i]);
}

/*
 * D (m x n, column-major, ldd) = op(A) op(B) (+ beta D) with bf16 A and B
 * (column-major as stored, lda/ldb), fp32 accumulation, D in dtype_d.
 */
static int
lt_gemm(kbc_ctx *ctx, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
		const void *A, int64_t lda, const void *B, int64_t ldb, void *D, cudaDataType_t dtype_d, int64_t ldd,
		float beta, void *ws, size_t ws_bytes)
{
	cublasLtMatmulDesc_t op = nullptr;
	cublasLtMatrixLayout_t la = nullptr,
				lb = nullptr,
				ld = nullptr;
	cublasLtMatmulPreference_t pref = nullptr;
	cublasLtMatmulHeuristicResult_t heur;
	int			found = 0;
	float		alpha = 1.0f;
	cublasStatus_t s;
	int			rc = KBC_OK;

	memset(&heur, 0, sizeof(heur));
	s = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, lda);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k, ldb);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&ld, dtype_d, m, n, ldd);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceCreate(&pref);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(ctx->lt, op, la, lb, ld, ld, pref, 1, &heur, &found);
	if (s == CUBLAS_STATUS_SUCCESS && found == 0)
		s = CUBLAS_STATUS_NOT_SUPPORTED;
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmul(ctx->lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, ws, ws_bytes, ctx->stream);
	if (s != CUBLAS_STATUS_SUCCESS)
	{
		char		msg[200];

		snprintf(msg, sizeof(msg), "cuBLASLt matmul (m %lld, n %lld, k %lld) failed: status %d",
				 (long long) m, (long long) n, (long long) k, (int) s);
		kbc_fail_msg(msg);
		rc = KBC_ERROR;
	}
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (ld)
		cublasLtMatrixLayoutDestroy(ld);
	if (lb)
		cublasLtMatrixLayoutDestroy(lb);
	if (la)
		cublasLtMatrixLayoutDestroy(la);
	if (op)
		cublasLtMatmulDescDestroy(op);
	return rc;
}

static int
forward(kbc_ctx *ctx, const kb_call *c)
{
	int64_t		T = c->ax[DJ_T],
				V = c->ax[DJ_V],
				H = c->ax[DJ_H],
				Hs = c->ax[DJ_HS];
	dj_layout	l = dj_cuda_layout(T, V, Hs, c->variant);
	bool		direct_dw = c->variant >= 2 && l.chunk >= T;	/* one chunk: dW_s straight to bf16 */
	char	   *ws = (char *) c->ws;
	bf16	   *zs = (bf16 *) (ws + l.zs),
			   *zt = (bf16 *) (ws + l.zt);
	float	   *gw = (float *) (ws + l.gw);
	void	   *lt_ws = ws + l.cublas;
	const bf16 *xs = (const bf16 *) c->t[DJ_XS],
			   *wsm = (const bf16 *) c->t[DJ_WS],
			   *xt = (const bf16 *) c->t[DJ_XT],
			   *wt = (const bf16 *) c->t[DJ_WT];
	bool		aligned = rows_aligned<bf16>(zs, V) && rows_aligned<bf16>(zt, V);

	for (int64_t t0 = 0; t0 < T; t0 += l.chunk)
	{
		int64_t		cc = T - t0 < l.chunk ? T - t0 : l.chunk;
		int			rc;

		rc = lt_gemm(ctx, CUBLAS_OP_T, CUBLAS_OP_N, V, cc, Hs, wsm, Hs, xs + t0 * Hs, Hs, zs, CUDA_R_16BF, V,
					 0.0f, lt_ws, DJ_CUBLAS_WS);
		if (rc == KBC_OK)
			rc = lt_gemm(ctx, CUBLAS_OP_T, CUBLAS_OP_N, V, cc, H, wt, H, xt + t0 * H, H, zt, CUDA_R_16BF, V,
						 0.0f, lt_ws, DJ_CUBLAS_WS);
		if (rc != KBC_OK)
			return rc;
		bool		done = false;

		if (c->variant >= 2)
		{
			rc = per_token_v2(ctx, zs, zt, (const int64_t *) c->t[DJ_TARGET] + t0, (float *) c->t[DJ_TOKEN_LOSS] + t0,
							  cc, V, 1.0f / (float) T, aligned, &done);
			if (rc != KBC_OK)
				return rc;
		}
		if (!done)
			distill_jsd_loss_kernel<<<(unsigned) cc, DJ_BLOCK, 0, ctx->stream>>>(
				zs, zt, (const int64_t *) c->t[DJ_TARGET] + t0, (float *) c->t[DJ_TOKEN_LOSS] + t0, V,
				1.0f / (float) T, aligned);
		KBC_CHECK_LAUNCH();
		rc = lt_gemm(ctx, CUBLAS_OP_N, CUBLAS_OP_N, Hs, cc, V, wsm, Hs, zs, V, (bf16 *) c->t[DJ_GXS] + t0 * Hs,
					 CUDA_R_16BF, Hs, 0.0f, lt_ws, DJ_CUBLAS_WS);
		if (rc == KBC_OK && direct_dw)
			rc = lt_gemm(ctx, CUBLAS_OP_N, CUBLAS_OP_T, Hs, V, cc, xs + t0 * Hs, Hs, zs, V, c->t[DJ_GWS], CUDA_R_16BF,
						 Hs, 0.0f, lt_ws, DJ_CUBLAS_WS);
		else if (rc == KBC_OK)
			rc = lt_gemm(ctx, CUBLAS_OP_N, CUBLAS_OP_T, Hs, V, cc, xs + t0 * Hs, Hs, zs, V, gw, CUDA_R_32F, Hs,
						 t0 > 0 ? 1.0f : 0.0f, lt_ws, DJ_CUBLAS_WS);
		if (rc != KBC_OK)
			return rc;
	}
	if (!direct_dw)
	{
		dj_round_kernel<<<ctx->sm_count * 8, 256, 0, ctx->stream>>>(gw, (bf16 *) c->t[DJ_GWS], V * Hs);
		KBC_CHECK_LAUNCH();
	}
	return kbc_sum_fixed(ctx, (const float *) c->t[DJ_TOKEN_LOSS], T, (float *) c->t[DJ_LOSS]);
}

int
distill_jsd_loss_cuda(kbc_ctx *ctx, const kb_call *c, int phase)
{
	if (phase == KB_PHASE_PREPARE)
		return KBC_OK;
	/* forward and full do the same work: the backward is a no-op for an upstream gradient of 1. */
	return forward(ctx, c);
}
