/*
 * db.c: the agent's connections to the server (libpq): connect, run one
 * statement with text parameters and sort its failure (the server gone, or
 * an error it raised), wait for the server as long as it takes, and the
 * monotonic clock and the nap that every wait of the agent uses (both end
 * early on a stop).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent.h"

PGconn *
kb_agent_connect(int quiet)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {kb_agent.conninfo, "kbench agent", NULL};
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

int
kb_agent_call(PGconn *c, const char *sql, int n, const char *const *vals, PGresult **out, char state[6])
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
		if (pthread_equal(pthread_self(), kb_agent.main_thread))
			snprintf(kb_agent.last_error, sizeof(kb_agent.last_error), "%s", m ? m : "?");
		kb_agent_log("the server refused: %s (SQLSTATE %s)%s%s", m ? m : "?",
					 PQresultErrorField(r, PG_DIAG_SQLSTATE), d ? " " : "", d ? d : "");
	}
	PQclear(r);
	return 1;
}

double
kb_agent_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

void
kb_agent_nap(double s)
{
	double		end = kb_agent_now_s() + s;

	while (!kb_agent_stop && kb_agent_now_s() < end)
	{
		double		left = end - kb_agent_now_s();
		struct timespec t = {0, (long) (fmin(left, 0.1) * 1e9)};

		nanosleep(&t, NULL);
	}
}

PGconn *
kb_agent_wait_connect(void)
{
	int			said = 0;

	while (!kb_agent_stop)
	{
		PGconn	   *c = kb_agent_connect(said);

		if (c)
		{
			PGresult   *r;

			if (kb_agent_call(c, "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
					 " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'kernelindex'",
					 0, NULL, &r, NULL) == 0 && PQntuples(r) == 1)
			{
				snprintf(kb_agent.schema, sizeof(kb_agent.schema), "%s", PQgetvalue(r, 0, 0));
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
		kb_agent_nap(1);
	}
	return NULL;
}
