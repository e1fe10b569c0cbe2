/*
 * kept_plans.c: a statement prepared once per process and kept
 * (SPI_keepplan), for the statements the worker runs at every job and the
 * backends at every call: the claim, the store of each kind, the job's end,
 * the registered operations' names, a memory observation's import.  Parsed
 * and planned each time through SPI_execute_with_args, the job's end and
 * the names alone cost a trivial job 0.9 ms of worker CPU (2.59 against
 * 1.72 ms, docs/PERFORMANCE.md).
 *
 * The plan cache re-plans a kept statement from its text when what it
 * reads changes (a table dropped and made again by DROP and CREATE
 * EXTENSION); the text names the extension's schema, so a kept statement
 * is prepared again when the schema it was made for is not the one asked
 * for (the extension made again elsewhere).  An error while preparing
 * leaves nothing kept.
 */
#include "postgres.h"

#include "executor/spi.h"

#include "kernelindex.h"

SPIPlanPtr
ki_kept_plan(ki_kept *k, const char *schema, const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan;

	if (k->plan != NULL && strcmp(k->schema, schema) == 0)
		return k->plan;
	if (k->plan != NULL)
	{
		SPI_freeplan(k->plan);
		k->plan = NULL;
	}
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "could not keep the plan of \"%s\"", sql);
	strlcpy(k->schema, schema, sizeof(k->schema));
	k->plan = plan;
	return plan;
}
