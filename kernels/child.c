/*
 * child.c: the child process of another implementation (backend_child.c)
 * and the wire protocol it is driven by: the socket and the pipe of its
 * output (kb_ext_channel), the child's set-up after fork (kb_ext_child_init),
 * one command and its answer with a deadline (kb_ext_request), the end of a
 * child that failed (kb_ext_fail), and the sweep that kills what it left.
 *
 * The wire protocol (a stream socket, one line each way):
 *   parent: setup <json> | prepare | call | reset | time <flush_bytes> | memory | readback | quit
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impl_int.h"

/* The kb_ext of this process that are open (a comparison has two): whose children a sweep spares. */
static kb_ext *live_exts = NULL;

void
kb_ext_live_add(kb_ext *x)
{
	x->next_live = live_exts;
	live_exts = x;
}

void
kb_ext_live_remove(kb_ext *x)
{
	for (kb_ext **p = &live_exts; *p; p = &(*p)->next_live)
		if (*p == x)
		{
			*p = x->next_live;
			break;
		}
}

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
int
kb_ext_fail(kb_backend *be, int rc, const char *fmt,...)
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

const char *
kb_ext_kind_word(const kb_ext *x)
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
		return kb_ext_fail(be, KBC_ERROR, "%s closed its end of the protocol", kb_ext_kind_word(x));
	/* what it started may outlive it: kb_ext_kb_ext_fail sweeps it */
	x->pid = -1;
	if (WIFSIGNALED(status))
		return kb_ext_fail(be, KBC_ERROR, "%s was killed by signal %d (%s)", kb_ext_kind_word(x), WTERMSIG(status),
					strsignal(WTERMSIG(status)));
	return kb_ext_fail(be, KBC_ERROR, "%s exited with status %d", kb_ext_kind_word(x), WEXITSTATUS(status));
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
		set_err(be, "%s is not running", kb_ext_kind_word(x));
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
			return kb_ext_fail(be, KBC_ERROR, "canceled while %s was running", kb_ext_kind_word(x));
		if (left <= 0)
			return kb_ext_fail(be, KBC_TIMEOUT, "%s did not answer '%.*s' within %.0f s and was killed", kb_ext_kind_word(x),
						(int) strcspn(cmd, " \n"), cmd, timeout_s);
		/* wake every 100 ms for a cancel */
		pr = poll(pfd, x->out_fd >= 0 ? 2 : 1, (int) (left / 1000000 < 100 ? left / 1000000 + 1 : 100));
		if (pr < 0 && errno != EINTR)
			return kb_ext_fail(be, KBC_ERROR, "poll: %s", strerror(errno));
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
			return kb_ext_fail(be, KBC_ERROR, "%s answered a line longer than %zu bytes: '%.60s'", kb_ext_kind_word(x),
						sizeof(x->line) - 1, line);
		if (!nl)
			continue;
		*nl = '\0';
		if (nl != line + got - 1)
			return kb_ext_fail(be, KBC_ERROR, "%s answered more than one line to '%.*s'", kb_ext_kind_word(x),
						(int) strcspn(cmd, " \n"), cmd);
		if (strncmp(line, "ok", 2) == 0 && (line[2] == '\0' || line[2] == ' '))
		{
			snprintf(out, outlen, "%s", line[2] ? line + 3 : "");
			return KBC_OK;
		}
		if (strncmp(line, "err ", 4) == 0)
			return kb_ext_fail(be, KBC_ERROR, "%s: %s", kb_ext_label(&x->cs), line + 4);
		{
			char		shown[64];
			size_t		k = 0;

			/* the raw bytes of the line, NULs included */
			for (const char *p = line; p < nl && k + 1 < sizeof(shown); p++)
				shown[k++] = isprint((unsigned char) *p) ? *p : '?';
			shown[k] = '\0';
			return kb_ext_fail(be, KBC_ERROR, "%s answered something that is not the protocol: '%s'", kb_ext_kind_word(x), shown);
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
