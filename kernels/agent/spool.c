/*
 * spool.c: a finished job's result that could not be stored (the server
 * was unreachable) is written to the agent's spool directory, one file a
 * job attempt, and stored when the server comes back.  Storing twice adds
 * nothing: the manifests are content-addressed (kbench_ingest), and
 * kbench_agent_finish ends a job attempt once.
 *
 * A file: "kbench-agent-spool 1\n", then "job attempt status\n", the error
 * on one line (empty for none), the result JSON on one line (empty for
 * none).  Written to a temporary name, synced, then renamed.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"

static int
put_line(FILE *f, const char *s)
{
	for (; s && *s; s++)
		if (fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f) == EOF)
			return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

int
kb_spool_write(const char *dir, const kb_agent_end *end)
{
	char		path[4096],
				tmp[4200];
	FILE	   *f;
	int			bad;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
	{
		kb_agent_log("cannot make the spool directory %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/job-%" PRId64 "-%d.spool", dir, end->job, end->attempt);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
	{
		kb_agent_log("cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	bad = fprintf(f, "kbench-agent-spool 1\n%" PRId64 " %d %s\n", end->job, end->attempt, end->status) < 0;
	bad |= put_line(f, end->error) != 0;
	bad |= put_line(f, end->result) != 0;
	bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) != 0)
	{
		kb_agent_log("cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* One line of f, malloc'd, without its newline; NULL at the end. */
static char *
get_line(FILE *f)
{
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n = getline(&line, &cap, f);

	if (n < 0)
	{
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

static int
read_spool(const char *path, kb_agent_end *end)
{
	FILE	   *f = fopen(path, "r");
	char	   *magic,
			   *head;
	int			ok;

	memset(end, 0, sizeof(*end));
	if (!f)
		return -1;
	magic = get_line(f);
	head = get_line(f);
	end->error = get_line(f);
	end->result = get_line(f);
	fclose(f);
	ok = magic && strcmp(magic, "kbench-agent-spool 1") == 0 && head && end->error && end->result &&
		sscanf(head, "%" SCNd64 " %d %15s", &end->job, &end->attempt, end->status) == 3;
	free(magic);
	free(head);
	if (end->error && !end->error[0])
	{
		free(end->error);
		end->error = NULL;
	}
	if (end->result && !end->result[0])
	{
		free(end->result);
		end->result = NULL;
	}
	return ok ? 0 : -1;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
is_spool(const struct dirent *e)
{
	size_t		n = strlen(e->d_name);

	return strncmp(e->d_name, "job-", 4) == 0 && n > 6 && strcmp(e->d_name + n - 6, ".spool") == 0;
}

int
kb_spool_flush(const char *dir, int (*store) (void *arg, const kb_agent_end *end), void *arg)
{
	struct dirent **list = NULL;
	int			n = scandir(dir, &list, is_spool, by_name);
	int			rc = 0;

	for (int i = 0; i < n; i++)
	{
		char		path[4096];
		kb_agent_end end;

		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (rc == 0)
		{
			if (read_spool(path, &end) != 0)
			{
				char		bad[4200];

				kb_agent_log("%s is not a spool file; kept as .refused", path);
				snprintf(bad, sizeof(bad), "%s.refused", path);
				rename(path, bad);
			}
			else
			{
				int			st = store(arg, &end);

				if (st < 0)
					rc = -1;	/* the server went away again: later */
				else if (st == 0)
					unlink(path);
				else
				{
					char		bad[4200];

					snprintf(bad, sizeof(bad), "%s.refused", path);
					rename(path, bad);
				}
			}
			free(end.error);
			free(end.result);
		}
		free(list[i]);
	}
	free(list);
	return rc;
}
