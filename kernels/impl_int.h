/*
 * impl_int.h: what the child backend shares with the files it stands on:
 * backend_child.c (the backend), child.c (the child process and its wire
 * protocol), impl_python.c and impl_library.c (starting each kind of child),
 * impl_source.c (the user's file), impl.c (the manifests).
 */
#ifndef KB_IMPL_INT_H
#define KB_IMPL_INT_H

#include <sys/prctl.h>
#include <sys/types.h>

#include "kb_int.h"

/* The bytes of a user's file as read once and verified (impl_source.c). */
typedef struct kb_ext_source
{
	unsigned char *bytes;		/* malloc'd; NULL: not read */
	size_t		len;
	char		digest[72];		/* "sha256:<hex>" of bytes */
} kb_ext_source;

typedef struct kb_ext
{
	kb_case		cs;
	const kb_request *req;
	volatile int *cancel;
	int			shm_fd;			/* the tensors: one memfd mapping, shared with the child */
	unsigned char *base;
	size_t		size;
	size_t		used;
	size_t		reserve;		/* the end of the mapping kept for the guard's input sets (allocated after start) */
	unsigned char dummy[64];	/* what the flush buffer's allocation gets (the child has its own) */
	int64_t		flush_bytes;
	pid_t		pid;
	int			sock;
	int			err_fd;			/* the child's stdout and stderr: the write end of a pipe (the
								 * parent closes its copy once the child runs) */
	int			out_fd;			/* the pipe's read end (non-blocking), drained into out */
	char	   *out;			/* the last KB_EXT_OUTPUT_CAP bytes of that output: a ring */
	size_t		out_pos;		/* where the next byte goes in out */
	uint64_t	out_total;		/* every byte the child wrote (out_total > cap: truncated) */
	pid_t		pgid;			/* the child's process group (its pid), kept after it is reaped */
	struct kb_ext *next_live;	/* the kb_ext of this process with a child (kb_be_open_child .. close) */
	bool		failed;
	int			failed_rc;
	bool		dirty;			/* outputs not read back since the last call */
	char	   *versions;		/* {"python": "3.11.2", "torch": ...} from the python child */
	kb_call		call;
	kb_plan    *plan;			/* kb_run's plan: is_output cleared for outputs not returned */
	kb_ext_source src;			/* the user's file as verified and run (not for a built-in) */
	int64_t		timed;			/* 'time' round trips answered */
	int64_t		unaccounted;	/* ... whose reported time leaves most of the parent's unaccounted */
	char		line[8192];
} kb_ext;

/* What is kept of a child's output (stdout and stderr together): its last 1 MiB. */
#define KB_EXT_OUTPUT_CAP ((size_t) 1 << 20)

static inline void
prctl_deathsig(void)
{
	(void) prctl(PR_SET_PDEATHSIG, 9 /* SIGKILL */ );
}

/* child.c */
void		kb_ext_live_add(kb_ext *x);
void		kb_ext_live_remove(kb_ext *x);
int			kb_ext_request(kb_backend *be, const char *cmd, double timeout_s, char *out, size_t outlen);
int			kb_ext_channel(kb_backend *be, int *child_sock);
void		kb_ext_child_init(void);
void		kb_ext_stop(kb_ext *x);
/* The child is gone or misbehaved: say why in be->err, kill it, refuse what follows; returns rc. */
int			kb_ext_fail(kb_backend *be, int rc, const char *fmt,...) __attribute__((format(printf, 3, 4)));
const char *kb_ext_kind_word(const kb_ext *x);	/* "the python child", "the library child" */

/* backend_child.c: what the child of be reported and ran (NULL when be is no child backend) */
const char *kb_ext_versions(const kb_backend *be);
const kb_ext_source *kb_ext_ran_source(const kb_backend *be);

/* impl.c */
bool		kb_ext_file_digest(const char *path, char digest[72], int64_t *size, char *err, size_t errlen);

/* impl_source.c */
bool		kb_ext_split_entry(const char *entry, int *kind, char *path, size_t pathlen, char *symbol, size_t symlen,
							   char *err, size_t errlen);
bool		kb_ext_read_source(const char *path, const char *directory, const char *expected, kb_ext_source *src,
							   char *err, size_t errlen);
int			kb_ext_source_memfd(const kb_ext_source *src, const char *name, char *err, size_t errlen);
void		kb_ext_source_free(kb_ext_source *src);
bool		kb_ext_load_source(kb_backend *be, char *path, size_t pathlen, char *symbol, size_t symlen);
void		kb_ext_source_error(const kb_case *cs, const kb_request *req, const char *why, char *err, size_t errlen);

/* entry_check.c: does the file define the entry's function (read, never run)? */
bool		kb_ext_entry_defined(int kind, const kb_ext_source *src, const char *path, const char *symbol,
								 char *err, size_t errlen);

/* impl_python.c */
bool		kb_python_check(const kb_request *req, const kb_case *cs, char *err, size_t errlen);
/* base (kbench_builtin.py, kbench_builtin_defs.py, kbench_providers.py) beside the harness */
bool		kb_python_harness_file(const kb_request *req, const char *base, char *out, size_t outlen, char *err,
								   size_t errlen);
int			kb_python_start(kb_backend *be, double timeout_s);

/* impl_library.c */
int			kb_library_start(kb_backend *be, double timeout_s);

#endif							/* KB_IMPL_INT_H */
