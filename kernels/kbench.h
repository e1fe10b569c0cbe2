/*
 * kbench.h: the public C API of kernels/ (libkbench.a).
 *
 * Runs one GPU-kernel benchmark under the kernelindex timing protocol and
 * returns its statistics, raw samples and manifests.  Plain C11, no
 * PostgreSQL: the extension's background worker and the kbench CLI both
 * call these functions.
 *
 * Properties the caller can rely on:
 *  - Every returned string and array is malloc'd and owned by the caller
 *    (kb_free for strings, kb_free_result for results).
 *  - No global mutable state other than the lazily loaded CUDA backend
 *    (loaded once, thread-safe); kb_run may be called any number of times in
 *    one process.  Calls are thread-compatible: concurrent kb_run calls on
 *    different devices are fine, on one device they serialise on the GPU.
 *  - libkbench.a does not link libcuda or libcudart.  The CUDA code lives in
 *    libkbench_cuda.so, dlopen()ed only when a request names a cuda device
 *    (or kb_devices_json is called).  Search order: $KBENCH_CUDA_LIB, the
 *    directory of the object that contains libkbench (the extension's .so or
 *    the kbench program), then the dynamic loader's path.
 *  - Every manifest returned was built from the registry's tables and then
 *    parsed, validated, normalized and digested by the identity core
 *    (core/ki_json.h), the code the database uses.
 *  - After a CUDA fault (sticky error) the run reports KB_RUNTIME_ERROR and
 *    the next kb_run on that device resets it (cudaDeviceReset) first.
 *  - No wait is unbounded.  A kernel that does not finish by the deadline
 *    gives KB_TIMEOUT and leaves the device wedged for the life of the
 *    process: later runs on it are refused (KB_DEVICE_UNAVAILABLE); start a
 *    new process (the background worker exits and is restarted).
 */
#ifndef KBENCH_H
#define KBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KB_VERSION, the release of these kernels, is set by kernels/Makefile from
 * kernelindex.control, where the version is written once. */

/* Outcome of a request.  kb_status_name gives the BenchmarkRun status token. */
typedef enum kb_status
{
	KB_PASSED = 0,				/* "passed" */
	KB_INCORRECT_NUMERICAL,		/* "incorrect_numerical": outputs differ from the reference */
	KB_RUNTIME_ERROR,			/* "runtime_error": a CUDA or system call failed */
	KB_TIMEOUT,					/* "timeout": the deadline passed */
	KB_RESOURCE_EXCEEDED,		/* "resource_exceeded": does not fit the device's free memory */
	KB_CANCELED,				/* *cancel became non-zero; no manifests */
	KB_INVALID_REQUEST,			/* bad op, mode, axis, dtype, impl or device; no manifests */
	KB_DEVICE_UNAVAILABLE		/* the device does not exist or CUDA cannot load; no manifests */
} kb_status;

const char *kb_status_name(kb_status s);

/* Where a run is (progress callback): the phases of kb_run and kb_compare. */
typedef enum kb_run_phase
{
	KB_RUN_SETUP = 1,			/* allocating, filling inputs, starting a child, the prepare call */
	KB_RUN_WARMUP,			/* first call, five-call estimate, warm-up calls */
	KB_RUN_SAMPLING,			/* timed calls */
	KB_RUN_CHECKING			/* comparing outputs with the float64 reference, building manifests */
} kb_run_phase;

const char *kb_run_phase_name(kb_run_phase p);	/* "setup", "warm-up", "sampling", "checking" */

typedef struct kb_progress
{
	kb_run_phase phase;
	double		fraction;		/* 0..1 of the whole run */
	double		rest_s;			/* seconds expected to remain; < 0: not known yet */
} kb_progress;

/*
 * A request.  Initialise with kb_request_init, then set op, mode and the
 * workload, either as axes_json (a JSON object text such as
 * {"rows": 4096, "hidden": 4096, "dtype": "fp32"}) or as naxes key/value
 * string pairs ("rows"="4096", "dtype"="fp32").  "dtype" is one of the
 * workload keys; when absent the operation's first dtype is used.
 */
typedef struct kb_request
{
	const char *op;				/* "layer_norm", "megatron_cross_entropy", "distill_jsd_loss", "jsd" */
	const char *mode;			/* "forward", "backward", "full" (what the op allows) */
	const char *axes_json;		/* JSON object text, or NULL to use keys/values */
	int			naxes;
	const char *const *keys;
	const char *const *values;
	const char *impl;			/* "cpu", "cuda" or "cuda/vN" (a CUDA kernel variant, kb_impl_resolve);
								 * NULL: the device's implementation */
	const char *device;			/* "cpu" or "cuda:N"; NULL: "cpu" */

	/* Protocol parameters; the defaults are the kernelindex protocol. */
	double		warmup_ms;		/* <= 0: 25 ms */
	double		rep_ms;			/* <= 0: 100 ms */
	int64_t		flush_bytes;	/* < 0: the default (kb_default_flush_bytes); 0: no cache flush */
	int64_t		max_samples;	/* <= 0: 100000 */
	int64_t		min_samples;	/* <= 0: KB_MIN_SAMPLES (at most max_samples) */
	uint64_t	seed;			/* input generator seed (default 0) */
	int			check;			/* 1 (default): compare with the float64 reference */
	/* Adaptive stopping (docs/KERNELS.md, Stopping): */
	int			fixed_count;	/* 0 (default): adaptive; 1: the do_bench count from rep_ms, no more */
	double		noise_target_pct;	/* <= 0: 0.5 (CUDA) or 2 (CPU): stop once stdev/mean is below it */
	double		max_ms;			/* <= 0: 4 x the time the minimum took: the sampling phase's longest */
	int			cuda_graph;		/* 1: each sample a CUDA graph of many calls, its clears subtracted (docs/KERNELS.md) */

	/* Control from the caller (the background worker). */
	volatile int *cancel;		/* polled between calls; non-zero: stop, KB_CANCELED */
	int64_t		deadline_ns;	/* CLOCK_MONOTONIC ns; 0: none; passing it: KB_TIMEOUT */
	void		(*progress) (void *arg, const kb_progress *p);	/* may be NULL */
	void	   *progress_arg;
	int			(*stop) (void *arg);	/* may be NULL; polled with cancel (between calls, every 100 ms
										 * while a child runs): non-zero stops the run as KB_CANCELED
										 * (the worker: its postmaster died) */
	void	   *stop_arg;

	/*
	 * Implementations other than kbench's own (docs/BYO.md), run in a child
	 * process that kb_run starts and supervises.  impl "huggingface",
	 * "torch" or "liger" names a built-in python implementation
	 * (kernels/python/kbench_builtin.py); impl "python" or "library" (or a
	 * registered name) with entry "python:/dir/file.py:function" or
	 * "library:/dir/libx.so:symbol" names the user's code.
	 */
	const char *entry;
	const char *impl_version;	/* the registered version (the ImplementationRevision's projectRevision.version) */
	const char *python;			/* interpreter; NULL: $KBENCH_PYTHON, else "python3" on PATH */
	const char *harness;		/* kbench_harness.py; NULL: $KBENCH_HARNESS, else python/ beside libkbench */

	/*
	 * A registered entry (the server sets both): its file is opened without
	 * following a symbolic link anywhere on its path, must lie under
	 * entry_directory (kernelindex.implementation_directory, resolved; ""
	 * when none is set: it does not run) and have the sha256 recorded at
	 * registration (spec.source.contentDigest); what runs is the bytes so
	 * verified (kernels/impl_source.c).  NULL: an entry is opened once the
	 * ordinary way (kbench --impl) and runs from the bytes its run names.
	 */
	const char *entry_directory;
	const char *entry_digest;
} kb_request;

void		kb_request_init(kb_request *r);
/* kb_request_init, then what to run: op, mode, the workload as axes_json (kept as given), impl, device. */
void		kb_request_for(kb_request *r, const char *op, const char *mode, const char *axes_json,
						   const char *impl, const char *device);

/*
 * What an implementation's name means, in one place (kernels/impl_name.c):
 * kbench's own are "cpu" (the C reference), "cuda" (CUDA kernel variant v1)
 * and "cuda/vN" (variant N; "cuda/v1" is "cuda").  The same names are
 * kbench_run's implementation argument in SQL and kbench's --impl.
 */
typedef struct kb_impl_id
{
	int			own;			/* 1: kbench's own; 0: another implementation (python, library,
								 * registered), run in a child process */
	int			cuda;			/* runs on a cuda:N device */
	int			variant;		/* CUDA kernel variant, 1 = v1 */
	char		impl[16];		/* the name in its one spelling: "cpu", "cuda", "cuda/v2" */
	/* With an operation: */
	char		name[128];		/* its ImplementationRevision, "kbench-layer-norm-cuda-v2" (v1 keeps
								 * "kbench-layer-norm-cuda", the name it had before variants) */
	char		title[192];		/* "LayerNorm · kbench CUDA v2" */
	char		symbol[128];	/* the CUDA entry point, "layer_norm_cuda/v2"; "" on the cpu */
} kb_impl_id;

/*
 * Resolve impl (not NULL) for operation op (NULL: the name alone).  A name
 * that is not kbench's own gives id->own = 0 and KB_PASSED; a "cuda/..."
 * that is no variant (of op, when given) gives KB_INVALID_REQUEST, why in
 * err.
 */
kb_status	kb_impl_resolve(const char *impl, const char *op, kb_impl_id *id, char *err, size_t errlen);

/*
 * Whether kbench itself gives impl a meaning: one of its own (cpu, cuda,
 * cuda/vN), a built-in python implementation (huggingface, torch, liger) or
 * a kind of outside implementation (python, library).  Such a name can never
 * be a registered implementation's.
 */
/*
 * A user's own operation (docs/OPERATIONS.md, "Your own operation"): the
 * definition file (kernels/ops/defs' format) is parsed and added to the
 * registry for this process, its python reference file (reference.file,
 * relative to the definition) read once.  0, or -1 with a message that
 * names the field; nothing is added on failure.
 */
int			kb_load_op_file(const char *path, char *err, size_t errlen);
/*
 * An operation registered in SQL (kbench_register_operation, src/operations.c).
 * kb_read_op_def reads a definition file and its reference.file as a
 * registered implementation's file is read (under directory, reached without
 * a symbolic link; NULL directory: any path), each with its sha256;
 * kb_add_op_def adds a definition's text with its reference's source, as
 * kb_load_op_file does (the name it took in name); kb_forget_added_ops takes
 * every operation added either way out of the registry again, for a
 * process that reloads what is registered.
 */
typedef struct kb_op_source
{
	char	   *def;			/* the definition's text (malloc'd, NUL-terminated) */
	char		def_digest[72];	/* "sha256:<hex>" of it */
	char	   *ref;			/* reference.file's text, or NULL when the definition names none */
	char	   *ref_path;		/* where it was read */
	char		ref_digest[72];
} kb_op_source;
int			kb_read_op_def(const char *path, const char *directory, kb_op_source *out, char *err, size_t errlen);
void		kb_op_source_free(kb_op_source *s);
int			kb_add_op_def(const char *origin, const char *text, const char *ref_source, const char *ref_path,
						  char *name, size_t namelen, char *err, size_t errlen);
void		kb_forget_added_ops(void);
/* Why a built-in definition (kernels/ops/defs) did not load, or NULL: a build error, never silent. */
const char *kb_builtin_ops_error(void);
int			kb_impl_builtin(const char *impl);

/*
 * The fewest samples a run takes by default, however long a call is: the
 * repetition time turned into a count is raised to it (docs/KERNELS.md, "CPU
 * protocol").  A run with fewer (max_samples below it, or stopped early)
 * says so in its message and the run's description.
 */
#define KB_MIN_SAMPLES 10

/*
 * The default cache flush of a device, in bytes: on the CPU twice its
 * largest cache (sysfs, else sysconf; 16 MiB assumed when neither says), as that is
 * what a buffer must sweep to evict the call's data; on a GPU 256 MiB (more
 * than any L2 so far).  kb_cpu_cache_bytes gives the cache and where it was
 * read ("sysfs", "sysconf", "assumed").
 */
#define KB_CPU_FLUSH_FACTOR 2
int64_t		kb_default_flush_bytes(int cuda);
int64_t		kb_cpu_cache_bytes(const char **source);


/* Statistics of the kept samples, in nanoseconds. */
typedef struct kb_stats
{
	int64_t		samples;		/* kept samples */
	int64_t		discarded_throttled;	/* dropped: SM clock < 75% of default */
	int			clock_available;	/* SM clock was sampled (NVML) */
	double		clock_mhz_min;
	double		clock_mhz_default;
	int64_t		warmup_iterations;
	int64_t		estimate_ns;	/* five-call estimate per call, flush included */
	int64_t		graph_calls;	/* calls in each sample's CUDA graph (cuda_graph); 0: a sample is one call */
	double		median, p05, p20, p80, p95, mean, minimum, maximum, mad;
	double		ci95_lo, ci95_hi;	/* distribution-free interval of the median */
	/* how the sampling stopped (measure.c): "noise_target", "converged", "max_time", "max_samples", "fixed" */
	const char *stop_rule;
	double		stdrel;			/* stdev / mean of the kept samples (NVBench's stdrel) */
	int			unstable;		/* stopped by a cap (max_time, max_samples) before the noise settled */
} kb_stats;

typedef struct kb_correctness
{
	int			checked;
	int64_t		compared;		/* elements compared */
	double		max_abs_error;
	double		max_rel_error;
	double		matched_ratio;
	double		rtol, atol_factor;
	char		detail[256];	/* which output failed, first mismatch */
	double		worst_ratio;	/* the largest |got - ref| / tolerance: the figure the gate
								 * uses (pass: <= 1) */
	char		worst_at[64];	/* the value that set it, "y[3]" */
} kb_correctness;

/*
 * The expected duration of a request in seconds, before it runs: setup, the
 * first call, the five-call estimate, warm-up and samples as the protocol
 * turns them into counts (at least min_samples), and the check.  The time
 * of one call (flush excluded) is per_call_ns when the caller knows it (a
 * past run of the same workload and implementation on the device), else the
 * cost model (the operation's bytes and FLOPs) at a calibrated rate
 * (docs/KERNELS.md, "Estimates").  how (may be NULL) says which.  Returns
 * < 0 for a request that does not parse.
 */
double		kb_estimate_seconds(const kb_request *req, double per_call_ns, char *how, size_t howlen);

/*
 * Paired A/B statistics (kb_compare, kbench_comparison): ratio = median(b) /
 * median(a) of per-round values, its 95% interval by a bootstrap over rounds
 * (KB_BOOTSTRAP_RESAMPLES resamples of whole rounds, a fixed generator, so
 * the same rounds give the same interval) and a verdict for B: "faster"
 * (the interval lies below 1 - same_pct/100), "slower" (above 1 +
 * same_pct/100), "same" (inside 1 -+ same_pct/100), else "ambiguous".
 * Returns 0, or -1 (verdict NULL) when a is empty or its median is 0.
 */
#define KB_BOOTSTRAP_RESAMPLES 2000
typedef struct kb_paired
{
	double		a_median;
	double		b_median;
	double		ratio;
	double		low;
	double		high;
	const char *verdict;		/* static string, or NULL */
} kb_paired;

int			kb_paired_ratio(const double *a, const double *b, int64_t n, double same_pct, kb_paired *out);
const char *kb_verdict(double low, double high, double same_pct);

/* A result; every pointer is malloc'd, release with kb_free_result. */
typedef struct kb_result
{
	kb_status	status;
	char		message[512];	/* what happened, for humans */
	kb_stats	stats;
	double	   *samples_ns;		/* raw samples in call order, all of them */
	unsigned char *sample_kept;	/* 1 kept, 0 discarded (throttled) */
	int64_t		nsamples;
	kb_correctness correctness;
	double		bytes;			/* bytes the pass must move (the floor's numerator) */
	double		flops;			/* FLOPs the pass must do */
	double		achieved_gbps;	/* bytes / median */
	double		achieved_tflops;	/* flops / median */

	/* Manifests: canonical (RFC 8785) JSON text, validated by the core. */
	char	   *composite_json;	/* {"run":..,"protocol":..,"environment":..} */
	char	   *workload_json;
	char	   *implementation_json;
	char	   *operation_json;
	char		run_digest[72];
	char		protocol_digest[72];
	char		environment_digest[72];
	char		workload_digest[72];
	char		implementation_digest[72];
	char		operation_digest[72];

	/* Peak memory of the timed call in bytes (0: not measured): the run's
	 * "peak_memory" measurement.  kbench's own implementations: every tensor
	 * the call reads or writes plus its workspace; python: torch's allocator
	 * peak on a GPU; library: the tensors plus what the library reports. */
	int64_t		peak_memory_bytes;
	/* the guard (measure.c, "inputs that change, outputs that are checked") */
	int			input_sets;		/* input sets cycled through the timed calls */
	int			ncheck_calls;	/* timed calls whose outputs were captured and checked */
	int64_t		check_calls[16];	/* their indices (0-based, in the order of the samples) */
	double		call_overhead_ns;	/* kbench's round trip to a child per call (an empty call), or 0 */
} kb_result;

/* The BenchmarkRun status a result is filed under: kb_status_name(status), except that a run
 * that passed without its outputs being checked ("check": false) is "incomplete_evidence" (it
 * does not compete). */
const char *kb_result_run_status(const kb_result *r);

/*
 * Everything that can be asked for, as JSON text (caller frees with kb_free):
 * {"version":..,"operations":[{"name","title","modes","axes","dtypes",
 *  "implementations","operationDigest"}..],"devices":[..]}.
 */
char	   *kb_list_json(void);

/*
 * The registry's cost formulas, as kbench_operation_costs holds them: a JSON
 * array of {"operation", "mode", "bytes", "flops", "compute", "note"}, one
 * per operation and pass (malloc'd; kb_free).
 */
char	   *kb_costs_json(void);
/* The same objects for one operation (any: kbench's own, defined as data or added), its modes only; "[]" for an unknown name. */
char	   *kb_op_costs_json(const char *name);

/* The devices present: [{"name":"cpu",...},{"name":"cuda:0","product":..}]. */
char	   *kb_devices_json(void);

/*
 * 1 when libkbench_cuda.so loaded and reports at least one device; else 0
 * with the reason (library not found, no driver, no device) in why.
 */
int			kb_cuda_available(char *why, size_t whylen);

/*
 * Validate a request without running it: unknown op/mode/axis/dtype/impl/
 * device, missing or non-positive sizes, sizes too large (for a cuda device:
 * more than its free memory).  axes_json as in kb_request.  Returns
 * KB_PASSED (0) when the request can be queued, else KB_INVALID_REQUEST,
 * KB_RESOURCE_EXCEEDED or KB_DEVICE_UNAVAILABLE with a message in errbuf
 * that says what is allowed.
 */
kb_status	kb_check_request(const char *op, const char *mode, const char *axes_json,
							 const char *impl, const char *device,
							 char *errbuf, size_t errlen);

/*
 * The same checks without touching any device (no CUDA loaded, no memory
 * probed): what a process that must not load CUDA, such as a database
 * backend, can say about a request for a cuda device.  The device's memory
 * is then checked by whoever runs it.
 */
kb_status	kb_validate_request(const char *op, const char *mode, const char *axes_json,
								const char *impl, const char *device,
								char *errbuf, size_t errlen);

/* The same for a full request (key/value axes allowed). */
kb_status	kb_check(const kb_request *req, char *errbuf, size_t errlen);

/*
 * The manifests of a request without running it: the OperationSpec and the
 * WorkloadCase (canonical text and digests), as the Liger import makes them.
 */
kb_status	kb_describe(const kb_request *req, kb_result *res);

/*
 * The tensors one call of a request's implementation takes and returns, in
 * the order the call holds them (issue 29, docs/BYO.md): name, shape (rows x
 * cols, as the implementation receives it), dtype and role: "input"
 * (generated by kbench, copied to the implementation), "output" (compared
 * with the float64 reference; one a python implementation does not return
 * is not compared) or "scratch" (allocated for the call, neither generated
 * nor compared: what this mode leaves unused, or the state a prepare call
 * writes).  The number of tensors, or -1 with the reason in err.
 */
typedef struct kb_tensor_desc
{
	const char *name;
	int64_t		rows;
	int64_t		cols;
	const char *dtype;
	const char *role;
} kb_tensor_desc;

#define KB_DESCRIBE_MAX_TENSORS 32
int			kb_describe_tensors(const kb_request *req, kb_tensor_desc *out, int max, int64_t *workspace_bytes,
								char *err, size_t errlen);

/*
 * Run a request: validate, allocate and fill inputs (refusing what does not
 * fit, before allocating), warm up, time under the protocol, check against
 * the float64 reference, and build the manifests.  Always fills *res (call
 * kb_free_result afterwards) and returns res->status.  Manifests are present
 * for PASSED, INCORRECT_NUMERICAL, RUNTIME_ERROR, TIMEOUT and
 * RESOURCE_EXCEEDED; absent for CANCELED, INVALID_REQUEST and
 * DEVICE_UNAVAILABLE.
 */
kb_status	kb_run(const kb_request *req, kb_result *res);

void		kb_free_result(kb_result *res);

/*
 * A paired A/B comparison (kbench compare; the worker's compare jobs, made
 * by kbench_compare): A and B are set up side by side on one device with
 * the same inputs (the protocol's seed), each makes its first call, its
 * five-call estimate and its warm-up as kb_run does, then `rounds` rounds
 * each time a block of A's calls and then a block of B's (ABAB...), the
 * cache flushed before every timed call.  Blocks have the same number of
 * calls on both sides: the rounds share the smaller side's sample count
 * (at least min_samples), and a block has at least 3 calls, so that a
 * round's median survives one preempted call (fewer when max_samples
 * says so, but always one a round).  Each side's outputs are checked and its run
 * built as kb_run builds one, with the raw samples of all its blocks.  The
 * comparison: each round's median per side, kb_paired_ratio over rounds.
 * A side that cannot start (bad request, device, memory) ends the
 * comparison: its run (when it has manifests) is in the result, the other
 * side's is not (status KB_CANCELED there).  A timeout ends both sides'
 * runs as timeout with the samples so far; a cancel leaves no manifests.
 */
typedef struct kb_compare_request
{
	kb_request	a;				/* the request; impl, entry and impl_version are A's */
	const char *impl_b;			/* B's implementation (NULL: the device's own) */
	const char *entry_b;
	const char *impl_version_b;
	const char *entry_digest_b;	/* B's recorded content digest (entry_directory is A's) */
	int			rounds;			/* <= 0: 10 */
	double		same_pct;		/* <= 0: 2 */
} kb_compare_request;

typedef struct kb_compare_result
{
	kb_status	status;			/* KB_PASSED: both runs passed and every round was timed */
	char		message[1100];
	kb_result	a;
	kb_result	b;
	int			rounds;			/* rounds timed */
	int64_t		calls_per_block;
	double	   *a_round_ns;		/* each round's median, malloc'd */
	double	   *b_round_ns;
	char	   *order;			/* the blocks as they ran, "ABAB...", malloc'd */
	kb_paired	paired;			/* verdict NULL unless status is KB_PASSED */
} kb_compare_result;

void		kb_compare_request_init(kb_compare_request *r);
kb_status	kb_compare(const kb_compare_request *req, kb_compare_result *res);
void		kb_free_compare_result(kb_compare_result *res);

/*
 * The ImplementationRevision of a user's implementation without running it:
 * entry "python:/dir/file.py:function" or "library:/dir/libx.so:symbol",
 * name (metadata.name, lower-case), version (may be NULL).  The file is read
 * and its sha256 recorded (spec.source.contentDigest): a changed file is a
 * new revision.  directory (may be NULL): the file is opened as a registered
 * one is run (kb_request.entry_directory: no symbolic link on its path,
 * under directory).  Returns the canonical text (caller frees with kb_free)
 * and its digest, or NULL with the reason in err.  kb_run builds the same
 * text for a request with the same entry, name and version.
 */
char	   *kb_implementation_manifest(const char *op, const char *entry, const char *name,
									   const char *version, const char *directory, char digest[72],
									   char *err, size_t errlen);
void		kb_free(void *p);

/*
 * The measured ceilings of a device (probe.c, docs/KERNELS.md "Measured
 * ceilings"): what the device sustains, measured once per environment and
 * shown beside its datasheet peaks.  cpu: a STREAM-like copy and triad
 * (best of several passes over arrays larger than the last-level cache) and
 * an FMA loop (fp32, the widest vector unit the CPU has), each on one
 * thread (as kbench's own CPU kernels run) and on every online CPU (as a
 * multi-threaded implementation can).  cuda:N: a device-to-device copy
 * kernel and a cuBLASLt GEMM per dtype (tf32, bf16, fp16, fp8) through
 * libkbench_cuda.so's kbc_probe (not measured on a GPU yet).  A figure
 * that was not measured is 0 (absent from the JSON, NULL in the database).
 */
enum { KB_PROBE_TF32 = 0, KB_PROBE_BF16 = 1, KB_PROBE_FP16 = 2, KB_PROBE_FP8 = 3, KB_PROBE_GEMMS = 4 };

typedef struct kb_probe
{
	char		device[32];		/* "cpu", "cuda:0" */
	char		environment_digest[72];	/* the ExecutionEnvironment the runs on it carry */
	char	   *environment_json;	/* its canonical manifest (malloc'd) */
	int			threads;		/* cpu: the threads of the "all" figures (online CPUs) */
	int64_t		array_bytes;	/* bytes of each copy/triad array */
	double		copy_bytes_per_s;	/* all threads (cpu) or the copy kernel (cuda) */
	double		triad_bytes_per_s;
	double		copy_bytes_per_s_1t;	/* cpu: one thread */
	double		triad_bytes_per_s_1t;
	double		fma_flops_per_s;	/* fp32 vector FMA: all threads (cpu), an FMA kernel (cuda) */
	double		fma_flops_per_s_1t;
	double		gemm_flops_per_s[KB_PROBE_GEMMS];	/* cuda: dense GEMM per dtype */
	char		isa[32];		/* cpu: the vector unit of the FMA loop (avx512f, avx2+fma, generic) */
	double		load1;			/* the host's 1-minute load average when the probe started (-1: unknown) */
	double		seconds;		/* how long the probe took */
	char		note[256];
	char		message[512];	/* why it failed */
} kb_probe;

/* Probe a device ("cpu" or "cuda:N") with arrays of bytes each (0: the default, see probe.c);
 * 0 when measured, else the reason in out->message. */
int			kb_probe_device(const char *device, int64_t bytes, kb_probe *out);
/* The device and its environment (digest, manifest) alone, nothing measured. */
int			kb_probe_describe(const char *device, kb_probe *out);
/* The probe as JSON (malloc'd; kb_free): every figure above; those not measured left out. */
char	   *kb_probe_json(const kb_probe *p);
void		kb_probe_free(kb_probe *p);

#ifdef __cplusplus
}
#endif

#endif							/* KBENCH_H */
