/*
 * liger_internal.h: the tables behind the Liger mapping (kernels, GPUs,
 * providers) and the helpers the per-kernel binders share.  Not installed.
 */
#ifndef KI_LIGER_INTERNAL_H
#define KI_LIGER_INTERNAL_H

#include "liger.h"

#define KI_LIGER_REPO_URL "https://github.com/linkedin/Liger-Kernel"

/* Bounds of the tables (checked by the test). */
#define KI_LIGER_MAX_DIMS KI_SPEC_MAX_DIMS
#define KI_LIGER_MAX_AXES KI_SPEC_MAX_AXES
#define KI_LIGER_MAX_SCALARS KI_SPEC_MAX_SCALARS

/*
 * One tensor argument of an operation (the core's ki_spec_tensor).  Each
 * dim is an axis name or a decimal literal ("1"); NULL ends the shape.
 * dtype NULL means "the workload's float dtype" (written "float" in the
 * OperationSpec, and the bound dtype such as "bf16" in the WorkloadCase);
 * otherwise a fixed token.
 */
typedef ki_spec_tensor ki_liger_tensor;

/* A derived axis: name and an expression over other axes (+ - * // % ()). */
typedef ki_spec_axis ki_liger_derived;

/*
 * What a binder learns from one row: the integer axes in the order the
 * kernel declares them (that order is the one titles use), the float dtype
 * of the "cfg" tensors, and fp32 scalars.
 */
typedef struct ki_liger_binding
{
	int			naxes;
	const char *axis[KI_LIGER_MAX_AXES];
	double		value[KI_LIGER_MAX_AXES];
	const char *dtype;
	int			nscalars;
	const char *scalar[KI_LIGER_MAX_SCALARS];
	double		scalar_value[KI_LIGER_MAX_SCALARS];
	const char *reason;			/* set by a binder that fails */
} ki_liger_binding;

/* What a binder reads: the swept x, its axis name, and the parsed config. */
typedef struct ki_liger_input
{
	ki_arena   *arena;
	double		x;
	const char *x_name;
	const ki_value *config;		/* a JSON object */
} ki_liger_input;

typedef struct ki_liger_kernel ki_liger_kernel;
typedef bool (*ki_liger_bind_fn) (const ki_liger_kernel *k, const ki_liger_input *in,
								  ki_liger_binding *b);

struct ki_liger_kernel
{
	const char *csv_name;		/* kernel_name in the CSV */
	const char *slug;			/* OperationSpec name */
	const char *family;
	const char *title;
	const char *description;
	const ki_liger_tensor *inputs;	/* ended by an entry with name NULL */
	const ki_liger_tensor *outputs;
	const ki_liger_derived *derived;	/* NULL, or ended by name NULL */
	ki_liger_bind_fn bind;
	const char *arg;			/* a binder parameter (an activation, a level) */
};

/* Kernel tables: liger_kernels.c and liger_kernels_losses.c. */
extern const ki_liger_kernel ki_liger_kernels_core[];
extern const ki_liger_kernel ki_liger_kernels_losses[];
const ki_liger_kernel *ki_liger_kernel_find(const char *csv_name);

/* Iterate every kernel: returns NULL past the end. */
const ki_liger_kernel *ki_liger_kernel_at(size_t i);

/* GPU rules: liger_gpus.c. */
typedef struct ki_liger_hardware
{
	const char *vendor;
	const char *product;
	const char *architecture;
	const char *form_factor;	/* NULL when the name carries none */
} ki_liger_hardware;

bool		ki_liger_gpu_lookup(ki_arena *a, const char *gpu_name, ki_liger_hardware *hw);

/* ------------------------------------------------------ binder helpers */

/* A positive integer member (a JSON number with no fraction), else 0. */
double		ki_liger_cfg_int(const ki_value *cfg, const char *key);
/* A positive finite number member, else 0. */
double		ki_liger_cfg_pos(const ki_value *cfg, const char *key);
/* Any number member: true and *out when present and a number. */
bool		ki_liger_cfg_num(const ki_value *cfg, const char *key, double *out);
/* The dtype token of a "torch.bfloat16"-style member, else NULL. */
const char *ki_liger_cfg_dtype(const ki_value *cfg, const char *key);
/* True when the member is a string equal to s. */
bool		ki_liger_cfg_str_is(const ki_value *cfg, const char *key, const char *s);
/* True when the member is the boolean b. */
bool		ki_liger_cfg_bool_is(const ki_value *cfg, const char *key, bool b);

/* x is a multiple of y (both positive integers no larger than 2^53). */
bool		ki_liger_divisible(double x, double y);

/* Append an axis / a scalar to a binding. */
void		ki_liger_bind_axis(ki_liger_binding *b, const char *axis, double v);
void		ki_liger_bind_scalar(ki_liger_binding *b, const char *name, double v);
/* Record why a binder failed; always returns false. */
bool		ki_liger_bind_fail(const ki_liger_input *in, ki_liger_binding *b, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------ mapping (liger_map.c tables) */

/* The timed pass of each kernel_operation_mode, as the protocol states it. */
typedef struct ki_liger_mode
{
	const char *mode;
	const char *timed;
} ki_liger_mode;

/* kernel_provider -> who implements it, in what, under which license. */
typedef struct ki_liger_provider
{
	const char *provider;
	const char *title;			/* "<kernel title> · <this>" */
	const char *language;
	const char *description;
	const char *declared;		/* declared license */
	const char *concluded;		/* concluded license, NULL when not concluded */
	const char *pip_package;	/* NULL when not a pip build of Liger */
	bool		baseline;		/* an eager reference the benchmark compares against */
} ki_liger_provider;

/* ------------------------------------------------------ text (liger_text.c) */

/* Concatenate NUL-terminated strings (ended by NULL) into the arena. */
char	   *ki_liger_cat(ki_arena *a,...);
/* printf into the arena (at most 599 bytes). */
const char *ki_liger_afmt(ki_arena *a, const char *fmt,...) __attribute__((format(printf, 2, 3)));
/* A decimal number as JavaScript's Number() reads one from text. */
bool		ki_liger_parse_number(const char *s, double *out);
/* Math.round: the nearest integer, halves toward +infinity. */
double		ki_liger_js_round(double v);

/* ------------------------------------------------------ time (liger_time.c) */

/* A CSV timestamp as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC), or NULL. */
const char *ki_liger_utc_instant(ki_arena *a, const char *ts);

/* ------------------------------------------------------ axes (liger_expr.c) */

/* Bound axes: the row's, then the derived ones. */
typedef struct ki_liger_env
{
	int			n;
	const char *name[KI_LIGER_MAX_AXES * 2];
	double		value[KI_LIGER_MAX_AXES * 2];
} ki_liger_env;

bool		ki_liger_env_get(const ki_liger_env *env, const char *name, size_t len, double *v);
/* Evaluate a derived-axis expression over env; false when it is not one or an axis is unbound. */
bool		ki_liger_eval_expression(const char *text, const ki_liger_env *env, double *out);

/* ------------------------------------------------------ builders (liger_build.c) */

/* One row's manifests under construction: the result they fill, and why one failed. */
typedef struct ki_liger_build
{
	ki_arena   *a;
	ki_liger_result *out;
	const char *reason;
} ki_liger_build;

/* What a speed row measured. */
typedef struct ki_liger_timing
{
	double		ms50,
				ms20,
				ms80;
	bool		spread;
	const char *observed_at;
} ki_liger_timing;

/* "axis<value>-..." over the axes sorted by name, then "-<dtype>". */
const char *ki_liger_case_key(ki_arena *a, const ki_liger_binding *b);
/* kernel/mode/provider/gpu slug/case key/timestamp slug: a row's identity. */
const char *ki_liger_external_id(ki_arena *a, const ki_liger_kernel *k, const ki_liger_row *row, const char *key);
/* Each builds, validates and digests one manifest into bd->out; false with bd->reason. */
bool		ki_liger_build_operation(ki_liger_build *bd, const ki_liger_kernel *k);
bool		ki_liger_build_implementation(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_provider *p);
bool		ki_liger_build_workload(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_binding *b);
bool		ki_liger_build_protocol(ki_liger_build *bd, const ki_liger_mode *m);
bool		ki_liger_build_environment(ki_liger_build *bd, const char *gpu_name, const ki_liger_hardware *hw);
bool		ki_liger_build_run(ki_liger_build *bd, const ki_liger_kernel *k, const ki_liger_row *row,
							   const char *key, const ki_liger_timing *t);

#endif							/* KI_LIGER_INTERNAL_H */
