/*
 * kb_protocol.h: the protocol settings a run may override, with their ranges:
 * one table for kbench_run's protocol argument (src/queue.c) and the kbench
 * CLI's flags (kernels/cli/main.c), so that a value one refuses the other
 * refuses too.  Plain C, header only.
 */
#ifndef KB_PROTOCOL_H
#define KB_PROTOCOL_H

typedef struct kb_protocol_setting
{
	const char *key;			/* kbench_run's protocol member */
	const char *flag;			/* the CLI's flag, NULL when it has none */
	double		min;
	double		max;
	int			boolean;		/* true or false (the CLI: a flag with no value) */
	int			integer;		/* a whole number */
} kb_protocol_setting;

static const kb_protocol_setting KB_PROTOCOL_SETTINGS[] = {
	{"warmup_ms", "--warmup-ms", 0, 600000, 0, 0},
	{"rep_ms", "--rep-ms", 0.001, 3600000, 0, 0},
	{"flush_bytes", "--flush-bytes", 0, 1099511627776.0, 0, 1},
	{"max_samples", "--max-samples", 1, 100000000, 0, 1},
	{"min_samples", "--min-samples", 1, 100000000, 0, 1},
	{"seed", "--seed", 0, 9007199254740991.0, 0, 1},
	{"check", NULL, 0, 0, 1, 0},
	{"adaptive", NULL, 0, 0, 1, 0},
	{"noise_target_pct", "--noise-target-pct", 0.001, 100, 0, 0},
	{"max_ms", "--max-ms", 0.001, 3600000, 0, 0},
	{"cuda_graph", "--cuda-graph", 0, 0, 1, 0},
};

#define KB_PROTOCOL_NSETTINGS (sizeof(KB_PROTOCOL_SETTINGS) / sizeof(KB_PROTOCOL_SETTINGS[0]))

#endif
