/*
 * probe.cu: kbc_probe (kb_abi.h), the measured ceilings of a CUDA device:
 *   copy   a grid-stride device-to-device copy of 16-byte vectors, counted
 *          as bytes read + bytes written per second, best of 10;
 *   fma    an fp32 FMA loop, 8 independent accumulators per thread,
 *          2 FLOPs per FMA, best of 5 (the CUDA cores' vector rate);
 *   gemm   one cuBLASLt matmul per dtype (tf32: fp32 data with TF32
 *          compute; bf16 and fp16 with fp32 accumulation; fp8 e4m3 on
 *          compute capability 8.9 and later), m = n = k = 8192, 2*m*n*k
 *          FLOPs per call, best of 5 after a warm-up.
 * A dtype cuBLASLt has no algorithm for is left 0 (not measured) and named
 * in the note.  Every wait polls an event with a deadline, as backend.cu's
 * do.  Not measured on a GPU yet.
 */
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <unistd.h>

#include "kbc.cuh"

#define PROBE_CHECK(call) \
	do { \
		cudaError_t e_ = (call); \
		if (e_ != cudaSuccess) { \
			snprintf(err, errlen, "%s: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
			goto done; \
		} \
	} while (0)

__global__ void
probe_copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
		dst[i] = src[i];
}

__global__ void
probe_fma_kernel(float *out, int iters)
{
	float		a[8];
	const float m = 0.999999f,
				k = 1e-7f;

	for (int j = 0; j < 8; j++)
		a[j] = (float) (threadIdx.x + j);
	for (int i = 0; i < iters; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			a[j] = fmaf(a[j], m, k);
	float		s = 0;

	for (int j = 0; j < 8; j++)
		s += a[j];
	if (s == 12345.678f)		/* never: keeps the loop */
		out[0] = s;
}

/* Wait for ev, at most timeout_s. */
static bool
probe_wait(cudaEvent_t ev, double timeout_s, char *err, size_t errlen)
{
	struct timespec t0,
				t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;)
	{
		cudaError_t e = cudaEventQuery(ev);

		if (e == cudaSuccess)
			return true;
		if (e != cudaErrorNotReady)
		{
			snprintf(err, errlen, "waiting for the device: %s", cudaGetErrorString(e));
			return false;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((double) (t.tv_sec - t0.tv_sec) + 1e-9 * (double) (t.tv_nsec - t0.tv_nsec) > timeout_s)
		{
			snprintf(err, errlen, "the device did not finish the probe within %.0f s", timeout_s);
			return false;
		}
		usleep(50);
	}
}

/* One GEMM of dtype d (0 tf32, 1 bf16, 2 fp16, 3 fp8), n x n x n: its best FLOP/s, 0 when cuBLASLt has none. */
static double
probe_gemm(cublasLtHandle_t lt, cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1, int d, int64_t n, void *A, void *B,
		   void *D, void *ws, size_t ws_bytes, double timeout_s, bool *failed, char *err, size_t errlen)
{
	cudaDataType_t ab = d == 0 ? CUDA_R_32F : d == 1 ? CUDA_R_16BF : d == 2 ? CUDA_R_16F : CUDA_R_8F_E4M3;
	cudaDataType_t dt = d == 3 ? CUDA_R_16BF : d == 0 ? CUDA_R_32F : ab;
	cublasComputeType_t ct = d == 0 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
	cublasOperation_t ta = CUBLAS_OP_T,
				tb = CUBLAS_OP_N;	/* fp8 needs A transposed ("TN"); the others take it too */
	cublasLtMatmulDesc_t op = nullptr;
	cublasLtMatrixLayout_t la = nullptr,
				lb = nullptr,
				ld = nullptr;
	cublasLtMatmulPreference_t pref = nullptr;
	cublasLtMatmulHeuristicResult_t heur;
	int			found = 0;
	float		alpha = 1.0f,
				beta = 0.0f;
	double		best = 0;
	cublasStatus_t s;

	s = cublasLtMatmulDescCreate(&op, ct, CUDA_R_32F);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&la, ab, n, n, n);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&lb, ab, n, n, n);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatrixLayoutCreate(&ld, dt, n, n, n);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceCreate(&pref);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes));
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found);
	if (s == CUBLAS_STATUS_SUCCESS && found > 0)
	{
		/* one warm-up, then the best of 5 */
		for (int r = 0; r < 6 && !*failed; r++)
		{
			float		ms = 0;

			if (cudaEventRecord(e0, st) != cudaSuccess ||
				cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, ws, ws_bytes, st)
				!= CUBLAS_STATUS_SUCCESS || cudaEventRecord(e1, st) != cudaSuccess)
			{
				snprintf(err, errlen, "cublasLtMatmul failed in the probe (dtype %d)", d);
				*failed = true;
				break;
			}
			if (!probe_wait(e1, timeout_s, err, errlen))
			{
				*failed = true;
				break;
			}
			if (r > 0 && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0)
			{
				double		f = 2.0 * (double) n * (double) n * (double) n / (ms * 1e-3);

				if (f > best)
					best = f;
			}
		}
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
	return best;
}

extern "C" __attribute__((visibility("default"))) int
kbc_probe(int dev, kbc_probe_out *out, double timeout_s, char *err, size_t errlen)
{
	static const char *const names[4] = {"tf32", "bf16", "fp16", "fp8"};
	cudaStream_t st = nullptr;
	cudaEvent_t e0 = nullptr,
				e1 = nullptr;
	cublasLtHandle_t lt = nullptr;
	void	   *src = nullptr,
			   *dst = nullptr,
			   *ws = nullptr;
	int64_t		bytes = out->copy_bytes >= 4096 ? out->copy_bytes / 16 * 16 : (int64_t) 1 << 30;
	int64_t		n = 8192;
	size_t		ws_bytes = 32u << 20;
	int			sms = 0,
				major = 0,
				minor = 0;
	int			rc = KBC_ERROR;
	bool		failed = false;
	char		missing[64] = "";
	float		ms;

	memset(out, 0, sizeof(*out));
	PROBE_CHECK(cudaSetDevice(dev));
	PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	PROBE_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	PROBE_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
	PROBE_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	PROBE_CHECK(cudaEventCreate(&e0));
	PROBE_CHECK(cudaEventCreate(&e1));
	/* copy: a source and a destination of bytes each (n*n*4 bytes covers the GEMMs' operands too) */
	if (bytes < n * n * 4)
		bytes = n * n * 4;
	PROBE_CHECK(cudaMalloc(&src, (size_t) bytes));
	PROBE_CHECK(cudaMalloc(&dst, (size_t) bytes));
	PROBE_CHECK(cudaMalloc(&ws, ws_bytes));
	PROBE_CHECK(cudaMemsetAsync(src, 0, (size_t) bytes, st));
	PROBE_CHECK(cudaMemsetAsync(dst, 0, (size_t) bytes, st));
	out->copy_bytes = bytes;
	for (int r = 0; r < 11; r++)
	{
		PROBE_CHECK(cudaEventRecord(e0, st));
		probe_copy_kernel<<<sms * 8, 512, 0, st>>>((const uint4 *) src, (uint4 *) dst, bytes / 16);
		PROBE_CHECK(cudaGetLastError());
		PROBE_CHECK(cudaEventRecord(e1, st));
		if (!probe_wait(e1, timeout_s, err, errlen))
		{
			failed = true;
			goto done;
		}
		if (r > 0 && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0 &&
			2.0 * (double) bytes / (ms * 1e-3) > out->copy_bytes_per_s)
			out->copy_bytes_per_s = 2.0 * (double) bytes / (ms * 1e-3);
	}
	for (int r = 0; r < 6; r++)
	{
		const int	iters = 4096,
					threads = 256,
					blocks = sms * 16;

		PROBE_CHECK(cudaEventRecord(e0, st));
		probe_fma_kernel<<<blocks, threads, 0, st>>>((float *) dst, iters);
		PROBE_CHECK(cudaGetLastError());
		PROBE_CHECK(cudaEventRecord(e1, st));
		if (!probe_wait(e1, timeout_s, err, errlen))
		{
			failed = true;
			goto done;
		}
		if (r > 0 && cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0)
		{
			double		f = 2.0 * 8.0 * iters * (double) threads * blocks / (ms * 1e-3);

			if (f > out->fma_flops_per_s)
				out->fma_flops_per_s = f;
		}
	}
	if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
	{
		snprintf(err, errlen, "cublasLtCreate failed in the probe");
		goto done;
	}
	out->gemm_n = n;
	for (int d = 0; d < 4 && !failed; d++)
	{
		if (d == 3 && major * 10 + minor < 89)
			continue;			/* no fp8 tensor cores before sm_89 */
		/* operands: uninitialised bits would give NaN/Inf in some dtypes; zeros time the same */
		out->gemm_flops_per_s[d] = probe_gemm(lt, st, e0, e1, d, n, src, (char *) src + bytes / 2, dst, ws, ws_bytes,
											  timeout_s, &failed, err, errlen);
		if (out->gemm_flops_per_s[d] <= 0 && !failed)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s", names[d]);
	}
	if (failed)
		goto done;
	snprintf(out->note, sizeof(out->note),
			 "copy best of 10 (read + write bytes); fp32 FMA kernel; cuBLASLt GEMM %lldx%lldx%lld best of 5%s%s; "
			 "not measured on a GPU yet", (long long) n, (long long) n, (long long) n,
			 missing[0] ? "; no algorithm for" : "", missing);
	rc = KBC_OK;
done:
	/* on a timeout the kernel may still run: leave the memory to the driver (process exit) */
	if (rc == KBC_OK || !failed)
	{
		if (lt)
			cublasLtDestroy(lt);
		if (ws)
			cudaFree(ws);
		if (dst)
			cudaFree(dst);
		if (src)
			cudaFree(src);
		if (e0)
			cudaEventDestroy(e0);
		if (e1)
			cudaEventDestroy(e1);
		if (st)
			cudaStreamDestroy(st);
	}
	return rc;
}
