/*
 * registry.c: the kernels registry for SQL, as jsonb.
 *
 *   kbench_registry()          operations, modes, axes, dtypes, implementations
 *                              (kb_list_json; kbench_device_operations reads it)
 *   kbench__registry_costs()   the bytes and FLOPs formulas of each pass
 *                              (kb_costs_json; sql/43_roofline.sql loads them
 *                              into kbench_operation_costs)
 *
 * Both are written once, in the kernels registry (kernels/ops/<op>.c).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "../kernels/kbench.h"
#include "implementations.h"
#include "kernelindex.h"

/* A JSON text the kernels library allocated, as jsonb; the text is freed. */
static Datum
registry_jsonb(char *json)
{
	Datum		d;

	if (json == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	d = DirectFunctionCall1(jsonb_in, CStringGetDatum(pstrdup(json)));
	kb_free(json);
	return d;
}

PG_FUNCTION_INFO_V1(kbench_registry);
Datum
kbench_registry(PG_FUNCTION_ARGS)
{
	const char *installed;

	/* the operations registered in SQL too, where this database's SQL is the library's (src/operations.c) */
	if (ki_ext_version_current(&installed))
		ki_sync_operations();
	PG_RETURN_DATUM(registry_jsonb(kb_list_json()));
}

PG_FUNCTION_INFO_V1(kbench__registry_costs);
Datum
kbench__registry_costs(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(registry_jsonb(kb_costs_json()));
}

/*
 * _kernelindex.probe_device(device text, bytes bigint, measure boolean): the measured
 * ceilings of a device (kernels/probe.c) as jsonb, with the digest and
 * manifest of the environment the device's runs carry.  It runs in the
 * calling backend for a few seconds (the CPU probe on every online CPU, in
 * threads that touch nothing of the server's and take no signals);
 * measure false: the device and its environment alone.  kbench_probe
 * (sql/code/43_roofline.sql) stores it.
 */
PG_FUNCTION_INFO_V1(kbench__probe_device);
Datum
kbench__probe_device(PG_FUNCTION_ARGS)
{
	char	   *device;
	int64		bytes = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1);
	bool		measure = PG_ARGISNULL(2) || PG_GETARG_BOOL(2);
	kb_probe	p;
	char	   *json;

	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("a device to probe is required"),
						errhint("Devices are cpu and cuda:N (kbench devices lists them).")));
	device = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (bytes != 0 && (bytes < 4096 || bytes > ((int64) 1 << 34)))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("probe array size must be between 4096 bytes and 16 GiB, got " INT64_FORMAT, bytes),
						errdetail("It is the size of each of the copy and triad arrays (NULL: the default, "
								  "four times the last-level cache, 32 to 128 MiB).")));
	if ((measure ? kb_probe_device(device, bytes, &p) : kb_probe_describe(device, &p)) != 0)
	{
		char		msg[sizeof(p.message)];

		strlcpy(msg, p.message, sizeof(msg));
		kb_probe_free(&p);
		ereport(ERROR, (errcode(strncmp(msg, "unknown device", 14) == 0 ? ERRCODE_INVALID_PARAMETER_VALUE
								: ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						errmsg("could not probe %s", device),
						errdetail("%s.", msg),
						errhint("Devices are cpu and cuda:N (kbench devices lists them).")));
	}
	json = kb_probe_json(&p);
	kb_probe_free(&p);
	PG_RETURN_DATUM(registry_jsonb(json));
}
