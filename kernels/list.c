/*
 * list.c: what this host offers (kbench --list, kbench_devices()): the
 * operations of the registry with their digests, and the devices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
#include "opdef.h"
#ifndef KB_VERSION
#error "KB_VERSION is set by kernels/Makefile from kernelindex.control"
#endif

int
kb_cuda_available(char *why, size_t whylen)
{
	const kbc_api *api = kb_cuda_api(why, whylen);
	int			n;

	if (!api)
		return 0;
	n = api->device_count(why, whylen);
	if (n <= 0)
	{
		if (n == 0 && why && whylen)
			snprintf(why, whylen, "no CUDA device");
		return 0;
	}
	return 1;
}

char *
kb_devices_json(void)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char		why[256];
	const kbc_api *api = kb_cuda_api(why, sizeof(why));
	int			n = api ? api->device_count(why, sizeof(why)) : 0;
	kb_backend	cpu;
	char	   *env;

	memset(&cpu, 0, sizeof(cpu));
	kb_text_open(&t);
	ki_jw_arr(w);
	ki_jw_obj(w);
	ki_jw_kstr(w, "name", "cpu");
	ki_jw_kstr(w, "implementation", "cpu");
	env = kb_environment_text(&cpu);
	if (env)
	{
		ki_jw_key(w, "environment");
		ki_jw_json(w, env);
	}
	free(env);
	ki_jw_end_obj(w);
	for (int d = 0; d < n; d++)
	{
		kbc_device_info info;
		char		name[32];
		char		arch[32];

		if (api->device_info(d, &info, why, sizeof(why)) != KBC_OK)
			continue;
		snprintf(name, sizeof(name), "cuda:%d", d);
		snprintf(arch, sizeof(arch), "sm_%d%d", info.cc_major, info.cc_minor);
		ki_jw_obj(w);
		ki_jw_kstr(w, "name", name);
		ki_jw_kstr(w, "implementation", "cuda");
		ki_jw_kstr(w, "product", info.name);
		ki_jw_kstr(w, "architecture", arch);
		ki_jw_kint(w, "memoryBytes", info.total_mem);
		ki_jw_kint(w, "freeBytes", info.free_mem);
		ki_jw_kint(w, "smCount", info.sm_count);
		ki_jw_kstr(w, "pciBusId", info.pci_bus_id);
		ki_jw_end_obj(w);
	}
	ki_jw_end_arr(w);
	return kb_text_take(&t);
}

char *
kb_list_json(void)
{
	kb_text		t;
	ki_jw	   *w = &t.w;
	char	   *devs = kb_devices_json();

	kb_text_open(&t);
	ki_jw_obj(w);
	ki_jw_kstr(w, "version", KB_VERSION);
	ki_jw_key(w, "operations");
	ki_jw_arr(w);
	for (int i = 0; i < kb_op_count(); i++)
	{
		const kb_op *op = kb_op_at(i);
		char	   *text = kb_operation_text(op);
		char	   *canon = NULL;
		char		digest[72] = "";
		char		err[256];

		ki_jw_obj(w);
		ki_jw_kstr(w, "name", op->name);
		ki_jw_kstr(w, "slug", op->slug);
		ki_jw_kstr(w, "title", op->title);
		ki_jw_key(w, "modes");
		ki_jw_arr(w);
		for (int m = 0; m < KB_MODE_COUNT; m++)
			if (op->modes[m])
				ki_jw_str(w, kb_mode_name(m));
		ki_jw_end_arr(w);
		ki_jw_key(w, "axes");
		ki_jw_arr(w);
		for (int a = 0; a < op->naxes; a++)
			if (strcmp(op->axes[a].role, "variable") == 0)
				ki_jw_str(w, op->axes[a].name);
		ki_jw_end_arr(w);
		ki_jw_key(w, "dtypes");
		ki_jw_arr(w);
		for (int d = 0; d < op->ndtypes; d++)
			ki_jw_str(w, kb_dtype_name(op->dtypes[d]));
		ki_jw_end_arr(w);
		/* kbench's own implementations of the operation, named as kbench_run and --impl name them */
		ki_jw_key(w, "implementations");
		ki_jw_arr(w);
		for (int v = 0; !op->def && v <= kb_variant_count(op); v++)
		{
			char		impl[16];
			kb_impl_id	id;

			snprintf(impl, sizeof(impl), v == 0 ? "cpu" : v == 1 ? "cuda" : "cuda/v%d", v);
			if (kb_impl_resolve(impl, op->name, &id, NULL, 0) != KB_PASSED)
				continue;
			ki_jw_obj(w);
			ki_jw_kstr(w, "implementation", id.impl);
			ki_jw_kstr(w, "device", id.cuda ? "cuda" : "cpu");
			ki_jw_kstr(w, "name", id.name);
			if (id.cuda)
				ki_jw_kstr(w, "symbol", id.symbol);
			ki_jw_end_obj(w);
		}
		ki_jw_end_arr(w);
		/* the built-in python implementations (on the CPU or a GPU; liger needs liger_kernel there) */
		ki_jw_key(w, "pythonImplementations");
		ki_jw_arr(w);
		for (int i = 0; i < kb_builtin_python_count && !(op->def && op->def->added); i++)
			ki_jw_str(w, kb_builtin_python[i]);
		/* and Liger's other providers for the operations Liger benchmarks them with */
		for (int i = 0; i < kb_providers_count; i++)
			if (strcmp(kb_providers[i].op, op->name) == 0)
				ki_jw_str(w, kb_providers[i].name);
		ki_jw_end_arr(w);
		if (op->def)
		{
			/* defined as data: a python float64 reference, no CUDA kernel yet; a user's has no baselines */
			ki_jw_kstr(w, "definition", op->def->file);
			ki_jw_kstr(w, "reference", op->def->reference_file ? op->def->reference_file
					   : "kernels/python/kbench_reference.py");
			if (op->def->added)
			{
				ki_jw_key(w, "added");
				ki_jw_bool(w, true);
			}
		}
		else
		{
			ki_jw_kstr(w, "reference", op->c_path);
			ki_jw_kstr(w, "kernel", op->cu_path);
		}
		if (kb_manifest_finish(text, &canon, digest, err, sizeof(err)))
			ki_jw_kstr(w, "operationDigest", digest);
		free(canon);
		free(text);
		ki_jw_end_obj(w);
	}
	ki_jw_end_arr(w);
	ki_jw_key(w, "devices");
	ki_jw_json(w, devs ? devs : "[]");
	ki_jw_end_obj(w);
	free(devs);
	return kb_text_take(&t);
}
