/*
 * impl_python.c: python implementations, run by kernels/python/kbench_harness.py
 * in a child process (never Python inside the caller).
 *
 * The interpreter is the request's (kernelindex.python, kbench --python),
 * else $KBENCH_PYTHON, else python3 on PATH.  The harness is the request's,
 * else $KBENCH_HARNESS, else python/kbench_harness.py (or
 * kernelindex_python/kbench_harness.py) beside the object that holds
 * libkbench: kernels/ for kbench, the server's library directory for the
 * extension.  The child gets the protocol socket as fd 3 and the tensors'
 * memfd as fd 4, and for a user's file its source as fd 5: a sealed memfd
 * of the bytes read and verified here (impl_source.c), which the harness
 * compiles and runs (it never opens the file by its path); its stdout and
 * stderr go to a pipe (kernels/child.c keeps the last 1 MiB), whose end is
 * quoted when it fails.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl_int.h"
#include "ki_json.h"
#include "opdef.h"

/* Find an executable on PATH (or a path); false when there is none. */
static bool
find_program(const char *prog, char *out, size_t outlen)
{
	const char *path = getenv("PATH");

	if (strchr(prog, '/'))
	{
		snprintf(out, outlen, "%s", prog);
		return access(prog, X_OK) == 0;
	}
	if (!path)
		path = "/usr/bin:/bin";
	while (*path)
	{
		const char *e = strchr(path, ':');
		size_t		n = e ? (size_t) (e - path) : strlen(path);

		snprintf(out, outlen, "%.*s/%s", (int) n, n ? path : ".", prog);
		if (access(out, X_OK) == 0)
			return true;
		path += n + (e ? 1 : 0);
	}
	return false;
}

static const char *
interpreter(const kb_request *req)
{
	if (req->python && *req->python)
		return req->python;
	if (getenv("KBENCH_PYTHON") && *getenv("KBENCH_PYTHON"))
		return getenv("KBENCH_PYTHON");
	return "python3";
}

static bool
harness_path(const kb_request *req, char *out, size_t outlen, char *err, size_t errlen)
{
	char		dir[900];
	static const char *const sub[] = {"python", "kernelindex_python"};

	if (req->harness && *req->harness)
		snprintf(out, outlen, "%s", req->harness);
	else if (getenv("KBENCH_HARNESS") && *getenv("KBENCH_HARNESS"))
		snprintf(out, outlen, "%s", getenv("KBENCH_HARNESS"));
	else if (kb_object_dir((const void *) &harness_path, dir, sizeof(dir)))
	{
		for (size_t i = 0; i < 2; i++)
		{
			snprintf(out, outlen, "%s/%s/kbench_harness.py", dir, sub[i]);
			if (access(out, R_OK) == 0)
				return true;
		}
		snprintf(out, outlen, "%s/python/kbench_harness.py", dir);
	}
	else
		snprintf(out, outlen, "kbench_harness.py");
	if (access(out, R_OK) != 0)
	{
		snprintf(err, errlen, "the python harness %s cannot be read (%s)", out, strerror(errno));
		return false;
	}
	return true;
}

bool
kb_python_harness_file(const kb_request *req, const char *base, char *out, size_t outlen, char *err,
					   size_t errlen)
{
	char		h[1024];
	char	   *slash;

	if (!harness_path(req, h, sizeof(h), err, errlen))
		return false;
	slash = strrchr(h, '/');
	if (slash)
		*slash = '\0';
	snprintf(out, outlen, "%s/%s", slash ? h : ".", base);
	return true;
}

bool
kb_python_check(const kb_request *req, const kb_case *cs, char *err, size_t errlen)
{
	char		found[1024];
	const char *py = interpreter(req);

	(void) cs;
	if (!find_program(py, found, sizeof(found)))
	{
		snprintf(err, errlen, "the python interpreter '%s' is not %s; set kernelindex.python (kbench --python) "
				 "to one that has torch, e.g. /usr/bin/python3", py, strchr(py, '/') ? "executable" : "on PATH");
		return false;
	}
	return harness_path(req, found, sizeof(found), err, errlen);
}

/* The setup message: everything the harness needs to build the call. */
static char *
setup_json(const kb_ext *x)
{
	const kb_case *cs = &x->cs;
	const kb_call *c = &x->call;
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		dev[32];

	snprintf(dev, sizeof(dev), cs->cuda ? "cuda:%d" : "cpu", cs->device);
	kb_text_open(&t);
	ki_jw_obj(w);
	ki_jw_kstr(w, "op", cs->op->name);
	ki_jw_kstr(w, "mode", kb_mode_name(cs->mode));
	ki_jw_kstr(w, "dtype", kb_dtype_name(cs->dtype));
	ki_jw_kstr(w, "device", dev);
	if (cs->ext_builtin)
		ki_jw_kstr(w, "builtin", cs->ext_name);
	else
		ki_jw_kstr(w, "entry", cs->ext_entry);
	ki_jw_key(w, "axes");
	ki_jw_obj(w);
	for (int i = 0; i < cs->op->naxes; i++)
		ki_jw_kint(w, cs->op->axes[i].name, cs->ax[i]);
	ki_jw_end_obj(w);
	ki_jw_kint(w, "shm_size", (int64_t) x->size);
	ki_jw_kint(w, "flush_bytes", x->flush_bytes);
	ki_jw_key(w, "tensors");
	ki_jw_arr(w);
	for (int i = 0; i < c->ntensors; i++)
	{
		ki_jw_obj(w);
		ki_jw_kstr(w, "name", x->plan->name[i] ? x->plan->name[i] : "");
		ki_jw_kint(w, "offset", c->t[i] ? (int64_t) ((unsigned char *) c->t[i] - x->base) : -1);
		ki_jw_kint(w, "rows", c->rows[i]);
		ki_jw_kint(w, "cols", c->cols[i]);
		ki_jw_kstr(w, "dtype", kb_dtype_name(c->tdtype[i]));
		ki_jw_key(w, "input");
		ki_jw_bool(w, x->plan->init[i] != KB_INIT_NONE);
		ki_jw_key(w, "output");
		ki_jw_bool(w, x->plan->is_output[i] != 0);
		ki_jw_end_obj(w);
	}
	ki_jw_end_arr(w);
	if (cs->op->def)
		kb_opdef_setup_json(cs->op, c, w);	/* the float64 reference the child checks with */
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* The versions the child reported must be a flat object of short strings. */
static bool
valid_versions(const char *json)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *v;
	bool		ok;

	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	v = ki_parse(&a, json, strlen(json), &errs);
	ok = v && v->type == KI_OBJECT;
	for (size_t i = 0; ok && i < v->u.obj.count; i++)
	{
		const ki_str *k = &v->u.obj.members[i].key;
		const ki_value *m = v->u.obj.members[i].value;

		ok = k->len > 0 && k->len < 64 && k->ptr[0] >= 'a' && k->ptr[0] <= 'z';
		for (size_t j = 0; ok && j < k->len; j++)
			ok = strchr("abcdefghijklmnopqrstuvwxyz0123456789_", k->ptr[j]) != NULL && k->ptr[j];
		ok = ok && m->type == KI_STRING && m->u.str.len <= 200;
		for (size_t j = 0; ok && j < m->u.str.len; j++)
			ok = m->u.str.ptr[j] != '"' && m->u.str.ptr[j] != '\\';
	}
	ki_arena_reset(&a);
	return ok;
}

int
kb_python_start(kb_backend *be, double timeout_s)
{
	kb_ext	   *x = be->ext;
	const char *py = interpreter(x->req);
	char		harness[1024];
	char		out[4096];
	char	   *setup,
			   *msg;
	int			child_sock;
	int			code_fd = -1;
	int			rc;
	pid_t		pid;

	if (!harness_path(x->req, harness, sizeof(harness), be->err, sizeof(be->err)))
		return KBC_ERROR;
	if (!x->cs.ext_builtin)
	{
		char		path[1024],
					symbol[256];

		/* the verified source, handed over as bytes: never the path again */
		if (!kb_ext_load_source(be, path, sizeof(path), symbol, sizeof(symbol)))
			return KBC_ERROR;
		code_fd = kb_ext_source_memfd(&x->src, "kbench-source", be->err, sizeof(be->err));
		if (code_fd < 0)
			return KBC_ERROR;
	}
	setup = setup_json(x);
	if (!setup)
	{
		snprintf(be->err, sizeof(be->err), "out of host memory");
		if (code_fd >= 0)
			close(code_fd);
		return KBC_ERROR;
	}
	if ((rc = kb_ext_channel(be, &child_sock)) != KBC_OK)
	{
		free(setup);
		if (code_fd >= 0)
			close(code_fd);
		return rc;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
	{
		snprintf(be->err, sizeof(be->err), "fork: %s", strerror(errno));
		close(child_sock);
		if (code_fd >= 0)
			close(code_fd);
		free(setup);
		return KBC_ERROR;
	}
	if (pid == 0)
	{
		char	   *argv[4];

		int			sock_hi,
					shm_hi,
					err_hi,
					code_hi = -1;

		kb_ext_child_init();
		/* above every target first: a source may be one of the targets' numbers */
		sock_hi = fcntl(child_sock, F_DUPFD, 10);
		shm_hi = fcntl(x->shm_fd, F_DUPFD, 10);
		err_hi = fcntl(x->err_fd, F_DUPFD, 10);
		if (code_fd >= 0 && (code_hi = fcntl(code_fd, F_DUPFD, 10)) < 0)
			_exit(126);
		if (sock_hi < 0 || shm_hi < 0 || err_hi < 0 || dup2(sock_hi, 3) < 0 || dup2(shm_hi, 4) < 0 ||
			dup2(err_hi, 2) < 0 || dup2(err_hi, 1) < 0 || (code_hi >= 0 && dup2(code_hi, 5) < 0))
			_exit(126);
		{
			int			null = open("/dev/null", O_RDONLY);

			if (null >= 0 && null != 0)
			{
				dup2(null, 0);
				close(null);
			}
		}
		close_range(code_hi >= 0 ? 6 : 5, ~0U, 0);
		argv[0] = (char *) py;
		argv[1] = harness;
		argv[2] = NULL;
		execvp(py, argv);
		dprintf(3, "err cannot execute the python interpreter '%s': %s\n", py, strerror(errno));
		_exit(127);
	}
	close(child_sock);
	if (code_fd >= 0)
		close(code_fd);
	x->pid = pid;
	msg = malloc(strlen(setup) + 8);
	if (!msg)
	{
		free(setup);
		snprintf(be->err, sizeof(be->err), "out of host memory");
		return KBC_ERROR;
	}
	sprintf(msg, "setup %s\n", setup);
	free(setup);
	rc = kb_ext_request(be, msg, timeout_s, out, sizeof(out));
	free(msg);
	if (rc != KBC_OK)
		return rc;
	if (out[0])
	{
		if (!valid_versions(out))
		{
			snprintf(be->err, sizeof(be->err), "the python child reported versions that are not a JSON object of strings");
			x->failed = true;
			x->failed_rc = KBC_ERROR;
			return KBC_ERROR;
		}
		x->versions = strdup(out);
	}
	return KBC_OK;
}
