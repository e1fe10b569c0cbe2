/*
 * export_format.c: the tables of a kernelindex.dev catalog export (JSON
 * lines, {"table": ..., "row": {...}}), written once for every reader of
 * the format: which tables carry a manifest and in which column of the row
 * the catalog stored its digest, and which tables carry no manifest.  Read
 * by the extension's import (src/catalog_import.c) and the export checker
 * (test/unit/catalog_check.c); the export itself is sql/20_export.sql.
 */
#include "ki_json.h"

const ki_export_table ki_export_tables[] = {
	{"operations", "semanticDigest", false},
	{"workloads", "workloadDigest", false},
	{"implementations", "implementationDigest", false},
	{"projects", NULL, false},
	{"benchmark_runs", "runDigest", true},
	{"serving_runs", "runDigest", false},
	{"serving_configurations", "configurationDigest", false},
	{"serving_stack_revisions", "stackDigest", false},
	{"serving_workloads", "workloadDigest", false},
	{"model_revisions", "modelDigest", false},
};
const size_t ki_export_table_count = sizeof(ki_export_tables) / sizeof(ki_export_tables[0]);

const char *const ki_export_plain_tables[] = {
	"measurements", "record_events", "artifacts", "sources", "operation_aliases",
	"serving_measurements",
};
const size_t ki_export_plain_table_count = sizeof(ki_export_plain_tables) / sizeof(ki_export_plain_tables[0]);
