/*
 * probe.c: the measured ceilings of a device (kbench.h, kb_probe_device;
 * docs/KERNELS.md "Measured ceilings").
 *
 * cpu: a STREAM-like copy (c[i] = a[i]: 16 bytes per double moved) and triad
 * (a[i] = b[i] + s * c[i]: 24 bytes), counted as STREAM counts them (no
 * write-allocate traffic, as the cost formulas count compulsory bytes), best
 * of KB_PROBE_PASSES passes over arrays of at least 32 MiB and four times
 * the last-level cache; and an FMA loop (12 independent fp32 accumulators,
 * 2 FLOPs per lane per FMA) on the widest vector unit the CPU reports.  Each
 * on one thread (kbench's own CPU kernels run on one) and on every online
 * CPU (each thread its own slice, first touched by it), the threads started
 * together at a barrier and timed from it to the last one's end.
 *
 * cuda:N: libkbench_cuda.so's kbc_probe (kernels/cuda/probe.cu): a copy
 * kernel and a cuBLASLt GEMM per dtype.  Not measured on a GPU yet.
 *
 * No figure is made up: one that was not measured stays 0 and is absent from
 * the JSON (left out) and NULL in the database.  Nothing here asserts a speed; the numbers are what they are.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_int.h"
#include "ki_json.h"

#define KB_PROBE_PASSES 5
#define KB_PROBE_MAX_THREADS 256
#define KB_PROBE_ACC 12

typedef struct probe_shared
{
	pthread_barrier_t start;
	pthread_barrier_t stop;
	int			nthreads;
	int64_t		n;				/* doubles per array */
	double	   *a,
			   *b,
			   *c;
	int			kind;			/* 0 copy, 1 triad, 2 fma, 3 first touch, -1 quit */
	pthread_mutex_t gate_mu;	/* the threads wait here until the barriers exist */
	pthread_cond_t gate_cv;
	bool		gate_open;
	int64_t		fma_iters;
	volatile float sink[KB_PROBE_MAX_THREADS];
} probe_shared;

typedef struct probe_thread
{
	probe_shared *s;
	int			id;
} probe_thread;

/* ------------------------------------------------------------ the FMA loops */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx512f"))) static float
fma_avx512(int64_t iters)
{
	__m512		acc[KB_PROBE_ACC];
	__m512		m = _mm512_set1_ps(0.999999f),
				k = _mm512_set1_ps(1e-7f);

	for (int j = 0; j < KB_PROBE_ACC; j++)
		acc[j] = _mm512_set1_ps((float) j);
	for (int64_t i = 0; i < iters; i++)
		for (int j = 0; j < KB_PROBE_ACC; j++)
			acc[j] = _mm512_fmadd_ps(acc[j], m, k);
	for (int j = 1; j < KB_PROBE_ACC; j++)
		acc[0] = _mm512_add_ps(acc[0], acc[j]);
	return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) static float
fma_avx2(int64_t iters)
{
	__m256		acc[KB_PROBE_ACC];
	__m256		m = _mm256_set1_ps(0.999999f),
				k = _mm256_set1_ps(1e-7f);
	float		out[8];

	for (int j = 0; j < KB_PROBE_ACC; j++)
		acc[j] = _mm256_set1_ps((float) j);
	for (int64_t i = 0; i < iters; i++)
		for (int j = 0; j < KB_PROBE_ACC; j++)
			acc[j] = _mm256_fmadd_ps(acc[j], m, k);
	for (int j = 1; j < KB_PROBE_ACC; j++)
		acc[0] = _mm256_add_ps(acc[0], acc[j]);
	_mm256_storeu_ps(out, acc[0]);
	return out[0] + out[7];
}
#endif

/* Any compiler, any CPU: 4-wide vectors of the compiler's choosing (a multiply and an add). */
typedef float kb_v4f __attribute__((vector_size(16)));

static float
fma_generic(int64_t iters)
{
	kb_v4f		acc[KB_PROBE_ACC];
	kb_v4f		m = {0.999999f, 0.999999f, 0.999999f, 0.999999f},
				k = {1e-7f, 1e-7f, 1e-7f, 1e-7f};

	for (int j = 0; j < KB_PROBE_ACC; j++)
		acc[j] = (kb_v4f) {(float) j, (float) j, (float) j, (float) j};
	for (int64_t i = 0; i < iters; i++)
		for (int j = 0; j < KB_PROBE_ACC; j++)
			acc[j] = acc[j] * m + k;
	for (int j = 1; j < KB_PROBE_ACC; j++)
		acc[0] += acc[j];
	return acc[0][0] + acc[0][3];
}

/* The widest unit this CPU has, its lanes, and its name. */
static float (*fma_loop) (int64_t) = fma_generic;
static int	fma_lanes = 4;
static const char *fma_isa = "generic";

static void
choose_fma(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
	{
		fma_loop = fma_avx512;
		fma_lanes = 16;
		fma_isa = "avx512f";
	}
	else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
	{
		fma_loop = fma_avx2;
		fma_lanes = 8;
		fma_isa = "avx2+fma";
	}
#endif
}

/* ------------------------------------------------------------ the threads */

static void
slice(const probe_shared *s, int id, int64_t *lo, int64_t *hi)
{
	int64_t		per = (s->n + s->nthreads - 1) / s->nthreads;

	*lo = per * id < s->n ? per * id : s->n;
	*hi = *lo + per < s->n ? *lo + per : s->n;
}

static void
work(probe_shared *s, int id)
{
	int64_t		lo,
				hi;

	slice(s, id, &lo, &hi);
	if (s->kind == 0)
	{
		double	   *restrict a = s->a,
				   *restrict c = s->c;

		for (int64_t i = lo; i < hi; i++)
			c[i] = a[i];
	}
	else if (s->kind == 1)
	{
		double	   *restrict a = s->a,
				   *restrict b = s->b,
				   *restrict c = s->c;

		for (int64_t i = lo; i < hi; i++)
			a[i] = b[i] + 3.0 * c[i];
	}
	else if (s->kind == 2)
		s->sink[id] = fma_loop(s->fma_iters);
	else if (s->kind == 3)
	{
		/* first touch: each thread's slice on its own memory node */
		for (int64_t i = lo; i < hi; i++)
		{
			s->a[i] = 1.0;
			s->b[i] = 2.0;
			s->c[i] = 0.0;
		}
	}
}

static void *
thread_main(void *arg)
{
	probe_thread *t = arg;
	probe_shared *s = t->s;

	pthread_mutex_lock(&s->gate_mu);
	while (!s->gate_open)
		pthread_cond_wait(&s->gate_cv, &s->gate_mu);
	pthread_mutex_unlock(&s->gate_mu);
	for (;;)
	{
		pthread_barrier_wait(&s->start);
		if (s->kind < 0)
			return NULL;
		work(s, t->id);
		pthread_barrier_wait(&s->stop);
	}
}

/* One timed pass of kind on all of s's threads (the caller is thread 0): its seconds. */
static double
pass(probe_shared *s, int kind)
{
	int64_t		t0,
				t1;

	s->kind = kind;
	pthread_barrier_wait(&s->start);
	t0 = kb_now_ns();
	work(s, 0);
	pthread_barrier_wait(&s->stop);
	t1 = kb_now_ns();
	return (double) (t1 - t0) * 1e-9;
}

/* Copy, triad and FMA on nthreads threads (*used: those that started) into *copy, *triad, *fma. */
static int
measure_cpu(int nthreads, int64_t n, double *copy, double *triad, double *fma, int *used, char *err, size_t errlen)
{
	probe_shared s;
	pthread_t	tid[KB_PROBE_MAX_THREADS];
	probe_thread targ[KB_PROBE_MAX_THREADS];
	int			started = 0;
	double		best;
	int64_t		iters;
	int			rc = 0;
	sigset_t	all,
				old;

	*used = 0;
	memset(&s, 0, sizeof(s));
	s.nthreads = nthreads;
	s.n = n;
	s.a = aligned_alloc(64, (size_t) n * sizeof(double));
	s.b = aligned_alloc(64, (size_t) n * sizeof(double));
	s.c = aligned_alloc(64, (size_t) n * sizeof(double));
	if (!s.a || !s.b || !s.c)
	{
		snprintf(err, errlen, "out of host memory allocating 3 x %lld bytes", (long long) (n * (int64_t) sizeof(double)));
		free(s.a);
		free(s.b);
		free(s.c);
		return -1;
	}
	pthread_mutex_init(&s.gate_mu, NULL);
	pthread_cond_init(&s.gate_cv, NULL);
	/* the probe threads take no signals: they stay the caller's (a server backend's handlers) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 1; i < nthreads; i++)
	{
		targ[i].s = &s;
		targ[i].id = i;
		if (pthread_create(&tid[i], NULL, thread_main, &targ[i]) != 0)
			break;				/* measure with the threads that started */
		started = i;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* the barriers count the threads that exist, then the gate lets them in */
	s.nthreads = nthreads = started + 1;
	*used = nthreads;
	pthread_barrier_init(&s.start, NULL, (unsigned) nthreads);
	pthread_barrier_init(&s.stop, NULL, (unsigned) nthreads);
	pthread_mutex_lock(&s.gate_mu);
	s.gate_open = true;
	pthread_cond_broadcast(&s.gate_cv);
	pthread_mutex_unlock(&s.gate_mu);
	{
		pass(&s, 3);			/* first touch, untimed */
		best = 0;
		for (int p = 0; p < KB_PROBE_PASSES; p++)
		{
			double		sec = pass(&s, 0);

			if (sec > 0 && 16.0 * (double) n / sec > best)
				best = 16.0 * (double) n / sec;
		}
		*copy = best;
		best = 0;
		for (int p = 0; p < KB_PROBE_PASSES; p++)
		{
			double		sec = pass(&s, 1);

			if (sec > 0 && 24.0 * (double) n / sec > best)
				best = 24.0 * (double) n / sec;
		}
		*triad = best;
		/* FMA: grow the loop until a pass takes 20 ms, then the best of the passes */
		for (iters = 1 << 14;; iters *= 2)
		{
			s.fma_iters = iters;
			if (pass(&s, 2) > 0.02 || iters > ((int64_t) 1 << 40))
				break;
		}
		best = 0;
		for (int p = 0; p < KB_PROBE_PASSES; p++)
		{
			double		sec = pass(&s, 2);
			double		flops = 2.0 * (double) iters * KB_PROBE_ACC * fma_lanes * nthreads;

			if (sec > 0 && flops / sec > best)
				best = flops / sec;
		}
		*fma = best;
	}
	/* stop the threads */
	s.kind = -1;
	pthread_barrier_wait(&s.start);
	for (int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&s.start);
	pthread_barrier_destroy(&s.stop);
	pthread_mutex_destroy(&s.gate_mu);
	pthread_cond_destroy(&s.gate_cv);
	free(s.a);
	free(s.b);
	free(s.c);
	return rc;
}

/* Bytes of each array: asked (>= 4096), else KBENCH_PROBE_BYTES if set, else 4 x the last-level cache, at least 32 MiB
 * and at most 128 MiB (some hosts report the L3 of the whole package; 3 x 128 MiB is far past any
 * one core's share of it). */
static int64_t
array_bytes(int64_t asked)
{
	const char *env = getenv("KBENCH_PROBE_BYTES");
	int64_t		b = (int64_t) 32 << 20;
	long		l3 = -1;

	if (asked >= 4096)
		return asked / 64 * 64;
	if (env && *env && atoll(env) >= 4096)
		return atoll(env) / 64 * 64;
#ifdef _SC_LEVEL3_CACHE_SIZE
	l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
	if (l3 > 0 && 4 * (int64_t) l3 > b)
		b = 4 * (int64_t) l3;
	return b > ((int64_t) 128 << 20) ? (int64_t) 128 << 20 : b;
}

static double
load_average(void)
{
	FILE	   *f = fopen("/proc/loadavg", "r");
	double		l = -1;

	if (f)
	{
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* ------------------------------------------------------------ kb_probe_device */

int
kb_probe_describe(const char *device, kb_probe *out)
{
	kb_backend	be;
	char	   *text;
	int			dev = -1;

	memset(out, 0, sizeof(*out));
	out->load1 = load_average();
	snprintf(out->device, sizeof(out->device), "%s", device ? device : "cpu");
	memset(&be, 0, sizeof(be));
	be.clock_default_mhz = -1;
	if (strncmp(out->device, "cuda:", 5) == 0)
	{
		char	   *end;
		long		d = strtol(out->device + 5, &end, 10);

		if (end == out->device + 5 || *end || d < 0 || d >= 1024)
		{
			snprintf(out->message, sizeof(out->message), "unknown device \"%s\"; use cpu or cuda:N", out->device);
			return -1;
		}
		dev = (int) d;
		be.cuda = true;
		be.device = dev;
		if (kb_cuda_describe(&be, dev) != KBC_OK)
		{
			if (snprintf(out->message, sizeof(out->message), "cuda:%d is not available: %.450s", dev, be.err) < 0)
				out->message[0] = '\0';
			return -1;
		}
	}
	else if (strcmp(out->device, "cpu") != 0)
	{
		snprintf(out->message, sizeof(out->message), "unknown device \"%s\"; use cpu or cuda:N", out->device);
		return -1;
	}
	text = kb_environment_text(&be);
	if (!text || !kb_manifest_finish(text, &out->environment_json, out->environment_digest,
									 out->message, sizeof(out->message)))
	{
		free(text);
		if (!out->message[0])
			snprintf(out->message, sizeof(out->message), "out of memory building the environment manifest");
		return -1;
	}
	free(text);
	return 0;
}

int
kb_probe_device(const char *device, int64_t bytes, kb_probe *out)
{
	int			dev = -1;
	int64_t		t0 = kb_now_ns();

	if (kb_probe_describe(device, out) != 0)
		return -1;
	if (strncmp(out->device, "cuda:", 5) == 0)
		dev = atoi(out->device + 5);
	if (dev >= 0)
	{
		kbc_probe_fn fn = kb_cuda_probe_fn();
		kbc_probe_out po;

		if (!fn)
		{
			snprintf(out->message, sizeof(out->message),
					 "cuda:%d cannot be probed: libkbench_cuda.so has no kbc_probe (built before 0.3.0)", dev);
			return -1;
		}
		memset(&po, 0, sizeof(po));
		po.copy_bytes = bytes;
		if (fn(dev, &po, 120.0, out->message, sizeof(out->message)) != KBC_OK)
			return -1;
		out->threads = 0;
		out->array_bytes = po.copy_bytes;
		out->copy_bytes_per_s = po.copy_bytes_per_s;
		out->fma_flops_per_s = po.fma_flops_per_s;
		for (int i = 0; i < KB_PROBE_GEMMS; i++)
			out->gemm_flops_per_s[i] = po.gemm_flops_per_s[i];
		snprintf(out->note, sizeof(out->note), "%s", po.note);
	}
	else
	{
		long		nproc = sysconf(_SC_NPROCESSORS_ONLN);
		int64_t		n = array_bytes(bytes) / (int64_t) sizeof(double);

		choose_fma();
		snprintf(out->isa, sizeof(out->isa), "%s", fma_isa);
		out->threads = nproc < 1 ? 1 : nproc > KB_PROBE_MAX_THREADS ? KB_PROBE_MAX_THREADS : (int) nproc;
		out->array_bytes = n * (int64_t) sizeof(double);
		int			one;

		if (measure_cpu(1, n, &out->copy_bytes_per_s_1t, &out->triad_bytes_per_s_1t, &out->fma_flops_per_s_1t,
						&one, out->message, sizeof(out->message)) != 0 ||
			measure_cpu(out->threads, n, &out->copy_bytes_per_s, &out->triad_bytes_per_s, &out->fma_flops_per_s,
						&out->threads, out->message, sizeof(out->message)) != 0)
			return -1;
		snprintf(out->note, sizeof(out->note),
				 "best of %d passes; copy 16 and triad 24 bytes per element (no write-allocate); "
				 "fp32 FMA %d lanes x %d accumulators", KB_PROBE_PASSES, fma_lanes, KB_PROBE_ACC);
	}
	out->seconds = (double) (kb_now_ns() - t0) * 1e-9;
	return 0;
}

/* A figure that was not measured is left out (the database stores it as NULL). */
static void
knum_or_null(ki_jw *w, const char *k, double v)
{
	if (v > 0)
		ki_jw_knum(w, k, v);
}

char *
kb_probe_json(const kb_probe *p)
{
	kb_text		t;
	ki_jw	   *w = kb_text_open(&t);
	static const char *const gemm[KB_PROBE_GEMMS] = {"tf32", "bf16", "fp16", "fp8"};
	bool		cuda = strncmp(p->device, "cuda:", 5) == 0;

	ki_jw_obj(w);
	ki_jw_kstr(w, "device", p->device);
	ki_jw_kstr(w, "environment_digest", p->environment_digest);
	if (p->environment_json)
	{
		ki_jw_key(w, "environment");
		ki_jw_json(w, p->environment_json);
	}
	ki_jw_kstr(w, "kbench_version", KB_VERSION);
	if (!cuda)
	{
		ki_jw_kint(w, "threads", p->threads);
		ki_jw_kstr(w, "isa", p->isa);
	}
	ki_jw_kint(w, "array_bytes", p->array_bytes);
	knum_or_null(w, "copy_bytes_per_s", p->copy_bytes_per_s);
	knum_or_null(w, "triad_bytes_per_s", p->triad_bytes_per_s);
	knum_or_null(w, "copy_bytes_per_s_1t", p->copy_bytes_per_s_1t);
	knum_or_null(w, "triad_bytes_per_s_1t", p->triad_bytes_per_s_1t);
	knum_or_null(w, "fma_flops_per_s", p->fma_flops_per_s);
	knum_or_null(w, "fma_flops_per_s_1t", p->fma_flops_per_s_1t);
	for (int i = 0; i < KB_PROBE_GEMMS; i++)
	{
		char		k[40];

		snprintf(k, sizeof(k), "gemm_%s_flops_per_s", gemm[i]);
		knum_or_null(w, k, p->gemm_flops_per_s[i]);
	}
	if (p->load1 >= 0)
		ki_jw_knum(w, "load1", p->load1);
	ki_jw_knum(w, "seconds", p->seconds);
	ki_jw_kstr(w, "note", p->note);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

void
kb_probe_free(kb_probe *p)
{
	free(p->environment_json);
	p->environment_json = NULL;
}
