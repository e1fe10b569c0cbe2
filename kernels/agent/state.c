/*
 * state.c: what the agent's parts share: its settings (the options), its
 * registration (the extension's schema, the session), the stop flag, and
 * the running job, which the heartbeat thread reads under job_lock.
 */
#include <pthread.h>
#include <signal.h>

#include "agent.h"

kb_agent_state kb_agent = {
	.conninfo = "",
	.job_lock = PTHREAD_MUTEX_INITIALIZER,
	.lease_s = 30,
};

volatile sig_atomic_t kb_agent_stop = 0;
volatile int kb_agent_job_cancel = 0;
