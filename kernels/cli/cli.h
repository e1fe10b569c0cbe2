/*
 * cli.h: what the kbench program's files share (cli/main.c, cli/compare.c).
 */
#ifndef KBENCH_CLI_H
#define KBENCH_CLI_H

#include "kbench.h"

/* The progress callback of a run: with KBENCH_PROGRESS set, one line per report on stderr. */
void		kbench_progress_cb(void *arg, const kb_progress *p);

/* kbench compare OP MODE key=value... --a IMPL --b IMPL ... (cli/compare.c) */
int			kbench_cmd_compare(int argc, char **argv);

#endif							/* KBENCH_CLI_H */
