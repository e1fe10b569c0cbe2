/*
 * test/byo/ln_lib.c: a library implementation (kbench_impl.h) of layer_norm
 * for test/suites/byo.sh and docs/BYO.md: forward and backward in plain C
 * with fp32 accumulation, fp32 only.  "ln_crash" and "ln_hang" fail on
 * purpose; "ln_wrong" scales dx by 1.01.  For test/suites/supervise.sh:
 * "ln_daemon" leaves a daemon (setsid and a double fork, "sleep N", N from
 * $KB_DAEMON_S, default 4545) and
 * passes; "ln_flood" prints $KB_FLOOD_MIB MiB (default 300), waits 3 s and
 * fails; "ln_slow" sleeps in its first timed call ($KB_SLOW_S s, default 20)
 * and passes.  The cheats of issue 27, each of which must not end as a
 * passed run: "ln_replay" computes once and copies that answer into every
 * later call's outputs, "ln_ignores" computes every call from a private copy
 * of the first call's inputs, "ln_first_only" works on its first timed call
 * only, "ln_every_other" on every other call, "ln_late" returns at once and
 * lets a thread write the outputs 50 ms later.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kbench_impl.h"

KBENCH_IMPL_EXPORT_ABI

static kbench_tensor *
tensor(kbench_impl_call *c, const char *name)
{
	for (int i = 0; i < c->ntensors; i++)
		if (strcmp(c->tensors[i].name, name) == 0)
			return &c->tensors[i];
	return NULL;
}

static int
layer_norm(kbench_impl_call *c, float dx_scale)
{
	int64_t		R = c->axes[0],
				H = c->axes[1];
	const float *x,
			   *w,
			   *b,
			   *dy;
	float	   *dw,
			   *db;
	float	   *acc;

	if (strcmp(c->dtype, "fp32") != 0)
	{
		strcpy(c->error, "this example handles fp32 only");
		return 1;
	}
	if (c->phase == KBENCH_PHASE_PREPARE)
		return 0;
	x = tensor(c, "x")->data;
	w = tensor(c, "weight")->data;
	b = tensor(c, "bias")->data;
	acc = calloc((size_t) (2 * H), sizeof(float));
	if (!acc)
	{
		strcpy(c->error, "out of memory");
		return 1;
	}
	c->peak_bytes = (int64_t) (2 * H * sizeof(float));
	dy = strcmp(c->mode, "forward") ? tensor(c, "dy")->data : NULL;
	dw = strcmp(c->mode, "forward") ? tensor(c, "dweight")->data : NULL;
	db = strcmp(c->mode, "forward") ? tensor(c, "dbias")->data : NULL;
	for (int64_t r = 0; r < R; r++)
	{
		const float *xr = x + r * H;
		float		m = 0,
					v = 0,
					rs;

		for (int64_t j = 0; j < H; j++)
			m += xr[j];
		m /= (float) H;
		for (int64_t j = 0; j < H; j++)
			v += (xr[j] - m) * (xr[j] - m);
		v /= (float) H;
		rs = 1.0f / sqrtf(v + 1e-6f);
		if (strcmp(c->mode, "backward"))
		{
			float	   *y = (float *) tensor(c, "y")->data + r * H;

			for (int64_t j = 0; j < H; j++)
				y[j] = (xr[j] - m) * rs * w[j] + b[j];
			((float *) tensor(c, "mean")->data)[r] = m;
			((float *) tensor(c, "rstd")->data)[r] = rs;
		}
		if (dy)
		{
			const float *dyr = dy + r * H;
			float	   *dxr = (float *) tensor(c, "dx")->data + r * H;
			float		c1 = 0,
						c2 = 0;

			for (int64_t j = 0; j < H; j++)
			{
				float		xh = (xr[j] - m) * rs;

				c1 += xh * w[j] * dyr[j];
				c2 += w[j] * dyr[j];
				acc[j] += dyr[j] * xh;
				acc[H + j] += dyr[j];
			}
			c1 /= (float) H;
			c2 /= (float) H;
			for (int64_t j = 0; j < H; j++)
				dxr[j] = dx_scale * (w[j] * dyr[j] - (xr[j] - m) * rs * c1 - c2) * rs;
		}
	}
	if (dw)
		for (int64_t j = 0; j < H; j++)
		{
			dw[j] = acc[j];
			db[j] = acc[H + j];
		}
	free(acc);
	return 0;
}

int			ln_good(kbench_impl_call *c);
int			ln_wrong(kbench_impl_call *c);
int			ln_crash(kbench_impl_call *c);
int			ln_hang(kbench_impl_call *c);
int			ln_daemon(kbench_impl_call *c);
int			ln_flood(kbench_impl_call *c);
int			ln_slow(kbench_impl_call *c);

int
ln_good(kbench_impl_call *c)
{
	return layer_norm(c, 1.0f);
}

int
ln_wrong(kbench_impl_call *c)
{
	return layer_norm(c, 1.01f);
}

int
ln_crash(kbench_impl_call *c)
{
	if (c->phase == KBENCH_PHASE_TIMED)
		raise(SIGSEGV);
	return 0;
}

int
ln_hang(kbench_impl_call *c)
{
	if (c->phase == KBENCH_PHASE_TIMED)
		for (;;)
			pause();
	return 0;
}

int
ln_daemon(kbench_impl_call *c)
{
	if (c->phase == KBENCH_PHASE_PREPARE)
	{
		pid_t		p = fork();

		if (p == 0)
		{
			/* a session of its own (out of the process group), then the daemon's fork */
			setsid();
			if (fork() == 0)
			{
				const char *n = getenv("KB_DAEMON_S");

				execlp("sleep", "sleep", n ? n : "4545", (char *) NULL);
				_exit(127);
			}
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return layer_norm(c, 1.0f);
}

int
ln_flood(kbench_impl_call *c)
{
	static char chunk[1 << 20];
	const char *e = getenv("KB_FLOOD_MIB");
	long		mib = e ? atol(e) : 300;

	if (c->phase != KBENCH_PHASE_PREPARE)
		return layer_norm(c, 1.0f);
	memset(chunk, 'x', sizeof(chunk));
	chunk[sizeof(chunk) - 1] = '\n';
	for (long i = 0; i < mib; i++)
		for (size_t off = 0; off < sizeof(chunk);)
		{
			ssize_t		n = write(1, chunk + off, sizeof(chunk) - off);

			if (n <= 0)
				return 1;
			off += (size_t) n;
		}
	sleep(3);
	fprintf(stderr, "the flood is over\n");
	fflush(stderr);
	snprintf(c->error, sizeof(c->error), "flooded on purpose");
	return 1;
}

int
ln_slow(kbench_impl_call *c)
{
	static int	slept = 0;
	const char *e = getenv("KB_SLOW_S");

	if (c->phase == KBENCH_PHASE_TIMED && !slept)
	{
		slept = 1;
		sleep((unsigned) (e ? atoi(e) : 20));
	}
	return layer_norm(c, 1.0f);
}

int			ln_replay(kbench_impl_call *c);
int			ln_ignores(kbench_impl_call *c);
int			ln_first_only(kbench_impl_call *c);
int			ln_every_other(kbench_impl_call *c);
int			ln_late(kbench_impl_call *c);

static size_t
nbytes(const kbench_tensor *t)
{
	return (size_t) (t->rows * t->cols) * (t->dtype == KBENCH_I64 ? 8 : t->dtype == KBENCH_BF16 ? 2 : 4);
}

int
ln_replay(kbench_impl_call *c)
{
	static void *saved[16];
	static int	have = 0;

	if (c->phase != KBENCH_PHASE_TIMED)
		return layer_norm(c, 1.0f);
	if (!have)
	{
		int			rc = layer_norm(c, 1.0f);

		for (int i = 0; i < c->ntensors; i++)
			if (c->tensors[i].is_output && (saved[i] = malloc(nbytes(&c->tensors[i]))))
				memcpy(saved[i], c->tensors[i].data, nbytes(&c->tensors[i]));
		have = 1;
		return rc;
	}
	for (int i = 0; i < c->ntensors; i++)
		if (saved[i])
			memcpy(c->tensors[i].data, saved[i], nbytes(&c->tensors[i]));
	return 0;
}

int
ln_ignores(kbench_impl_call *c)
{
	static void *frozen[16];
	kbench_impl_call k = *c;

	for (int i = 0; i < c->ntensors; i++)
		if (c->tensors[i].is_input)
		{
			if (!frozen[i] && (frozen[i] = malloc(nbytes(&c->tensors[i]))))
				memcpy(frozen[i], c->tensors[i].data, nbytes(&c->tensors[i]));
			if (frozen[i])
				k.tensors[i].data = frozen[i];
		}
	return layer_norm(&k, 1.0f);
}

int
ln_first_only(kbench_impl_call *c)
{
	static int	done = 0;

	if (c->phase == KBENCH_PHASE_TIMED && done)
		return 0;
	if (c->phase == KBENCH_PHASE_TIMED)
		done = 1;
	return layer_norm(c, 1.0f);
}

int
ln_every_other(kbench_impl_call *c)
{
	static long n = 0;

	if (c->phase == KBENCH_PHASE_TIMED && n++ % 2 == 1)
		return 0;
	return layer_norm(c, 1.0f);
}

static void *
late(void *arg)
{
	kbench_impl_call *k = arg;

	usleep(50000);
	layer_norm(k, 1.0f);
	free(k);
	return NULL;
}

int
ln_late(kbench_impl_call *c)
{
	kbench_impl_call *k;
	pthread_t	t;

	if (c->phase != KBENCH_PHASE_TIMED)
		return layer_norm(c, 1.0f);
	if (!(k = malloc(sizeof(*k))))
		return 1;
	*k = *c;
	if (pthread_create(&t, NULL, late, k) != 0)
	{
		free(k);
		return 1;
	}
	pthread_detach(t);
	return 0;
}
