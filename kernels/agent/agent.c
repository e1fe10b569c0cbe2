/*
 * kbench-agent: runs kernelindex jobs on a GPU host that has no database
 * (docs/FLEET.md).  `kbench agent ...` runs it.
 *
 *   kbench agent [--db CONNINFO] [--name NAME] [--devices auto|cpu,cuda:N...]
 *                [--spool DIR] [--python INTERPRETER]
 *
 * It connects with libpq (CONNINFO, a postgresql:// URI, or the PG*
 * environment variables) as a role that is a member of kbench_agent,
 * registers itself and its devices (kbench_agent_register), and then loops:
 * claim the oldest queued job for one of its devices (kbench_agent_claim,
 * which goes through the in-server worker's kbench__claim), run it with
 * libkbench's kb_run as the worker does (builtin, library and python
 * implementations alike), and store what it produced, raw samples included,
 * through kbench_ingest (kbench_agent_finish).  Between jobs it waits for
 * NOTIFY kbench_queue (kbench_run sends it at commit) or the heartbeat
 * interval.
 *
 * A second thread, on a connection of its own, heartbeats every third of
 * kernelindex.agent_lease; its answer carries a cancel request
 * (kbench_cancel), which stops kb_run.  An agent that stops heartbeating
 * (killed, host down) has its job recovered by the server after the lease.
 * The job's timeout is kb_run's deadline; a GPU job that timed out may
 * leave a kernel running, so the agent then starts itself again (exec), as
 * the worker exits for a fresh CUDA context.  A result finished while the
 * server is unreachable is kept in the spool directory (spool.c) and
 * stored when the server is back.  SIGTERM: the running job is stopped and
 * put back in the queue.
 *
 * Exit status: 0 stopped (SIGTERM); 1 a fatal error; 2 bad usage, or the
 * server refused the agent (its role lacks kbench_agent, the name belongs to
 * another role).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "kbench.h"
#include "ki_json.h"

static const char *conninfo = "";
static char name[64];
static char spool_dir[4096];
static const char *python = NULL;
static char schema[200];		/* the extension's schema, quoted */
static char session[32];		/* this process's registration */

static volatile sig_atomic_t stop = 0;	/* SIGTERM/SIGINT, or the name was taken */

/* The running job, shared with the heartbeat thread. */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t cur_job = 0;
static int	cur_attempt = 0;
static double cur_progress = 0;
static double lease_s = 30;
static volatile int job_cancel = 0;	/* kb_run polls it */
static char last_error[600];
static pthread_t main_thread;	/* the server's last refusal, for the main thread */

void
kb_agent_log(const char *fmt,...)
{
	va_list		ap;
	char		line[2048];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kbench agent %s: %s\n", name[0] ? name : "-", line);
	fflush(stderr);
}

static void
on_stop(int sig)
{
	(void) sig;
	stop = 1;
	job_cancel = 1;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: kbench agent [--db CONNINFO] [--name NAME] [--devices auto|cpu,cuda:N,...]\n"
			"                    [--spool DIR] [--python INTERPRETER]\n"
			"  CONNINFO: \"host=db.example port=5432 dbname=kbench user=gpu07\" or a postgresql:// URI;\n"
			"            empty: the PG* environment variables.  The role must be a member of kbench_agent.\n"
			"  NAME: what jobs name to reach this agent (device => 'agent:NAME'); default: the host name.\n");
}

/* ------------------------------------------------------------ libpq */

static PGconn *
connect_db(int quiet)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {conninfo, "kbench agent", NULL};
	PGconn	   *c = PQconnectdbParams(keys, vals, 1);

	if (PQstatus(c) != CONNECTION_OK)
	{
		if (!quiet)
		{
			char	   *m = PQerrorMessage(c);
			size_t		n = strlen(m);

			kb_agent_log("cannot connect: %.*s", (int) (n && m[n - 1] == '\n' ? n - 1 : n), m);
		}
		PQfinish(c);
		return NULL;
	}
	return c;
}

/*
 * Run sql with text parameters (NULL for SQL NULL).  0: done (*out holds
 * the result, free it); -1: the connection is gone; 1: the server raised
 * an error (logged; its SQLSTATE in state).
 */
static int
call(PGconn *c, const char *sql, int n, const char *const *vals, PGresult **out, char state[6])
{
	PGresult   *r = PQexecParams(c, sql, n, NULL, vals, NULL, NULL, 0);
	ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;

	if (out)
		*out = NULL;
	if (state)
		state[0] = '\0';
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
	{
		if (out)
			*out = r;
		else
			PQclear(r);
		return 0;
	}
	if (PQstatus(c) != CONNECTION_OK || r == NULL || PQresultErrorField(r, PG_DIAG_SQLSTATE) == NULL ||
		strncmp(PQresultErrorField(r, PG_DIAG_SQLSTATE), "08", 2) == 0 ||
		strncmp(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57P", 3) == 0)
	{
		PQclear(r);
		return -1;
	}
	{
		const char *m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
		const char *d = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);

		if (state)
			snprintf(state, 6, "%s", PQresultErrorField(r, PG_DIAG_SQLSTATE));
		if (pthread_equal(pthread_self(), main_thread))
			snprintf(last_error, sizeof(last_error), "%s", m ? m : "?");
		kb_agent_log("the server refused: %s (SQLSTATE %s)%s%s", m ? m : "?",
					 PQresultErrorField(r, PG_DIAG_SQLSTATE), d ? " " : "", d ? d : "");
	}
	PQclear(r);
	return 1;
}

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Sleep up to s seconds; returns early on stop. */
static void
nap(double s)
{
	double		end = now_s() + s;

	while (!stop && now_s() < end)
	{
		double		left = end - now_s();
		struct timespec t = {0, (long) (fmin(left, 0.1) * 1e9)};

		nanosleep(&t, NULL);
	}
}

/* Connect, waiting for the server as long as it takes (or until stop). */
static PGconn *
wait_connect(void)
{
	int			said = 0;

	while (!stop)
	{
		PGconn	   *c = connect_db(said);

		if (c)
		{
			PGresult   *r;

			if (call(c, "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
					 " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'kernelindex'",
					 0, NULL, &r, NULL) == 0 && PQntuples(r) == 1)
			{
				snprintf(schema, sizeof(schema), "%s", PQgetvalue(r, 0, 0));
				PQclear(r);
				if (said)
					kb_agent_log("connected again");
				return c;
			}
			if (r)
				PQclear(r);
			if (!said)
				kb_agent_log("kernelindex is not installed in this database; waiting for it");
			PQfinish(c);
		}
		said = 1;
		nap(1);
	}
	return NULL;
}

/* ------------------------------------------------------------ heartbeat */

static void *
heartbeat_main(void *arg)
{
	PGconn	   *hb = NULL;
	char		sql[512];

	(void) arg;
	while (!stop)
	{
		char		job[32],
					attempt[16],
					progress[32],
					sess[32];
		const char *vals[5];
		PGresult   *r;
		char		state[6];
		int			rc;
		double		interval;

		pthread_mutex_lock(&job_lock);
		interval = fmax(lease_s / 3, 0.2);
		pthread_mutex_unlock(&job_lock);
		nap(interval);
		if (stop)
			break;
		if (hb == NULL && (hb = connect_db(1)) == NULL)
			continue;
		pthread_mutex_lock(&job_lock);
		snprintf(job, sizeof(job), "%" PRId64, cur_job);
		snprintf(attempt, sizeof(attempt), "%d", cur_attempt);
		snprintf(progress, sizeof(progress), "%.4f", cur_progress);
		snprintf(sess, sizeof(sess), "%s", session);
		vals[0] = name;
		vals[1] = sess;
		vals[2] = cur_job ? job : NULL;
		vals[3] = cur_job ? attempt : NULL;
		vals[4] = cur_job ? progress : NULL;
		pthread_mutex_unlock(&job_lock);
		snprintf(sql, sizeof(sql), "SELECT cancel, lease_s FROM %s.kbench_agent_heartbeat($1, $2, $3, $4, $5)", schema);
		rc = call(hb, sql, 5, vals, &r, state);
		if (rc == 0)
		{
			pthread_mutex_lock(&job_lock);
			if (PQntuples(r) == 1)
			{
				if (strcmp(PQgetvalue(r, 0, 0), "t") == 0 && cur_job && strcmp(job, vals[2] ? vals[2] : "") == 0)
				{
					kb_agent_log("job %s: cancel requested", job);
					job_cancel = 1;
				}
				lease_s = atof(PQgetvalue(r, 0, 1));
			}
			pthread_mutex_unlock(&job_lock);
			PQclear(r);
		}
		else if (rc < 0)
		{
			PQfinish(hb);
			hb = NULL;
		}
		else if (strcmp(state, "55000") == 0)
		{
			kb_agent_log("another process took the name; stopping");
			stop = 1;
			job_cancel = 1;
		}
	}
	if (hb)
		PQfinish(hb);
	return NULL;
}

/* ------------------------------------------------------------ results */

typedef struct sbuf
{
	char	   *s;
	size_t		len,
				cap;
} sbuf;

static void
sb_put(sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->s = realloc(b->s, cap);
		if (!b->s)
		{
			kb_agent_log("out of memory");
			exit(1);
		}
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void
sb_puts(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void
sb_json_string(sbuf *b, const char *s)
{
	sb_puts(b, "\"");
	for (; *s; s++)
	{
		char		esc[8];

		if (*s == '"' || *s == '\\')
		{
			esc[0] = '\\';
			esc[1] = *s;
			sb_put(b, esc, 2);
		}
		else if ((unsigned char) *s < 0x20)
		{
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char) *s);
			sb_puts(b, esc);
		}
		else
			sb_put(b, s, 1);
	}
	sb_puts(b, "\"");
}

/*
 * What `kbench run --json` prints, which kbench_ingest takes: the manifests
 * and the raw samples; each sample as the worker keeps it (rounded to the
 * ns), the discarded ones by index.
 */
static char *
result_json(const kb_result *r)
{
	sbuf		b = {0};
	char		num[64];
	int64_t		nd = 0;

	sb_puts(&b, "{\"status\":");
	sb_json_string(&b, kb_status_name(r->status));
	sb_puts(&b, ",\"message\":");
	sb_json_string(&b, r->message);
	sb_puts(&b, ",\"composite\":");
	sb_puts(&b, r->composite_json);
	if (r->operation_json)
	{
		sb_puts(&b, ",\"operation\":");
		sb_puts(&b, r->operation_json);
	}
	if (r->workload_json)
	{
		sb_puts(&b, ",\"workload\":");
		sb_puts(&b, r->workload_json);
	}
	if (r->implementation_json)
	{
		sb_puts(&b, ",\"implementation\":");
		sb_puts(&b, r->implementation_json);
	}
	sb_puts(&b, ",\"rawSamplesNs\":[");
	for (int64_t i = 0; i < r->nsamples; i++)
	{
		snprintf(num, sizeof(num), "%s%lld", i ? "," : "", (long long) llround(r->samples_ns[i]));
		sb_puts(&b, num);
	}
	sb_puts(&b, "],\"discardedSamples\":[");
	for (int64_t i = 0; i < r->nsamples; i++)
		if (r->sample_kept && !r->sample_kept[i])
		{
			snprintf(num, sizeof(num), "%s%lld", nd++ ? "," : "", (long long) i);
			sb_puts(&b, num);
		}
	sb_puts(&b, "]}");
	return b.s;
}

/*
 * kbench_agent_finish: 0 stored (or refused for good: 1), -1 the server is
 * unreachable.  with_session 0: a kept result of an earlier process.
 */
static int
finish(PGconn *c, const kb_agent_end *e, int with_session)
{
	char		job[32],
				attempt[16],
				sql[512];
	const char *vals[7];
	PGresult   *r;
	int			rc;

	snprintf(job, sizeof(job), "%" PRId64, e->job);
	snprintf(attempt, sizeof(attempt), "%d", e->attempt);
	vals[0] = name;
	vals[1] = with_session ? session : NULL;
	vals[2] = job;
	vals[3] = attempt;
	vals[4] = e->status;
	vals[5] = e->result;
	vals[6] = e->error;
	snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_finish($1, $2, $3, $4, $5, $6, $7)", schema);
	rc = call(c, sql, 7, vals, &r, NULL);
	if (rc == 0)
	{
		if (PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") != 0)
			kb_agent_log("job %s attempt %s was no longer this agent's (recovered meanwhile); its run was not stored",
						 job, attempt);
		PQclear(r);
	}
	return rc;
}

static PGconn *spool_conn;
static int	spool_with_session;

static int
store_kept(void *arg, const kb_agent_end *e)
{
	int			rc;

	(void) arg;
	rc = finish(spool_conn, e, spool_with_session);
	if (rc == 0)
		kb_agent_log("job %" PRId64 ": the result kept while the server was unreachable is stored", e->job);
	return rc;
}

static int
flush_spool(PGconn *c, int with_session)
{
	spool_conn = c;
	spool_with_session = with_session;
	return kb_spool_flush(spool_dir, store_kept, NULL);
}

/* ------------------------------------------------------------ jobs */

static void
apply_protocol(kb_request *req, const char *protocol_json)
{
	ki_arena	a;
	ki_errors	errs;
	ki_value   *p;
	const ki_value *v;

	ki_arena_init_malloc(&a);
	ki_errors_init(&errs, &a);
	p = ki_parse(&a, protocol_json, strlen(protocol_json), &errs);
	if (p)
	{
		if ((v = ki_get(p, "warmup_ms")) && v->type == KI_NUMBER)
			req->warmup_ms = v->u.num;
		if ((v = ki_get(p, "rep_ms")) && v->type == KI_NUMBER)
			req->rep_ms = v->u.num;
		if ((v = ki_get(p, "flush_bytes")) && v->type == KI_NUMBER)
			req->flush_bytes = (int64_t) v->u.num;
		if ((v = ki_get(p, "max_samples")) && v->type == KI_NUMBER)
			req->max_samples = (int64_t) v->u.num;
		if ((v = ki_get(p, "seed")) && v->type == KI_NUMBER)
			req->seed = (uint64_t) v->u.num;
		if ((v = ki_get(p, "check")) && (v->type == KI_TRUE || v->type == KI_FALSE))
			req->check = v->type == KI_TRUE;
	}
	ki_arena_reset(&a);
}

static void
on_progress(void *arg, const kb_progress *p)
{
	(void) arg;
	pthread_mutex_lock(&job_lock);
	cur_progress = p->fraction;
	pthread_mutex_unlock(&job_lock);
}

/* The GPU watchdog: a driver call that never returns (async-signal-safe). */
static void
watchdog(int sig)
{
	static const char msg[] = "kbench agent: the CUDA backend did not return within the job's timeout; exiting\n";

	(void) sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

static int
runs_in_child(const char *impl)
{
	return impl && strcmp(impl, "cpu") != 0 && strcmp(impl, "cuda") != 0 && strncmp(impl, "cuda/", 5) != 0;
}

static char *
dup_or_null(PGresult *r, int col)
{
	return PQgetisnull(r, 0, col) ? NULL : strdup(PQgetvalue(r, 0, col));
}

/*
 * Claim and run one job.  1: ran one; 0: none queued; -1: the connection
 * is gone; 2: exec a fresh process (a GPU job timed out); 3: the agent is
 * not registered (any more).
 */
static int
run_one(PGconn **conn)
{
	char		sql[512],
				pid[16];
	const char *vals[3] = {name, session, pid};
	PGresult   *r;
	int			rc;
	char		state[6];
	kb_request	req;
	kb_result	res;
	kb_status	st;
	kb_agent_end end;
	char	   *operation,
			   *mode,
			   *workload,
			   *impl,
			   *protocol,
			   *device,
			   *entry,
			   *version;
	double		timeout_ms;
	struct timespec now;
	int			fresh = 0;

	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	snprintf(sql, sizeof(sql), "SELECT id, attempt, operation, mode, workload, implementation, protocol, timeout_ms,"
			 " device, entry, impl_version FROM %s.kbench_agent_claim($1, $2, $3)", schema);
	rc = call(*conn, sql, 3, vals, &r, state);
	if (rc != 0)
		return rc < 0 ? -1 : strcmp(state, "P0002") == 0 ? 3 : 0;
	if (PQntuples(r) == 0)
	{
		PQclear(r);
		return 0;
	}
	memset(&end, 0, sizeof(end));
	end.job = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	end.attempt = atoi(PQgetvalue(r, 0, 1));
	operation = dup_or_null(r, 2);
	mode = dup_or_null(r, 3);
	workload = dup_or_null(r, 4);
	impl = dup_or_null(r, 5);
	protocol = dup_or_null(r, 6);
	timeout_ms = atof(PQgetvalue(r, 0, 7));
	device = dup_or_null(r, 8);
	entry = dup_or_null(r, 9);
	version = dup_or_null(r, 10);
	PQclear(r);

	pthread_mutex_lock(&job_lock);
	cur_job = end.job;
	cur_attempt = end.attempt;
	cur_progress = 0;
	job_cancel = stop;
	pthread_mutex_unlock(&job_lock);
	kb_agent_log("job %" PRId64 " attempt %d on %s: %s %s %s", end.job, end.attempt, device ? device : "?",
				 operation, mode, workload);

	kb_request_init(&req);
	req.op = operation;
	req.mode = mode;
	req.axes_json = workload;
	req.impl = impl;
	req.device = device;
	req.entry = entry;
	req.impl_version = version;
	req.python = python;
	apply_protocol(&req, protocol ? protocol : "{}");
	req.cancel = &job_cancel;
	req.progress = on_progress;
	clock_gettime(CLOCK_MONOTONIC, &now);
	req.deadline_ns = (int64_t) now.tv_sec * 1000000000 + now.tv_nsec + (int64_t) (timeout_ms * 1e6);
	memset(&res, 0, sizeof(res));
	if (device && strncmp(device, "cuda:", 5) == 0)
		alarm((unsigned) (timeout_ms / 1000) + 5);
	st = device ? kb_run(&req, &res) : KB_DEVICE_UNAVAILABLE;
	alarm(0);
	if (!device)
		snprintf(res.message, sizeof(res.message), "no device of this agent serves the job");

	if (st == KB_CANCELED && stop)
	{
		char		job[32],
					attempt[16];
		const char *sv[4] = {name, session, job, attempt};

		snprintf(job, sizeof(job), "%" PRId64, end.job);
		snprintf(attempt, sizeof(attempt), "%d", end.attempt);
		snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_stop($1, $2, $3, $4)", schema);
		if (call(*conn, sql, 4, sv, NULL, NULL) == 0)
			kb_agent_log("job %" PRId64 ": stopped and put back in the queue", end.job);
		rc = 1;
		goto done;
	}
	switch (st)
	{
		case KB_PASSED:
			strcpy(end.status, "passed");
			break;
		case KB_TIMEOUT:
			strcpy(end.status, "timeout");
			if (asprintf(&end.error, "stopped after the job's timeout of %.0f s%s%s%s", timeout_ms / 1000.0,
						 res.message[0] ? " (" : "", res.message, res.message[0] ? ")" : "") < 0)
				end.error = NULL;
			fresh = device && strncmp(device, "cuda:", 5) == 0 && !runs_in_child(impl);
			break;
		case KB_CANCELED:
			strcpy(end.status, "canceled");
			end.error = strdup("canceled by request");
			break;
		default:
			strcpy(end.status, "failed");
			if (asprintf(&end.error, "%s: %s", kb_status_name(st), res.message[0] ? res.message : "no detail") < 0)
				end.error = NULL;
			break;
	}
	if (res.composite_json)
		end.result = result_json(&res);
	rc = finish(*conn, &end, 1);
	if (rc > 0 && end.result)
	{
		/* as the worker: the job fails with the reason the run could not be stored */
		char	   *why = NULL;

		free(end.result);
		end.result = NULL;
		free(end.error);
		end.error = NULL;
		strcpy(end.status, "failed");
		if (asprintf(&why, "could not store the run: %s", last_error) >= 0)
			end.error = why;
		rc = finish(*conn, &end, 1);
	}
	if (rc < 0)
	{
		if (kb_spool_write(spool_dir, &end) == 0)
			kb_agent_log("job %" PRId64 ": %s; the server is unreachable, the result is kept in %s",
						 end.job, end.status, spool_dir);
	}
	else
		kb_agent_log("job %" PRId64 ": %s%s%s", end.job, end.status, end.error ? ": " : "", end.error ? end.error : "");
	rc = rc < 0 ? -1 : fresh ? 2 : 1;
done:
	pthread_mutex_lock(&job_lock);
	cur_job = 0;
	cur_attempt = 0;
	job_cancel = stop;
	pthread_mutex_unlock(&job_lock);
	kb_free_result(&res);
	free(end.error);
	free(end.result);
	free(operation);
	free(mode);
	free(workload);
	free(impl);
	free(protocol);
	free(device);
	free(entry);
	free(version);
	return rc;
}

/* Wait up to s seconds for NOTIFY kbench_queue (or stop). */
static void
wait_for_work(PGconn *c, double s)
{
	double		end = now_s() + s;
	PGnotify   *n;
	int			got = 0;

	/* a notification that came with an earlier answer is already in libpq's queue */
	while ((n = PQnotifies(c)) != NULL)
	{
		got = 1;
		PQfreemem(n);
	}
	while (!stop && !got && now_s() < end)
	{
		int			sock = PQsocket(c);
		fd_set		in;
		double		left = fmin(end - now_s(), 0.5);
		struct timeval tv = {(time_t) left, (suseconds_t) ((left - floor(left)) * 1e6)};

		if (sock < 0)
			return;
		FD_ZERO(&in);
		FD_SET(sock, &in);
		if (select(sock + 1, &in, NULL, NULL, &tv) < 0 && errno != EINTR)
			return;
		if (!PQconsumeInput(c))
			return;				/* the connection is gone: the caller sees it */
		while ((n = PQnotifies(c)) != NULL)
		{
			got = 1;
			PQfreemem(n);
		}
	}
}

/* Register (again); 0 done, 1 refused, -1 connection gone. */
static int
register_agent(PGconn *c, const char *devices, const char *served)
{
	char		sql[512],
				pid[16],
				host[256] = "";
	const char *vals[6];
	PGresult   *r;
	int			rc;

	gethostname(host, sizeof(host) - 1);
	snprintf(pid, sizeof(pid), "%d", (int) getpid());
	vals[0] = name;
	vals[1] = host;
	vals[2] = pid;
	vals[3] = KB_VERSION;
	vals[4] = devices;
	vals[5] = served;
	snprintf(sql, sizeof(sql), "SELECT session, lease_s FROM %s.kbench_agent_register($1, $2, $3, $4, $5, $6)", schema);
	rc = call(c, sql, 6, vals, &r, NULL);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&job_lock);
	snprintf(session, sizeof(session), "%s", PQgetvalue(r, 0, 0));
	lease_s = atof(PQgetvalue(r, 0, 1));
	pthread_mutex_unlock(&job_lock);
	PQclear(r);
	kb_agent_log("registered (session %s, pid %s, lease %.0f s)", session, pid, lease_s);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *devices_opt = "auto";
	char	   *devices;
	char		served[512] = "";
	PGconn	   *conn;
	pthread_t	hb;
	struct sigaction sa;
	int			rc;

	for (int i = 1; i < argc; i++)
	{
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "help") == 0)
		{
			usage(stdout);
			return 0;
		}
		if (!v || strncmp(a, "--", 2) != 0)
		{
			fprintf(stderr, "kbench agent: %s %s\n", a, strncmp(a, "--", 2) == 0 ? "needs a value" : "is not an option");
			usage(stderr);
			return 2;
		}
		if (strcmp(a, "--db") == 0)
			conninfo = v;
		else if (strcmp(a, "--name") == 0)
			snprintf(name, sizeof(name), "%s", v);
		else if (strcmp(a, "--devices") == 0)
			devices_opt = v;
		else if (strcmp(a, "--spool") == 0)
			snprintf(spool_dir, sizeof(spool_dir), "%s", v);
		else if (strcmp(a, "--python") == 0)
			python = v;
		else
		{
			fprintf(stderr, "kbench agent: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!name[0])
	{
		gethostname(name, sizeof(name) - 1);
		name[strcspn(name, ".")] = '\0';
	}
	if (!spool_dir[0])
		snprintf(spool_dir, sizeof(spool_dir), "/var/tmp/kbench-agent-%s", name);
	if (strcmp(devices_opt, "auto") != 0)
	{
		/* a text[] literal of the devices to serve; the server checks each name */
		size_t		n = strspn(devices_opt, "abcdefghijklmnopqrstuvwxyz0123456789:,");

		if (devices_opt[n] != '\0' || !devices_opt[0])
		{
			fprintf(stderr, "kbench agent: --devices takes auto or a list such as cpu,cuda:0\n");
			return 2;
		}
		snprintf(served, sizeof(served), "{%s}", devices_opt);
	}

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = watchdog;
	sigaction(SIGALRM, &sa, NULL);

	devices = kb_devices_json();
	if (!devices)
	{
		kb_agent_log("out of memory");
		return 1;
	}
	if ((conn = wait_connect()) == NULL)
		return 0;
	/* results an earlier process kept, before registering recovers its jobs */
	if (flush_spool(conn, 0) < 0)
		kb_agent_log("the kept results wait for the server");
	while ((rc = register_agent(conn, devices, served[0] ? served : NULL)) < 0 && !stop)
	{
		PQfinish(conn);
		if ((conn = wait_connect()) == NULL)
			return 0;
	}
	if (rc > 0)
		return 2;				/* refused: no right, or the name is another role's */
	if (stop)
		return 0;
	if (pthread_create(&hb, NULL, heartbeat_main, NULL) != 0)
	{
		kb_agent_log("cannot start the heartbeat thread");
		return 1;
	}
	PQclear(PQexec(conn, "LISTEN kbench_queue"));

	while (!stop)
	{
		double		interval;

		if (PQstatus(conn) != CONNECTION_OK)
		{
			kb_agent_log("the server is unreachable; reconnecting");
			PQfinish(conn);
			if ((conn = wait_connect()) == NULL)
				break;
			PQclear(PQexec(conn, "LISTEN kbench_queue"));
			if (flush_spool(conn, 1) < 0)
				continue;
		}
		rc = run_one(&conn);
		if (rc == 2)
		{
			/* a GPU job timed out: a kernel may still run; start afresh */
			kb_agent_log("a GPU job timed out; starting a fresh process for a fresh CUDA context");
			stop = 1;
			pthread_join(hb, NULL);
			PQfinish(conn);
			execv("/proc/self/exe", argv);
			kb_agent_log("cannot start again: %s", strerror(errno));
			return 1;
		}
		if (rc < 0)
		{
			/* the server went away: wait for it, then store what was kept */
			kb_agent_log("the server is unreachable; reconnecting");
			PQfinish(conn);
			if ((conn = wait_connect()) == NULL)
				break;
			PQclear(PQexec(conn, "LISTEN kbench_queue"));
			flush_spool(conn, 1);
			continue;
		}
		if (rc == 1)
			continue;			/* look for the next job at once */
		if (rc == 3)
		{
			/* its row went (the database was restored, an admin removed it): again */
			if (register_agent(conn, devices, served[0] ? served : NULL) > 0)
				nap(1);
			continue;
		}
		pthread_mutex_lock(&job_lock);
		interval = fmax(lease_s / 3, 0.2);
		pthread_mutex_unlock(&job_lock);
		wait_for_work(conn, interval);
	}
	/* SIGTERM: say so (a running job was put back already) */
	if (conn && PQstatus(conn) == CONNECTION_OK)
	{
		char		sql[256];
		const char *vals[2] = {name, session};

		snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_stop($1, $2)", schema);
		call(conn, sql, 2, vals, NULL, NULL);
	}
	pthread_join(hb, NULL);
	if (conn)
		PQfinish(conn);
	kb_agent_log("stopped");
	return 0;
}
