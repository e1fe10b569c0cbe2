/*
 * log.c: the agent's log lines, on stderr: "kbench agent NAME: ...".
 */
#include <stdarg.h>
#include <stdio.h>

#include "agent.h"

void
kb_agent_log(const char *fmt,...)
{
	va_list		ap;
	char		line[2048];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kbench agent %s: %s\n", kb_agent.name[0] ? kb_agent.name : "-", line);
	fflush(stderr);
}
