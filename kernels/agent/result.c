/*
 * result.c: a job's end as the server takes it: the result JSON that
 * `kbench run --json` prints (manifests and raw samples), stored through
 * kbench_agent_finish; the results kept in the spool directory while the
 * server was unreachable (spool.c) stored once it is back.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

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
char *
kb_agent_result_json(const kb_result *r)
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

/* kbench_agent_finish (agent.h); with_session 0: a kept result of an earlier process. */
int
kb_agent_finish(PGconn *c, const kb_agent_end *e, int with_session)
{
	char		job[32],
				attempt[16],
				sql[512];
	const char *vals[7];
	PGresult   *r;
	int			rc;

	snprintf(job, sizeof(job), "%" PRId64, e->job);
	snprintf(attempt, sizeof(attempt), "%d", e->attempt);
	vals[0] = kb_agent.name;
	vals[1] = with_session ? kb_agent.session : NULL;
	vals[2] = job;
	vals[3] = attempt;
	vals[4] = e->status;
	vals[5] = e->result;
	vals[6] = e->error;
	snprintf(sql, sizeof(sql), "SELECT %s.kbench_agent_finish($1, $2, $3, $4, $5, $6, $7)", kb_agent.schema);
	rc = kb_agent_call(c, sql, 7, vals, &r, NULL);
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
	rc = kb_agent_finish(spool_conn, e, spool_with_session);
	if (rc == 0)
		kb_agent_log("job %" PRId64 ": the result kept while the server was unreachable is stored", e->job);
	return rc;
}

int
kb_agent_flush_spool(PGconn *c, int with_session)
{
	spool_conn = c;
	spool_with_session = with_session;
	return kb_spool_flush(kb_agent.spool_dir, store_kept, NULL);
}
