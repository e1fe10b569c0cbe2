/*
 * init.c: _PG_init, the module's load: every GUC, and with the preload the
 * shared memory and one background worker per device (src/worker_*.c).
 */
#include "kernelindex.h"
#include "runner.h"
#include "security.h"
#include "implementations.h"
#include "worker.h"
#include "fleet.h"

#include "miscadmin.h"
#include "utils/guc.h"

char	   *ki_database = NULL;
char	   *ki_devices = NULL;
int			ki_job_timeout_s = 600;
int			ki_retention_s = 7 * 24 * 3600;
int			ki_queue_limit = 1000;

void		_PG_init(void);

/* Module load: GUCs; shared memory and workers when preloaded. */
void
_PG_init(void)
{
	GucContext	postmaster_level = process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP;

	/*
	 * Every setting exists with and without the preload, so that one
	 * postgresql.conf serves both.  The postmaster-level ones can only be
	 * PGC_POSTMASTER while preloading; loaded later they are read (SIGHUP)
	 * but start nothing, as no worker runs.
	 */
	DefineCustomStringVariable("kernelindex.database",
							   "Database the kernelindex workers connect to.",
							   "Jobs can be queued only in this database.",
							   &ki_database, "postgres", postmaster_level, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("kernelindex.devices",
							   "Devices to start workers for: auto, none, or a list such as cpu,cuda:0.",
							   "auto starts one worker for the CPU backend and one per visible NVIDIA GPU.",
							   &ki_devices, "auto", postmaster_level, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.job_timeout",
							"Default time limit of a benchmark job.",
							"A job that runs longer is stopped and marked timeout.",
							&ki_job_timeout_s, 600, 1, 7 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.history_retention",
							"How long finished jobs stay in kbench_jobs.",
							"Their runs stay in the catalog forever; only the job rows go.",
							&ki_retention_s, 7 * 24 * 3600, 60, INT_MAX, PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("kernelindex.queue_limit",
							"Most jobs that may wait in the queue.",
							"kbench_run refuses new jobs beyond it.",
							&ki_queue_limit, 1000, 1, 1000000, PGC_SIGHUP, 0, NULL, NULL, NULL);
	ki_define_security_gucs();
	ki_implementations_init();
	ki_continuous_init();		/* continuous.c: kernelindex.confirm_alerts */
	ki_fleet_init();			/* fleet.c: kernelindex.agent_lease */
	MarkGUCPrefixReserved("kernelindex");

	if (!process_shared_preload_libraries_in_progress)
		return;

	ki_shmem_install_hooks();
	ki_register_workers();
}
