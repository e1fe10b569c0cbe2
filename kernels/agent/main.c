/*
 * main.c of kbench-agent: runs kernelindex jobs on a GPU host that has no database
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
 * This file: the options, the signals, registration and the main loop.
 * The rest by subject (agent.h): state.c (what the parts share), log.c, db.c
 * (libpq), heartbeat.c (the second thread), job.c (claim and run one job),
 * result.c (a job's end stored), spool.c (kept while the server is away).
 *
 * Exit status: 0 stopped (SIGTERM); 1 a fatal error; 2 bad usage, or the
 * server refused the agent (its role lacks kbench_agent, the name belongs to
 * another role).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

static void
on_stop(int sig)
{
	(void) sig;
	kb_agent_stop = 1;
	kb_agent_job_cancel = 1;
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
	vals[0] = kb_agent.name;
	vals[1] = host;
	vals[2] = pid;
	vals[3] = KB_VERSION;
	vals[4] = devices;
	vals[5] = served;
	snprintf(sql, sizeof(sql), "SELECT session, lease_s FROM %s.kbench_agent_register($1, $2, $3, $4, $5, $6)", kb_agent.schema);
	rc = kb_agent_call(c, sql, 6, vals, &r, NULL);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&kb_agent.job_lock);
	snprintf(kb_agent.session, sizeof(kb_agent.session), "%s", PQgetvalue(r, 0, 0));
	kb_agent.lease_s = atof(PQgetvalue(r, 0, 1));
	pthread_mutex_unlock(&kb_agent.job_lock);
	PQclear(r);
	kb_agent_log("registered (session %s, pid %s, lease %.0f s)", kb_agent.session, pid, kb_agent.lease_s);
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
			kb_agent.conninfo = v;
		else if (strcmp(a, "--name") == 0)
			snprintf(kb_agent.name, sizeof(kb_agent.name), "%s", v);
		else if (strcmp(a, "--devices") == 0)
			devices_opt = v;
		else if (strcmp(a, "--spool") == 0)
			snprintf(kb_agent.spool_dir, sizeof(kb_agent.spool_dir), "%s", v);
		else if (strcmp(a, "--python") == 0)
			kb_agent.python = v;
		else
		{
			fprintf(stderr, "kbench agent: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!kb_agent.name[0])
	{
		gethostname(kb_agent.name, sizeof(kb_agent.name) - 1);
		kb_agent.name[strcspn(kb_agent.name, ".")] = '\0';
	}
	if (!kb_agent.spool_dir[0])
		snprintf(kb_agent.spool_dir, sizeof(kb_agent.spool_dir), "/var/tmp/kbench-agent-%s", kb_agent.name);
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

	kb_agent.main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = kb_agent_watchdog;
	sigaction(SIGALRM, &sa, NULL);

	devices = kb_devices_json();
	if (!devices)
	{
		kb_agent_log("out of memory");
		return 1;
	}
	if ((conn = kb_agent_wait_connect()) == NULL)
		return 0;
	/* results an earlier process kept, before registering recovers its jobs */
	if (kb_agent_flush_spool(conn, 0) < 0)
		kb_agent_log("the kept results wait for the server");
	while ((rc = register_agent(conn, devices, served[0] ? served : NULL)) < 0 && !kb_agent_stop)
	{
		PQfinish(conn);
		if ((conn = kb_agent_wait_connect()) == NULL)
			return 0;
	}
	if (rc > 0)
		return 2;				/* refused: no right, or the name is another role's */
	if (kb_agent_stop)
		return 0;
	if (pthread_create(&hb, NULL, kb_agent_heartbeat, NULL) != 0)
	{
		kb_agent_log("cannot start the heartbeat thread");
		return 1;
	}
	PQclear(PQexec(conn, "LISTEN kbench_queue"));

	while (!kb_agent_stop)
	{
		double		interval;

		if (PQstatus(conn) != CONNECTION_OK)
		{
			kb_agent_log("the server is unreachable; reconnecting");
			PQfinish(conn);
			if ((conn = kb_agent_wait_connect()) == NULL)
				break;
			PQclear(PQexec(conn, "LISTEN kbench_queue"));
			if (kb_agent_flush_spool(conn, 1) < 0)
				continue;
		}
		rc = kb_agent_run_one(&conn);
		if (rc == 2)
		{
			/* a GPU job timed out: a kernel may still run; start afresh */
			kb_agent_log("a GPU job timed out; starting a fresh process for a fresh CUDA context");
			kb_agent_stop = 1;
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
			if ((conn = kb_agent_wait_connect()) == NULL)
				break;
			PQclear(PQexec(conn, "LISTEN kbench_queue"));
			kb_agent_flush_spool(conn, 1);
			continue;
		}
		if (rc == 1)
			continue;			/* look for the next job at once */
		if (rc == 3)
		{
			/* its row went (the database was restored, an admin removed it): again */
			if (register_agent(conn, devices, served[0] ? served : NULL) > 0)
				kb_agent_nap(1);
			continue;
		}
		pthread_mutex_lock(&kb_agent.job_lock);
		interval = fmax(kb_agent.lease_s / 3, 0.2);
		pthread_mutex_unlock(&kb_agent.job_lock);
		kb_agent_wait_for_work(conn, interval);
	}
	/* SIGTERM: say so (a running job was put back already) */
	if (conn && PQstatus(conn) == CONNECTION_OK)
	{
		char		sql[256];
		const char *vals[2] = {kb_agent.name, kb_agent.session};

		snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_stop($1, $2)", kb_agent.schema);
		kb_agent_call(conn, sql, 2, vals, NULL, NULL);
	}
	pthread_join(hb, NULL);
	if (conn)
		PQfinish(conn);
	kb_agent_log("stopped");
	return 0;
}
