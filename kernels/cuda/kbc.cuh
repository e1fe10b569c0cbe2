/*
 * kbc.cuh: what the CUDA files of libkbench_cuda.so share: the context of
 * an open device, error checking, reductions and 16-byte vector loads.
 */
#ifndef KBC_CUH
#define KBC_CUH

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cublasLt.h>

extern "C" {
#include "../kb_abi.h"
}

/* An open device: one stream, timing events, a cuBLASLt handle. */
/*
 * A CUDA-graph sample's two graphs for one call (api_time_graph, the
 * protocol's cuda_graph): ncalls clears and calls, and the clears alone
 * (nullptr when nothing is cleared).  One pair per tensor set of the guard's
 * rotation, kept while the call is the same.
 */
#define KBC_GRAPH_SETS 4
struct kbc_graphs
{
	kb_call		key;
	int64_t		ncalls;
	void	   *flush;
	size_t		flush_bytes;
	cudaGraphExec_t calls;
	cudaGraphExec_t clears;
};

struct kbc_ctx
{
	int			dev;
	int			sm_count;
	size_t		smem_optin;		/* max dynamic shared memory per block */
	cudaStream_t stream;
	cudaEvent_t ev_pre;			/* before the flush */
	cudaEvent_t ev_start;		/* after the flush, before the call */
	cudaEvent_t ev_stop;
	cublasLtHandle_t lt;
	kbc_graphs	graphs[KBC_GRAPH_SETS];
	int			next_graph;		/* the pair a new call replaces */
};

/* Record a failure (file, line, call, CUDA's words) for the caller; marks the device for reset. */
void		kbc_fail(cudaError_t e, const char *what, const char *file, int line);
void		kbc_fail_msg(const char *msg);

#define KBC_CHECK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { kbc_fail(e_, #call, __FILE__, __LINE__); return KBC_ERROR; } \
	} while (0)

/* After a launch: launch-configuration errors surface here. */
#define KBC_CHECK_LAUNCH() KBC_CHECK(cudaGetLastError())

/* *out = the sum of v[0..n), one block, a fixed order, double accumulation
 * (deterministic): the per-row losses of jsd and distill_jsd_loss. */
int			kbc_sum_fixed(kbc_ctx *ctx, const float *v, int64_t n, float *out);

/* The operations' host entry points (ops/<op>.cu). */
int			layer_norm_cuda(kbc_ctx *ctx, const kb_call *c, int phase);
int			megatron_cross_entropy_cuda(kbc_ctx *ctx, const kb_call *c, int phase);
int			distill_jsd_loss_cuda(kbc_ctx *ctx, const kb_call *c, int phase);
int			jsd_cuda(kbc_ctx *ctx, const kb_call *c, int phase);

/* ------------------------------------------------------------ device helpers */

__device__ __forceinline__ float
warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ float
warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* Sum over the block; every thread gets the result.  scratch: 32 floats of shared memory. */
__device__ __forceinline__ float
block_sum(float v, float *scratch)
{
	int			lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5,
				nw = (blockDim.x + 31) >> 5;

	v = warp_sum(v);
	__syncthreads();			/* scratch may still be read from a previous call */
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = lane < nw ? scratch[lane] : 0.0f;
	return warp_sum(v);
}

/* Two sums over the block at once (one pair of barriers); scratch: 64 floats of shared memory. */
__device__ __forceinline__ void
block_sum2(float &a, float &b, float *scratch)
{
	int			lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5,
				nw = (blockDim.x + 31) >> 5;

	a = warp_sum(a);
	b = warp_sum(b);
	__syncthreads();			/* scratch may still be read from a previous call */
	if (lane == 0)
	{
		scratch[warp] = a;
		scratch[32 + warp] = b;
	}
	__syncthreads();
	a = warp_sum(lane < nw ? scratch[lane] : 0.0f);
	b = warp_sum(lane < nw ? scratch[32 + lane] : 0.0f);
}

/* Online-softmax merge of (max, sum of exp(x - max)) pairs. */
__device__ __forceinline__ void
softmax_merge(float &m, float &s, float m2, float s2)
{
	float		mx = fmaxf(m, m2);

	if (mx == -INFINITY)
		return;
	s = s * __expf(m - mx) + s2 * __expf(m2 - mx);
	m = mx;
}

/* Block-wide merge of online-softmax states; every thread gets the result.
 * scratch: 64 floats of shared memory. */
__device__ __forceinline__ void
block_softmax_merge(float &m, float &s, float *scratch)
{
	int			lane = threadIdx.x & 31,
				warp = threadIdx.x >> 5,
				nw = (blockDim.x + 31) >> 5;

	for (int o = 16; o > 0; o >>= 1)
		softmax_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
	__syncthreads();
	if (lane == 0)
	{
		scratch[warp] = m;
		scratch[32 + warp] = s;
	}
	__syncthreads();
	m = lane < nw ? scratch[lane] : -INFINITY;
	s = lane < nw ? scratch[32 + lane] : 0.0f;
	for (int o = 16; o > 0; o >>= 1)
		softmax_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
}

/* Elements of T per 16-byte vector. */
template <typename T> struct vec_of { static constexpr int n = 16 / sizeof(T); };

__device__ __forceinline__ float to_f(float x) { return x; }
__device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

/* The N elements of T in one 16-byte vector, as floats. */
template <typename T>
__device__ __forceinline__ void
unpack_chunk(uint4 raw, float *v)
{
	const T    *e = reinterpret_cast<const T *>(&raw);

#pragma unroll
	for (int i = 0; i < vec_of<T>::n; i++)
		v[i] = to_f(e[i]);
}

/*
 * Load chunk k (elements [k*N, k*N+N)) of a row of n elements into v[N] as
 * floats: one 16-byte load when the row is 16-byte aligned and the chunk is
 * whole, element by element otherwise (missing elements get fill).
 */
template <typename T>
__device__ __forceinline__ void
load_chunk(const T *row, int64_t k, int64_t n, bool aligned, float *v, float fill)
{
	constexpr int N = vec_of<T>::n;
	int64_t		base = k * N;

	if (aligned && base + N <= n)
	{
		uint4		raw = __ldg(reinterpret_cast<const uint4 *>(row + base));
		const T    *e = reinterpret_cast<const T *>(&raw);

#pragma unroll
		for (int i = 0; i < N; i++)
			v[i] = to_f(e[i]);
	}
	else
	{
#pragma unroll
		for (int i = 0; i < N; i++)
			v[i] = base + i < n ? to_f(row[base + i]) : fill;
	}
}

/* Store chunk k of a row (the counterpart of load_chunk). */
template <typename T>
__device__ __forceinline__ void
store_chunk(T *row, int64_t k, int64_t n, bool aligned, const float *v)
{
	constexpr int N = vec_of<T>::n;
	int64_t		base = k * N;

	if (aligned && base + N <= n)
	{
		uint4		raw;
		T		   *e = reinterpret_cast<T *>(&raw);

#pragma unroll
		for (int i = 0; i < N; i++)
			e[i] = from_f<T>(v[i]);
		*reinterpret_cast<uint4 *>(row + base) = raw;
	}
	else
	{
#pragma unroll
		for (int i = 0; i < N; i++)
			if (base + i < n)
				row[base + i] = from_f<T>(v[i]);
	}
}

/* ------------------------------------------------------------ row-splitting clusters (v2 kernels) */

/*
 * Split a row of nchunks 16-byte chunks (of each of ntensors rows kept side
 * by side) over a thread-block cluster: segments of at most 64 KB of shared
 * memory a block, or 112 KB when 64 KB would need more than 8 blocks (the
 * portable cluster size).  False when even that needs more than 8.
 */
static inline bool
kbc_cluster_split(int64_t nchunks, int ntensors, int64_t *cs, int64_t *seg)
{
	int64_t		seg_max = 64 * 1024 / (16 * ntensors);

	*cs = (nchunks + seg_max - 1) / seg_max;
	if (*cs > 8)
	{
		seg_max = 112 * 1024 / (16 * ntensors);
		*cs = (nchunks + seg_max - 1) / seg_max;
	}
	if (*cs > 8 || *cs < 1)
		return false;
	*seg = (nchunks + *cs - 1) / *cs;
	return true;
}

/*
 * Launch kern as rows clusters of cs blocks (threads each, smem bytes of
 * dynamic shared memory).  *launched stays false, with nothing launched,
 * when the device cannot schedule such a cluster at all.
 */
template <typename... P, typename... A>
static int
kbc_launch_clusters(kbc_ctx *ctx, void (*kern) (P...), int64_t rows, int64_t cs, int threads, size_t smem,
					bool *launched, A &&... args)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	int			nclusters = 0;

	*launched = false;
	if (rows * cs > 0x7fffffff)
		return KBC_OK;
	KBC_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
	cfg.gridDim = dim3((unsigned) (rows * cs));
	cfg.blockDim = dim3((unsigned) threads);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = ctx->stream;
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = (unsigned) cs;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	KBC_CHECK(cudaOccupancyMaxActiveClusters(&nclusters, kern, &cfg));
	if (nclusters < 1)
		return KBC_OK;
	KBC_CHECK(cudaLaunchKernelEx(&cfg, kern, static_cast<A &&>(args)...));
	*launched = true;
	return KBC_OK;
}

/* True when every row of n elements of T starts on a 16-byte boundary. */
template <typename T>
static inline bool
rows_aligned(const void *p, int64_t n)
{
	return (reinterpret_cast<uintptr_t>(p) % 16) == 0 && (n * (int64_t) sizeof(T)) % 16 == 0;
}

#endif
