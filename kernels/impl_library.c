/*
 * impl_library.c: library implementations (kbench_impl.h), run in a forked
 * child that dlopen()s the library, so that one that crashes, hangs or
 * scribbles over memory ends the child and never the caller.
 *
 * The child is forked after the tensors are allocated and filled: it shares
 * their mapping (MAP_SHARED, the same addresses) and writes the outputs
 * there; it answers the same line protocol as the python harness (impl.c).
 * It touches nothing of the parent's state but that memory, and leaves with
 * _exit().  Fork without exec: the caller must be single-threaded at this
 * point (kbench and the server's cpu worker are); library implementations
 * run on the cpu device only.
 *
 * What the child loads is the bytes the parent read and verified
 * (impl_source.c: for a registered library, no symbolic link on its path and
 * the sha256 recorded at registration), copied into a sealed memfd that the
 * child dlopen()s as /proc/self/fd/N: the file is never opened again by its
 * path, so a swap after the check changes nothing.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "impl_int.h"
#include "kbench_impl.h"

static void
reply(int fd, const char *fmt,...) __attribute__((format(printf, 2, 3)));

static void
reply(int fd, const char *fmt,...)
{
	char		buf[600];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		_exit(1);
	if (n > (int) sizeof(buf) - 2)
		n = (int) sizeof(buf) - 2;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\n' || buf[i] == '\r')
			buf[i] = ' ';
	buf[n++] = '\n';
	for (int off = 0; off < n;)
	{
		ssize_t		w = send(fd, buf + off, (size_t) (n - off), MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(1);
		off += (int) w;
	}
}

/* One command line from the parent; false at its end. */
static bool
read_line(int fd, char *buf, size_t len)
{
	size_t		n = 0;

	while (n + 1 < len)
	{
		ssize_t		r = read(fd, buf + n, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return true;
}

static void
fill_call(const kb_ext *x, kbench_impl_call *k)
{
	const kb_case *cs = &x->cs;
	const kb_call *c = &x->call;

	memset(k, 0, sizeof(*k));
	k->abi = KBENCH_IMPL_ABI;
	k->op = cs->op->name;
	k->mode = kb_mode_name(cs->mode);
	k->dtype = kb_dtype_name(cs->dtype);
	k->device = "cpu";
	k->naxes = cs->op->naxes < 8 ? cs->op->naxes : 8;
	for (int i = 0; i < k->naxes; i++)
	{
		k->axis_names[i] = cs->op->axes[i].name;
		k->axes[i] = cs->ax[i];
	}
	k->ntensors = c->ntensors < 16 ? c->ntensors : 16;
	for (int i = 0; i < k->ntensors; i++)
	{
		k->tensors[i].name = x->plan->name[i];
		k->tensors[i].data = c->t[i];
		k->tensors[i].rows = c->rows[i];
		k->tensors[i].cols = c->cols[i];
		k->tensors[i].dtype = c->tdtype[i];
		k->tensors[i].is_input = x->plan->init[i] != KB_INIT_NONE;
		k->tensors[i].is_output = x->plan->is_output[i];
	}
}

/* The child: never returns. */
static void
serve(kb_ext *x, int fd, const char *path, const char *load, const char *symbol)
{
	void	   *h;
	int			(*abi) (void);
	kbench_impl_fn fn;
	kbench_impl_call k;
	char		cmd[1024];
	unsigned char *flush = NULL;
	size_t		flush_len = 0;

	if (!read_line(fd, cmd, sizeof(cmd)))
		_exit(0);
	h = dlopen(load, RTLD_NOW | RTLD_LOCAL);
	if (!h)
	{
		reply(fd, "err cannot load %s: %s", path, dlerror());
		_exit(1);
	}
	*(void **) (&abi) = dlsym(h, "kbench_impl_abi");
	if (!abi)
	{
		reply(fd, "err %s does not export kbench_impl_abi (KBENCH_IMPL_EXPORT_ABI in kbench_impl.h)", path);
		_exit(1);
	}
	if (abi() != KBENCH_IMPL_ABI)
	{
		reply(fd, "err %s was built for kbench_impl.h ABI %d; this kbench speaks ABI %d", path, abi(), KBENCH_IMPL_ABI);
		_exit(1);
	}
	*(void **) (&fn) = dlsym(h, symbol);
	if (!fn)
	{
		reply(fd, "err %s does not export %s", path, symbol);
		_exit(1);
	}
	reply(fd, "ok");
	for (;;)
	{
		int			phase = KBENCH_PHASE_TIMED;
		size_t		fb = 0;
		int64_t		t0,
					t1,
					t2;
		int			rc;

		if (!read_line(fd, cmd, sizeof(cmd)) || strcmp(cmd, "quit") == 0)
			_exit(0);
		if (strcmp(cmd, "readback") == 0)
		{
			reply(fd, "ok *");	/* the outputs are written in place */
			continue;
		}
		if (strcmp(cmd, "noop") == 0)
		{
			reply(fd, "ok");	/* kbench's own round trip (backend_child.c) */
			continue;
		}
		if (strncmp(cmd, "inputs ", 7) == 0)
		{
			/* the guard's next input set: tensor:offset in the shared mapping (measure.c) */
			const char *p = cmd + 7;
			bool		bad = false;

			while (*p)
			{
				char	   *e;
				long		i = strtol(p, &e, 10);
				unsigned long long off;

				if (*e != ':' || i < 0 || i >= x->call.ntensors)
				{
					bad = true;
					break;
				}
				off = strtoull(e + 1, &e, 10);
				if (off + (size_t) (x->call.rows[i] * x->call.cols[i]) * kb_dtype_size(x->call.tdtype[i]) > x->size)
				{
					bad = true;
					break;
				}
				x->call.t[i] = x->base + off;
				p = *e == ',' ? e + 1 : e;
			}
			if (bad)
				reply(fd, "err bad inputs command '%.40s'", cmd);
			else
				reply(fd, "ok");
			continue;
		}
		if (strcmp(cmd, "prepare") == 0)
			phase = KBENCH_PHASE_PREPARE;
		else if (strncmp(cmd, "time ", 5) == 0)
		{
			fb = (size_t) strtoull(cmd + 5, NULL, 10);
			if (fb > flush_len)
			{
				free(flush);
				flush = malloc(fb);
				flush_len = flush ? fb : 0;
				if (!flush)
				{
					reply(fd, "err out of memory for a %zu-byte flush buffer", fb);
					continue;
				}
			}
		}
		else if (strcmp(cmd, "call") != 0 && strcmp(cmd, "memory") != 0)
		{
			reply(fd, "err unknown command '%.40s'", cmd);
			continue;
		}
		fill_call(x, &k);
		k.phase = phase;
		t0 = kb_now_ns();
		if (fb)
		{
			/* as the cpu backend: write the flush buffer so the caches hold none of the inputs */
			memset(flush, (int) (t0 & 0xff), fb);
			__asm__ volatile ("" : : "r"(flush) : "memory");
		}
		t1 = kb_now_ns();
		rc = fn(&k);
		t2 = kb_now_ns();
		if (rc != 0)
		{
			k.error[sizeof(k.error) - 1] = '\0';
			reply(fd, "err %s returned %d%s%s", symbol, rc, k.error[0] ? ": " : "", k.error);
			continue;
		}
		if (strncmp(cmd, "time ", 5) == 0)
			reply(fd, "ok %lld %lld", (long long) (t2 - t1), (long long) (t2 - t0));
		else if (strcmp(cmd, "memory") == 0)
			/* the one rule (docs/KERNELS.md, "Peak memory"): inputs, outputs compared, what it reports allocating */
			reply(fd, "ok %lld", (long long) (kb_call_io_bytes(&x->call, x->plan) + (k.peak_bytes > 0 ? k.peak_bytes : 0)));
		else
			reply(fd, "ok");
	}
}

int
kb_library_start(kb_backend *be, double timeout_s)
{
	kb_ext	   *x = be->ext;
	char		path[1024],
				symbol[256],
				out[256],
				load[64];
	int			child_sock,
				code_fd,
				rc;
	pid_t		pid;

	/* the verified bytes, in a memfd the child maps: never the path again */
	if (!kb_ext_load_source(be, path, sizeof(path), symbol, sizeof(symbol)))
		return KBC_ERROR;
	code_fd = kb_ext_source_memfd(&x->src, "kbench-library", be->err, sizeof(be->err));
	if (code_fd < 0)
		return KBC_ERROR;
	snprintf(load, sizeof(load), "/proc/self/fd/%d", code_fd);
	if ((rc = kb_ext_channel(be, &child_sock)) != KBC_OK)
	{
		close(code_fd);
		return rc;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		snprintf(be->err, sizeof(be->err), "fork: %s", strerror(errno));
		close(child_sock);
		close(code_fd);
		return KBC_ERROR;
	}
	if (pid == 0)
	{
		kb_ext_child_init();
		/* the library's own messages (and a crash's) go to the pipe quoted on failure */
		dup2(x->err_fd, 2);
		dup2(x->err_fd, 1);
		close(x->sock);
		serve(x, child_sock, path, load, symbol);
		_exit(0);
	}
	close(child_sock);
	close(code_fd);
	x->pid = pid;
	return kb_ext_request(be, "setup\n", timeout_s, out, sizeof(out));
}
