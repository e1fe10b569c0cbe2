/*
 * backend_cpu.c: the cpu backend (kb_int.h, "backends"): tensors in host
 * memory, the operation's C implementation (kernels/ops/<op>.c), each call
 * timed with CLOCK_MONOTONIC after writing the flush buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

static void
cpu_close(kb_backend *be)
{
	be->ctx = NULL;
}

static int
cpu_alloc(kb_backend *be, size_t bytes, void **p)
{
	*p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
	if (!*p)
	{
		snprintf(be->err, sizeof(be->err), "out of host memory allocating %zu bytes", bytes);
		return KBC_NOMEM;
	}
	return KBC_OK;
}

static void
cpu_free(kb_backend *be, void *p)
{
	(void) be;
	free(p);
}

static int
cpu_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	(void) be;
	memcpy(dst, src, bytes);
	return KBC_OK;
}

static int
cpu_call(kb_backend *be, const kb_call *c, int phase)
{
	const kb_op *op = kb_op_at(c->op);

	if (!op || !op->cpu || op->cpu(c, phase) != 0)
	{
		snprintf(be->err, sizeof(be->err), "the cpu implementation of %s failed", op ? op->name : "?");
		return KBC_ERROR;
	}
	return KBC_OK;
}

static int
cpu_sync(kb_backend *be, double timeout_s)
{
	(void) be;
	(void) timeout_s;
	return KBC_OK;
}

static int
cpu_time_one(kb_backend *be, const kb_call *c, void *flush, size_t flush_bytes,
			 double *op_ns, double *total_ns, double timeout_s)
{
	int64_t		t0,
				t1,
				t2;
	static volatile unsigned char sink;
	int			rc;

	(void) timeout_s;
	t0 = kb_now_ns();
	if (flush && flush_bytes)
	{
		/* Write the flush buffer so the caches hold none of the inputs. */
		memset(flush, (int) (t0 & 0xff), flush_bytes);
		sink = ((volatile unsigned char *) flush)[flush_bytes - 1];
	}
	t1 = kb_now_ns();
	rc = cpu_call(be, c, KB_PHASE_TIMED);
	t2 = kb_now_ns();
	*op_ns = (double) (t2 - t1);
	*total_ns = (double) (t2 - t0);
	(void) sink;
	return rc;
}

static double
cpu_clock_mhz(kb_backend *be)
{
	(void) be;
	return -1;
}

static const kb_backend_ops cpu_ops = {
	.name = "cpu",
	.close = cpu_close,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.fill = kb_host_fill,
	.to_host = cpu_to_host,
	.call = cpu_call,
	.sync = cpu_sync,
	.time_one = cpu_time_one,
	.clock_mhz = cpu_clock_mhz,
};

int
kb_be_open_cpu(kb_backend *be)
{
	memset(be, 0, sizeof(*be));
	be->ops = &cpu_ops;
	be->clock_default_mhz = -1;
	return KBC_OK;
}
