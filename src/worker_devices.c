/*
 * worker_devices.c: which devices get a background worker (GUC
 * kernelindex.devices), registering those workers with the postmaster, and
 * the product name a GPU gives.
 */
#include "kernelindex.h"
#include "worker.h"

#include <dirent.h>

#include "postmaster/bgworker.h"

/* The devices the postmaster registered workers for (inherited by fork). */
static char registered_devices[KI_MAX_WORKERS][KI_DEVICE_LEN];
static int	nregistered = 0;

/* Count the NVIDIA GPUs the driver shows, without loading CUDA. */
static int
count_nvidia_gpus(void)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	DIR		   *d;
	struct dirent *e;
	int			n = 0;

	d = opendir("/proc/driver/nvidia/gpus");
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	if (visible != NULL)
	{
		int			v = 0;
		const char *p;

		if (*visible == '\0')
			return 0;
		v = 1;
		for (p = visible; *p; p++)
			if (*p == ',')
				v++;
		if (v < n)
			n = v;
	}
	return n;
}

/* Parse kernelindex.devices into registered_devices. */
static void
plan_devices(void)
{
	char	   *list = pstrdup(ki_devices ? ki_devices : "auto");
	char	   *tok,
			   *save = NULL;

	nregistered = 0;
	for (tok = strtok_r(list, ", ", &save); tok && nregistered < KI_MAX_WORKERS; tok = strtok_r(NULL, ", ", &save))
	{
		if (strcmp(tok, "auto") == 0)
		{
			int			g = count_nvidia_gpus(),
						i;

			strlcpy(registered_devices[nregistered++], "cpu", KI_DEVICE_LEN);
			for (i = 0; i < g && nregistered < KI_MAX_WORKERS; i++)
				snprintf(registered_devices[nregistered++], KI_DEVICE_LEN, "cuda:%d", i);
		}
		else if (strcmp(tok, "none") == 0)
			continue;
		else if (strcmp(tok, "cpu") == 0 || (strncmp(tok, "cuda:", 5) == 0 && tok[5] >= '0' && tok[5] <= '9'))
			strlcpy(registered_devices[nregistered++], tok, KI_DEVICE_LEN);
		else
			ereport(WARNING,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("kernelindex.devices: ignoring unknown device \"%s\"", tok),
					 errhint("Use auto, none, cpu or cuda:N, separated by commas.")));
	}
}

/* Register one background worker per planned device (postmaster, preloading). */
void
ki_register_workers(void)
{
	int			i;

	plan_devices();
	for (i = 0; i < nregistered; i++)
	{
		BackgroundWorker worker;

		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = 1;
		strlcpy(worker.bgw_library_name, "kernelindex", BGW_MAXLEN);
		strlcpy(worker.bgw_function_name, "kbench_worker_main", BGW_MAXLEN);
		snprintf(worker.bgw_name, BGW_MAXLEN, "kernelindex worker %s", registered_devices[i]);
		strlcpy(worker.bgw_type, "kernelindex worker", BGW_MAXLEN);
		worker.bgw_main_arg = Int32GetDatum(i);
		RegisterBackgroundWorker(&worker);
	}
}

/* The devices planned by ki_register_workers, for the shared slots. */
int
ki_registered_device_count(void)
{
	return nregistered;
}

const char *
ki_registered_device(int i)
{
	return registered_devices[i];
}

/* The product name the CUDA backend gives for device ("cuda:N"), or NULL. */
char *
ki_cuda_product(const char *device)
{
	char	   *json = kb_devices_json();
	char	   *product = NULL;
	ki_arena	a;
	ki_errors	errs;
	ki_value   *list;

	if (json == NULL)
		return NULL;
	ki_pg_arena_init(&a);
	ki_errors_init(&errs, &a);
	list = ki_parse(&a, json, strlen(json), &errs);
	for (size_t i = 0; list && list->type == KI_ARRAY && i < list->u.arr.count; i++)
	{
		const ki_value *name = ki_get(list->u.arr.items[i], "name");
		const ki_value *p = ki_get(list->u.arr.items[i], "product");

		if (name && name->type == KI_STRING && p && p->type == KI_STRING &&
			name->u.str.len == strlen(device) && memcmp(name->u.str.ptr, device, name->u.str.len) == 0)
			product = pnstrdup(p->u.str.ptr, p->u.str.len);
	}
	kb_free(json);
	return product;
}
