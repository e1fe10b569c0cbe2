/*
 * opdef.h: operations defined as data (opdef.c, kernels/ops/defs/NAME.json,
 * docs/OPERATIONS.md).  Internal to libkbench.
 */
#ifndef KB_OPDEF_H
#define KB_OPDEF_H

#include "kb_int.h"

#define KB_OPDEF_MAX 64

enum { KB_TROLE_INPUT = 0, KB_TROLE_OUTPUT, KB_TROLE_SAVED, KB_TROLE_UPSTREAM, KB_TROLE_GRADIENT };

typedef struct kb_opdef_tensor
{
	const char *name;
	int			role;			/* KB_TROLE_* */
	int			ndims;
	const char *dims[KI_SPEC_MAX_DIMS + 1];
	int			dim_axis[KI_SPEC_MAX_DIMS];	/* index into the op's axes, -1 for a literal */
	int64_t		dim_literal[KI_SPEC_MAX_DIMS];
	int			dtype;			/* -1: the workload's float dtype */
	const char *of;				/* upstream: the output; gradient: the input */
	const char *grad;			/* input: its gradient's name */
	const char *upstream;		/* output: its upstream gradient's name */
	int			init;			/* KB_INIT_* (inputs and upstream gradients) */
	double		scale;
	int64_t		modulo;
	int			high_axis;		/* fill.high naming an axis (indices in [0, vocab)): its index, else -1 */
	ki_spec_tensor sig;			/* as the OperationSpec lists it */
} kb_opdef_tensor;

typedef struct kb_opdef
{
	const char *file;
	const char *liger_kernel;	/* kernel_name in Liger's CSV, or NULL */
	int			ntensors;
	kb_opdef_tensor tensors[KB_MAX_TENSORS];
	int			nreturns[KB_MODE_COUNT];
	int			returns[KB_MODE_COUNT][KB_MAX_TENSORS];
	int64_t		axis_min[KB_MAX_AXES];
	int64_t		axis_max[KB_MAX_AXES];	/* 0: no limit */
	int64_t		axis_multiple[KB_MAX_AXES];	/* "multiple_of" (1: any value) */
	bool		case_only[KB_MAX_AXES];	/* "in_operation": false: an axis of the WorkloadCase only, not
										 * of the OperationSpec (group_norm's channels_per_group, rope's
										 * hidden: Liger's mapping binds them without a tensor using them) */
	double		rtol[KB_DTYPE_COUNT];
	double		atol[KB_DTYPE_COUNT];
	const char *reference;		/* function of kernels/python/kbench_reference.py, or of reference_file */
	const char *reference_file; /* a user's definition (--op-file): its reference's file, as given */
	const char *reference_source;	/* that file's bytes, read once when the definition was loaded */
	bool		added;			/* a user's (--op-file, kbench_register_operation), not kernels/ops/defs' */
} kb_opdef;

int			kb_opdef_count(void);
const kb_op *kb_opdef_at(int i);
const char *kb_opdef_load_error(void);
bool		kb_opdef_derive(const kb_op *op, int64_t *ax, char *err, size_t errlen);
void		kb_opdef_plan(const kb_op *op, kb_call *c, kb_plan *p);
int			kb_opdef_check(kb_backend *be, const kb_call *c, const kb_plan *p, kb_correctness *out);
bool		kb_opdef_checkable(const kb_backend *be);
void		kb_opdef_setup_json(const kb_op *op, const kb_call *c, ki_jw *w);

#endif
