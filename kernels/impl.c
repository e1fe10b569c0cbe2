/*
 * impl.c: implementations other than kbench's own, run by a child process.
 *
 * A python implementation (kernels/python/kbench_harness.py, exec'd with
 * the configured interpreter: impl_python.c) or a library implementation
 * (a forked child that dlopen()s it: impl_library.c) runs in its own process
 * under the same protocol as the built-in ones: kb_run allocates the
 * tensors here, in one shared mapping (a memfd), fills the inputs with the
 * counter-based generator, and drives the child through measure(): one
 * command per call, each answered before the next, with a deadline.  The
 * child times each sample itself (CUDA events or CLOCK_MONOTONIC around the
 * call, the flush before it) and returns it; after the timing it writes the
 * outputs into the mapping and the operation's check compares them with the
 * float64 reference, in C, as for every run.
 *
 * The wire protocol (a stream socket, one line each way):
 *   parent: setup <json> | prepare | call | time <flush_bytes> | memory | readback | quit
 *   child:  ok [values] | err <message>
 * Anything else, a child that exits, crashes or does not answer by the
 * deadline ends the run (runtime_error or timeout) with what happened and
 * the end of the child's stderr; the child is killed, the caller goes on.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl_int.h"
#include "ki_json.h"

/* ------------------------------------------------------------ parsing a request */

/* the built-in python implementations (kernels/python/kbench_builtin.py), for every operation */
const char *const kb_builtin_python[] = {"huggingface", "torch", "liger"};
const int	kb_builtin_python_count = sizeof(kb_builtin_python) / sizeof(kb_builtin_python[0]);

static bool
valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 100 || !(islower((unsigned char) s[0]) || isdigit((unsigned char) s[0])))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char) *s) || isdigit((unsigned char) *s) || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

bool
kb_ext_split_entry(const char *entry, int *kind, char *path, size_t pathlen, char *symbol, size_t symlen,
				   char *err, size_t errlen)
{
	const char *rest,
			   *colon;

	if (strncmp(entry, "python:", 7) == 0)
		*kind = KB_EXT_PYTHON;
	else if (strncmp(entry, "library:", 8) == 0)
		*kind = KB_EXT_LIBRARY;
	else
	{
		snprintf(err, errlen, "entry '%s' must be python:/dir/file.py:function or library:/dir/libx.so:symbol", entry);
		return false;
	}
	rest = entry + (*kind == KB_EXT_PYTHON ? 7 : 8);
	colon = strrchr(rest, ':');
	if (!colon || colon == rest || !colon[1])
	{
		snprintf(err, errlen, "entry '%s' names no %s: write %s", entry,
				 *kind == KB_EXT_PYTHON ? "function" : "symbol",
				 *kind == KB_EXT_PYTHON ? "python:/dir/file.py:function" : "library:/dir/libx.so:symbol");
		return false;
	}
	if ((size_t) (colon - rest) >= pathlen || strlen(colon + 1) >= symlen)
	{
		snprintf(err, errlen, "entry '%s' is too long", entry);
		return false;
	}
	memcpy(path, rest, (size_t) (colon - rest));
	path[colon - rest] = '\0';
	snprintf(symbol, symlen, "%s", colon + 1);
	if (path[0] != '/')
	{
		snprintf(err, errlen, "the file of entry '%s' must be an absolute path", entry);
		return false;
	}
	if (!(isalpha((unsigned char) symbol[0]) || symbol[0] == '_'))
	{
		snprintf(err, errlen, "'%s' is not a %s name", symbol, *kind == KB_EXT_PYTHON ? "function" : "symbol");
		return false;
	}
	for (const char *p = symbol; *p; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_'))
		{
			snprintf(err, errlen, "'%s' is not a %s name", symbol, *kind == KB_EXT_PYTHON ? "function" : "symbol");
			return false;
		}
	return true;
}

/* Find an executable on PATH (or a path); false when there is none. */
bool
kb_ext_find_program(const char *prog, char *out, size_t outlen)
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

int
kb_ext_parse(const kb_request *req, kb_case *cs, char *err, size_t errlen)
{
	const char *impl = req->impl;
	char		path[1024],
				symbol[256];
	int			kind;
	kb_impl_id	own;

	if (impl && (kb_impl_resolve(impl, NULL, &own, NULL, 0) != KB_PASSED || own.own))
	{
		if (req->entry)
		{
			snprintf(err, errlen, "an entry names a python or library implementation, not '%s'", impl);
			return -1;
		}
		return 0;
	}
	for (int i = 0; impl && i < kb_builtin_python_count; i++)
		if (strcmp(impl, kb_builtin_python[i]) == 0)
		{
			if (req->entry)
			{
				snprintf(err, errlen, "'%s' is a built-in python implementation; it takes no entry", impl);
				return -1;
			}
			cs->ext = KB_EXT_PYTHON;
			cs->ext_builtin = true;
			cs->ext_name = kb_builtin_python[i];
			return kb_python_check(req, cs, err, errlen) ? 1 : -1;
		}
	if (!req->entry)
	{
		if (impl && (strcmp(impl, "python") == 0 || strcmp(impl, "library") == 0))
		{
			snprintf(err, errlen, "implementation '%s' needs an entry (%s)", impl,
					 strcmp(impl, "python") == 0 ? "python:/dir/file.py:function" : "library:/dir/libx.so:symbol");
			return -1;
		}
		return 0;
	}
	if (!kb_ext_split_entry(req->entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
		return -1;
	if (impl && strcmp(impl, "python") != 0 && strcmp(impl, "library") != 0 && !valid_name(impl))
	{
		snprintf(err, errlen, "implementation name '%s' must be lower-case letters, digits, '.', '_' or '-'", impl);
		return -1;
	}
	if (impl && ((strcmp(impl, "python") == 0 && kind != KB_EXT_PYTHON) ||
				 (strcmp(impl, "library") == 0 && kind != KB_EXT_LIBRARY)))
	{
		snprintf(err, errlen, "implementation '%s' does not match entry '%s'", impl, req->entry);
		return -1;
	}
	if (access(path, R_OK) != 0)
	{
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	cs->ext = kind;
	cs->ext_entry = req->entry;
	cs->ext_name = impl && strcmp(impl, "python") != 0 && strcmp(impl, "library") != 0 ? impl : NULL;
	if (kind == KB_EXT_LIBRARY && cs->cuda)
	{
		snprintf(err, errlen, "library implementations run on the cpu device in this version (kbench_impl.h)");
		return -1;
	}
	if (kind == KB_EXT_PYTHON && !kb_python_check(req, cs, err, errlen))
		return -1;
	return 1;
}

const char *
kb_ext_label(const kb_case *cs)
{
	if (cs->ext_name)
		return cs->ext_name;
	return cs->ext == KB_EXT_PYTHON ? "python" : "library";
}

/* ------------------------------------------------------------ manifests */

static void
slug(const char *in, char *out, size_t len)
{
	size_t		n = 0;

	for (; *in && n + 1 < len; in++)
	{
		unsigned char ch = (unsigned char) tolower((unsigned char) *in);

		if (isalnum(ch))
			out[n++] = (char) ch;
		else if (n && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n && out[n - 1] == '-')
		n--;
	out[n] = '\0';
}

/* sha256 and size of a file (opened once, impl_source.c); false with the reason in err. */
bool
kb_ext_file_digest(const char *path, char digest[72], int64_t *size, char *err, size_t errlen)
{
	kb_ext_source src;

	if (!kb_ext_read_source(path, NULL, NULL, &src, err, errlen))
		return false;
	snprintf(digest, 72, "%s", src.digest);
	*size = (int64_t) src.len;
	kb_ext_source_free(&src);
	return true;
}

/*
 * The ImplementationRevision text of a user's entry, or of a built-in
 * python implementation (path: its file, versions: what the child reported
 * as a JSON object text, or NULL).
 */
static char *
manifest_text(const kb_op *op, int kind, const char *file, const char *digest, int64_t size, const char *symbol,
			  const char *name, const char *version, const char *commit, const char *versions_json,
			  const char *op_digest, const char *shown_path, const char *description)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		title[300];
	const char *base = strrchr(file, '/');

	snprintf(title, sizeof(title), "%s \xc2\xb7 %s (%s)", op->title, name, kind == KB_EXT_PYTHON ? "python" : "C library");
	kb_text_open(&t);
	ki_jw_manifest(w, "ImplementationRevision", name, title);
	if (description)
		ki_jw_kstr(w, "description", description);
	ki_jw_spec(w);
	ki_jw_key(w, "projectRevision");
	ki_jw_obj(w);
	if (version && *version)
		ki_jw_kstr(w, "version", version);
	if (commit && strlen(commit) == 40)
		ki_jw_kstr(w, "commit", commit);
	ki_jw_end_obj(w);
	ki_jw_key(w, "operation");
	ki_jw_obj(w);
	ki_jw_kstr(w, "specDigest", op_digest);
	ki_jw_end_obj(w);
	ki_jw_key(w, "callable");
	ki_jw_obj(w);
	ki_jw_kstr(w, "language", kind == KB_EXT_PYTHON ? "python" : "c");
	ki_jw_kstr(w, "path", shown_path ? shown_path : file);
	ki_jw_kstr(w, "symbol", symbol);
	ki_jw_kstr(w, "interface", kind == KB_EXT_PYTHON ? "kbench_python_v1" : "kbench_impl_v1");
	ki_jw_end_obj(w);
	ki_jw_key(w, "support");
	ki_jw_obj(w);
	ki_jw_key(w, "hardwareArchitectures");
	ki_jw_arr(w);
	ki_jw_end_arr(w);
	ki_jw_key(w, "dtypes");
	ki_jw_arr(w);
	for (int i = 0; i < op->ndtypes; i++)
		ki_jw_str(w, kb_dtype_name(op->dtypes[i]));
	ki_jw_end_arr(w);
	ki_jw_end_obj(w);
	ki_jw_key(w, "source");
	ki_jw_obj(w);
	ki_jw_kstr(w, "contentDigest", digest);
	ki_jw_kstr(w, "fileName", base ? base + 1 : file);
	ki_jw_kint(w, "sizeBytes", size);
	ki_jw_end_obj(w);
	if (versions_json && versions_json[0] == '{' && versions_json[1] != '}')
	{
		/* what the child imported: {"python": "3.11.2", "torch": "1.13.1", ...} */
		char		vname[120];

		snprintf(title, sizeof(title), "python-%s", name);
		slug(title, vname, sizeof(vname));
		ki_jw_key(w, "buildVariants");
		ki_jw_arr(w);
		ki_jw_obj(w);
		ki_jw_kstr(w, "name", vname);
		ki_jw_key(w, "install");
		ki_jw_obj(w);
		ki_jw_kstr(w, "kind", "package");
		ki_jw_end_obj(w);
		ki_jw_key(w, "requirements");
		ki_jw_json(w, versions_json);
		ki_jw_end_obj(w);
		ki_jw_end_arr(w);
	}
	ki_jw_key(w, "licensing");
	ki_jw_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	ki_jw_end_obj(w);
	return kb_text_take(&t);
}

/* Default name of an unregistered entry: "byo-<file>-<symbol>". */
static void
entry_name(const char *path, const char *symbol, char *out, size_t len)
{
	char		raw[600];
	const char *base = strrchr(path, '/');

	snprintf(raw, sizeof(raw), "byo-%.80s-%.80s", base ? base + 1 : path, symbol);
	slug(raw, out, len);
}

char *
kb_ext_implementation_text(const kb_case *cs, const char *op_digest, const kb_request *req,
						   const kb_backend *be, char *err, size_t errlen)
{
	const char *versions = be && be->ext ? kb_ext_versions(be) : NULL;

	if (cs->ext_builtin)
	{
		char		file[1100];
		char		name[200];
		char		symbol[200];
		char		version[120] = "";
		char		commit[48] = "";
		char		desc[600];
		char		digest[72];
		int64_t		size;

		if (!kb_python_builtin_file(req, file, sizeof(file), err, errlen) ||
			!kb_ext_file_digest(file, digest, &size, err, errlen))
			return NULL;
		snprintf(name, sizeof(name), "kbench-python-%s-%s", cs->ext_name, cs->op->slug);
		snprintf(symbol, sizeof(symbol), "%s.%s", cs->ext_name, cs->op->name);
		kb_ext_version_of(versions, strcmp(cs->ext_name, "liger") == 0 ? "liger_kernel" : "torch", version, sizeof(version));
		if (strcmp(cs->ext_name, "liger") == 0)
			kb_ext_version_of(versions, "liger_kernel_commit", commit, sizeof(commit));
		snprintf(desc, sizeof(desc), "%s as Liger-Kernel's benchmark scripts construct it (benchmark/scripts/"
				 "benchmark_%s.py), called from kbench's python harness (kernels/python/kbench_builtin.py).",
				 strcmp(cs->ext_name, "liger") == 0 ? "Liger-Kernel's module" : "The PyTorch baseline",
				 cs->op->name);
		return manifest_text(cs->op, KB_EXT_PYTHON, file, digest, size, symbol, name, version, commit, versions,
							 op_digest, "kernels/python/kbench_builtin.py", desc);
	}
	{
		char		path[1024],
					symbol[256],
					name[300],
					why[900];
		int			kind;
		kb_ext_source src;
		const kb_ext_source *ran = be && be->ext && be->ext->src.bytes ? &be->ext->src : NULL;
		char	   *text;

		if (!kb_ext_split_entry(cs->ext_entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
			return NULL;
		if (cs->ext_name)
			snprintf(name, sizeof(name), "%s", cs->ext_name);
		else
			entry_name(path, symbol, name, sizeof(name));
		/* the digest of the bytes that ran; before the run, of the file as verified now */
		if (!ran && !kb_ext_read_source(path, req ? req->entry_directory : NULL, req ? req->entry_digest : NULL,
										&src, why, sizeof(why)))
		{
			kb_ext_source_error(cs, req, why, err, errlen);
			return NULL;
		}
		text = manifest_text(cs->op, kind, path, ran ? ran->digest : src.digest, (int64_t) (ran ? ran->len : src.len),
							 symbol, name, req ? req->impl_version : NULL, NULL, NULL, op_digest, NULL, NULL);
		if (!ran)
			kb_ext_source_free(&src);
		return text;
	}
}

char *
kb_implementation_manifest(const char *opname, const char *entry, const char *name, const char *version,
						   const char *directory, char digest[72], char *err, size_t errlen)
{
	const kb_op *op = kb_find_op(opname);
	char		path[1024],
				symbol[256],
				opdigest[72],
				defname[300];
	char	   *text,
			   *canon = NULL,
			   *optext;
	int			kind;
	kb_ext_source src;

	if (!op)
	{
		snprintf(err, errlen, "unknown operation '%s'", opname ? opname : "");
		return NULL;
	}
	if (!entry || !kb_ext_split_entry(entry, &kind, path, sizeof(path), symbol, sizeof(symbol), err, errlen))
	{
		if (!entry)
			snprintf(err, errlen, "no entry");
		return NULL;
	}
	if (name && !valid_name(name))
	{
		snprintf(err, errlen, "implementation name '%s' must be lower-case letters, digits, '.', '_' or '-'", name);
		return NULL;
	}
	optext = kb_operation_text(op);
	if (!kb_manifest_finish(optext, &canon, opdigest, err, errlen))
	{
		free(optext);
		return NULL;
	}
	free(optext);
	free(canon);
	canon = NULL;
	if (!name)
		entry_name(path, symbol, defname, sizeof(defname));
	if (!kb_ext_read_source(path, directory, NULL, &src, err, errlen))
		return NULL;
	text = manifest_text(op, kind, path, src.digest, (int64_t) src.len, symbol, name ? name : defname, version,
						 NULL, NULL, opdigest, NULL, NULL);
	kb_ext_source_free(&src);
	if (!text)
		return NULL;
	if (!kb_manifest_finish(text, &canon, digest, err, errlen))
		canon = NULL;
	free(text);
	return canon;
}

/* ------------------------------------------------------------ the backend: shared tensors */

/* The kb_ext of this process that are open (a comparison has two): whose children a sweep spares. */
static kb_ext *live_exts = NULL;

int
kb_ext_open(kb_backend *be, const kb_case *cs, const kb_request *req, int64_t flush_bytes)
{
	kb_ext	   *x;
	kb_call		c;
	kb_plan		p;
	size_t		need = 4096;

	memset(be, 0, sizeof(*be));
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
	x->next_live = live_exts;
	live_exts = x;
	if (cs->cuda)
	{
		/* the child owns the device; here only what the environment manifest says about it */
		be->api = kb_cuda_api(be->err, sizeof(be->err));
		if (!be->api || be->api->device_info(cs->device, &be->info, be->err, sizeof(be->err)) != KBC_OK)
			return KBC_ERROR;
		be->nvml = kb_nvml_device(be->info.pci_bus_id);
		be->clock_default_mhz = kb_nvml_default_sm_clock(be->nvml);
	}
	memset(&c, 0, sizeof(c));
	memset(&p, 0, sizeof(p));
	c.op = cs->op->id;
	c.mode = cs->mode;
	c.dtype = cs->dtype;
	memcpy(c.ax, cs->ax, sizeof(c.ax));
	c.variant = cs->variant;
	cs->op->plan(&c, &p, cs->cuda);
	for (int i = 0; i < c.ntensors; i++)
		need += (size_t) (c.rows[i] * c.cols[i]) * kb_dtype_size(c.tdtype[i]) + 64;
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

int
kb_ext_alloc(kb_backend *be, size_t bytes, void **p)
{
	kb_ext	   *x = be->ext;
	size_t		at = (x->used + 63) / 64 * 64;

	if (at + bytes <= x->size)
	{
		*p = x->base + at;
		x->used = at + bytes;
		return KBC_OK;
	}
	/* the flush buffer: the child clears its own (never touched here) */
	*p = x->dummy;
	return KBC_OK;
}

void
kb_ext_close(kb_backend *be)
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
	for (kb_ext **p = &live_exts; *p; p = &(*p)->next_live)
		if (*p == x)
		{
			*p = x->next_live;
			break;
		}
	free(x->out);
	free(x->versions);
	free(x);
	be->ext = NULL;
}

/* ------------------------------------------------------------ talking to the child */

static void
set_err(kb_backend *be, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(be->err, sizeof(be->err), fmt, ap);
	va_end(ap);
}

/*
 * Read what the child wrote to its stdout and stderr (a pipe) without
 * waiting, into a ring of its last KB_EXT_OUTPUT_CAP bytes: a child that
 * prints without end costs this process 1 MiB, not what it printed.
 */
static void
drain_output(kb_ext *x)
{
	char		buf[65536];

	while (x->out_fd >= 0)
	{
		ssize_t		n = read(x->out_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
		{
			if (n == 0)			/* every writer is gone */
			{
				close(x->out_fd);
				x->out_fd = -1;
			}
			return;
		}
		if (!x->out && !(x->out = malloc(KB_EXT_OUTPUT_CAP)))
			return;
		x->out_total += (uint64_t) n;
		for (ssize_t i = 0; i < n;)
		{
			size_t		k = KB_EXT_OUTPUT_CAP - x->out_pos;

			if (k > (size_t) (n - i))
				k = (size_t) (n - i);
			memcpy(x->out + x->out_pos, buf + i, k);
			x->out_pos = (x->out_pos + k) % KB_EXT_OUTPUT_CAP;
			i += (ssize_t) k;
		}
	}
}

/*
 * The last line or so of the child's output, on one line; when it printed
 * more than is kept, a note says how much.
 */
static void
stderr_tail(kb_ext *x, char *out, size_t len)
{
	char		buf[301];
	size_t		kept,
				n,
				k = 0;

	out[0] = '\0';
	drain_output(x);
	kept = x->out_total < KB_EXT_OUTPUT_CAP ? (size_t) x->out_total : KB_EXT_OUTPUT_CAP;
	if (!x->out || kept == 0 || len == 0)
		return;
	if (x->out_total > KB_EXT_OUTPUT_CAP)
		k = (size_t) snprintf(out, len, "[output truncated: %llu bytes written, the last %zu kept] ",
							  (unsigned long long) x->out_total, KB_EXT_OUTPUT_CAP);
	if (k >= len)
		k = len - 1;
	/* the end of the output, as much as fits after the note */
	n = kept < 300 ? kept : 300;
	for (size_t i = 0; i < n; i++)
		buf[i] = x->out[(x->out_pos + KB_EXT_OUTPUT_CAP - n + i) % KB_EXT_OUTPUT_CAP];
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char) buf[n - 1]))
		buf[--n] = '\0';
	if (n > len - 1 - k)
		memmove(buf, buf + n - (len - 1 - k), (len - 1 - k) + 1);
	for (char *p = buf; *p && k + 1 < len; p++)
		out[k++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : (isprint((unsigned char) *p) ? *p : '?');
	out[k] = '\0';
}

/* One process of /proc: its parent, and whether it is a zombie. */
typedef struct proc_entry
{
	pid_t		pid;
	pid_t		ppid;
	bool		zombie;
} proc_entry;

/* Every process /proc shows (malloc'd, *n of them), or NULL. */
static proc_entry *
scan_proc(size_t *n)
{
	DIR		   *d = opendir("/proc");
	struct dirent *e;
	proc_entry *v = NULL;
	size_t		cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((e = readdir(d)) != NULL)
	{
		char		path[32],
					buf[512],
				   *rp;
		int			fd;
		ssize_t		r;
		char		state;
		int			ppid;

		if (!isdigit((unsigned char) e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", atoi(e->d_name));
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, the last ')' ends it */
		if (!(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
			continue;
		if (*n == cap)
		{
			proc_entry *nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		v[*n].pid = (pid_t) atoi(e->d_name);
		v[*n].ppid = (pid_t) ppid;
		v[*n].zombie = state == 'Z';
		(*n)++;
	}
	closedir(d);
	return v;
}

/* The parent of pid in v, or 0. */
static pid_t
parent_in(const proc_entry *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return v[i].ppid;
	return 0;
}

/*
 * End the child and everything it started: its process group first, then
 * every descendant of this process that is not another open child's (a
 * comparison's other side).  This process is the children's subreaper
 * (kb_ext_channel), so what a child started with setsid() and a double fork
 * is re-parented here, not to init, and stays a descendant: /proc finds it
 * by its parent chain, whatever its group or session.  Passes repeat until
 * none is left (one forking while the sweep runs is found by the next), and
 * those re-parented here are reaped.  Not swept: a process the child had
 * someone else start (systemd-run, at, a daemon over a socket), which is no
 * descendant; a cgroup would be needed for those.
 */
static void
sweep_child(kb_ext *x)
{
	pid_t		self = getpid();

	if (x->pgid > 0)
		(void) kill(-x->pgid, SIGKILL);
	if (x->pid > 0)
	{
		(void) kill(x->pid, SIGKILL);
		while (waitpid(x->pid, NULL, 0) < 0 && errno == EINTR)
			;
		x->pid = -1;
	}
	for (int pass = 0; pass < 200; pass++)
	{
		size_t		n;
		proc_entry *v = scan_proc(&n);
		int			found = 0;

		for (size_t i = 0; v && i < n; i++)
		{
			pid_t		p = v[i].pid,
						top = 0;
			int			depth = 0;
			bool		spared = false;

			if (p == self)
				continue;
			/* up the parent chain to this process: top is the process just below it */
			for (pid_t q = p; q > 1 && depth < 64; q = parent_in(v, n, q), depth++)
			{
				if (parent_in(v, n, q) == self)
				{
					top = q;
					break;
				}
			}
			if (top == 0)
				continue;
			for (kb_ext *o = live_exts; o; o = o->next_live)
				if (o != x && o->pid > 0 && o->pid == top)
					spared = true;
			if (spared)
				continue;
			found++;
			if (!v[i].zombie)
				(void) kill(p, SIGKILL);
			if (v[i].ppid == self)
				(void) waitpid(p, NULL, v[i].zombie ? WNOHANG : 0);
		}
		free(v);
		if (found == 0)
			break;
		usleep(1000);
	}
	x->pgid = -1;
}

void
kb_ext_stop(kb_ext *x)
{
	if (x->sock >= 0)
	{
		if (x->pid > 0 && !x->failed)
		{
			pid_t		pid = x->pid;

			(void) send(x->sock, "quit\n", 5, MSG_NOSIGNAL);
			/* a well-behaved child exits at once; a lingering one is killed */
			for (int i = 0; i < 50; i++)
			{
				drain_output(x);
				if (waitpid(pid, NULL, WNOHANG) == pid)
				{
					x->pid = -1;
					break;
				}
				usleep(2000);
			}
		}
		close(x->sock);
		x->sock = -1;
	}
	/* the child, and anything it left running */
	sweep_child(x);
	if (x->err_fd >= 0)
	{
		close(x->err_fd);
		x->err_fd = -1;
	}
	if (x->out_fd >= 0)
	{
		close(x->out_fd);
		x->out_fd = -1;
	}
}

/* The child is gone or misbehaved: say why, kill it, refuse what follows. */
static int
fail(kb_backend *be, int rc, const char *fmt,...)
{
	kb_ext	   *x = be->ext;
	char		msg[400];
	char		tail[320];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	stderr_tail(x, tail, sizeof(tail));
	if (tail[0])
		set_err(be, "%s; its stderr ends: %s", msg, tail);
	else
		set_err(be, "%s", msg);
	x->failed = true;
	x->failed_rc = rc;
	sweep_child(x);
	return rc;
}

static const char *
kind_word(const kb_ext *x)
{
	return x->cs.ext == KB_EXT_PYTHON ? "the python child" : "the library child";
}

/* How the child ended (it closed its end). */
static int
child_ended(kb_backend *be)
{
	kb_ext	   *x = be->ext;
	int			status = 0;
	pid_t		r = -1;

	/* it closed the socket: it is exiting; give it a moment, then make sure */
	for (int i = 0; i < 200 && r != x->pid; i++)
	{
		drain_output(x);
		r = waitpid(x->pid, &status, WNOHANG);
		if (r != x->pid)
			usleep(5000);
	}
	if (r != x->pid)
		return fail(be, KBC_ERROR, "%s closed its end of the protocol", kind_word(x));
	/* what it started may outlive it: fail() sweeps it */
	x->pid = -1;
	if (WIFSIGNALED(status))
		return fail(be, KBC_ERROR, "%s was killed by signal %d (%s)", kind_word(x), WTERMSIG(status),
					strsignal(WTERMSIG(status)));
	return fail(be, KBC_ERROR, "%s exited with status %d", kind_word(x), WEXITSTATUS(status));
}

/*
 * Send one command and read its one-line answer within timeout_s.  KBC_OK
 * with what followed "ok" in out; else the run's error in be->err.
 */
int
kb_ext_request(kb_backend *be, const char *cmd, double timeout_s, char *out, size_t outlen)
{
	kb_ext	   *x = be->ext;
	size_t		len = strlen(cmd),
				off = 0,
				got = 0;
	int64_t		deadline = kb_now_ns() + (int64_t) (timeout_s * 1e9);
	char	   *line = x->line;

	if (x->failed)
		return x->failed_rc;
	if (x->pid <= 0 || x->sock < 0)
	{
		set_err(be, "%s is not running", kind_word(x));
		return KBC_ERROR;
	}
	if (x->pgid <= 0)
		x->pgid = x->pid;		/* its own group (kb_ext_child_init) */
	if (x->err_fd >= 0)
	{
		/* the child has its copy: the pipe's end comes when every writer is gone */
		close(x->err_fd);
		x->err_fd = -1;
	}
	while (off < len)
	{
		ssize_t		n = send(x->sock, cmd + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return child_ended(be);
		off += (size_t) n;
	}
	for (;;)
	{
		struct pollfd pfd[2] = {{x->sock, POLLIN, 0}, {x->out_fd, POLLIN, 0}};
		int64_t		left = deadline - kb_now_ns();
		ssize_t		n;
		char	   *nl;
		int			pr;

		/* a cancel, or the caller's stop (the worker's postmaster died) */
		if (kb_req_stopping(x->req))
			return fail(be, KBC_ERROR, "canceled while %s was running", kind_word(x));
		if (left <= 0)
			return fail(be, KBC_TIMEOUT, "%s did not answer '%.*s' within %.0f s and was killed", kind_word(x),
						(int) strcspn(cmd, " \n"), cmd, timeout_s);
		/* wake every 100 ms for a cancel */
		pr = poll(pfd, x->out_fd >= 0 ? 2 : 1, (int) (left / 1000000 < 100 ? left / 1000000 + 1 : 100));
		if (pr < 0 && errno != EINTR)
			return fail(be, KBC_ERROR, "poll: %s", strerror(errno));
		if (pr <= 0)
			continue;
		if (x->out_fd >= 0 && pfd[1].revents)
			drain_output(x);
		if (!pfd[0].revents)
			continue;
		n = recv(x->sock, line + got, sizeof(x->line) - 1 - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return child_ended(be);
		got += (size_t) n;
		line[got] = '\0';
		nl = memchr(line, '\n', got);
		if (!nl && got >= sizeof(x->line) - 1)
			return fail(be, KBC_ERROR, "%s answered a line longer than %zu bytes: '%.60s'", kind_word(x),
						sizeof(x->line) - 1, line);
		if (!nl)
			continue;
		*nl = '\0';
		if (nl != line + got - 1)
			return fail(be, KBC_ERROR, "%s answered more than one line to '%.*s'", kind_word(x),
						(int) strcspn(cmd, " \n"), cmd);
		if (strncmp(line, "ok", 2) == 0 && (line[2] == '\0' || line[2] == ' '))
		{
			snprintf(out, outlen, "%s", line[2] ? line + 3 : "");
			return KBC_OK;
		}
		if (strncmp(line, "err ", 4) == 0)
			return fail(be, KBC_ERROR, "%s: %s", kb_ext_label(&x->cs), line + 4);
		{
			char		shown[64];
			size_t		k = 0;

			/* the raw bytes of the line, NULs included */
			for (const char *p = line; p < nl && k + 1 < sizeof(shown); p++)
				shown[k++] = isprint((unsigned char) *p) ? *p : '?';
			shown[k] = '\0';
			return fail(be, KBC_ERROR, "%s answered something that is not the protocol: '%s'", kind_word(x), shown);
		}
	}
}

/* A socket pair and a memfd for the child's stderr; the child's ends in *child_sock. */
int
kb_ext_channel(kb_backend *be, int *child_sock)
{
	kb_ext	   *x = be->ext;
	int			sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
	{
		set_err(be, "socketpair: %s", strerror(errno));
		return KBC_ERROR;
	}
	{
		int			pp[2];

		if (pipe2(pp, O_CLOEXEC) != 0)
		{
			close(sv[0]);
			close(sv[1]);
			set_err(be, "pipe: %s", strerror(errno));
			return KBC_ERROR;
		}
		x->out_fd = pp[0];
		x->err_fd = pp[1];
		(void) fcntl(x->out_fd, F_SETFL, O_NONBLOCK);
	}
	/* what the child leaves behind (setsid and fork) is re-parented here, for sweep_child */
	(void) prctl(PR_SET_CHILD_SUBREAPER, 1);
	x->sock = sv[0];
	*child_sock = sv[1];
	return KBC_OK;
}

/* In a new child: default signal handling, killed with its parent. */
void
kb_ext_child_init(void)
{
	sigset_t	none;

	prctl_deathsig();
	/* its own process group: whatever it starts goes with it */
	(void) setpgid(0, 0);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
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

int
kb_ext_start(kb_backend *be, const kb_call *c, kb_plan *plan)
{
	kb_ext	   *x = be->ext;

	x->cancel = x->req->cancel;
	x->call = *c;
	x->plan = plan;
	return x->cs.ext == KB_EXT_PYTHON ? kb_python_start(be, ext_timeout(x)) : kb_library_start(be, ext_timeout(x));
}

int
kb_ext_call(kb_backend *be, int phase)
{
	char		out[64];

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
		return fail(be, KBC_ERROR, "%s's reported times do not account for the time kbench measured around them: "
					"in %lld of %lld timed calls it reported under half of the round trip and over %.0f ms less "
					"(the last: %.0f ns reported, %.0f ns measured); its samples are refused", kind_word(x),
					(long long) x->unaccounted, (long long) x->timed, UNACCOUNTED_NS / 1e6, reported_ns, measured_ns);
	return KBC_OK;
}

int
kb_ext_time_one(kb_backend *be, size_t flush_bytes, double *op_ns, double *total_ns, double timeout_s)
{
	char		cmd[64],
				out[128];
	int			rc;
	int64_t		t0;
	double		measured;

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
		return fail(be, KBC_ERROR, "%s answered a sample that is not two times in ns: '%.60s'", kind_word(be->ext), out);
	return account(be, flush_bytes ? *total_ns : *op_ns, measured);
}

int
kb_ext_peak_memory(kb_backend *be, int64_t *bytes)
{
	char		out[128];
	long long	v;
	int			rc;

	be->ext->dirty = true;
	rc = kb_ext_request(be, "memory\n", ext_timeout(be->ext), out, sizeof(out));
	if (rc != KBC_OK)
		return rc;
	if (sscanf(out, "%lld", &v) != 1 || v < 0)
		return fail(be, KBC_ERROR, "%s answered a peak memory that is not a byte count: '%.60s'", kind_word(be->ext), out);
	*bytes = v;
	return KBC_OK;
}

/* Outputs are read back into the shared tensors once, before the first read after a call. */
int
kb_ext_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	kb_ext	   *x = be->ext;

	if (x->dirty)
	{
		char		out[1024];
		int			rc = kb_ext_request(be, "readback\n", ext_timeout(x), out, sizeof(out));

		if (rc != KBC_OK)
			return rc;
		x->dirty = false;
		/* "ok name,name,...": outputs the implementation did not return are not compared (layer_norm's mean, rstd) */
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
					x->plan->is_output[i] = 0;
			}
	}
	if ((const unsigned char *) src < x->base || (const unsigned char *) src + bytes > x->base + x->size)
	{
		set_err(be, "read outside the shared tensors");
		return KBC_ERROR;
	}
	memcpy(dst, src, bytes);
	return KBC_OK;
}

const char *
kb_ext_versions(const kb_backend *be)
{
	return be->ext ? be->ext->versions : NULL;
}

/* The string value of key in a flat JSON object of strings (the child's versions). */
void
kb_ext_version_of(const char *json, const char *key, char *out, size_t len)
{
	char		pat[80];
	const char *p;
	size_t		n = 0;

	out[0] = '\0';
	if (!json)
		return;
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(json, pat);
	if (!p)
		return;
	for (p += strlen(pat); *p && *p != '"' && n + 1 < len; p++)
		out[n++] = *p;
	out[n] = '\0';
}
