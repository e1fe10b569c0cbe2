/*
 * agent.h: kbench agent, the runner of a GPU host without a database
 * (docs/FLEET.md).  Plain C11 and libpq; the benchmarks run through
 * libkbench (kb_run), as in the in-server worker.
 */
#ifndef KB_AGENT_H
#define KB_AGENT_H

#include <stdint.h>

#include <libpq-fe.h>

/* A job's end, as kbench_agent_finish takes it (and the spool keeps it). */
typedef struct kb_agent_end
{
	int64_t		job;
	int			attempt;
	char		status[16];		/* passed, failed, timeout, canceled */
	char	   *error;			/* malloc'd or NULL */
	char	   *result;			/* what `kbench run --json` prints, malloc'd, or NULL */
} kb_agent_end;

/* Log a line on stderr: "kbench agent NAME: ...". */
void		kb_agent_log(const char *fmt,...) __attribute__((format(printf, 1, 2)));

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
