/*
 * kb_abi.h: what libkbench (plain C) and libkbench_cuda.so (CUDA) share.
 *
 * Plain C structs and inline functions only, so this header compiles as C11
 * (gcc) and as CUDA C++ (nvcc).  libkbench dlopen()s libkbench_cuda.so and
 * asks it for a kbc_api table through kbc_get_api(KBC_ABI_VERSION), and for
 * the optional kbc_probe (below, looked up on its own so that a library
 * without it still loads); nothing else crosses the boundary.  Bump
 * KBC_ABI_VERSION on any change to kbc_api.
 */
#ifndef KB_ABI_H
#define KB_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KB_HD __host__ __device__ __forceinline__
#else
#define KB_HD static inline
#endif

#define KBC_ABI_VERSION 4	/* 4: time_graph; 3: kb_call holds 24 tensors (was 16) */

/* Element types of tensors. */
/* KB_BOOL: one byte, 0 or 1 (kto_loss's preference_labels); like int32, only the operations defined
 * as data use it (their inputs are filled on the host), so kbc_api and the CUDA library do not change. */
enum { KB_FP32 = 0, KB_BF16 = 1, KB_I64 = 2, KB_I32 = 3, KB_BOOL = 4, KB_DTYPE_COUNT = 5 };

/* Passes, as Liger's benchmark scripts define them. */
enum { KB_FORWARD = 0, KB_BACKWARD = 1, KB_FULL = 2, KB_MODE_COUNT = 3 };

/* Operation ids: the index of the operation in the registry (registry.c). */
enum { KB_OP_LAYER_NORM = 0, KB_OP_MEGATRON_CE = 1, KB_OP_DISTILL_JSD = 2, KB_OP_JSD = 3, KB_OP_COUNT = 4 };

/* How a tensor is initialised before the run (never inside the timed region). */
enum
{
	KB_INIT_NONE = 0,			/* left as allocated (outputs) */
	KB_INIT_ZERO,
	KB_INIT_UNIFORM,			/* scale * u, u uniform in [-1, 1), exact in float */
	KB_INIT_LOGSOFTMAX,			/* each row: log_softmax(scale * u) */
	KB_INIT_TARGETS,			/* int64 in [0, modulo) (int32, bool: host fill only) */
	KB_INIT_SOFTMAX				/* each row: softmax(scale * u), a probability vector (host fill only:
								 * the operations defined as data, whose inputs kbench fills on the host) */
};

/* Call phases: PREPARE runs once, untimed (e.g. the forward that a timed
 * backward needs); TIMED is the call the protocol times. */
enum { KB_PHASE_PREPARE = 0, KB_PHASE_TIMED = 1 };

#define KB_MAX_TENSORS 24	/* fused_neighborhood_attention: 9 inputs, an output, its upstream, 9 gradients */
#define KB_MAX_AXES 8

/* One call of an operation: everything a CPU or CUDA implementation needs. */
typedef struct kb_call
{
	int			op;				/* KB_OP_* */
	int			mode;			/* KB_FORWARD / KB_BACKWARD / KB_FULL */
	int			dtype;			/* the workload's floating dtype */
	int64_t		ax[KB_MAX_AXES];	/* axis values in the op's axis order */
	int			ntensors;
	void	   *t[KB_MAX_TENSORS];	/* host or device pointers, op-defined order */
	int64_t		rows[KB_MAX_TENSORS];
	int64_t		cols[KB_MAX_TENSORS];
	int			tdtype[KB_MAX_TENSORS];
	void	   *ws;				/* workspace */
	int64_t		ws_bytes;
	int64_t		chunk;			/* op-defined blocking parameter (0 = default) */
	int			variant;		/* CUDA kernel variant: 1 (v1, the default), 2 (v2), ... */
} kb_call;

/* What the CUDA side reports about a device. */
typedef struct kbc_device_info
{
	char		name[256];
	char		pci_bus_id[32];
	int			cc_major;
	int			cc_minor;
	int64_t		total_mem;
	int64_t		free_mem;
	int			sm_count;
	int			clock_khz;
	int			mem_clock_khz;
	int			mem_bus_width;
	int			l2_bytes;
	int			ecc;
	int			driver_version;		/* cudaDriverGetVersion, e.g. 13000 */
	int			runtime_version;	/* cudaRuntimeGetVersion */
	int			cublaslt_version;	/* cublasLtGetVersion */
	char		compiler[64];	/* nvcc that built libkbench_cuda.so */
} kbc_device_info;

/* Return codes of kbc_api functions. */
enum { KBC_OK = 0, KBC_ERROR = 1, KBC_TIMEOUT = 2, KBC_NOMEM = 3 };

typedef struct kbc_api
{
	int			abi;
	int			(*device_count) (char *err, size_t errlen);
	int			(*device_info) (int dev, kbc_device_info *out, char *err, size_t errlen);
	/* Select the device, reset it if a previous run left a sticky error,
	 * create a stream, events and a cuBLASLt handle. */
	int			(*open) (int dev, void **ctx, char *err, size_t errlen);
	void		(*close) (void *ctx);
	int			(*alloc) (void *ctx, size_t bytes, void **p, char *err, size_t errlen);
	void		(*free) (void *ctx, void *p);
	int			(*fill) (void *ctx, void *p, int dtype, int64_t rows, int64_t cols, int init,
						 double scale, int64_t modulo, uint64_t seed, uint32_t stream,
						 char *err, size_t errlen);
	int			(*to_host) (void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen);
	/* Enqueue one call of c in the given phase. */
	int			(*call) (void *ctx, const kb_call *c, int phase, char *err, size_t errlen);
	/* Wait for the stream, at most timeout_s seconds (never hangs). */
	int			(*sync) (void *ctx, double timeout_s, char *err, size_t errlen);
	/* One timed sample: clear flush_bytes of the flush buffer, record an
	 * event, call, record an event, wait; op_ns is the call alone, total_ns
	 * the flush plus the call (for the five-call estimate). */
	int			(*time_one) (void *ctx, const kb_call *c, void *flush, size_t flush_bytes,
							 double *op_ns, double *total_ns, double timeout_s,
							 char *err, size_t errlen);
	/*
	 * One timed sample of ncalls calls (the protocol's cuda_graph): ncalls
	 * times a clear of flush_bytes then a call of c, captured in one CUDA
	 * graph, and the ncalls clears alone in a second; both launched back to
	 * back between three events, waited for.  total_ns is the first graph's
	 * time over ncalls, op_ns the first's less the second's over ncalls (at
	 * least 0).  The graphs of the last few tensor sets are kept (the
	 * guard's rotation), captured and launched once untimed when new.
	 */
	int			(*time_graph) (void *ctx, const kb_call *c, int64_t ncalls, void *flush, size_t flush_bytes,
							   double *op_ns, double *total_ns, double timeout_s,
							   char *err, size_t errlen);
} kbc_api;

typedef const kbc_api *(*kbc_get_api_fn) (int abi);

/*
 * The measured ceilings of a device (kbench.h, kb_probe_device): a
 * device-to-device copy kernel (bytes read + bytes written per second, best
 * of several), an fp32 FMA kernel and a cuBLASLt GEMM per dtype (2*m*n*k per second, best of
 * several).  A figure left 0 was not measured (why: note).  Exported by
 * libkbench_cuda.so as "kbc_probe"; not measured on a GPU yet.
 */
typedef struct kbc_probe_out
{
	int64_t		copy_bytes;		/* bytes of the copy's source (in: 0 for the default) */
	double		copy_bytes_per_s;
	double		fma_flops_per_s;	/* fp32 FMA kernel (the CUDA cores' vector rate) */
	int64_t		gemm_n;			/* the GEMMs' m = n = k */
	double		gemm_flops_per_s[4];	/* tf32, bf16, fp16, fp8 (KB_PROBE_* of kbench.h) */
	char		note[256];
} kbc_probe_out;

typedef int (*kbc_probe_fn) (int dev, kbc_probe_out *out, double timeout_s, char *err, size_t errlen);

/* ------------------------------------------------------------ generator */

/*
 * Counter-based generator: element i of stream s under seed is a pure
 * function of (seed, s, i), so the CPU and the GPU fill the same tensors
 * without a shared state, and any element can be regenerated on its own.
 */
KB_HD uint64_t
kb_mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

KB_HD uint64_t
kb_hash(uint64_t seed, uint32_t stream, uint64_t i)
{
	return kb_mix64(kb_mix64(seed + 0x632be59bd9b4e019ULL * (uint64_t) (stream + 1)) ^ i);
}

/* A value in [-1, 1) with 24 significant bits: exact in float on any host. */
KB_HD float
kb_uniform(uint64_t seed, uint32_t stream, uint64_t i)
{
	int32_t		k = (int32_t) (kb_hash(seed, stream, i) >> 40) - (1 << 23);

	return (float) k * (1.0f / 8388608.0f);
}

/* bfloat16 <-> float, round to nearest even (the same bits as __float2bfloat16_rn). */
KB_HD uint16_t
kb_f2bf(float f)
{
	union
	{
		float		f;
		uint32_t	u;
	}			v;

	v.f = f;
	if ((v.u & 0x7f800000u) == 0x7f800000u && (v.u & 0x007fffffu))
		return (uint16_t) ((v.u >> 16) | 0x40);	/* quiet NaN */
	v.u += 0x7fffu + ((v.u >> 16) & 1u);
	return (uint16_t) (v.u >> 16);
}

KB_HD float
kb_bf2f(uint16_t b)
{
	union
	{
		float		f;
		uint32_t	u;
	}			v;

	v.u = (uint32_t) b << 16;
	return v.f;
}

#endif							/* KB_ABI_H */
