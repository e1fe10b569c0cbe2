/*
 * kbench_impl.h: the C entry point of a "library" implementation, version 1.
 *
 * A shared library that implements an operation of the kernelindex registry
 * exports
 *
 *     KBENCH_IMPL_EXPORT_ABI                       (once per library)
 *     int my_symbol(kbench_impl_call *call);       (one per operation)
 *
 * and is run with `kbench run OP MODE ... --impl library:/abs/libx.so:my_symbol`
 * or registered from SQL with kbench_register_implementation(name, operation,
 * 'library:/dir/libx.so:my_symbol') and queued with kbench_run(...,
 * implementation => name).  docs/BYO.md has a complete example
 * (test/byo/ln_lib.c).
 *
 * How it is run.  kbench forks a child process that dlopen()s the library
 * (RTLD_NOW | RTLD_LOCAL), checks kbench_impl_abi() == KBENCH_IMPL_ABI and
 * calls the symbol; a library that crashes, hangs or fails ends that child
 * and gives a failed run, never the caller (the server's worker, kbench).
 * The child owns no other state: tensors live in memory shared with the
 * parent, which filled the inputs with the counter-based generator and
 * compares the outputs with the float64 reference after the timing.
 *
 * Tensors are host memory on the cpu device (this version runs libraries
 * on the cpu device only), row-major, rows x cols elements of dtype, in the
 * order and with the names of the operation's kb_call (kernels/ops/<op>.c:
 * the "names" table of its plan function; `kbench describe` lists them).
 * Inputs are is_input; write every is_output tensor.  layer_norm's forward
 * also writes the saved "mean" and "rstd" (fp32, one per row).
 *
 * phase KBENCH_PHASE_PREPARE is called once before any timing (untimed):
 * compute what a timed call needs (layer_norm backward: nothing is given
 * but x, weight, bias, dy).  KBENCH_PHASE_TIMED is the timed call; it runs
 * many times on the same inputs and must write the same outputs each time.
 *
 * Return 0 on success; anything else fails the run with call->error.
 * Set call->peak_bytes to the most memory the call allocated itself at once
 * (workspace); the run's peak_memory is the tensors' bytes plus that.
 *
 * Versioning: KBENCH_IMPL_ABI changes whenever this struct does; a library
 * built against another version is refused before it is called.
 */
#ifndef KBENCH_IMPL_H
#define KBENCH_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KBENCH_IMPL_ABI 1

enum { KBENCH_FP32 = 0, KBENCH_BF16 = 1, KBENCH_I64 = 2 };
enum { KBENCH_PHASE_PREPARE = 0, KBENCH_PHASE_TIMED = 1 };

typedef struct kbench_tensor
{
	const char *name;			/* "x", "weight", "dy", "dx", ... */
	void	   *data;				/* an input's may change from one call to the next (kbench cycles
								 * input sets): read it at every call, never keep it */
	int64_t		rows;
	int64_t		cols;
	int			dtype;			/* KBENCH_FP32, KBENCH_BF16 (uint16 bits), KBENCH_I64 */
	int			is_input;		/* filled by kbench before the first call */
	int			is_output;		/* compared with the float64 reference */
} kbench_tensor;

typedef struct kbench_impl_call
{
	int			abi;			/* KBENCH_IMPL_ABI */
	const char *op;				/* "layer_norm", "megatron_cross_entropy", "distill_jsd_loss", "jsd" */
	const char *mode;			/* "forward", "backward", "full" */
	const char *dtype;			/* the workload's dtype: "fp32", "bf16" */
	const char *device;			/* "cpu" */
	int			naxes;
	const char *axis_names[8];	/* the operation's axes, derived ones included */
	int64_t		axes[8];
	int			ntensors;
	kbench_tensor tensors[16];
	int			phase;			/* KBENCH_PHASE_PREPARE or KBENCH_PHASE_TIMED */
	int64_t		peak_bytes;		/* out: workspace the call allocated at its peak */
	char		error[256];		/* out: why, when returning non-zero */
} kbench_impl_call;

typedef int (*kbench_impl_fn) (kbench_impl_call *call);

/* The version check kbench makes before calling anything. */
#define KBENCH_IMPL_EXPORT_ABI \
	int kbench_impl_abi(void); \
	int kbench_impl_abi(void) { return KBENCH_IMPL_ABI; }

#ifdef __cplusplus
}
#endif

#endif							/* KBENCH_IMPL_H */
