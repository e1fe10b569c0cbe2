/*
 * backend.cu: libkbench_cuda.so's entry point.  Exposes the kbc_api table
 * (kb_abi.h) that libkbench dlopen()s: device discovery, memory, input
 * generation on the device, one call of an operation, and one timed sample
 * (cache flush, event pair, bounded wait).  Every CUDA call is checked; a
 * failure marks the device so the next open() resets it (cudaDeviceReset)
 * and the worker can go on after a sticky error.
 *
 * No wait here is unbounded: every wait for the stream polls an event with
 * a deadline (wait_event), including the ones CUDA would otherwise make
 * implicitly (a device-to-host copy into pageable memory, cublasLtDestroy).
 * A wait that times out leaves a kernel that may never finish; the device is
 * then "wedged" for the rest of the process: nothing that waits for the
 * device is called again (cudaFree, stream and handle destruction,
 * cudaDeviceReset all would), memory is left to the driver, which reclaims
 * it when the process exits, and open() refuses the device.  libkbench does
 * the same on its side (kernels/backend.c).
 */
#include <cstdio>
#include <new>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include "kbc.cuh"

static void drop_graphs(kbc_graphs *p);

static thread_local char kbc_err[512];
static bool g_needs_reset[1024];
static bool g_wedged[1024];		/* a wait timed out: see the header comment */
static int	g_current_dev = -1;

/* Waits without a caller's timeout (fill, to_host, close): generous, never infinite. */
#define KBC_HOST_WAIT_S 120.0

void
kbc_fail(cudaError_t e, const char *what, const char *file, int line)
{
	const char *base = strrchr(file, '/');

	snprintf(kbc_err, sizeof(kbc_err), "%s (%s) at %s:%d: %s", cudaGetErrorName(e), cudaGetErrorString(e),
			 base ? base + 1 : file, line, what);
	if (g_current_dev >= 0 && g_current_dev < 1024 && e != cudaErrorMemoryAllocation)
		g_needs_reset[g_current_dev] = true;
	if (e == cudaErrorMemoryAllocation)
		(void) cudaGetLastError();	/* not sticky: clear it */
}

void
kbc_fail_msg(const char *msg)
{
	snprintf(kbc_err, sizeof(kbc_err), "%s", msg);
}

static int
report(int rc, char *err, size_t errlen)
{
	if (rc != KBC_OK && err && errlen)
		snprintf(err, errlen, "%s", kbc_err[0] ? kbc_err : "CUDA error");
	return rc;
}

/* ------------------------------------------------------------ devices */

static int
api_device_count(char *err, size_t errlen)
{
	int			n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e == cudaErrorNoDevice)
		return 0;
	if (e != cudaSuccess)
	{
		snprintf(err, errlen, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
		return -1;
	}
	return n;
}

static int
device_info(int dev, kbc_device_info *out)
{
	cudaDeviceProp p;
	size_t		freeb = 0,
				totalb = 0;
	int			v = 0;

	memset(out, 0, sizeof(*out));
	KBC_CHECK(cudaGetDeviceProperties(&p, dev));
	snprintf(out->name, sizeof(out->name), "%s", p.name);
	KBC_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof(out->pci_bus_id), dev));
	out->cc_major = p.major;
	out->cc_minor = p.minor;
	out->total_mem = (int64_t) p.totalGlobalMem;
	out->sm_count = p.multiProcessorCount;
	out->l2_bytes = p.l2CacheSize;
	out->ecc = p.ECCEnabled;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev) == cudaSuccess)
		out->clock_khz = v;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev) == cudaSuccess)
		out->mem_clock_khz = v;
	if (cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess)
		out->mem_bus_width = v;
	(void) cudaGetLastError();
	KBC_CHECK(cudaDriverGetVersion(&out->driver_version));
	KBC_CHECK(cudaRuntimeGetVersion(&out->runtime_version));
	out->cublaslt_version = (int) cublasLtGetVersion();
	snprintf(out->compiler, sizeof(out->compiler), "nvcc %d.%d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__);
	KBC_CHECK(cudaSetDevice(dev));
	g_current_dev = dev;
	KBC_CHECK(cudaMemGetInfo(&freeb, &totalb));
	out->free_mem = (int64_t) freeb;
	return KBC_OK;
}

static int
api_device_info(int dev, kbc_device_info *out, char *err, size_t errlen)
{
	kbc_err[0] = '\0';
	return report(device_info(dev, out), err, errlen);
}

/* ------------------------------------------------------------ bounded waits */

/* Wait for an event without hanging: poll with a deadline. */
static int
wait_event(cudaEvent_t ev, double timeout_s)
{
	struct timespec t0,
				t;
	cudaError_t e;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;)
	{
		e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return KBC_OK;
		if (e != cudaErrorNotReady)
		{
			kbc_fail(e, "waiting for the device", __FILE__, __LINE__);
			return KBC_ERROR;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double) (t.tv_sec - t0.tv_sec) + 1e-9 * (double) (t.tv_nsec - t0.tv_nsec) > timeout_s)
		{
			snprintf(kbc_err, sizeof(kbc_err), "the device did not finish within %.0f s", timeout_s);
			if (g_current_dev >= 0)
				g_needs_reset[g_current_dev] = g_wedged[g_current_dev] = true;
			return KBC_TIMEOUT;
		}
		usleep(20);
	}
}

/* Wait, at most timeout_s, for everything enqueued on the context's stream. */
static int
wait_stream(kbc_ctx *c, double timeout_s)
{
	KBC_CHECK(cudaEventRecord(c->ev_stop, c->stream));
	return wait_event(c->ev_stop, timeout_s);
}

/* ------------------------------------------------------------ open / close */

static int
open_dev(int dev, kbc_ctx **out)
{
	kbc_ctx    *c;
	int			v = 0;

	*out = nullptr;
	if (dev < 0 || dev >= 1024)
	{
		kbc_fail_msg("device ordinal out of range");
		return KBC_ERROR;
	}
	if (g_wedged[dev])
	{
		/* cudaDeviceReset would wait for the kernel that did not finish. */
		kbc_fail_msg("the device is wedged: a kernel of an earlier run in this process did not finish; "
					 "start a new process");
		return KBC_ERROR;
	}
	KBC_CHECK(cudaSetDevice(dev));
	g_current_dev = dev;
	if (g_needs_reset[dev] || cudaFree(0) != cudaSuccess || cudaGetLastError() != cudaSuccess)
	{
		/* A previous run left a sticky error: start from a fresh context. */
		(void) cudaDeviceReset();
		(void) cudaGetLastError();
		g_needs_reset[dev] = false;
		KBC_CHECK(cudaSetDevice(dev));
		KBC_CHECK(cudaFree(0));
	}
	c = new (std::nothrow) kbc_ctx();
	if (!c)
	{
		kbc_fail_msg("out of host memory");
		return KBC_ERROR;
	}
	c->dev = dev;
	*out = c;
	KBC_CHECK(cudaDeviceGetAttribute(&c->sm_count, cudaDevAttrMultiProcessorCount, dev));
	KBC_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
	c->smem_optin = (size_t) v;
	KBC_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
	KBC_CHECK(cudaEventCreate(&c->ev_pre));
	KBC_CHECK(cudaEventCreate(&c->ev_start));
	KBC_CHECK(cudaEventCreate(&c->ev_stop));
	if (cublasLtCreate(&c->lt) != CUBLAS_STATUS_SUCCESS)
	{
		kbc_fail_msg("cublasLtCreate failed");
		return KBC_ERROR;
	}
	return KBC_OK;
}

static void
api_close(void *p)
{
	kbc_ctx    *c = (kbc_ctx *) p;

	if (!c)
		return;
	/* Destroying the handle and the stream waits for the stream: wait first, bounded. */
	if (!g_wedged[c->dev] && c->stream && c->ev_stop && wait_stream(c, KBC_HOST_WAIT_S) != KBC_OK)
		(void) cudaGetLastError();
	if (g_wedged[c->dev])
	{
		delete c;				/* the handles stay with the wedged context */
		return;
	}
	for (int i = 0; i < KBC_GRAPH_SETS; i++)
		drop_graphs(&c->graphs[i]);
	if (c->lt)
		cublasLtDestroy(c->lt);
	if (c->ev_pre)
		cudaEventDestroy(c->ev_pre);
	if (c->ev_start)
		cudaEventDestroy(c->ev_start);
	if (c->ev_stop)
		cudaEventDestroy(c->ev_stop);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	if (cudaGetLastError() != cudaSuccess)
		g_needs_reset[c->dev] = true;
	delete c;
}

static int
api_open(int dev, void **ctx, char *err, size_t errlen)
{
	kbc_ctx    *c = nullptr;
	int			rc;

	kbc_err[0] = '\0';
	rc = open_dev(dev, &c);
	if (rc != KBC_OK)
	{
		api_close(c);
		c = nullptr;
	}
	*ctx = c;
	return report(rc, err, errlen);
}

/* ------------------------------------------------------------ memory */

static int
api_alloc(void *ctx, size_t bytes, void **p, char *err, size_t errlen)
{
	cudaError_t e;

	(void) ctx;
	*p = nullptr;
	if (bytes == 0)
		return KBC_OK;
	e = cudaMalloc(p, bytes);
	if (e == cudaErrorMemoryAllocation)
	{
		(void) cudaGetLastError();
		snprintf(err, errlen, "cudaMalloc of %zu bytes: out of device memory", bytes);
		return KBC_NOMEM;
	}
	if (e != cudaSuccess)
	{
		kbc_fail(e, "cudaMalloc", __FILE__, __LINE__);
		return report(KBC_ERROR, err, errlen);
	}
	return KBC_OK;
}

static void
api_free(void *ctx, void *p)
{
	int			dev = ctx ? ((kbc_ctx *) ctx)->dev : g_current_dev >= 0 ? g_current_dev : 0;

	/* cudaFree waits for the device: on a wedged one the memory stays until the process exits. */
	if (p && !g_wedged[dev] && cudaFree(p) != cudaSuccess)
		g_needs_reset[dev] = true;
}

static int
api_to_host(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen)
{
	kbc_ctx    *c = (kbc_ctx *) ctx;
	int			rc = KBC_OK;

	kbc_err[0] = '\0';
	/*
	 * A copy into pageable memory returns only when it is done, after all the
	 * stream's earlier work: wait for that first, with a deadline, so the
	 * copy itself cannot hang.
	 */
	if (bytes)
		rc = wait_stream(c, KBC_HOST_WAIT_S);
	if (bytes && rc == KBC_OK)
	{
		cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream);

		if (e != cudaSuccess)
		{
			kbc_fail(e, "cudaMemcpy device to host", __FILE__, __LINE__);
			rc = KBC_ERROR;
		}
		else
			rc = wait_stream(c, KBC_HOST_WAIT_S);
	}
	return report(rc, err, errlen);
}

/* ------------------------------------------------------------ input generation */

/* Uniform values scale * u, u in [-1, 1): the same bits as kb_fill_host. */
template <typename T>
__global__ void
fill_uniform_kernel(T *p, int64_t n, float scale, uint64_t seed, uint32_t stream)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
		p[i] = from_f<T>(scale * kb_uniform(seed, stream, (uint64_t) i));
}

__global__ void
fill_targets_kernel(int64_t *p, int64_t n, int64_t modulo, uint64_t seed, uint32_t stream)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
		p[i] = (int64_t) (kb_hash(seed, stream, (uint64_t) i) % (uint64_t) modulo);
}

/* One block per row: log_softmax(scale * u) (float arithmetic; the check reads the inputs back). */
template <typename T>
__global__ void
fill_logsoftmax_kernel(T *p, int64_t cols, float scale, uint64_t seed, uint32_t stream)
{
	__shared__ float scratch[64];
	int64_t		r = blockIdx.x;
	float		m = -INFINITY,
				s = 0;

	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
	{
		float		x = scale * kb_uniform(seed, stream, (uint64_t) (r * cols + j));

		softmax_merge(m, s, x, 1.0f);
	}
	block_softmax_merge(m, s, scratch);
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		p[r * cols + j] = from_f<T>(scale * kb_uniform(seed, stream, (uint64_t) (r * cols + j)) - (m + logf(s)));
}

static int
fill(kbc_ctx *c, void *p, int dtype, int64_t rows, int64_t cols, int init, double scale, int64_t modulo,
	 uint64_t seed, uint32_t stream)
{
	int64_t		n = rows * cols;
	int			grid = c->sm_count * 8;

	if (!p || n == 0)
		return KBC_OK;
	switch (init)
	{
		case KB_INIT_ZERO:
			KBC_CHECK(cudaMemsetAsync(p, 0, (size_t) n * (dtype == KB_BF16 ? 2 : dtype == KB_FP32 ? 4 : 8), c->stream));
			break;
		case KB_INIT_UNIFORM:
			if (dtype == KB_FP32)
				fill_uniform_kernel<float><<<grid, 256, 0, c->stream>>>((float *) p, n, (float) scale, seed, stream);
			else
				fill_uniform_kernel<__nv_bfloat16><<<grid, 256, 0, c->stream>>>((__nv_bfloat16 *) p, n, (float) scale, seed, stream);
			KBC_CHECK_LAUNCH();
			break;
		case KB_INIT_LOGSOFTMAX:
			if (dtype == KB_FP32)
				fill_logsoftmax_kernel<float><<<(unsigned) rows, 512, 0, c->stream>>>((float *) p, cols, (float) scale, seed, stream);
			else
				fill_logsoftmax_kernel<__nv_bfloat16><<<(unsigned) rows, 512, 0, c->stream>>>((__nv_bfloat16 *) p, cols, (float) scale, seed, stream);
			KBC_CHECK_LAUNCH();
			break;
		case KB_INIT_TARGETS:
			fill_targets_kernel<<<grid, 256, 0, c->stream>>>((int64_t *) p, n, modulo, seed, stream);
			KBC_CHECK_LAUNCH();
			break;
		default:
			break;
	}
	return wait_stream(c, KBC_HOST_WAIT_S);
}

static int
api_fill(void *ctx, void *p, int dtype, int64_t rows, int64_t cols, int init, double scale, int64_t modulo,
		 uint64_t seed, uint32_t stream, char *err, size_t errlen)
{
	kbc_err[0] = '\0';
	return report(fill((kbc_ctx *) ctx, p, dtype, rows, cols, init, scale, modulo, seed, stream), err, errlen);
}

/* ------------------------------------------------------------ calls and timing */

static int
call(kbc_ctx *c, const kb_call *k, int phase)
{
	switch (k->op)
	{
		case KB_OP_LAYER_NORM:
			return layer_norm_cuda(c, k, phase);
		case KB_OP_MEGATRON_CE:
			return megatron_cross_entropy_cuda(c, k, phase);
		case KB_OP_DISTILL_JSD:
			return distill_jsd_loss_cuda(c, k, phase);
		case KB_OP_JSD:
			return jsd_cuda(c, k, phase);
	}
	kbc_fail_msg("unknown operation id");
	return KBC_ERROR;
}

static int
api_call(void *ctx, const kb_call *k, int phase, char *err, size_t errlen)
{
	kbc_err[0] = '\0';
	return report(call((kbc_ctx *) ctx, k, phase), err, errlen);
}

static int
api_sync(void *ctx, double timeout_s, char *err, size_t errlen)
{
	kbc_ctx    *c = (kbc_ctx *) ctx;
	int			rc;

	kbc_err[0] = '\0';
	rc = wait_stream(c, timeout_s);
	return report(rc, err, errlen);
}

static int
time_one(kbc_ctx *c, const kb_call *k, void *flush, size_t flush_bytes, double *op_ns, double *total_ns,
		 double timeout_s)
{
	float		ms_op = 0,
				ms_total = 0;
	int			rc;

	KBC_CHECK(cudaEventRecord(c->ev_pre, c->stream));
	if (flush && flush_bytes)
		KBC_CHECK(cudaMemsetAsync(flush, 0, flush_bytes, c->stream));
	KBC_CHECK(cudaEventRecord(c->ev_start, c->stream));
	rc = call(c, k, KB_PHASE_TIMED);
	if (rc != KBC_OK)
		return rc;
	KBC_CHECK(cudaEventRecord(c->ev_stop, c->stream));
	rc = wait_event(c->ev_stop, timeout_s);
	if (rc != KBC_OK)
		return rc;
	KBC_CHECK(cudaEventElapsedTime(&ms_op, c->ev_start, c->ev_stop));
	KBC_CHECK(cudaEventElapsedTime(&ms_total, c->ev_pre, c->ev_stop));
	*op_ns = (double) ms_op * 1e6;
	*total_ns = (double) ms_total * 1e6;
	return KBC_OK;
}

static int
api_time_one(void *ctx, const kb_call *k, void *flush, size_t flush_bytes, double *op_ns, double *total_ns,
			 double timeout_s, char *err, size_t errlen)
{
	kbc_err[0] = '\0';
	return report(time_one((kbc_ctx *) ctx, k, flush, flush_bytes, op_ns, total_ns, timeout_s), err, errlen);
}

/* ------------------------------------------------------------ CUDA-graph samples */

/* Capture n x (a clear of flush_bytes, then a call of k when with_calls) on the stream, instantiated and uploaded into *out. */
static int
capture(kbc_ctx *c, const kb_call *k, int64_t n, void *flush, size_t flush_bytes, bool with_calls, cudaGraphExec_t *out)
{
	cudaGraph_t g = nullptr;
	cudaError_t e;
	int			rc = KBC_OK;

	KBC_CHECK(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
	for (int64_t i = 0; i < n && rc == KBC_OK; i++)
	{
		if (flush && flush_bytes && (e = cudaMemsetAsync(flush, 0, flush_bytes, c->stream)) != cudaSuccess)
		{
			kbc_fail(e, "cudaMemsetAsync (a clear, captured)", __FILE__, __LINE__);
			rc = KBC_ERROR;
		}
		if (rc == KBC_OK && with_calls)
			rc = call(c, k, KB_PHASE_TIMED);
	}
	/* the capture ends whatever happened in it, so that the stream is usable again */
	e = cudaStreamEndCapture(c->stream, &g);
	if (rc == KBC_OK && e != cudaSuccess)
	{
		kbc_fail(e, "capturing the timed calls in a CUDA graph (a call that cannot be captured?)", __FILE__, __LINE__);
		rc = KBC_ERROR;
	}
	if (rc == KBC_OK && (e = cudaGraphInstantiate(out, g, 0)) != cudaSuccess)
	{
		kbc_fail(e, "cudaGraphInstantiate", __FILE__, __LINE__);
		rc = KBC_ERROR;
	}
	if (g)
		cudaGraphDestroy(g);
	(void) cudaGetLastError();	/* a failed capture's error is reported above, not left for the next call */
	if (rc == KBC_OK)
		KBC_CHECK(cudaGraphUpload(*out, c->stream));
	return rc;
}

static void
drop_graphs(kbc_graphs *p)
{
	if (p->calls)
		cudaGraphExecDestroy(p->calls);
	if (p->clears)
		cudaGraphExecDestroy(p->clears);
	memset(p, 0, sizeof(*p));
}

/* The graphs of this call, set and clear: kept ones, else new ones (launched once, untimed, and waited for). */
static int
graphs_of(kbc_ctx *c, const kb_call *k, int64_t n, void *flush, size_t flush_bytes, double timeout_s, kbc_graphs **out)
{
	kbc_graphs *p;
	int			rc;

	for (int i = 0; i < KBC_GRAPH_SETS; i++)
	{
		p = &c->graphs[i];
		if (p->calls && p->ncalls == n && p->flush == flush && p->flush_bytes == flush_bytes &&
			memcmp(&p->key, k, sizeof(*k)) == 0)
		{
			*out = p;
			return KBC_OK;
		}
	}
	p = &c->graphs[c->next_graph];
	c->next_graph = (c->next_graph + 1) % KBC_GRAPH_SETS;
	drop_graphs(p);
	rc = capture(c, k, n, flush, flush_bytes, true, &p->calls);
	if (rc == KBC_OK && flush && flush_bytes)
		rc = capture(c, k, n, flush, flush_bytes, false, &p->clears);
	for (int g = 0; g < 2 && rc == KBC_OK; g++)
	{
		cudaGraphExec_t x = g == 0 ? p->calls : p->clears;
		cudaError_t e = x ? cudaGraphLaunch(x, c->stream) : cudaSuccess;

		if (e != cudaSuccess)
		{
			kbc_fail(e, "cudaGraphLaunch (the first, untimed)", __FILE__, __LINE__);
			rc = KBC_ERROR;
		}
	}
	if (rc == KBC_OK)
		rc = wait_stream(c, timeout_s);
	if (rc != KBC_OK)
	{
		drop_graphs(p);
		return rc;
	}
	p->key = *k;
	p->ncalls = n;
	p->flush = flush;
	p->flush_bytes = flush_bytes;
	*out = p;
	return KBC_OK;
}

static int
time_graph(kbc_ctx *c, const kb_call *k, int64_t n, void *flush, size_t flush_bytes, double *op_ns, double *total_ns,
		   double timeout_s)
{
	kbc_graphs *p;
	float		ms_calls = 0,
				ms_clears = 0;
	int			rc;

	if (n < 1)
	{
		kbc_fail_msg("a CUDA graph of no calls");
		return KBC_ERROR;
	}
	if ((rc = graphs_of(c, k, n, flush, flush_bytes, timeout_s, &p)) != KBC_OK)
		return rc;
	KBC_CHECK(cudaEventRecord(c->ev_pre, c->stream));
	KBC_CHECK(cudaGraphLaunch(p->calls, c->stream));
	KBC_CHECK(cudaEventRecord(c->ev_start, c->stream));
	if (p->clears)
		KBC_CHECK(cudaGraphLaunch(p->clears, c->stream));
	KBC_CHECK(cudaEventRecord(c->ev_stop, c->stream));
	if ((rc = wait_event(c->ev_stop, timeout_s)) != KBC_OK)
		return rc;
	KBC_CHECK(cudaEventElapsedTime(&ms_calls, c->ev_pre, c->ev_start));
	if (p->clears)
		KBC_CHECK(cudaEventElapsedTime(&ms_clears, c->ev_start, c->ev_stop));
	if (!(ms_calls > ms_clears))
	{
		/* no time is left for the calls: a figure made of the clears' noise is not a sample */
		snprintf(kbc_err, sizeof(kbc_err), "a CUDA graph of %lld calls with their clears took %.4f ms, its clears alone "
				 "%.4f ms: the calls are within the clears' noise; time them with flush_bytes 0 (a warm cache), or "
				 "without cuda_graph", (long long) n, ms_calls, ms_clears);
		return KBC_ERROR;
	}
	*total_ns = (double) ms_calls * 1e6 / (double) n;
	*op_ns = (double) (ms_calls - ms_clears) * 1e6 / (double) n;
	return KBC_OK;
}

static int
api_time_graph(void *ctx, const kb_call *k, int64_t n, void *flush, size_t flush_bytes, double *op_ns,
			   double *total_ns, double timeout_s, char *err, size_t errlen)
{
	kbc_err[0] = '\0';
	return report(time_graph((kbc_ctx *) ctx, k, n, flush, flush_bytes, op_ns, total_ns, timeout_s), err, errlen);
}

/* ------------------------------------------------------------ shared by the operations */

static __global__ void
kbc_sum_fixed_kernel(const float *__restrict__ v, int64_t n, float *__restrict__ out)
{
	__shared__ double part[1024];
	double		a = 0;

	for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
		a += v[i];
	part[threadIdx.x] = a;
	__syncthreads();
	for (int o = blockDim.x / 2; o > 0; o >>= 1)
	{
		if ((int) threadIdx.x < o)
			part[threadIdx.x] += part[threadIdx.x + o];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*out = (float) part[0];
}

int
kbc_sum_fixed(kbc_ctx *ctx, const float *v, int64_t n, float *out)
{
	kbc_sum_fixed_kernel<<<1, 1024, 0, ctx->stream>>>(v, n, out);
	KBC_CHECK_LAUNCH();
	return KBC_OK;
}

static const kbc_api api = {
	KBC_ABI_VERSION,
	api_device_count,
	api_device_info,
	api_open,
	api_close,
	api_alloc,
	api_free,
	api_fill,
	api_to_host,
	api_call,
	api_sync,
	api_time_one,
	api_time_graph,
};

extern "C" __attribute__((visibility("default"))) const kbc_api *
kbc_get_api(int abi)
{
	return abi == KBC_ABI_VERSION ? &api : nullptr;
}
