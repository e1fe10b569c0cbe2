/*
 * list.c: what this host offers (kbench --list, kbench_devices()): the
 * operations of the registry with their digests, and the devices.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"
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
	kb_jw		w;
	char		why[256];
	const kbc_api *api = kb_cuda_api(why, sizeof(why));
	int			n = api ? api->device_count(why, sizeof(why)) : 0;
	kb_backend	cpu;
	char	   *env;

	memset(&cpu, 0, sizeof(cpu));
	kb_jw_init(&w);
	kb_jw_arr(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "name", "cpu");
	kb_jw_kstr(&w, "implementation", "cpu");
	env = kb_environment_text(&cpu);
	if (env)
	{
		kb_jw_key(&w, "environment");
		kb_jw_json(&w, env);
	}
	free(env);
	kb_jw_end_obj(&w);
	for (int d = 0; d < n; d++)
	{
		kbc_device_info info;
		char		name[32];
		char		arch[32];

		if (api->device_info(d, &info, why, sizeof(why)) != KBC_OK)
			continue;
		snprintf(name, sizeof(name), "cuda:%d", d);
		snprintf(arch, sizeof(arch), "sm_%d%d", info.cc_major, info.cc_minor);
		kb_jw_obj(&w);
		kb_jw_kstr(&w, "name", name);
		kb_jw_kstr(&w, "implementation", "cuda");
		kb_jw_kstr(&w, "product", info.name);
		kb_jw_kstr(&w, "architecture", arch);
		kb_jw_kint(&w, "memoryBytes", info.total_mem);
		kb_jw_kint(&w, "freeBytes", info.free_mem);
		kb_jw_kint(&w, "smCount", info.sm_count);
		kb_jw_kstr(&w, "pciBusId", info.pci_bus_id);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_arr(&w);
	return kb_jw_take(&w);
}

char *
kb_list_json(void)
{
	kb_jw		w;
	char	   *devs = kb_devices_json();

	kb_jw_init(&w);
	kb_jw_obj(&w);
	kb_jw_kstr(&w, "version", KB_VERSION);
	kb_jw_key(&w, "operations");
	kb_jw_arr(&w);
	for (int i = 0; i < KB_OP_COUNT; i++)
	{
		const kb_op *op = kb_ops[i];
		char	   *text = kb_operation_text(op);
		char	   *canon = NULL;
		char		digest[72] = "";
		char		err[256];

		kb_jw_obj(&w);
		kb_jw_kstr(&w, "name", op->name);
		kb_jw_kstr(&w, "title", op->title);
		kb_jw_key(&w, "modes");
		kb_jw_arr(&w);
		for (int m = 0; m < KB_MODE_COUNT; m++)
			if (op->modes[m])
				kb_jw_str(&w, kb_mode_name(m));
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "axes");
		kb_jw_arr(&w);
		for (int a = 0; a < op->naxes; a++)
			if (strcmp(op->axes[a].role, "variable") == 0)
				kb_jw_str(&w, op->axes[a].name);
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "dtypes");
		kb_jw_arr(&w);
		for (int d = 0; d < op->ndtypes; d++)
			kb_jw_str(&w, kb_dtype_name(op->dtypes[d]));
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "implementations");
		kb_jw_arr(&w);
		kb_jw_str(&w, "cpu");
		kb_jw_str(&w, "cuda");
		kb_jw_end_arr(&w);
		kb_jw_key(&w, "cudaVariants");
		kb_jw_arr(&w);
		for (int v = 1; v <= kb_variant_count(op); v++)
		{
			char		vn[16];

			snprintf(vn, sizeof(vn), "v%d", v);
			kb_jw_str(&w, vn);
		}
		kb_jw_end_arr(&w);
		kb_jw_kstr(&w, "reference", op->c_path);
		kb_jw_kstr(&w, "kernel", op->cu_path);
		if (kb_manifest_finish(text, &canon, digest, err, sizeof(err)))
			kb_jw_kstr(&w, "operationDigest", digest);
		free(canon);
		free(text);
		kb_jw_end_obj(&w);
	}
	kb_jw_end_arr(&w);
	kb_jw_key(&w, "devices");
	kb_jw_json(&w, devs ? devs : "[]");
	kb_jw_end_obj(&w);
	free(devs);
	return kb_jw_take(&w);
}
