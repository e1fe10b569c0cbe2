/*
 * protocol.h: the protocol settings a job may carry ({"warmup_ms": 25, ...}),
 * written once (src/protocol.c): checked when the job is queued (queue.c),
 * applied to the request when a worker runs it (worker_run.c) and when the
 * queue estimates its duration (estimate.c).
 */
#ifndef KI_PROTOCOL_H
#define KI_PROTOCOL_H

#include "kernelindex.h"

#include "../kernels/kbench.h"

/* Raise unless p is an object of known settings, each in its range. */
void		ki_protocol_check(const ki_value *p);

/* Set the request's fields from the settings in p (checked when queued). */
void		ki_protocol_apply(kb_request *req, const ki_value *p);

/* The same from the settings' JSON text (kbench_jobs.protocol). */
void		ki_protocol_apply_text(kb_request *req, const char *json);

#endif							/* KI_PROTOCOL_H */
