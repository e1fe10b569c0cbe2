/*
 * agent.h: kbench agent, the runner of a GPU host without a database
 * (docs/FLEET.md).  Plain C11 and libpq; the benchmarks run through
 * libkbench (kb_run), as in the in-server worker.
 */
#ifndef KB_AGENT_H
#define KB_AGENT_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "kbench.h"

/* What the agent's parts share (state.c). */
typedef struct kb_agent_state
{
	const char *conninfo;		/* --db */
	char		name[64];		/* --name, else the host name */
	char		spool_dir[4096];	/* --spool */
	const char *python;			/* --python */
	char		schema[200];	/* the extension's schema, quoted */
	char		session[32];	/* this process's registration */
	/* The running job, shared with the heartbeat thread under job_lock. */
	pthread_mutex_t job_lock;
	int64_t		cur_job;
	int			cur_attempt;
	double		cur_progress;
	double		lease_s;
	char		last_error[600];	/* the server's last refusal, for the main thread */
	pthread_t	main_thread;
} kb_agent_state;

extern kb_agent_state kb_agent;
extern volatile sig_atomic_t kb_agent_stop;	/* SIGTERM/SIGINT, or the name was taken */
extern volatile int kb_agent_job_cancel;	/* kb_run polls it */

/* A job's end, as kbench_agent_finish takes it (and the spool keeps it). */
typedef struct kb_agent_end
{
	int64_t		job;
	int			attempt;
	char		status[16];		/* passed, failed, timeout, canceled */
	char	   *error;			/* malloc'd or NULL */
	char	   *result;			/* what `kbench run --json` prints, malloc'd, or NULL */
} kb_agent_end;

/* log.c: log a line on stderr: "kbench agent NAME: ...". */
void		kb_agent_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* db.c */
PGconn	   *kb_agent_connect(int quiet);
/*
 * Run sql with text parameters (NULL for SQL NULL).  0: done (*out holds
 * the result, free it); -1: the connection is gone; 1: the server raised
 * an error (logged; its SQLSTATE in state).
 */
int			kb_agent_call(PGconn *c, const char *sql, int n, const char *const *vals, PGresult **out, char state[6]);
double		kb_agent_now_s(void);
void		kb_agent_nap(double s);	/* up to s seconds; returns early on stop */
PGconn	   *kb_agent_wait_connect(void);	/* waits for the server as long as it takes (or until stop) */

/* heartbeat.c: the heartbeat thread's body */
void	   *kb_agent_heartbeat(void *arg);

/* result.c */
char	   *kb_agent_result_json(const kb_result *r);
/* kbench_agent_finish: 0 stored (or refused for good: 1), -1 the server is unreachable. */
int			kb_agent_finish(PGconn *c, const kb_agent_end *e, int with_session);
int			kb_agent_flush_spool(PGconn *c, int with_session);

/* job.c */
/*
 * Claim and run one job.  1: ran one; 0: none queued; -1: the connection
 * is gone; 2: exec a fresh process (a GPU job timed out); 3: the agent is
 * not registered (any more).
 */
int			kb_agent_run_one(PGconn **conn);
void		kb_agent_wait_for_work(PGconn *c, double s);	/* NOTIFY kbench_queue, up to s seconds */
void		kb_agent_watchdog(int sig);	/* SIGALRM: a CUDA call that never returned */

/* spool.c: results kept on disk while the server cannot be reached. */
int			kb_spool_write(const char *dir, const kb_agent_end *end);
/*
 * Store every kept result with store(); a file is removed once stored (or
 * refused by the server, kept as .refused); stops at the first that could
 * not be sent (the server went away again: returns -1).
 */
int			kb_spool_flush(const char *dir,
						   int (*store) (void *arg, const kb_agent_end *end), void *arg);

#endif							/* KB_AGENT_H */
