/*
 * job.c: one job: claimed (kbench_agent_claim, which goes through the
 * in-server worker's kbench__claim), run with libkbench's kb_run as the
 * worker does (builtin, library and python implementations alike) under
 * the job's protocol and deadline, its end stored (result.c) or kept in the
 * spool (spool.c); and the wait for the next (NOTIFY kbench_queue).  A GPU
 * job that timed out may leave a kernel running: the caller then starts a
 * fresh process (exec), as the worker exits for a fresh CUDA context.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "ki_json.h"

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
		if ((v = ki_get(p, "adaptive")) && (v->type == KI_TRUE || v->type == KI_FALSE))
			req->fixed_count = v->type == KI_FALSE;
		if ((v = ki_get(p, "noise_target_pct")) && v->type == KI_NUMBER)
			req->noise_target_pct = v->u.num;
		if ((v = ki_get(p, "max_ms")) && v->type == KI_NUMBER)
			req->max_ms = v->u.num;
	}
	ki_arena_reset(&a);
}

static void
on_progress(void *arg, const kb_progress *p)
{
	(void) arg;
	pthread_mutex_lock(&kb_agent.job_lock);
	kb_agent.cur_progress = p->fraction;
	pthread_mutex_unlock(&kb_agent.job_lock);
}

/* The GPU watchdog: a driver call that never returns (async-signal-safe). */
void
kb_agent_watchdog(int sig)
{
	static const char msg[] = "kbench agent: the CUDA backend did not return within the job's timeout; exiting\n";

	(void) sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* Not one of kbench's own implementations (kb_impl_resolve): a child process runs it. */
static int
runs_in_child(const char *impl)
{
	kb_impl_id	id;

	return impl && kb_impl_resolve(impl, NULL, &id, NULL, 0) == KB_PASSED && !id.own;
}

static char *
dup_or_null(PGresult *r, int col)
{
	return PQgetisnull(r, 0, col) ? NULL : strdup(PQgetvalue(r, 0, col));
}

/*
 * The job's operation, when it is one registered in SQL (kbench_register_operation):
 * its definition and reference as the server stored them, in place of any
 * registered before (a definition is re-registered under its name).  An
 * operation of kbench's own has no row; a definition that does not load
 * leaves the run to say the operation is unknown.
 */
static void
registered_operation(PGconn *conn, const char *operation)
{
	char		sql[512],
				err[1024];
	const char *vals[1] = {operation};
	PGresult   *r;

	snprintf(sql, sizeof(sql), "SELECT definition, reference_source, reference_file, source_file"
			 " FROM %s.kbench_registered_operations WHERE name = $1", kb_agent.schema);
	if (!operation || kb_agent_call(conn, sql, 1, vals, &r, NULL) != 0)
		return;
	if (PQntuples(r) == 1)
	{
		kb_forget_added_ops();
		if (kb_add_op_def(PQgetvalue(r, 0, 3), PQgetvalue(r, 0, 0), PQgetisnull(r, 0, 1) ? NULL : PQgetvalue(r, 0, 1),
						  PQgetisnull(r, 0, 2) ? NULL : PQgetvalue(r, 0, 2), NULL, 0, err, sizeof(err)) != 0)
			kb_agent_log("registered operation %s does not load: %s", operation, err);
	}
	PQclear(r);
}

/* Claim and run one job (agent.h says what it returns). */
int
kb_agent_run_one(PGconn **conn)
{
	char		sql[512],
				pid[16];
	const char *vals[3] = {kb_agent.name, kb_agent.session, pid};
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
			 " device, entry, impl_version FROM %s.kbench_agent_claim($1, $2, $3)", kb_agent.schema);
	rc = kb_agent_call(*conn, sql, 3, vals, &r, state);
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

	pthread_mutex_lock(&kb_agent.job_lock);
	kb_agent.cur_job = end.job;
	kb_agent.cur_attempt = end.attempt;
	kb_agent.cur_progress = 0;
	kb_agent_job_cancel = kb_agent_stop;
	pthread_mutex_unlock(&kb_agent.job_lock);
	kb_agent_log("job %" PRId64 " attempt %d on %s: %s %s %s", end.job, end.attempt, device ? device : "?",
				 operation, mode, workload);

	registered_operation(*conn, operation);
	kb_request_for(&req, operation, mode, workload, impl, device);
	req.entry = entry;
	req.impl_version = version;
	req.python = kb_agent.python;
	apply_protocol(&req, protocol ? protocol : "{}");
	req.cancel = &kb_agent_job_cancel;
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

	if (st == KB_CANCELED && kb_agent_stop)
	{
		char		job[32],
					attempt[16];
		const char *sv[4] = {kb_agent.name, kb_agent.session, job, attempt};

		snprintf(job, sizeof(job), "%" PRId64, end.job);
		snprintf(attempt, sizeof(attempt), "%d", end.attempt);
		snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_stop($1, $2, $3, $4)", kb_agent.schema);
		if (kb_agent_call(*conn, sql, 4, sv, NULL, NULL) == 0)
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
		end.result = kb_agent_result_json(&res);
	rc = kb_agent_finish(*conn, &end, 1);
	if (rc > 0 && end.result)
	{
		/* as the worker: the job fails with the reason the run could not be stored */
		char	   *why = NULL;

		free(end.result);
		end.result = NULL;
		free(end.error);
		end.error = NULL;
		strcpy(end.status, "failed");
		if (asprintf(&why, "could not store the run: %s", kb_agent.last_error) >= 0)
			end.error = why;
		rc = kb_agent_finish(*conn, &end, 1);
	}
	if (rc < 0)
	{
		if (kb_spool_write(kb_agent.spool_dir, &end) == 0)
			kb_agent_log("job %" PRId64 ": %s; the server is unreachable, the result is kept in %s",
						 end.job, end.status, kb_agent.spool_dir);
	}
	else
		kb_agent_log("job %" PRId64 ": %s%s%s", end.job, end.status, end.error ? ": " : "", end.error ? end.error : "");
	rc = rc < 0 ? -1 : fresh ? 2 : 1;
done:
	pthread_mutex_lock(&kb_agent.job_lock);
	kb_agent.cur_job = 0;
	kb_agent.cur_attempt = 0;
	kb_agent_job_cancel = kb_agent_stop;
	pthread_mutex_unlock(&kb_agent.job_lock);
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
void
kb_agent_wait_for_work(PGconn *c, double s)
{
	double		end = kb_agent_now_s() + s;
	PGnotify   *n;
	int			got = 0;

	/* a notification that came with an earlier answer is already in libpq's queue */
	while ((n = PQnotifies(c)) != NULL)
	{
		got = 1;
		PQfreemem(n);
	}
	while (!kb_agent_stop && !got && kb_agent_now_s() < end)
	{
		int			sock = PQsocket(c);
		fd_set		in;
		double		left = fmin(end - kb_agent_now_s(), 0.5);
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
