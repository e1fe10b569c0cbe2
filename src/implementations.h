/*
 * implementations.h: python and library implementations from SQL
 * (src/implementations.c).
 */
#ifndef KI_IMPLEMENTATIONS_H
#define KI_IMPLEMENTATIONS_H

#include "../kernels/kbench.h"

extern char *ki_python;
extern char *ki_impl_directory;

extern char *ki_registration_directory(void);
extern char *ki_registered_file(const char *path, const char *dir, const char *what, const char *kind);

/* The GUCs kernelindex.python and kernelindex.implementation_directory (from _PG_init). */
void		ki_implementations_init(void);

/* Queue-time validation of a job with its implementation resolved, under its protocol (JSON text, or NULL). */
kb_status	ki_check_job(const char *op, const char *mode, const char *workload, const char *impl,
						 const char *device, const char *protocol, char *err, size_t errlen);

/* True when impl runs in a child process (python, library, registered), not in the worker. */
bool		ki_impl_in_child(const char *impl);

/* Inside a transaction: the interpreter and a registered name's entry (palloc'd). */
void		ki_resolve_request(kb_request *req, const char *op);

/* In the worker, before kb_run: the interpreter and a registered name's entry. */
void		ki_worker_prepare_request(kb_request *req, const char *op);

/*
 * Inside a transaction (src/operations.c): this process's kernels registry
 * holds the operations of kbench_registered_operations as the current
 * snapshot sees them.  Before any call that gives the kernels library an
 * operation's name.
 */
void		ki_sync_operations(void);

#endif							/* KI_IMPLEMENTATIONS_H */
