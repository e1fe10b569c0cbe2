/*
 * estimate.h: a job's expected duration, and queueing a job (src/estimate.c,
 * src/queue.c).
 */
#ifndef KI_ESTIMATE_H
#define KI_ESTIMATE_H

#include "postgres.h"

#include "utils/jsonb.h"
#include "utils/timestamp.h"

#include "../kernels/kbench.h"

/* Seconds a job is expected to take on device (< 0: cannot say); how says from what. */
double		ki_job_estimate(const char *op, const char *mode, const char *workload, const char *impl,
							const char *device, const char *protocol, char *how, size_t howlen);

/* A job to queue (kbench_run, kbench_compare). */
typedef struct KiJobRequest
{
	const char *op;
	const char *mode;
	Jsonb	   *workload;
	const char *impl;			/* NULL: the device's own */
	const char *device;			/* NULL: the best device a worker serves */
	Jsonb	   *protocol;		/* NULL: {} */
	Interval   *timeout;		/* NULL: kernelindex.job_timeout */
	bool		retry;
	double		max_minutes;	/* <= 0: no limit */
	/* a paired comparison: B's implementation (b_set), and the job's comparison text */
	bool		b_set;
	const char *impl_b;
	const char *comparison;		/* jsonb text for kbench_jobs.comparison, or NULL */
} KiJobRequest;

/* Validate and queue a job as the extension's owner; its id.  req->device is set. */
int64		ki_queue_job(KiJobRequest *req);

/* Run sql through SPI as the extension's owner (connected to SPI). */
int			ki_spi_as_owner(const char *sql, int nargs, Oid *types, Datum *args, const char *nulls,
							bool read_only);

/* Seconds over which kbench_run gives a NOTICE with the estimate. */
#define KI_ESTIMATE_NOTICE_S 120.0

#endif							/* KI_ESTIMATE_H */
