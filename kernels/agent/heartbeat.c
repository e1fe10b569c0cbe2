/*
 * heartbeat.c: the agent's second thread.  On a connection of its own it
 * heartbeats every third of kernelindex.agent_lease
 * (kbench_agent_heartbeat), with the running job and its progress; the
 * answer carries a cancel request (kbench_cancel), which stops kb_run, and
 * the lease.  An agent that stops heartbeating (killed, host down) has its
 * job recovered by the server after the lease.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

void *
kb_agent_heartbeat(void *arg)
{
	PGconn	   *hb = NULL;
	char		sql[512];

	(void) arg;
	while (!kb_agent_stop)
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

		pthread_mutex_lock(&kb_agent.job_lock);
		interval = fmax(kb_agent.lease_s / 3, 0.2);
		pthread_mutex_unlock(&kb_agent.job_lock);
		kb_agent_nap(interval);
		if (kb_agent_stop)
			break;
		if (hb == NULL && (hb = kb_agent_connect(1)) == NULL)
			continue;
		pthread_mutex_lock(&kb_agent.job_lock);
		snprintf(job, sizeof(job), "%" PRId64, kb_agent.cur_job);
		snprintf(attempt, sizeof(attempt), "%d", kb_agent.cur_attempt);
		snprintf(progress, sizeof(progress), "%.4f", kb_agent.cur_progress);
		snprintf(sess, sizeof(sess), "%s", kb_agent.session);
		vals[0] = kb_agent.name;
		vals[1] = sess;
		vals[2] = kb_agent.cur_job ? job : NULL;
		vals[3] = kb_agent.cur_job ? attempt : NULL;
		vals[4] = kb_agent.cur_job ? progress : NULL;
		pthread_mutex_unlock(&kb_agent.job_lock);
		snprintf(sql, sizeof(sql), "SELECT cancel, lease_s FROM %s.kbench_agent_heartbeat($1, $2, $3, $4, $5)", kb_agent.schema);
		rc = kb_agent_call(hb, sql, 5, vals, &r, state);
		if (rc == 0)
		{
			pthread_mutex_lock(&kb_agent.job_lock);
			if (PQntuples(r) == 1)
			{
				if (strcmp(PQgetvalue(r, 0, 0), "t") == 0 && kb_agent.cur_job && strcmp(job, vals[2] ? vals[2] : "") == 0)
				{
					kb_agent_log("job %s: cancel requested", job);
					kb_agent_job_cancel = 1;
				}
				kb_agent.lease_s = atof(PQgetvalue(r, 0, 1));
			}
			pthread_mutex_unlock(&kb_agent.job_lock);
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
			kb_agent_stop = 1;
			kb_agent_job_cancel = 1;
		}
	}
	if (hb)
		PQfinish(hb);
	return NULL;
}
