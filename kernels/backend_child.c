/*
 * backend_child.c: the child backend (kb_int.h, "backends"): another
 * implementation runs in its own process under the same protocol as
 * kbench's own.  A python implementation (kernels/python/kbench_harness.py,
 * exec'd with the configured interpreter: impl_python.c) or a library
 * implementation (a forked child that dlopen()s it: impl_library.c); the
 * tensors are allocated here, in one shared mapping (a memfd), the inputs
 * filled with the counter-based generator, and measure() drives the child
 * one command per call, each answered before the next, with a deadline
 * (child.c).  The child times each sample itself (CUDA events or
 * CLOCK_MONOTONIC around the call, the flush before it) and returns it;
 * after the timing it writes the outputs into the mapping and the
 * operation's check compares them with the float64 reference, in C, as for
 * every run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "impl_int.h"

static const kb_backend_ops child_ops;

/* ------------------------------------------------------------ shared tensors */

int
kb_be_open_child(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes)
{
	kb_ext	   *x;
	kb_call		c;
	kb_plan		p;
	size_t		need = 4096;

	memset(be, 0, sizeof(*be));
	be->ops = &child_ops;
	be->cuda = cs->cuda;
	be->device = cs->device;
	be->clock_default_mhz = -1;
	x = calloc(1, sizeof(*x));
	if (!x)
	{
		snprintf(be->err, sizeof(be->err), "out of host memory");
		return KBC_ERROR;
	}
	be->ext = x;
	x->cs = *cs;
	x->req = req;
	x->flush_bytes = flush_bytes;
	x->pid = -1;
	x->pgid = -1;
	x->sock = -1;
	x->err_fd = -1;
	x->out_fd = -1;
	x->shm_fd = -1;
	kb_ext_live_add(x);
	if (cs->cuda)
	{
		/* the child owns the device; here only what the environment manifest says about it */
		if (kb_cuda_describe(be, cs->device) != KBC_OK)
			return KBC_ERROR;
	}
	kb_plan_call(cs, &c, &p);	/* also an operation defined as data (plan.c) */
	for (int i = 0; i < c.ntensors; i++)
		need += (size_t) (c.rows[i] * c.cols[i]) * kb_dtype_size(c.tdtype[i]) + 64;
	/* the guard's other input sets (measure.c) live at the end of the same mapping, allocated after start */
	for (int i = 0; i < c.ntensors; i++)
		if (p.init[i] != KB_INIT_NONE)
			x->reserve += (KB_INPUT_SETS - 1) * ((size_t) (c.rows[i] * c.cols[i]) * kb_dtype_size(c.tdtype[i]) + 64);
	need += x->reserve;
	need += (size_t) c.ws_bytes + 64;
	x->shm_fd = memfd_create("kbench-tensors", MFD_CLOEXEC);
	if (x->shm_fd < 0 || ftruncate(x->shm_fd, (off_t) need) != 0)
	{
		snprintf(be->err, sizeof(be->err), "cannot create the shared tensors (%zu bytes): %s", need, strerror(errno));
		return KBC_ERROR;
	}
	x->base = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, x->shm_fd, 0);
	if (x->base == MAP_FAILED)
	{
		x->base = NULL;
		snprintf(be->err, sizeof(be->err), "cannot map the shared tensors (%zu bytes): %s", need, strerror(errno));
		return KBC_ERROR;
	}
	x->size = need;
	return KBC_OK;
}

static int
child_alloc(kb_backend *be, size_t bytes, void **p)
{
	kb_ext	   *x = be->ext;
	size_t		at = (x->used + 63) / 64 * 64;
	bool		started = x->plan != NULL;	/* after start: the guard's input sets, in the reserve */

	if (at + bytes + (started ? 0 : x->reserve) <= x->size)
	{
		*p = x->base + at;
		x->used = at + bytes;
		return KBC_OK;
	}
	if (started)
	{
		snprintf(be->err, sizeof(be->err), "the shared tensors have no room for %zu more bytes", bytes);
		return KBC_NOMEM;
	}
	/* the flush buffer: the child clears its own (never touched here) */
	*p = x->dummy;
	return KBC_OK;
}

static void
child_close(kb_backend *be)
{
	kb_ext	   *x = be->ext;

	if (!x)
		return;
	kb_ext_stop(x);
	if (x->base)
		munmap(x->base, x->size);
	if (x->shm_fd >= 0)
		close(x->shm_fd);
	kb_ext_source_free(&x->src);
	kb_ext_live_remove(x);
	free(x->out);
	free(x->versions);
	free(x);
	be->ext = NULL;
}

static double
ext_timeout(const kb_ext *x)
{
	if (x->req->deadline_ns > 0)
	{
		double		left = (double) (x->req->deadline_ns - kb_now_ns()) / 1e9;

		return left < 0.5 ? 0.5 : left;
	}
	return 120.0;
}

static int
child_start(kb_backend *be, const kb_call *c, kb_plan *plan)
{
	kb_ext	   *x = be->ext;

	x->cancel = x->req->cancel;
	x->call = *c;
	x->plan = plan;
	return x->cs.ext == KB_EXT_PYTHON ? kb_python_start(be, ext_timeout(x)) : kb_library_start(be, ext_timeout(x));
}

static int
child_call(kb_backend *be, const kb_call *c, int phase)
{
	char		out[64];

	(void) c;					/* the child was given the call at its start */
	be->ext->dirty = true;
	return kb_ext_request(be, phase == KB_PHASE_PREPARE ? "prepare\n" : "call\n", ext_timeout(be->ext), out, sizeof(out));
}

/*
 * The child's clock against the parent's.  The parent measures each 'time'
 * round trip with its own CLOCK_MONOTONIC; the child's flush and timed call
 * happen inside it, and what the child reports of them (the call's time
 * without a flush, the flush's and the call's with one) should account for
 * most of it.  A round trip is unaccounted when the child reports less than
 * half of it and over UNACCOUNTED_NS less; once MIN_TIMED round trips are
 * answered, a run where more than half of them are unaccounted is refused
 * (its samples are not what the parent saw: a patched clock, a rewritten
 * answer).  The protocol's own cost, a few tens of microseconds a round
 * trip, stays far below the bound; a reported time above the round trip
 * counts as the round trip (it cannot make up for others).
 */
#define UNACCOUNTED_NS 20e6
#define MIN_TIMED 5

static int
account(kb_backend *be, double reported_ns, double measured_ns)
{
	kb_ext	   *x = be->ext;
	double		gap = measured_ns - (reported_ns < measured_ns ? reported_ns : measured_ns);

	x->timed++;
	if (gap > measured_ns / 2 && gap > UNACCOUNTED_NS)
		x->unaccounted++;
	if (x->timed >= MIN_TIMED && 2 * x->unaccounted > x->timed)
		return kb_ext_fail(be, KBC_ERROR, "%s's reported times do not account for the time kbench measured around them: "
					"in %lld of %lld timed calls it reported under half of the round trip and over %.0f ms less "
					"(the last: %.0f ns reported, %.0f ns measured); its samples are refused", kb_ext_kind_word(x),
					(long long) x->unaccounted, (long long) x->timed, UNACCOUNTED_NS / 1e6, reported_ns, measured_ns);
	return KBC_OK;
}

static int
child_time_one(kb_backend *be, const kb_call *c, void *flush, size_t flush_bytes,
			   double *op_ns, double *total_ns, double timeout_s)
{
	char		cmd[64],
				out[128];
	int			rc;
	int64_t		t0;
	double		measured;

	(void) c;
	(void) flush;				/* the child clears its own flush buffer */
	be->ext->dirty = true;
	/* the python step's untimed reset in its own round trip: the 'time' one holds the flush and the call */
	if (be->ext->cs.ext == KB_EXT_PYTHON && (rc = kb_ext_request(be, "reset\n", timeout_s, out, sizeof(out))) != KBC_OK)
		return rc;
	snprintf(cmd, sizeof(cmd), "time %zu\n", flush_bytes);
	t0 = kb_now_ns();
	rc = kb_ext_request(be, cmd, timeout_s, out, sizeof(out));
	measured = (double) (kb_now_ns() - t0);
	if (rc != KBC_OK)
		return rc;
	if (sscanf(out, "%lf %lf", op_ns, total_ns) != 2 || !(*op_ns >= 0) || !(*total_ns >= *op_ns))
		return kb_ext_fail(be, KBC_ERROR, "%s answered a sample that is not two times in ns: '%.60s'", kb_ext_kind_word(be->ext), out);
	return account(be, flush_bytes ? *total_ns : *op_ns, measured);
}

/* The guard moved the inputs to another set in the mapping: "inputs <tensor>:<offset>,...", untimed. */
static int
child_inputs(kb_backend *be, const kb_call *c)
{
	kb_ext	   *x = be->ext;
	char		cmd[1024],
				out[64];
	size_t		n = (size_t) snprintf(cmd, sizeof(cmd), "inputs ");

	for (int i = 0; i < c->ntensors && n < sizeof(cmd) - 40; i++)
		if (x->plan && x->plan->init[i] != KB_INIT_NONE && c->t[i])
			n += (size_t) snprintf(cmd + n, sizeof(cmd) - n, "%s%d:%lld", n > 7 ? "," : "", i,
								   (long long) ((const unsigned char *) c->t[i] - x->base));
	snprintf(cmd + n, sizeof(cmd) - n, "\n");
	return kb_ext_request(be, cmd, ext_timeout(x), out, sizeof(out));
}

/*
 * kbench's own cost of one call to a child: the median of OVERHEAD_CALLS
 * empty round trips ('noop'), by the parent's clock.  Not inside the
 * samples (the child times around the call itself); reported with the run.
 */
#define OVERHEAD_CALLS 9

static int
cmp_dbl(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static int
child_overhead(kb_backend *be, double *ns)
{
	double		v[OVERHEAD_CALLS];
	char		out[64];

	for (int i = 0; i < OVERHEAD_CALLS; i++)
	{
		int64_t		t0 = kb_now_ns();
		int			rc = kb_ext_request(be, "noop\n", ext_timeout(be->ext), out, sizeof(out));

		if (rc != KBC_OK)
			return rc;
		v[i] = (double) (kb_now_ns() - t0);
	}
	qsort(v, OVERHEAD_CALLS, sizeof(double), cmp_dbl);
	*ns = v[OVERHEAD_CALLS / 2];
	return KBC_OK;
}

static int
child_peak_memory(kb_backend *be, int64_t *bytes)
{
	char		out[128];
	long long	v;
	int			rc;

	be->ext->dirty = true;
	rc = kb_ext_request(be, "memory\n", ext_timeout(be->ext), out, sizeof(out));
	if (rc != KBC_OK)
		return rc;
	if (sscanf(out, "%lld", &v) != 1 || v < 0)
		return kb_ext_fail(be, KBC_ERROR, "%s answered a peak memory that is not a byte count: '%.60s'", kb_ext_kind_word(be->ext), out);
	*bytes = v;
	return KBC_OK;
}

/* Outputs are read back into the shared tensors once, before the first read after a call. */
static int
child_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	kb_ext	   *x = be->ext;

	if (x->dirty)
	{
		char		out[1024];
		int			rc = kb_ext_request(be, "readback\n", ext_timeout(x), out, sizeof(out));

		if (rc != KBC_OK)
			return rc;
		x->dirty = false;
		/*
		 * "ok name,name,...": outputs the implementation did not return are not compared (layer_norm's
		 * mean, rstd), and every tensor it did not return is marked (kb_returned: jsd's row_loss)
		 */
		if (x->plan)
			memset(x->plan->not_returned, 0, sizeof(x->plan->not_returned));
		if (strcmp(out, "*") != 0 && x->plan)
			for (int i = 0; i < x->call.ntensors; i++)
			{
				const char *nm = x->plan->name[i];
				bool		found = false;

				for (const char *p = out; nm && *p;)
				{
					size_t		n = strcspn(p, ",");

					if (n == strlen(nm) && strncmp(p, nm, n) == 0)
						found = true;
					p += n + (p[n] == ',');
				}
				if (!found)
				{
					x->plan->is_output[i] = 0;
					x->plan->not_returned[i] = 1;
				}
			}
	}
	if ((const unsigned char *) src < x->base || (const unsigned char *) src + bytes > x->base + x->size)
	{
		snprintf(be->err, sizeof(be->err), "read outside the shared tensors");
		return KBC_ERROR;
	}
	memcpy(dst, src, bytes);
	return KBC_OK;
}

static void
child_free(kb_backend *be, void *p)
{
	(void) be;					/* the tensors live in one shared mapping */
	(void) p;
}

static int
child_sync(kb_backend *be, double timeout_s)
{
	(void) be;					/* every call is answered before the next */
	(void) timeout_s;
	return KBC_OK;
}

static double
child_clock_mhz(kb_backend *be)
{
	return kb_nvml_sm_clock(be->nvml);	/* -1 on the cpu: no NVML device */
}

static const kb_backend_ops child_ops = {
	.name = "child",
	.close = child_close,
	.alloc = child_alloc,
	.free = child_free,
	.fill = kb_host_fill,
	.to_host = child_to_host,
	.start = child_start,
	.call = child_call,
	.sync = child_sync,
	.time_one = child_time_one,
	.peak_memory = child_peak_memory,
	.clock_mhz = child_clock_mhz,
	.inputs = child_inputs,
	.overhead = child_overhead,
	.cancel_inside_call = true,
};

const char *
kb_ext_versions(const kb_backend *be)
{
	return be && be->ext ? be->ext->versions : NULL;
}

/* The user's file as verified and run by the child backend be, or NULL (a built-in, not run yet, another backend). */
const kb_ext_source *
kb_ext_ran_source(const kb_backend *be)
{
	return be && be->ext && be->ext->src.bytes ? &be->ext->src : NULL;
}
