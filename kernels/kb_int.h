/*
 * kb_int.h: internals of libkbench shared by its files (registry, parse,
 * workload, manifests, plan, measure, run, list, request), the backends
 * and the operations in ops/.  Not installed, not for callers.
 */
#ifndef KB_INT_H
#define KB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kb_abi.h"
#include "kbench.h"
#include "ki_json.h"

/* An operation's input tensors (its OperationSpec signature): fused_neighborhood_attention has 9. */
#define KB_MAX_OP_INPUTS 12

/* ------------------------------------------------------------ registry */

typedef struct kb_axis_def
{
	const char *name;
	const char *role;			/* "variable" or "derived" */
	const char *expression;		/* derived axes only, e.g. "hidden // 2" */
} kb_axis_def;

/* A tensor argument: name, dims (axis names or "1"), dtype ("float": the workload dtype). */
typedef ki_spec_tensor kb_tensor_def;

typedef struct kb_scalar_def
{
	const char *name;
	const char *dtype;
	double		value;
} kb_scalar_def;

/* What a run allocates besides the call's tensors. */
typedef struct kb_plan
{
	const char *name[KB_MAX_TENSORS];
	int			init[KB_MAX_TENSORS];	/* KB_INIT_* */
	double		scale[KB_MAX_TENSORS];
	int64_t		modulo[KB_MAX_TENSORS];
	int			is_output[KB_MAX_TENSORS];	/* compared with the reference */
	/*
	 * Set by a python implementation's readback (backend_child.c) for each tensor its step's dict
	 * did not name; zero (returned) for kbench's own implementations and libraries, which write every
	 * output.  kb_returned reads it.
	 */
	int			not_returned[KB_MAX_TENSORS];
} kb_plan;

typedef struct kb_backend kb_backend;

typedef struct kb_op
{
	int			id;				/* KB_OP_* */
	const char *name;			/* "layer_norm" (CLI, SQL) */
	const char *slug;			/* "layer-norm" (manifest names) */
	const char *title;
	const char *description;
	const char *source_url;
	const char *family;
	bool		modes[KB_MODE_COUNT];
	const char *timed[KB_MODE_COUNT];	/* what each mode times, for the protocol */
	int			naxes;			/* variable axes first, then derived */
	kb_axis_def axes[KB_MAX_AXES];
	const char *title_axes[KB_MAX_AXES];	/* order used in workload titles */
	int			ndtypes;
	int			dtypes[KB_DTYPE_COUNT];
	int			ninputs;
	kb_tensor_def inputs[KB_MAX_OP_INPUTS];
	int			noutputs;
	kb_tensor_def outputs[4];
	int			nscalars;
	kb_scalar_def scalars[4];
	const char *c_path;			/* kernels/ops/<op>.c */
	const char *cu_path;		/* kernels/ops/<op>.cu */
	const char *cu_symbol;		/* main kernel */
	/* what each CUDA kernel variant is, v1 first: the variants are those with a note (none: v1 alone) */
	const char *variant_notes[4];

	/* Compute derived axes in ax[], check constraints; false + message (NULL: none to derive). */
	bool		(*derive) (int64_t *ax, int dtype, char *err, size_t errlen);
	/* Fill c's tensors (shapes, dtypes) and p (initialisers), workspace. */
	void		(*plan) (kb_call *c, kb_plan *p, bool cuda);
	/*
	 * Bytes and FLOPs one call of each pass must move and do (the floors), as
	 * formulas over the variable axes and dtype_bytes, written once: cost.c
	 * evaluates them for kbench, and the extension loads the same texts into
	 * kbench_operation_costs.  Every pass has one, also a pass the operation
	 * does not time (SQL's table has all three).
	 */
	const char *cost_bytes[KB_MODE_COUNT];
	const char *cost_flops[KB_MODE_COUNT];
	const char *cost_compute;	/* the peak that bounds the FLOPs: "vector" or "tensor" */
	const char *cost_note[KB_MODE_COUNT];
	/* The CPU implementation (timed on the cpu device). */
	int			(*cpu) (const kb_call *c, int phase);
	/* Compare the outputs of c (wherever they live) with the float64 reference. */
	int			(*check) (kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out);
	/* An operation defined as data (opdef.c, kernels/ops/defs/): its definition; NULL for the C ones. */
	const struct kb_opdef *def;
} kb_op;

extern const kb_op *const kb_ops[KB_OP_COUNT];
const kb_op *kb_find_op(const char *name);
/* Every operation, the C ones (KB_OP_*) first, then the ones defined as data (ids from KB_OP_COUNT). */
int			kb_op_count(void);
const kb_op *kb_op_at(int i);
/* "a, b" of the operations nearest to name (edit distance), for errors. */
void		kb_op_suggest(const char *name, char *out, size_t len);
int			kb_variant_count(const kb_op *op);	/* CUDA kernel variants, >= 1 */
const char *kb_mode_name(int mode);
int			kb_mode_from_name(const char *s);
const char *kb_dtype_name(int dtype);
int			kb_dtype_from_name(const char *s);
size_t		kb_dtype_size(int dtype);

/* A parsed, validated request. */
typedef struct kb_case
{
	const kb_op *op;
	int			mode;
	int			dtype;
	int64_t		ax[KB_MAX_AXES];
	bool		cuda;
	int			device;			/* cuda ordinal */
	int			variant;		/* CUDA kernel variant, 1 = v1 */
	kb_impl_id	impl;			/* kbench's own implementation (impl.own), resolved by kb_impl_resolve */
	int			ext;			/* KB_EXT_NONE (kbench's own), KB_EXT_PYTHON, KB_EXT_LIBRARY */
	bool		ext_builtin;	/* huggingface, torch, liger (kernels/python/kbench_builtin.py), or a provider */
	const struct kb_provider *ext_provider; /* one of Liger's other providers (kb_providers), or NULL */
	const char *ext_name;		/* the implementation's name (the request's impl) */
	const char *ext_entry;		/* "python:/dir/f.py:fn", "library:/dir/l.so:sym"; NULL when builtin */
} kb_case;

enum { KB_EXT_NONE = 0, KB_EXT_PYTHON = 1, KB_EXT_LIBRARY = 2 };

/* cost.c: the bytes and FLOPs of one call of the case's pass, from the registry's formulas. */
bool		kb_case_cost(const kb_case *cs, double *bytes, double *flops, char *err, size_t errlen);

/* Parse and validate a request into a case (no device access): parse.c. */
kb_status	kb_parse_case(const kb_request *req, kb_case *cs, char *err, size_t errlen);

/* snprintf into err (when err and errlen), ignoring truncation. */
void		kb_seterr(char *err, size_t errlen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
/* snprintf into res->message. */
void		kb_setmsg(kb_result *res, const char *fmt,...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ plan (plan.c) */

/* Fill c (shapes, dtypes) and p (initialisers) for the case. */
void		kb_plan_call(const kb_case *cs, kb_call *c, kb_plan *p);
/* Bytes of every tensor and the workspace of a planned call. */
int64_t		kb_call_bytes(const kb_call *c);
/* The protocol of a request: its own settings, else the defaults (the flush: the device's). */
typedef struct kb_protocol
{
	double		warmup_ms;
	double		rep_ms;
	int64_t		flush;			/* bytes cleared before each timed call */
	int64_t		max_samples;
	int64_t		min_samples;	/* at most max_samples */
	bool		adaptive;		/* stop by the noise (kb_meter_adaptive), not the rep_ms count */
	double		noise_target;	/* stdrel to reach, a fraction (0.005: 0.5%) */
	double		noise_ceiling;	/* stdrel above which "converged" does not count: 10 x noise_target */
	double		max_ms;			/* the sampling phase's longest, adaptive; 0: 4 x the minimum's time */
	bool		cuda_graph;		/* each sample a CUDA graph of calls, its clears subtracted (measure.c) */
} kb_protocol;
void		kb_protocol_of(const kb_request *req, bool cuda, kb_protocol *p);
/*
 * The protocol's cuda_graph: each sample is one CUDA graph of as many calls
 * as the five-call estimate says take KB_GRAPH_NS, from 1 to
 * KB_GRAPH_MAX_CALLS (kb_graph_calls, measure.c).
 */
#define KB_GRAPH_NS 1e6
#define KB_GRAPH_MAX_CALLS 1024
int64_t		kb_graph_calls(double call_ns);
/* Refuse what cannot fit on the case's device before anything is allocated. */
kb_status	kb_check_fit(const kb_case *cs, int64_t flush, char *err, size_t errlen);

/* ------------------------------------------------------------ measurement (measure.c) */

/* The timeout of one call: the time left to the deadline, within [1 s, 120 s]. */
double		kb_call_timeout(const kb_request *req);
/* A backend return code as a status, with the backend's message in res. */
kb_status	kb_be_status(kb_backend *be, int rc, kb_result *res, const char *what);

/* Reports progress to the request's callback: at once when the phase changes, else at most every 100 ms. */
typedef struct kb_reporter
{
	const kb_request *req;
	int64_t		last_ns;
	kb_run_phase last_phase;
} kb_reporter;
void		kb_report(kb_reporter *r, kb_run_phase phase, double fraction, double rest_s);

/*
 * One side's measurement: the do_bench loop in steps, so that kb_run runs it
 * straight through and kb_compare interleaves two.  kb_meter_start makes the
 * first call and the five-call estimate and turns the protocol's times into
 * nwarm and nrep (at least min_samples); kb_meter_warm makes the warm-up
 * calls; kb_meter_sample n timed calls appended to res's samples (their
 * median, of the unthrottled ones, in *block_median); kb_meter_finish drops
 * throttled samples and computes res->stats.  Progress: each step reports
 * its phase, fractions from f0 to f1, and rest_after seconds past its end.
 */
/*
 * The guard against implementations that answer without doing the work
 * (measure.c): KB_INPUT_SETS input sets (set 0 from the request's seed, the
 * others from seeds drawn with getrandom()) cycled through the timed calls,
 * and up to KB_CHECKED_CALLS timed calls, chosen with getrandom() before the
 * timing, whose outputs are copied to the host the moment the call returns
 * and checked against the reference for their own inputs.  The sets cost
 * (KB_INPUT_SETS - 1) times the inputs' bytes on the device (or the shared
 * mapping of a child), plus as much of what a prepare call leaves for the
 * timed calls (kbench's own: layer_norm backward's saved forward); the check
 * one host copy of the call's tensors.
 */
#define KB_INPUT_SETS 4
#define KB_CHECKED_CALLS 16
typedef struct kb_guard
{
	const kb_op *op;
	kb_plan    *plan;
	kb_call    *c;				/* the call whose input pointers are rotated */
	int			nsets;			/* 1: no rotation (not opened) */
	void	   *set[KB_INPUT_SETS][KB_MAX_TENSORS];	/* set 0: the call's own tensors */
	uint64_t	seed[KB_INPUT_SETS];
	int			current;		/* the set c points at */
	int64_t		at[KB_CHECKED_CALLS];	/* timed calls to check, sorted */
	int			nat;
	void	   *host[KB_MAX_TENSORS];	/* the host copy a checked call is read into */
} kb_guard;
/* Allocate and fill the other input sets (after the prepare call): a status, message in res. */
kb_status	kb_guard_open(kb_guard *g, kb_backend *be, const kb_case *cs, kb_call *c, kb_plan *plan,
						  uint64_t seed, double timeout_s, kb_result *res);
/* Point the call back at set 0 and free the others. */
void		kb_guard_close(kb_guard *g, kb_backend *be);

typedef struct kb_meter
{
	kb_backend *be;
	const kb_call *c;
	const kb_request *req;
	kb_result  *res;
	kb_reporter *rep;
	void	   *flush;
	kb_protocol pr;
	double		est_ns;			/* per call, flush included (the five-call estimate) */
	double		call_ns;		/* per call without the flush (the estimate's op time) */
	int64_t		nwarm;
	int64_t		nrep;
	int64_t		cap;			/* samples allocated */
	double	   *clk;
	double		f0,
				f1,
				rest_after;
	const char *stop_rule;		/* set by kb_meter_adaptive (NULL: a fixed count) */
	int64_t		graph_calls;	/* calls in each sample's CUDA graph (the protocol's cuda_graph); 0: one call a sample */
	kb_guard   *guard;			/* NULL: inputs never change, no timed call checked */
} kb_meter;
void		kb_meter_init(kb_meter *m, kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res,
						  kb_reporter *rep, void *flush, const kb_protocol *pr);
kb_status	kb_meter_start(kb_meter *m);
kb_status	kb_meter_warm(kb_meter *m);
kb_status	kb_meter_sample(kb_meter *m, int64_t n, double *block_median);
void		kb_meter_finish(kb_meter *m);
/*
 * Adaptive stopping (docs/KERNELS.md, Stopping): after kb_meter_start and
 * kb_meter_warm, the rep_ms count of samples (the minimum of samples and
 * time), then blocks of more until the stop rule says enough; the rule in
 * m->stop_rule.
 */
kb_status	kb_meter_adaptive(kb_meter *m);
/* The stop rule's decision after a block: NULL to go on, else the rule's name (measure.c). */
const char *kb_stop_rule(const kb_protocol *pr, double stdrel, const double *history, int nhistory,
						 int64_t nsamples, double elapsed_ms, double max_ms);
/* stdev / mean of n samples (stats.c). */
double		kb_stdrel(const double *v, int64_t n);
/* Choose (again) the timed calls to check among the first n (kb_meter_start: among nrep). */
void		kb_meter_choose(kb_meter *m, int64_t n);
/* After the last timed call: back to input set 0, one untimed call (the guard's; nothing without one). */
kb_status	kb_meter_settle(kb_meter *m);
/* Warm up, estimate, time (all four steps); fills res->samples_ns and res->stats. */
kb_status	kb_measure(kb_backend *be, const kb_call *c, const kb_request *req, kb_result *res,
					   kb_reporter *rep, void *flush, const kb_protocol *pr, kb_guard *guard);

/* ------------------------------------------------------------ JSON text (text.c) */

/*
 * Text kbench hands out (manifests, listings, the python setup line): the
 * core's writer (ki_jw, core/json_write.c) over a malloc arena of its own.
 */
typedef struct kb_text
{
	ki_arena	a;
	ki_jw		w;
} kb_text;

/* Start an empty document; returns &t->w. */
ki_jw	   *kb_text_open(kb_text *t);
/* Take the text (NUL-terminated, malloc'd; NULL when out of memory) and release the arena. */
char	   *kb_text_take(kb_text *t);

/* ------------------------------------------------------------ manifests */

/* The OperationSpec / WorkloadCase text built from the registry tables (workload.c). */
char	   *kb_operation_text(const kb_op *op);
char	   *kb_workload_text(const kb_case *cs, const char *operation_digest);

/* manifests.c: the operation, workload and implementation manifests of a case into res. */
bool		kb_describe_case(const kb_case *cs, const kb_request *req, kb_result *res);
/* manifests.c: build, validate and digest every manifest of a finished (or failed) run. */
void		kb_finish_manifests(const kb_case *cs, const kb_request *req, kb_backend *be, kb_result *res,
								const kb_protocol *pr);

/*
 * text.c: validate + normalize + canonicalize a manifest text through the identity
 * core.  On success *canon is the canonical text (malloc'd) and digest is
 * filled; on failure err says the first problem (path: message).
 */
bool		kb_manifest_finish(const char *text, char **canon, char digest[72], char *err, size_t errlen);

/* ------------------------------------------------------------ statistics */

/* Quantile by linear interpolation of sorted values (numpy "linear"). */
double		kb_quantile(const double *sorted, int64_t n, double q);
/* Median, quantiles, mean, min, max, MAD and the CI of the median of v[0..n). */
void		kb_compute_stats(const double *v, int64_t n, kb_stats *st);
/* 1-based order statistics (lo, hi) bounding a >=95% interval of the median. */
void		kb_median_ci_ranks(int64_t n, int64_t *lo, int64_t *hi);

/* ------------------------------------------------------------ backends */

/*
 * A backend: where a run's tensors live, how one call is made, timed and
 * waited for.  Three implement it: cpu (backend_cpu.c: host memory, the
 * operation's C implementation, CLOCK_MONOTONIC), cuda (backend_cuda.c:
 * libkbench_cuda.so, CUDA events) and child (backend_child.c: another
 * implementation in a child process, the tensors in shared memory, the child
 * timing each call).  kb_be_open (backend.c) chooses one per run from the
 * case; everything after it calls through be->ops and never asks which.
 */
typedef struct kb_backend_ops
{
	const char *name;			/* "cpu", "cuda", "child" */
	void		(*close) (kb_backend *be);
	int			(*alloc) (kb_backend *be, size_t bytes, void **p);
	void		(*free) (kb_backend *be, void *p);
	int			(*fill) (kb_backend *be, void *p, int dtype, int64_t rows, int64_t cols, int init,
						 double scale, int64_t modulo, uint64_t seed, uint32_t stream);
	int			(*to_host) (kb_backend *be, void *dst, const void *src, size_t bytes);
	/* Once the tensors are allocated and filled, before the first call (NULL: nothing to start). */
	int			(*start) (kb_backend *be, const kb_call *c, kb_plan *plan);
	int			(*call) (kb_backend *be, const kb_call *c, int phase);
	int			(*sync) (kb_backend *be, double timeout_s);
	int			(*time_one) (kb_backend *be, const kb_call *c, void *flush, size_t flush_bytes,
							 double *op_ns, double *total_ns, double timeout_s);
	/* A sample of ncalls calls in a CUDA graph (kbc_api's time_graph; NULL: per call only). */
	int			(*time_graph) (kb_backend *be, const kb_call *c, int64_t ncalls, void *flush, size_t flush_bytes,
							   double *op_ns, double *total_ns, double timeout_s);
	/* The peak memory of one call (NULL: the call's tensors and workspace, kb_call_bytes). */
	int			(*peak_memory) (kb_backend *be, int64_t *bytes);
	/* Current SM clock in MHz, or -1 when it cannot be read. */
	double		(*clock_mhz) (kb_backend *be);
	/*
	 * The call's input pointers changed (the guard's rotation): tell the
	 * implementation, untimed, before the next call (NULL: the pointers are
	 * passed with every call).
	 */
	int			(*inputs) (kb_backend *be, const kb_call *c);
	/* kbench's own cost of one call, an empty round trip, in ns (NULL: none, the call is a function call). */
	int			(*overhead) (kb_backend *be, double *ns);
	/* A cancel can end a call inside it (the child's): a run that failed while stopping was canceled. */
	bool		cancel_inside_call;
} kb_backend_ops;

struct kb_backend
{
	const kb_backend_ops *ops;	/* chosen once, by kb_be_open */
	bool		cuda;			/* the device is a GPU (its facts below), whichever backend drives it */
	int			device;
	const kbc_api *api;
	void	   *ctx;
	kbc_device_info info;
	void	   *nvml;			/* NVML device handle, or NULL */
	double		clock_default_mhz;
	char		err[512];
	struct kb_ext *ext;			/* the child backend's state (backend_child.c), or NULL */
	const kb_request *req;		/* the run's request (kb_be_open): the fill polls its cancel */
};

/*
 * Open the backend of a case: the child's for another implementation (its
 * tensors sized for flush_bytes of flush), else the cuda or cpu one.  On
 * failure be->err says why and kb_be_close is still called.
 */
int			kb_be_open(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes);
int			kb_be_open_cpu(kb_backend *be);
int			kb_be_open_cuda(kb_backend *be, int device);
int			kb_be_open_child(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes);

static inline void
kb_be_close(kb_backend *be)
{
	if (be->ops)
		be->ops->close(be);
}

static inline int
kb_be_alloc(kb_backend *be, size_t bytes, void **p)
{
	return be->ops->alloc(be, bytes, p);
}

static inline void
kb_be_free(kb_backend *be, void *p)
{
	if (p)
		be->ops->free(be, p);
}

static inline int
kb_be_fill(kb_backend *be, void *p, int dtype, int64_t rows, int64_t cols, int init,
		   double scale, int64_t modulo, uint64_t seed, uint32_t stream)
{
	return be->ops->fill(be, p, dtype, rows, cols, init, scale, modulo, seed, stream);
}

static inline int
kb_be_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	return be->ops->to_host(be, dst, src, bytes);
}

static inline int
kb_be_start(kb_backend *be, const kb_call *c, kb_plan *plan)
{
	return be->ops->start ? be->ops->start(be, c, plan) : KBC_OK;
}

static inline int
kb_be_call(kb_backend *be, const kb_call *c, int phase)
{
	return be->ops->call(be, c, phase);
}

static inline int
kb_be_sync(kb_backend *be, double timeout_s)
{
	return be->ops->sync(be, timeout_s);
}

static inline int
kb_be_time_one(kb_backend *be, const kb_call *c, void *flush, size_t flush_bytes,
			   double *op_ns, double *total_ns, double timeout_s)
{
	return be->ops->time_one(be, c, flush, flush_bytes, op_ns, total_ns, timeout_s);
}

static inline int
kb_be_time_graph(kb_backend *be, const kb_call *c, int64_t ncalls, void *flush, size_t flush_bytes,
				 double *op_ns, double *total_ns, double timeout_s)
{
	if (!be->ops->time_graph)
	{
		snprintf(be->err, sizeof(be->err), "the %s backend has no CUDA-graph timing", be->ops->name);
		return KBC_ERROR;
	}
	return be->ops->time_graph(be, c, ncalls, flush, flush_bytes, op_ns, total_ns, timeout_s);
}

static inline double
kb_be_clock_mhz(kb_backend *be)
{
	return be->ops->clock_mhz(be);
}

/* The host's tensors (fill.c): the cpu and child backends', and the tests'. */
void		kb_fill_host(void *p, int dtype, int64_t rows, int64_t cols, int init,
						 double scale, int64_t modulo, uint64_t seed, uint32_t stream);
int			kb_host_fill(kb_backend *be, void *p, int dtype, int64_t rows, int64_t cols, int init,
						 double scale, int64_t modulo, uint64_t seed, uint32_t stream);

/* backend_cuda.c: load libkbench_cuda.so once; NULL (and why) when unavailable. */
const kbc_api *kb_cuda_api(char *why, size_t whylen);
/* backend_cuda.c: libkbench_cuda.so's kbc_probe, or NULL (not loaded, or a library without it). */
kbc_probe_fn kb_cuda_probe_fn(void);
/* backend_cuda.c: what the environment manifest says of cuda:device (api, info, nvml, default clock) into be. */
int			kb_cuda_describe(kb_backend *be, int device);

/* NVML through dlopen (backend_cuda.c); every function fails softly. */
void	   *kb_nvml_device(const char *pci_bus_id);
double		kb_nvml_sm_clock(void *dev);
double		kb_nvml_default_sm_clock(void *dev);
bool		kb_nvml_driver_version(char *out, size_t len);

/* ------------------------------------------------------------ other implementations (impl*.c) */

/* Recognise a python/library implementation in req; 1 (cs filled), 0 (not one), -1 (error in err). */
int			kb_ext_parse(const kb_request *req, kb_case *cs, char *err, size_t errlen);
/* The ImplementationRevision text of an ext case (be: the run's backend, for the child's versions; may be NULL). */
char	   *kb_ext_implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
									   const kb_backend *be, char *err, size_t errlen);

/* ------------------------------------------------------------ environment */

/* The ExecutionEnvironment manifest text of the backend's device. */
char	   *kb_environment_text(const kb_backend *be);

/* ------------------------------------------------------------ the host (host.c) */

int64_t		kb_now_ns(void);	/* CLOCK_MONOTONIC */
/*
 * The directory of the object that holds ADDR (kbench, or the extension's .so), symbolic
 * links resolved: `make install` puts kbench into PostgreSQL's bindir as a link to the
 * program in pkglibdir, where libkbench_cuda.so and kernelindex_python/ lie.  False when
 * it cannot be found.
 */
bool		kb_object_dir(const void *addr, char *out, size_t outlen);

/* Must the run stop now?  A cancel, or the caller's stop callback (the worker's postmaster died). */
static inline bool
kb_req_stopping(const kb_request *req)
{
	return (req->cancel && *req->cancel) || (req->stop && req->stop(req->stop_arg));
}

/* ------------------------------------------------------------ checking helpers (ops/common.c) */

typedef struct kb_cmp
{
	double		rtol;
	double		atol_factor;	/* atol = atol_factor * max |reference| of the tensor */
	double		u_out;			/* unit roundoff of the output dtype (2^-24 fp32, 2^-8 bf16) */
	double		max_abs;
	double		max_rel;
	double		worst;			/* the largest |got - ref| / tolerance; pass: <= 1 */
	char		worst_at[64];	/* the value that set it: "y[17][3]" (row 17, column 3) */
	int64_t		row;			/* the row being compared (kb_cmp_tol names values by it), or -1 */
	int64_t		n;
	int64_t		matched;
	char		detail[256];
} kb_cmp;

void		kb_cmp_init(kb_cmp *m, int dtype);

/*
 * Derived tolerances (docs/KERNELS.md, "Tolerances").  KB_U32 is the unit
 * roundoff of fp32 arithmetic.  kb_gamma(n) bounds the relative error of a
 * sum of n terms accumulated in fp32, relative to the sum of the terms'
 * magnitudes: sqrt(n) u (the probabilistic bound of Higham and Mary, which
 * holds for sequential, blocked and tree orders alike) plus 4 u for the
 * operations around it.
 */
#define KB_U32 (1.0 / 16777216.0)
double		kb_gamma(int64_t n);
/* Compare with a tolerance given per value (tol[i] > 0): |got - ref| <= tol[i]. */
void		kb_cmp_tol(kb_cmp *m, const char *name, const double *ref, const double *got,
					   const double *tol, int64_t n);
void		kb_cmp_finish(const kb_cmp *m, kb_correctness *out);
/* An output the check needs that the implementation did not return: a failed value, named. */
void		kb_cmp_missing(kb_cmp *m, const char *name);
/*
 * Did the implementation return tensor ti of c?  Reads one byte of it first, so that a python
 * implementation's outputs have been read back (which sets plan->not_returned); -1 when that read
 * fails (be->err says why).
 */
int			kb_returned(kb_backend *be, const kb_call *c, const kb_plan *p, int ti);

/* Rows [row0, row0 + nrows) of tensor ti of c, converted to double. */
int			kb_fetch_rows(kb_backend *be, const kb_call *c, int ti, int64_t row0, int64_t nrows, double *out);
/* A deterministic sample of at most max distinct rows out of rows (sorted). */
int			kb_sample_rows(int64_t rows, int max, int64_t *out);
/* Read element i of a host buffer of dtype as double, and store. */
double		kb_get(const void *p, int dtype, int64_t i);
void		kb_set(void *p, int dtype, int64_t i, double v);

void	   *kb_xmalloc(size_t n);	/* malloc or NULL, never aborts */

/* ------------------------------------------------------------ a run's steps (run.c) */

/*
 * What kb_run does around the measurement: kb_session_open parses the case,
 * opens the backend and sets up the call (tensors filled from the seed, a
 * child started, the prepare call); final is set when the run ended there
 * without manifests (res->status says why), else the returned status says
 * whether to measure.  kb_session_finish checks the outputs, notes too few
 * samples and builds the manifests for the measurement's status;
 * kb_session_close frees everything.
 */
typedef struct kb_session
{
	kb_case		cs;
	kb_backend	be;
	kb_call		c;
	kb_plan		plan;
	kb_protocol pr;
	kb_guard	guard;
	void	   *flushbuf;
	int			allocated;
	bool		opened;
	bool		final;
	const kb_request *req;
	kb_result  *res;
	kb_reporter *rep;
} kb_session;
kb_status	kb_session_open(kb_session *s, const kb_request *req, kb_result *res, kb_reporter *rep);
kb_status	kb_session_finish(kb_session *s, kb_status st);
void		kb_session_close(kb_session *s);

/* impl_name.c: the built-in python implementations' names (huggingface, torch, liger) */
extern const char *const kb_builtin_python[];
/* KB_INVALID_REQUEST with the reason where a built-in baseline cannot pass its check (impl.c: bf16 on the CPU). */
kb_status	kb_check_numerics(const kb_case *cs, char *err, size_t errlen);
/* The bytes a run's peak memory counts, for every kind (docs/KERNELS.md, "Peak memory"). */
int64_t		kb_call_io_bytes(const kb_call *c, const kb_plan *p);
extern const int kb_builtin_python_count;

/*
 * impl_name.c: Liger's other providers (the kernel_provider column of Liger's
 * results), each a built-in python implementation of the operations Liger
 * benchmarks it with only (kernels/python/kbench_providers.py builds them).
 * One entry per provider and operation: megatron is Megatron-Core's RMSNorm
 * for megatron_rms_norm and its bias_swiglu_impl for megatron_swiglu.
 */
typedef struct kb_provider
{
	const char *name;			/* Liger's kernel_provider, kbench's implementation name */
	const char *op;				/* the operation Liger benchmarks it with */
	const char *library;		/* the python module it needs beside torch, or NULL */
	const char *script;			/* Liger's benchmark/scripts/ file that builds it */
	const char *builds;			/* what it is, as that script builds it */
} kb_provider;
extern const kb_provider kb_providers[];
extern const int kb_providers_count;
/* the entry of name for op; NULL where name is no provider or does not serve op */
const kb_provider *kb_provider_for(const char *name, const char *op);
/* whether name is one of the providers' names (for any operation) */
bool		kb_provider_name(const char *name);
/* the operations name serves, ", "-separated, into out */
void		kb_provider_ops(const char *name, char *out, size_t len);
/* impl_name.c: "huggingface", "python", ... (an ext case's name) for run names and messages */
const char *kb_ext_label(const kb_case *cs);
/* impl_name.c: a name users may give an implementation (lower-case letters, digits, '.', '_', '-') */
bool		kb_impl_valid_name(const char *s);
/* text.c: lower-case letters and digits, every other run of characters one sep ('-' in manifest names) */
void		kb_slug(const char *in, char *out, size_t len, char sep);

/*
 * The operations' CPU references for one row (or token), in double
 * precision, defined in kernels/ops/<op>.c; the unit tests
 * (test/kernels/test_kernels.c) call them directly.
 */
void		kb_layer_norm_ref_row(const double *x, const double *w, const double *b, int64_t H,
								  double *y, double *mean, double *rstd);
void		kb_layer_norm_ref_row_backward(const double *x, const double *w, const double *dy, int64_t H,
										   double *dx, double *dw, double *db);
double		kb_megatron_ce_ref_row(const double *z, int64_t V, int64_t target, double g, double *grad);
double		kb_jsd_ref_row(const double *x, const double *y, int64_t V, double beta, double *dx);
void		kb_jsd_ref_row_backward(const double *x, const double *dx, int64_t V, double *dz);
double		kb_distill_jsd_ref_token(const double *zs, const double *zt, int64_t V, int64_t target, int64_t T,
									 double *dz);

#endif							/* KB_INT_H */
