/*
 * fake_cuda.c: a test double of libkbench_cuda.so for hosts without a GPU.
 *
 * It implements the kbc_api table of kernels/kb_abi.h with host memory and
 * shows one device, "Fake GPU (kernelindex test double)", so that the
 * runner's CUDA paths (the kbench CLI, the worker of a cuda:N device) can be
 * tested on a CPU: load it with KBENCH_CUDA_LIB=<path of this .so>.
 *
 * KBENCH_FAKE_CUDA chooses the behaviour, or "@FILE" reads it from the first
 * line of FILE at every open (a test switches modes without restarting the
 * server).  Modes:
 *   ok            every call works: "kernels" are the CPU implementations of
 *                 libkbench.a on the host buffers, so outputs pass the check
 *   fault_open    open fails (the device cannot be initialised)
 *   fault_call    the first call fails with an illegal memory access; the
 *                 error is sticky, as in CUDA: everything fails until the
 *                 next open (the device reset)
 *   fault_sync    calls are accepted, the error surfaces at the next wait
 *   nomem         the device reports 1 MiB free and every alloc fails
 *   hang          the first call is a kernel that never finishes: sync and
 *                 time_one keep the API's promise (KBC_TIMEOUT after
 *                 timeout_s), but what real CUDA would do implicitly after
 *                 that (cudaFree, a synchronous copy, destroying the stream,
 *                 resetting the device) blocks forever, here too
 *   hang_forever  the worst case: sync and time_one themselves never return
 *   wrong         a kernel with a bug: the CPU implementation, then one value
 *                 of its first output (element 0, a row every check reads)
 *                 made wrong; everything else is right, so the correctness
 *                 gate must fail the run on a single value
 *   wrong_last    the same with the last value of the first output made
 *                 wrong (in the last row, which every sampled check must
 *                 read as it reads the first)
 *   wrong_eps     a deliberately wrong implementation of layer_norm's
 *                 forward pass: eps 1e-5 instead of 1e-6 (the CPU code for
 *                 every other pass and operation): what only a tolerance
 *                 derived from the arithmetic can tell from rounding
 *   slow_v2       every kernel variant v2 and later is deliberately slow:
 *                 its call does the work of v1 three times (same outputs),
 *                 what a paired comparison must call slower
 *   fault_timed   a kernel that faults in the timed samples only: every
 *                 time_one after the five of the estimate, and every
 *                 time_graph, fails with an illegal address
 *   graph_noise   every CUDA graph's clears take as long as its calls and
 *                 clears together (what a real graph of calls far shorter
 *                 than their clears can measure): time_graph refuses it
 *   once          a cheat: the timed-phase calls compute only while the
 *                 inputs are those of the first such call; on any other
 *                 inputs they return at once, the outputs left as they were
 *                 (what the guard's checks of timed calls, per call or per
 *                 CUDA graph, must fail)
 * KBENCH_FAKE_CUDA_HOLD, a file: while its first line names the call being
 * made, the call waits (polling the file) until the line changes, so a test
 * can stop a job in one phase and look at it, deciding by events: "fill",
 * "prepare" (the untimed prepare call), "call" (a timed-phase call outside
 * time_one: the first call and warm-up), "time_one" or "time_one:N" (the
 * Nth time_one since the device was opened, and later ones), "to_host";
 * alternatives separated by '|' ("time_one|call") hold at any of them.
 * KBENCH_FAKE_CUDA_HELD, a file: while a call is held it holds the call's
 * name ("to_host"), and it is gone once the call goes on, so a test can wait
 * for the job to be held, not for a time.
 * KBENCH_FAKE_CUDA_MAX_WAIT_S caps the wait before KBC_TIMEOUT in hang mode
 * (the CLI waits up to 120 s; its test need not).  KBENCH_FAKE_CUDA_LOG, a
 * file, gets one line per API call ("<pid> <call>"), for tests to see what
 * was called.  KBENCH_FAKE_CUDA_TIMES chooses what time_one reports as a
 * sample's kernel time: "steady" (exactly 50 us every call: a quiet GPU, the
 * noise rule's test; "steady:NS" another time), "jitter" (10 us to 50 us at
 * random: a noise that never settles, the unstable flag's test; "jitter:LO:HI"
 * in ns); unset: the host time of the call.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kb_int.h"

#define FAKE_NAME "Fake GPU (kernelindex test double)"
#define FAKE_TOTAL_MEM ((int64_t) 16 << 30)
#define ILLEGAL_ADDRESS "cudaErrorIllegalAddress (an illegal memory access was encountered)"

typedef enum
{
	M_OK, M_FAULT_OPEN, M_FAULT_CALL, M_FAULT_SYNC, M_NOMEM, M_HANG, M_HANG_FOREVER, M_WRONG, M_WRONG_LAST,
	M_WRONG_EPS, M_SLOW_V2, M_ONCE, M_GRAPH_NOISE, M_FAULT_TIMED, M_COUNT
} fake_mode;

static const char *const mode_names[M_COUNT] = {
	"ok", "fault_open", "fault_call", "fault_sync", "nomem", "hang", "hang_forever", "wrong", "wrong_last",
	"wrong_eps", "slow_v2", "once", "graph_noise", "fault_timed"
};

/* The state of the one device, for the life of the process (as a GPU's). */
static fake_mode mode;
static bool busy;				/* a kernel that never finishes holds the device */
static char sticky[256];		/* a sticky error: every call fails until open */

typedef struct fake_ctx
{
	void	   *ws;				/* the CPU plan's workspace (it differs from the CUDA plan's) */
	size_t		ws_bytes;
} fake_ctx;

static void
trace(const char *call)
{
	const char *path = getenv("KBENCH_FAKE_CUDA_LOG");
	char		line[128];
	int			fd,
				n;

	if (!path || !*path || (fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0666)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%d %s\n", (int) getpid(), call);
	if (write(fd, line, (size_t) n) < 0)
		(void) 0;				/* a trace is best effort */
	close(fd);
}

static int
fail(int rc, char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

/* The mode from KBENCH_FAKE_CUDA; false (and why) for an unknown one. */
static bool
read_mode(char *err, size_t errlen)
{
	const char *v = getenv("KBENCH_FAKE_CUDA");
	char		buf[64] = "";

	if (v && v[0] == '@')
	{
		FILE	   *f = fopen(v + 1, "r");

		if (f && !fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		if (f)
			fclose(f);
		buf[strcspn(buf, " \r\n")] = '\0';
		v = buf;
	}
	if (!v || !*v)
		v = "ok";
	for (int m = 0; m < M_COUNT; m++)
		if (strcmp(v, mode_names[m]) == 0)
		{
			mode = (fake_mode) m;
			return true;
		}
	fail(0, err, errlen, "KBENCH_FAKE_CUDA: unknown mode '%s'; allowed: ok, fault_open, fault_call, "
		 "fault_sync, nomem, hang, hang_forever, wrong, wrong_last, wrong_eps, slow_v2", v);
	return false;
}

/* What CUDA does when asked to wait for a kernel that never ends. */
static void
block_forever(const char *call)
{
	char		what[96];

	snprintf(what, sizeof(what), "%s blocked forever", call);
	trace(what);
	for (;;)
		pause();
}

/* Sleep s seconds, resuming after signals (a server process gets many). */
static void
sleep_s(double s)
{
	struct timespec now,
				end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t) s;
	end.tv_nsec += (long) ((s - (double) (time_t) s) * 1e9);
	if (end.tv_nsec >= 1000000000L)
	{
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do
	{
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

/* time_one calls since the device was opened (KBENCH_FAKE_CUDA_HOLD's "time_one:N") */
static int	time_one_count;

/* Say (KBENCH_FAKE_CUDA_HELD) which call is held, or that none is (call NULL). */
static void
announce(const char *call)
{
	const char *path = getenv("KBENCH_FAKE_CUDA_HELD");
	char		tmp[4096];
	FILE	   *f;

	if (!path || !*path)
		return;
	if (!call)
	{
		(void) unlink(path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int) getpid());
	if ((f = fopen(tmp, "w")) != NULL)
	{
		fprintf(f, "%s\n", call);
		fclose(f);
		(void) rename(tmp, path);	/* whole or not at all, for the test that reads it */
	}
}

/* Wait while the hold file's first line names this call (see the header). */
static void
hold(const char *call, int nth)
{
	const char *path = getenv("KBENCH_FAKE_CUDA_HOLD");
	bool		announced = false;

	if (!path || !*path)
		return;
	for (;;)
	{
		FILE	   *f = fopen(path, "r");
		char		buf[64] = "";
		size_t		n = strlen(call);
		bool		held;

		if (f && !fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		if (f)
			fclose(f);
		buf[strcspn(buf, " \r\n")] = '\0';
		held = false;
		/* alternatives: "time_one|call" holds at either */
		for (char *alt = buf; alt && !held; alt = strchr(alt, '|') ? strchr(alt, '|') + 1 : NULL)
		{
			size_t		len = strcspn(alt, "|");

			held = len >= n && strncmp(alt, call, n) == 0 &&
				(len == n || (alt[n] == ':' && nth >= atoi(alt + n + 1)));
		}
		if (!held)
		{
			if (announced)
				announce(NULL);
			return;
		}
		if (!announced)
			announce(call);
		announced = true;
		trace("held");
		sleep_s(0.02);
	}
}

/* ------------------------------------------------------------ devices */

static int
api_device_count(char *err, size_t errlen)
{
	trace("device_count");
	return read_mode(err, errlen) ? 1 : -1;
}

static int
api_device_info(int dev, kbc_device_info *out, char *err, size_t errlen)
{
	trace("device_info");
	if (!read_mode(err, errlen))
		return KBC_ERROR;
	if (dev != 0)
		return fail(KBC_ERROR, err, errlen, "cudaErrorInvalidDevice (invalid device ordinal)");
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", FAKE_NAME);
	snprintf(out->pci_bus_id, sizeof(out->pci_bus_id), "00000000:00:00.0");
	out->cc_major = 9;
	out->cc_minor = 0;
	out->total_mem = FAKE_TOTAL_MEM;
	out->free_mem = mode == M_NOMEM ? (int64_t) 1 << 20 : FAKE_TOTAL_MEM - ((int64_t) 1 << 30);
	out->sm_count = 4;
	out->clock_khz = 1000000;
	out->mem_clock_khz = 1000000;
	out->mem_bus_width = 256;
	out->l2_bytes = 4 << 20;
	out->driver_version = 13000;
	out->runtime_version = 13000;
	out->cublaslt_version = 130000;
	snprintf(out->compiler, sizeof(out->compiler), "fake_cuda.c (test double)");
	return KBC_OK;
}

/* ------------------------------------------------------------ open / close */

static int
api_open(int dev, void **ctx, char *err, size_t errlen)
{
	trace("open");
	*ctx = NULL;
	if (!read_mode(err, errlen))
		return KBC_ERROR;
	if (busy)
		block_forever("open (cudaDeviceReset waits for the kernel)");
	sticky[0] = '\0';			/* the reset clears a sticky error */
	time_one_count = 0;
	if (dev != 0)
		return fail(KBC_ERROR, err, errlen, "cudaErrorInvalidDevice (invalid device ordinal)");
	if (mode == M_FAULT_OPEN)
		return fail(KBC_ERROR, err, errlen,
					"cudaErrorDevicesUnavailable (CUDA-capable device(s) is/are busy or unavailable) at fake_cuda.c: cudaSetDevice");
	*ctx = calloc(1, sizeof(fake_ctx));
	return *ctx ? KBC_OK : fail(KBC_ERROR, err, errlen, "out of host memory");
}

static void
api_close(void *p)
{
	fake_ctx   *c = p;

	trace("close");
	if (busy)
		block_forever("close (cudaStreamSynchronize)");
	if (c)
		free(c->ws);
	free(c);
}

/* ------------------------------------------------------------ memory */

static int
api_alloc(void *ctx, size_t bytes, void **p, char *err, size_t errlen)
{
	(void) ctx;
	trace("alloc");
	*p = NULL;
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (mode == M_NOMEM)
		return fail(KBC_NOMEM, err, errlen, "cudaMalloc of %zu bytes: out of device memory", bytes);
	if (bytes == 0)
		return KBC_OK;
	*p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
	return *p ? KBC_OK : fail(KBC_NOMEM, err, errlen, "cudaMalloc of %zu bytes: out of device memory", bytes);
}

static void
api_free(void *ctx, void *p)
{
	(void) ctx;
	trace("free");
	if (busy)
		block_forever("free (cudaFree waits for the device)");
	free(p);
}

static int
api_fill(void *ctx, void *p, int dtype, int64_t rows, int64_t cols, int init, double scale, int64_t modulo,
		 uint64_t seed, uint32_t stream, char *err, size_t errlen)
{
	(void) ctx;
	trace("fill");
	hold("fill", 0);
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (busy)
		block_forever("fill (cudaStreamSynchronize)");
	if (p)
		kb_fill_host(p, dtype, rows, cols, init, scale, modulo, seed, stream);
	return KBC_OK;
}

static int
api_to_host(void *ctx, void *dst, const void *src, size_t bytes, char *err, size_t errlen)
{
	(void) ctx;
	trace("to_host");
	hold("to_host", 0);
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (busy)
		block_forever("to_host (cudaMemcpy waits for the stream)");
	memcpy(dst, src, bytes);
	return KBC_OK;
}

/* ------------------------------------------------------------ calls and waits */

/*
 * The deliberately wrong implementation of wrong_eps: layer_norm's forward
 * pass (y, mean, rstd; tensor slots x, weight, bias, y, mean, rstd) with
 * another eps, in float arithmetic as the CPU implementation.
 */
static void
layer_norm_forward_eps(const kb_call *c, double eps)
{
	int64_t		R = c->ax[0],
				H = c->ax[1];
	int			dt = c->dtype;

	for (int64_t r = 0; r < R; r++)
	{
		double		m = 0,
					v = 0;
		float		rs;

		for (int64_t j = 0; j < H; j++)
			m += kb_get(c->t[0], dt, r * H + j);
		m /= (double) H;
		for (int64_t j = 0; j < H; j++)
			v += (kb_get(c->t[0], dt, r * H + j) - m) * (kb_get(c->t[0], dt, r * H + j) - m);
		v /= (double) H;
		rs = (float) (1.0 / sqrt(v + eps));
		((float *) c->t[4])[r] = (float) m;
		((float *) c->t[5])[r] = rs;
		for (int64_t j = 0; j < H; j++)
			kb_set(c->t[3], dt, r * H + j,
				   (float) ((kb_get(c->t[0], dt, r * H + j) - m) * rs * kb_get(c->t[1], dt, j) + kb_get(c->t[2], dt, j)));
	}
}

/* Run the CPU implementation with the CPU plan's workspace and blocking. */
static int
run_cpu(fake_ctx *ctx, const kb_call *c, int phase, char *err, size_t errlen)
{
	kb_call		k = *c,
				cpu;
	kb_plan		plan;

	memset(&cpu, 0, sizeof(cpu));
	memset(&plan, 0, sizeof(plan));
	cpu.op = c->op;
	cpu.mode = c->mode;
	cpu.dtype = c->dtype;
	memcpy(cpu.ax, c->ax, sizeof(cpu.ax));
	kb_ops[c->op]->plan(&cpu, &plan, false);
	if ((size_t) cpu.ws_bytes > ctx->ws_bytes)
	{
		free(ctx->ws);
		ctx->ws_bytes = 0;
		if (!(ctx->ws = aligned_alloc(64, ((size_t) cpu.ws_bytes + 63) / 64 * 64)))
			return fail(KBC_ERROR, err, errlen, "out of host memory for the workspace");
		ctx->ws_bytes = (size_t) cpu.ws_bytes;
	}
	k.ws = ctx->ws;
	k.ws_bytes = cpu.ws_bytes;
	k.chunk = cpu.chunk;
	for (int rep = mode == M_SLOW_V2 && c->variant >= 2 && phase != KB_PHASE_PREPARE ? 3 : 1; rep > 0; rep--)
		if (kb_ops[c->op]->cpu(&k, phase) != 0)
			return fail(KBC_ERROR, err, errlen, "the cpu implementation of %s failed", kb_ops[c->op]->name);
	if (mode == M_WRONG_EPS && c->op == KB_OP_LAYER_NORM && c->mode != KB_BACKWARD && phase != KB_PHASE_PREPARE)
		layer_norm_forward_eps(&k, 1e-5);
	if ((mode == M_WRONG || mode == M_WRONG_LAST) && phase != KB_PHASE_PREPARE)
		for (int i = 0; i < c->ntensors; i++)
			if (plan.is_output[i])
			{
				int64_t		at = mode == M_WRONG ? 0 : c->rows[i] * c->cols[i] - 1;
				double		v = kb_get(c->t[i], c->tdtype[i], at);

				kb_set(c->t[i], c->tdtype[i], at, v + 1.0 + fabs(v));
				break;
			}
	return KBC_OK;
}

static int
do_call(void *ctx, const kb_call *c, int phase, char *err, size_t errlen)
{
	trace("call");
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (c->op < 0 || c->op >= KB_OP_COUNT)
		return fail(KBC_ERROR, err, errlen, "unknown operation id %d", c->op);
	switch (mode)
	{
		case M_FAULT_CALL:
			snprintf(sticky, sizeof(sticky), "%s at fake_cuda.c: %s", ILLEGAL_ADDRESS, kb_ops[c->op]->cu_symbol);
			return fail(KBC_ERROR, err, errlen, "%s", sticky);
		case M_HANG:
		case M_HANG_FOREVER:
			busy = true;		/* launched; it never finishes */
			return KBC_OK;
		case M_FAULT_SYNC:
			return KBC_OK;		/* the fault surfaces at the next wait */
		case M_ONCE:
			{
				static const void *first_input;

				if (phase == KB_PHASE_TIMED && !first_input)
					first_input = c->t[0];
				if (phase == KB_PHASE_TIMED && c->t[0] != first_input)
					return KBC_OK;
				return run_cpu(ctx, c, phase, err, errlen);
			}
		default:
			return run_cpu(ctx, c, phase, err, errlen);
	}
}

static int
api_call(void *ctx, const kb_call *c, int phase, char *err, size_t errlen)
{
	hold(phase == KB_PHASE_PREPARE ? "prepare" : "call", 0);
	return do_call(ctx, c, phase, err, errlen);
}

static int
api_sync(void *ctx, double timeout_s, char *err, size_t errlen)
{
	const char *cap = getenv("KBENCH_FAKE_CUDA_MAX_WAIT_S");
	double		wait = timeout_s;

	(void) ctx;
	trace("sync");
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (mode == M_FAULT_SYNC)
	{
		snprintf(sticky, sizeof(sticky), "%s at fake_cuda.c: waiting for the device", ILLEGAL_ADDRESS);
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	}
	if (!busy)
		return KBC_OK;
	if (mode == M_HANG_FOREVER)
		block_forever("sync (ignoring its timeout)");
	if (cap && atof(cap) > 0 && atof(cap) < wait)
		wait = atof(cap);
	sleep_s(wait);
	return fail(KBC_TIMEOUT, err, errlen, "the device did not finish within %.0f s", wait);
}

/* KBENCH_FAKE_CUDA_TIMES: the sample time to report instead of the host's (measured) */
static double
fake_sample_ns(double measured)
{
	const char *v = getenv("KBENCH_FAKE_CUDA_TIMES");
	static uint64_t state = 0x5eed;
	double		lo = 10000,
				hi = 50000;

	if (v && strncmp(v, "steady", 6) == 0)
		return sscanf(v, "steady:%lf", &lo) == 1 && lo > 0 ? lo : 50000;
	if (v && strncmp(v, "jitter", 6) == 0)
	{
		if (sscanf(v, "jitter:%lf:%lf", &lo, &hi) != 2 || !(lo > 0 && hi >= lo))
			lo = 10000, hi = 50000;
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		return lo + (hi - lo) * (double) (state >> 11) / 9007199254740992.0;
	}
	return measured;
}

static int
api_time_one(void *ctx, const kb_call *c, void *flush, size_t flush_bytes, double *op_ns, double *total_ns,
			 double timeout_s, char *err, size_t errlen)
{
	int64_t		t0 = kb_now_ns(),
				t1;
	int			rc;

	trace("time_one");
	hold("time_one", ++time_one_count);
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (mode == M_FAULT_TIMED && time_one_count > 5)
		return fail(KBC_ERROR, err, errlen, "%s at fake_cuda.c: a timed sample", ILLEGAL_ADDRESS);
	if (flush && flush_bytes)
		memset(flush, 0, flush_bytes);
	t1 = kb_now_ns();
	rc = do_call(ctx, c, KB_PHASE_TIMED, err, errlen);
	if (rc == KBC_OK)
		rc = api_sync(ctx, timeout_s, err, errlen);
	*op_ns = fake_sample_ns((double) (kb_now_ns() - t1));
	*total_ns = (double) (kb_now_ns() - t0);
	return rc;
}

/*
 * A graph of ncalls calls, as libkbench_cuda.so's: the clears and calls run
 * one after another on the host, then the clears alone; traced with ncalls
 * ("time_graph 16").  KBENCH_FAKE_CUDA_TIMES replaces the per-call time.
 */
static int
api_time_graph(void *ctx, const kb_call *c, int64_t ncalls, void *flush, size_t flush_bytes, double *op_ns,
			   double *total_ns, double timeout_s, char *err, size_t errlen)
{
	static int	graph_count;
	char		what[64];
	int64_t		t0,
				t1,
				t2;
	int			rc = KBC_OK;

	snprintf(what, sizeof(what), "time_graph %lld", (long long) ncalls);
	trace(what);
	hold("time_graph", ++graph_count);
	if (sticky[0])
		return fail(KBC_ERROR, err, errlen, "%s", sticky);
	if (ncalls < 1)
		return fail(KBC_ERROR, err, errlen, "a graph of %lld calls", (long long) ncalls);
	if (mode == M_FAULT_TIMED)
		return fail(KBC_ERROR, err, errlen, "%s at fake_cuda.c: a timed sample", ILLEGAL_ADDRESS);
	t0 = kb_now_ns();
	for (int64_t i = 0; i < ncalls && rc == KBC_OK; i++)
	{
		if (flush && flush_bytes)
			memset(flush, 0, flush_bytes);
		rc = do_call(ctx, c, KB_PHASE_TIMED, err, errlen);
	}
	if (rc == KBC_OK)
		rc = api_sync(ctx, timeout_s, err, errlen);
	t1 = kb_now_ns();
	for (int64_t i = 0; i < ncalls && flush && flush_bytes; i++)
		memset(flush, 0, flush_bytes);
	t2 = kb_now_ns();
	/*
	 * Refused as the library refuses a graph no longer than its clears, but
	 * only in graph_noise mode: on a loaded host a preemption inside the
	 * clears' loop would make any test that clears flaky.
	 */
	if (rc == KBC_OK && mode == M_GRAPH_NOISE)
		return fail(KBC_ERROR, err, errlen, "a CUDA graph of %lld calls with their clears took no longer than its "
					"clears alone: the calls are within the clears' noise", (long long) ncalls);
	*total_ns = (double) (t1 - t0) / (double) ncalls;
	*op_ns = fake_sample_ns((t1 - t0) > (t2 - t1) ? (double) ((t1 - t0) - (t2 - t1)) / (double) ncalls : 1);
	return rc;
}

static const kbc_api api = {
	KBC_ABI_VERSION,
	api_device_count,
	api_device_info,
	api_open,
	api_close,
	api_alloc,
	api_free,
	api_fill,
	api_to_host,
	api_call,
	api_sync,
	api_time_one,
	api_time_graph,
};

__attribute__((visibility("default"))) const kbc_api *kbc_get_api(int abi);

const kbc_api *
kbc_get_api(int abi)
{
	return abi == KBC_ABI_VERSION ? &api : NULL;
}

/*
 * kbc_probe (kb_abi.h): the fake device's "ceilings", measured on the host
 * as the real one measures the GPU's: a copy (memcpy, read + write bytes),
 * an fp32 multiply-add loop, and a small fp32 matrix product standing for
 * the tf32, bf16 and fp16 GEMMs; no fp8 (left 0: not measured).  Best of 3
 * each.  fault_open fails as open does.
 */
__attribute__((visibility("default"))) int kbc_probe(int dev, kbc_probe_out *out, double timeout_s, char *err, size_t errlen);

int
kbc_probe(int dev, kbc_probe_out *out, double timeout_s, char *err, size_t errlen)
{
	int64_t		bytes = out->copy_bytes >= 4096 ? out->copy_bytes : (int64_t) 8 << 20;
	enum { N = 96 };
	static float a[N * N], b[N * N], c[N * N];
	char	   *src,
			   *dst;
	static volatile float sink;

	(void) timeout_s;
	trace("probe");
	memset(out, 0, sizeof(*out));
	if (!read_mode(err, errlen))
		return KBC_ERROR;
	if (dev != 0)
		return fail(KBC_ERROR, err, errlen, "cudaErrorInvalidDevice (invalid device ordinal)");
	if (mode == M_FAULT_OPEN)
		return fail(KBC_ERROR, err, errlen,
					"cudaErrorDevicesUnavailable (CUDA-capable device(s) is/are busy or unavailable) at fake_cuda.c: cudaSetDevice");
	src = malloc((size_t) bytes);
	dst = malloc((size_t) bytes);
	if (!src || !dst)
	{
		free(src);
		free(dst);
		return fail(KBC_ERROR, err, errlen, "out of host memory");
	}
	memset(src, 1, (size_t) bytes);
	memset(dst, 0, (size_t) bytes);
	out->copy_bytes = bytes;
	for (int r = 0; r < 3; r++)
	{
		int64_t		t0 = kb_now_ns();
		double		s;

		memcpy(dst, src, (size_t) bytes);
		s = (double) (kb_now_ns() - t0) * 1e-9;
		if (s > 0 && 2.0 * (double) bytes / s > out->copy_bytes_per_s)
			out->copy_bytes_per_s = 2.0 * (double) bytes / s;
	}
	sink = (float) dst[bytes - 1];
	free(src);
	free(dst);
	for (int r = 0; r < 3; r++)
	{
		float		x0 = 1, x1 = 2, x2 = 3, x3 = 4;
		int64_t		t0 = kb_now_ns();
		double		s;

		for (int i = 0; i < 1000000; i++)
		{
			x0 = x0 * 0.999999f + 1e-7f;
			x1 = x1 * 0.999999f + 1e-7f;
			x2 = x2 * 0.999999f + 1e-7f;
			x3 = x3 * 0.999999f + 1e-7f;
		}
		s = (double) (kb_now_ns() - t0) * 1e-9;
		sink = x0 + x1 + x2 + x3;
		if (s > 0 && 8e6 / s > out->fma_flops_per_s)
			out->fma_flops_per_s = 8e6 / s;
	}
	for (int i = 0; i < N * N; i++)
		a[i] = b[i] = (float) (i % 7);
	out->gemm_n = N;
	for (int r = 0; r < 3; r++)
	{
		int64_t		t0 = kb_now_ns();
		double		s;

		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++)
			{
				float		acc = 0;

				for (int k = 0; k < N; k++)
					acc += a[i * N + k] * b[k * N + j];
				c[i * N + j] = acc;
			}
		s = (double) (kb_now_ns() - t0) * 1e-9;
		sink = c[N + 1];
		for (int d = 0; d < 3; d++)
			if (s > 0 && 2.0 * N * N * N / s > out->gemm_flops_per_s[d])
				out->gemm_flops_per_s[d] = 2.0 * N * N * N / s;
	}
	(void) sink;
	snprintf(out->note, sizeof(out->note), "fake CUDA (kernelindex test double): host memcpy, host loops; no fp8");
	return KBC_OK;
}
