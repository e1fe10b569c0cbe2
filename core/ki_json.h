/*
 * ki_json.h: the identity core of kernelindex in plain C11.
 *
 * A strict JSON parser (duplicate members, depth and size bounds), the
 * RFC 8785 canonical writer, SHA-256, and the kernelindex.dev/v1alpha1
 * manifest validator and normalizer.  No PostgreSQL dependency: the
 * extension (src/), the kbench CLI (kernels/) and the fuzzers (test/fuzz/)
 * all link this same code.  Nothing here longjmps or exits; every function
 * reports failure through its return value and a ki_errors list.
 */
#ifndef KI_JSON_H
#define KI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what is read (IDENTITY.md section 4). */
#define KI_MAX_DOCUMENT_BYTES (1024 * 1024)
#define KI_MAX_DEPTH 64

/* ---------------------------------------------------------------- memory */

/*
 * Every allocation of the core goes through an arena.  The arena takes its
 * blocks from alloc_fn (palloc inside the server, malloc elsewhere) and gives
 * them back through free_fn when it is reset (free_fn may be NULL when the
 * blocks die with a memory context).
 */
typedef void *(*ki_alloc_fn) (void *ctx, size_t size);
typedef void (*ki_free_fn) (void *ctx, void *ptr);

typedef struct ki_arena_block ki_arena_block;
typedef struct ki_arena
{
	ki_alloc_fn alloc_fn;
	ki_free_fn	free_fn;
	void	   *ctx;
	ki_arena_block *blocks;
	char	   *cur;
	size_t		left;
	bool		failed;			/* an allocation failed; results are void */
} ki_arena;

void		ki_arena_init(ki_arena *a, ki_alloc_fn alloc_fn, ki_free_fn free_fn, void *ctx);
/* An arena over malloc/free. */
void		ki_arena_init_malloc(ki_arena *a);
void	   *ki_alloc(ki_arena *a, size_t size);
char	   *ki_strndup(ki_arena *a, const char *s, size_t n);
void		ki_arena_reset(ki_arena *a);
/* Forget every allocation but keep the oldest block for reuse. */
void		ki_arena_rewind(ki_arena *a);

/* A growable byte buffer living in an arena. */
typedef struct ki_buf
{
	ki_arena   *arena;
	char	   *data;
	size_t		len;
	size_t		cap;
} ki_buf;

void		ki_buf_init(ki_buf *b, ki_arena *a, size_t initial);
void		ki_buf_put(ki_buf *b, const char *s, size_t n);
void		ki_buf_puts(ki_buf *b, const char *s);
/* Append one byte. */
void		ki_buf_putc_slow(ki_buf *b, char c);
static inline void
ki_buf_putc(ki_buf *b, char c)
{
	if (b->len + 2 <= b->cap)
		b->data[b->len++] = c;
	else
		ki_buf_putc_slow(b, c);
}

/* NUL-terminates without counting the NUL in len. */
const char *ki_buf_cstr(ki_buf *b);

/* ---------------------------------------------------------------- errors */

/* One problem found in a document: where, which rule, what it means. */
typedef struct ki_error
{
	const char *path;			/* "spec.timing.latencyNs.median", "" for the root */
	const char *rule;			/* "required", "pattern", "duplicate_member", ... */
	const char *message;		/* lower-case sentence fragment */
	long		offset;			/* byte offset for parse errors, else -1 */
} ki_error;

/* Kinds of failure, mapped onto SQLSTATEs by the extension. */
typedef enum ki_status
{
	KI_OK = 0,
	KI_ERR_SYNTAX,				/* not JSON, or not UTF-8 */
	KI_ERR_DUPLICATE,			/* duplicate member name */
	KI_ERR_TOO_LARGE,			/* document over KI_MAX_DOCUMENT_BYTES */
	KI_ERR_TOO_DEEP,			/* nesting deeper than KI_MAX_DEPTH */
	KI_ERR_NUMBER,				/* NaN, infinity or a number out of double range */
	KI_ERR_INVALID,				/* schema or identity rule violated */
	KI_ERR_NOMEM
} ki_status;

typedef struct ki_errors
{
	ki_arena   *arena;
	ki_error   *items;
	int			count;
	int			cap;
	ki_status	status;			/* status of the first error */
	bool		count_only;		/* only count problems (trial validation) */
} ki_errors;

void		ki_errors_init(ki_errors *e, ki_arena *a);
void		ki_errors_add(ki_errors *e, ki_status st, const char *path, const char *rule,
						  long offset, const char *fmt,...)
			__attribute__((format(printf, 6, 7)));

/*
 * Paths name a place in a document: members as ".name" (the root member
 * without the dot), array items as "[3]", and names that are not plain
 * identifiers as ["na.me"].  "spec.inputs[0].name".
 */
void		ki_path_key(ki_buf *b, const char *key, size_t len);
void		ki_path_index(ki_buf *b, size_t index);

/*
 * A path under construction, as frames on the C stack that point to their
 * parent: pushing costs nothing, and the text is made only for an error.
 * A frame names a member (key != NULL) or an array item (index).
 */
typedef struct ki_path
{
	const struct ki_path *parent;
	const char *key;
	size_t		keylen;
	size_t		index;
} ki_path;

/* The text of a path (NULL is the root, ""). */
const char *ki_path_render(ki_arena *a, const ki_path *p);

/* ---------------------------------------------------------------- values */

typedef enum ki_type
{
	KI_NULL,
	KI_FALSE,
	KI_TRUE,
	KI_NUMBER,
	KI_STRING,
	KI_ARRAY,
	KI_OBJECT
} ki_type;

typedef struct ki_value ki_value;
typedef struct ki_member ki_member;

/* Strings are UTF-8, not NUL-terminated by contract (they are in practice). */
typedef struct ki_str
{
	const char *ptr;
	size_t		len;
	bool		plain;			/* known to need no escape in JSON (no '"', '\\' or
								 * control character): written as is */
} ki_str;

struct ki_value
{
	ki_type		type;
	union
	{
		double		num;
		ki_str		str;
		struct
		{
			ki_value  **items;
			size_t		count;
		}			arr;
		struct
		{
			ki_member  *members;	/* in document order */
			size_t		count;
		}			obj;
	}			u;
};

struct ki_member
{
	ki_str		key;
	ki_value   *value;
};

/*
 * Parse JSON text strictly: RFC 8259 grammar, UTF-8 checked, duplicate
 * member names rejected (by path), at most KI_MAX_DOCUMENT_BYTES and
 * KI_MAX_DEPTH, numbers read as IEEE doubles (overflow to infinity is
 * rejected).  Returns NULL and fills errs on failure.
 */
ki_value   *ki_parse(ki_arena *a, const char *text, size_t len, ki_errors *errs);

/* Value constructors, for callers that build documents (jsonb, kbench). */
ki_value   *ki_new_value(ki_arena *a, ki_type t);
ki_value   *ki_new_number(ki_arena *a, double d);
ki_value   *ki_new_string(ki_arena *a, const char *s, size_t len);
/* Look up a member by name; NULL when absent. */
ki_value   *ki_get(const ki_value *obj, const char *key);
/* Check a document built by a caller: depth bound, finite numbers, UTF-8, duplicates. */
bool		ki_check_tree(const ki_value *v, ki_errors *errs);

/* ---------------------------------------------------------------- canonical */

/*
 * Compare two UTF-8 strings as arrays of UTF-16 code units (the order of
 * RFC 8785 and of a JavaScript sort).
 */
int			ki_utf16_cmp(const char *a, size_t alen, const char *b, size_t blen);

/*
 * Write a double as ECMAScript Number::toString does (shortest round trip,
 * plain decimal for 1e-6 <= |x| < 1e21, -0 as 0).  out must hold 32 bytes.
 * Returns the length; the caller must not pass NaN or infinities.
 */
int			ki_format_number(double d, char *out);
/* The same through printf and strtod alone, without the fast path. */
int			ki_format_number_slow(double d, char *out);
/* 10^0 .. 10^22, each exact in a double (json_canon.c) */
extern const double ki_exact_pow10[23];

/* Append the RFC 8785 form of v to out. */
void		ki_canonical(const ki_value *v, ki_buf *out);

/* ---------------------------------------------------------------- writer */

/*
 * The manifest writer (json_write.c), used by kbench and the Liger mapping:
 * JSON text in an arena, commas placed by the writer, numbers in the
 * canonical form.  The text is meant for ki_parse and the validator.
 */
typedef struct ki_jw
{
	ki_buf		buf;
	bool		need_comma;
} ki_jw;

void		ki_jw_init(ki_jw *w, ki_arena *a);
void		ki_jw_raw(ki_jw *w, const char *s);
void		ki_jw_obj(ki_jw *w);	/* { */
void		ki_jw_end_obj(ki_jw *w);	/* } */
void		ki_jw_arr(ki_jw *w);	/* [ */
void		ki_jw_end_arr(ki_jw *w);	/* ] */
void		ki_jw_key(ki_jw *w, const char *k);
void		ki_jw_str(ki_jw *w, const char *s);
void		ki_jw_num(ki_jw *w, double d);
void		ki_jw_int(ki_jw *w, int64_t v);
void		ki_jw_bool(ki_jw *w, bool b);
/* Splice already-valid JSON text as a value. */
void		ki_jw_json(ki_jw *w, const char *json);
/* Shorthands: key then value. */
void		ki_jw_kstr(ki_jw *w, const char *k, const char *s);
void		ki_jw_kint(ki_jw *w, const char *k, int64_t v);
void		ki_jw_knum(ki_jw *w, const char *k, double d);
/*
 * A manifest's envelope: {"apiVersion":..,"kind":..,"metadata":{"name":..,
 * "title":.. with the metadata object left open for more members;
 * ki_jw_spec closes it and opens "spec".
 */
void		ki_jw_manifest(ki_jw *w, const char *kind, const char *name, const char *title);
void		ki_jw_spec(ki_jw *w);
/* The text (NUL-terminated, in the arena); NULL when an allocation failed. */
const char *ki_jw_text(ki_jw *w);

/* ---------------------------------------------------------------- operation and workload text */

/*
 * The OperationSpec and WorkloadCase of an operation described by tables
 * (spec_text.c): kbench's registry and the Liger mapping's kernel tables
 * both describe their operations with these and build the manifests here.
 */
#define KI_SPEC_MAX_DIMS 5
#define KI_SPEC_MAX_AXES 8
#define KI_SPEC_MAX_SCALARS 4

/* A tensor argument: each dim an axis name or a decimal literal ("1"), NULL-terminated. */
typedef struct ki_spec_tensor
{
	const char *name;
	const char *dims[KI_SPEC_MAX_DIMS + 1];
	const char *dtype;			/* NULL or "float": the workload's float dtype */
} ki_spec_tensor;

/* An axis of the operation: variable (expression NULL) or derived. */
typedef struct ki_spec_axis
{
	const char *name;
	const char *expression;		/* "hidden // 2"; NULL for a variable axis */
} ki_spec_axis;

typedef struct ki_spec_op
{
	const char *name;			/* metadata.name, "liger-layer-norm" */
	const char *title;
	const char *description;
	const char *source_url;
	const char *family;
	int			naxes;
	ki_spec_axis axes[2 * KI_SPEC_MAX_AXES];	/* variable axes, then derived ones */
	int			ninputs;
	const ki_spec_tensor *inputs;
	int			noutputs;
	const ki_spec_tensor *outputs;
} ki_spec_op;

/* One workload of an operation. */
typedef struct ki_spec_case
{
	const char *dtype;			/* the float dtype ("fp32", "bf16") */
	int			naxes;			/* variable axes, in the order titles show them */
	const char *axis[KI_SPEC_MAX_AXES];
	double		value[KI_SPEC_MAX_AXES];
	int			nderived;		/* derived axes' values (tensor shapes may name them) */
	const char *derived[KI_SPEC_MAX_AXES];
	double		derived_value[KI_SPEC_MAX_AXES];
	int			nscalars;
	const char *scalar[KI_SPEC_MAX_SCALARS];
	const char *scalar_dtype[KI_SPEC_MAX_SCALARS];
	double		scalar_value[KI_SPEC_MAX_SCALARS];
} ki_spec_case;

/* The slug form of a name (lower-case [a-z0-9] runs joined by "-", at most 100 bytes). */
char	   *ki_kebab(ki_arena *a, const char *s);
void		ki_spec_write_operation(ki_jw *w, const ki_spec_op *op);
/* "axis<value>-..." over the variable axes sorted by name, then the dtype: the workload's name after the operation's. */
const char *ki_spec_case_key(ki_arena *a, const ki_spec_case *c);
/* Write the WorkloadCase; NULL, or why it cannot be written (an input's axis not bound). */
const char *ki_spec_write_workload(ki_jw *w, ki_arena *a, const ki_spec_op *op, const ki_spec_case *c,
								   const char *operation_digest);

/* ---------------------------------------------------------------- cost formulas */

/*
 * Evaluate a cost formula (cost_expr.c): numbers, the names given (axes,
 * dtype_bytes), + - * /, parentheses, least(a, b), greatest(a, b), in
 * float64 as PostgreSQL's kbench_cost_eval evaluates the same text.  False,
 * with why in err, on anything else.
 */
bool		ki_cost_eval(const char *expr, const char *const *names, const double *values, int n,
						 double *out, char *err, size_t errlen);

/* ---------------------------------------------------------------- sha256 */

/* "sha256:" + 64 lowercase hex + NUL */
#define KI_DIGEST_LEN 71
void		ki_sha256_hex(const void *data, size_t len, char out[KI_DIGEST_LEN + 1]);

/* ---------------------------------------------------------------- manifests */

typedef enum ki_kind
{
	KI_KIND_UNKNOWN = -1,
	KI_KIND_OPERATION_SPEC = 0,
	KI_KIND_WORKLOAD_CASE,
	KI_KIND_WORKLOAD_SUITE,
	KI_KIND_SOFTWARE_PROJECT,
	KI_KIND_IMPLEMENTATION_REVISION,
	KI_KIND_BENCHMARK_PROTOCOL,
	KI_KIND_EXECUTION_ENVIRONMENT,
	KI_KIND_BENCHMARK_RUN,
	KI_KIND_MODEL_REVISION,
	KI_KIND_SERVING_STACK_REVISION,
	KI_KIND_SERVING_CONFIGURATION,
	KI_KIND_SERVING_WORKLOAD,
	KI_KIND_SERVING_RUN,
	KI_KIND_COUNT
} ki_kind;

#define KI_API_VERSION "kernelindex.dev/v1alpha1"

const char *ki_kind_name(ki_kind k);
ki_kind		ki_kind_from_name(const char *s, size_t len);

/*
 * The tables of a kernelindex.dev catalog export (export_format.c): each
 * manifest-bearing table, the row's column holding the digest the catalog
 * stored (NULL: none is stored, the digest is computed) and whether its
 * manifest is a composite {run, protocol, environment}; and the tables
 * whose rows carry no manifest.
 */
typedef struct ki_export_table
{
	const char *table;
	const char *column;
	bool		composite;
} ki_export_table;

extern const ki_export_table ki_export_tables[];
extern const size_t ki_export_table_count;
extern const char *const ki_export_plain_tables[];
extern const size_t ki_export_plain_table_count;

/*
 * Validate a manifest against its kind's schema and the identity rules,
 * collecting every problem in errs (in document order), and normalize it IN
 * PLACE: set-like lists sorted and deduplicated, durations as integer
 * nanoseconds.  Returns doc (normalized) and sets *kind, or NULL when
 * invalid (doc may then be partly normalized).
 */
ki_value   *ki_manifest_normalize(ki_arena *a, ki_value *doc, ki_kind *kind, ki_errors *errs);

/* The identity body {apiVersion, kind, spec} of a normalized manifest. */
ki_value   *ki_identity_body(ki_arena *a, const ki_value *normalized);

/* Digest of a normalized manifest's identity body. */
void		ki_identity_digest(ki_arena *a, const ki_value *normalized, char out[KI_DIGEST_LEN + 1]);

/*
 * Parse + validate + normalize + digest JSON text in one call (what kbench
 * and the benchmarks use).  Returns false and fills errs on failure.
 */
bool		ki_digest_text(ki_arena *a, const char *text, size_t len,
						   char out[KI_DIGEST_LEN + 1], ki_errors *errs);

/* The composite {run, protocol, environment} document. */
typedef struct ki_composite
{
	ki_value   *run;			/* normalized manifests */
	ki_value   *protocol;
	ki_value   *environment;
	char		run_digest[KI_DIGEST_LEN + 1];
	char		protocol_digest[KI_DIGEST_LEN + 1];
	char		environment_digest[KI_DIGEST_LEN + 1];
} ki_composite;

/*
 * Validate a composite document: exactly the members run, protocol and
 * environment, each a valid manifest of its kind (paths prefixed "run.",
 * ...), and run.spec.protocolDigest / environmentDigest naming the digests
 * of the other two.  Normalizes the parts in place.  Returns false with
 * every problem in errs.
 */
bool		ki_composite_validate(ki_arena *a, ki_value *doc, ki_composite *out, ki_errors *errs);

#endif							/* KI_JSON_H */
