/*
 * backend_cuda.c: the cuda backend (kb_int.h, "backends"): it forwards to
 * libkbench_cuda.so, loaded with dlopen the first time a cuda device is
 * asked for, and samples the SM clock through NVML (also dlopen'ed) when the
 * driver has it.  libkbench itself never links libcuda or libcudart.
 *
 * A CUDA wait that ends in KBC_TIMEOUT leaves a kernel running that may
 * never finish, and most of what would follow waits for it implicitly:
 * cudaFree, a synchronous copy, destroying the stream, cudaDeviceReset.  So
 * that a run never hangs after its deadline, the device is then "wedged" for
 * the rest of this process: its memory and context are left as they are
 * (the driver reclaims them, and stops the kernel, when the process exits),
 * and no later run may open it here.  The caller ends the process: the
 * kbench CLI exits after printing the timeout; the server's worker records
 * the job and exits, and the postmaster starts a fresh one (src/worker_run.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kb_int.h"

/* ------------------------------------------------------------ loading libkbench_cuda.so */

static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static const kbc_api *cuda_api;
static kbc_probe_fn cuda_probe;	/* libkbench_cuda.so's optional kbc_probe */
static char cuda_why[512];

/* Try one path; true when it gave a usable API table. */
static bool
try_load(const char *path)
{
	void	   *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	kbc_get_api_fn get;

	if (!h)
	{
		snprintf(cuda_why, sizeof(cuda_why), "%s", dlerror());
		return false;
	}
	*(void **) (&get) = dlsym(h, "kbc_get_api");
	if (!get || !(cuda_api = get(KBC_ABI_VERSION)))
	{
		snprintf(cuda_why, sizeof(cuda_why), "%s: no kbc_get_api for ABI %d", path, KBC_ABI_VERSION);
		dlclose(h);
		return false;
	}
	*(void **) (&cuda_probe) = dlsym(h, "kbc_probe");
	return true;				/* kept loaded for the life of the process */
}

static void
load_cuda(void)
{
	const char *env = getenv("KBENCH_CUDA_LIB");
	char		dir[PATH_MAX];
	char		path[PATH_MAX + 32];

	if (env && *env)
	{
		try_load(env);
		return;
	}
	/* Beside the object that contains this code (kbench, or the extension .so). */
	if (kb_object_dir((const void *) &load_cuda, dir, sizeof(dir)))
	{
		snprintf(path, sizeof(path), "%s/libkbench_cuda.so", dir);
		if (try_load(path))
			return;
	}
	try_load("libkbench_cuda.so");
}

const kbc_api *
kb_cuda_api(char *why, size_t whylen)
{
	pthread_once(&cuda_once, load_cuda);
	if (!cuda_api && why && whylen)
		snprintf(why, whylen, "CUDA backend not loaded (%s)", cuda_why[0] ? cuda_why : "libkbench_cuda.so not found");
	return cuda_api;
}

kbc_probe_fn
kb_cuda_probe_fn(void)
{
	pthread_once(&cuda_once, load_cuda);
	return cuda_api ? cuda_probe : NULL;
}

/* ------------------------------------------------------------ NVML */

typedef int (*nvml_init_fn) (void);
typedef int (*nvml_by_pci_fn) (const char *, void **);
typedef int (*nvml_clock_fn) (void *, int, unsigned int *);
typedef int (*nvml_driver_fn) (char *, unsigned int);

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static nvml_by_pci_fn nvml_by_pci;
static nvml_clock_fn nvml_clock;
static nvml_clock_fn nvml_default_clock;
static nvml_clock_fn nvml_max_clock;
static nvml_driver_fn nvml_driver;

#define NVML_CLOCK_SM 1

static void
load_nvml(void)
{
	void	   *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml_init_fn init;

	if (!h)
		return;
	*(void **) (&init) = dlsym(h, "nvmlInit_v2");
	if (!init || init() != 0)
		return;
	*(void **) (&nvml_by_pci) = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **) (&nvml_clock) = dlsym(h, "nvmlDeviceGetClockInfo");
	*(void **) (&nvml_default_clock) = dlsym(h, "nvmlDeviceGetDefaultApplicationsClock");
	*(void **) (&nvml_max_clock) = dlsym(h, "nvmlDeviceGetMaxClockInfo");
	*(void **) (&nvml_driver) = dlsym(h, "nvmlSystemGetDriverVersion");
}

void *
kb_nvml_device(const char *pci_bus_id)
{
	void	   *dev = NULL;

	pthread_once(&nvml_once, load_nvml);
	if (!nvml_by_pci || !pci_bus_id || !pci_bus_id[0] || nvml_by_pci(pci_bus_id, &dev) != 0)
		return NULL;
	return dev;
}

double
kb_nvml_sm_clock(void *dev)
{
	unsigned int mhz = 0;

	if (!dev || !nvml_clock || nvml_clock(dev, NVML_CLOCK_SM, &mhz) != 0)
		return -1;
	return mhz;
}

double
kb_nvml_default_sm_clock(void *dev)
{
	unsigned int mhz = 0;

	if (dev && nvml_default_clock && nvml_default_clock(dev, NVML_CLOCK_SM, &mhz) == 0 && mhz > 0)
		return mhz;
	if (dev && nvml_max_clock && nvml_max_clock(dev, NVML_CLOCK_SM, &mhz) == 0 && mhz > 0)
		return mhz;
	return -1;
}

bool
kb_nvml_driver_version(char *out, size_t len)
{
	pthread_once(&nvml_once, load_nvml);
	return nvml_driver && nvml_driver(out, (unsigned int) len) == 0;
}

/* ------------------------------------------------------------ wedged devices */

#define KB_MAX_CUDA_DEVICES 1024

/* Set once per device, never cleared (see the header comment). */
static volatile bool cuda_wedged[KB_MAX_CUDA_DEVICES];

static bool
wedged(const kb_backend *be)
{
	return be->device >= 0 && be->device < KB_MAX_CUDA_DEVICES && cuda_wedged[be->device];
}

/* A backend return code, remembering a timeout as a wedged device. */
static int
cuda_rc(kb_backend *be, int rc)
{
	if (rc == KBC_TIMEOUT && be->device >= 0 && be->device < KB_MAX_CUDA_DEVICES)
		cuda_wedged[be->device] = true;
	return rc;
}

/* Refuse to touch a wedged device: any call could wait for its kernel. */
static bool
refuse_wedged(kb_backend *be)
{
	if (!wedged(be))
		return false;
	snprintf(be->err, sizeof(be->err),
			 "cuda:%d is wedged: a kernel of an earlier run in this process did not finish, and waiting "
			 "for it or resetting the device could hang; start a new process", be->device);
	return true;
}

/* ------------------------------------------------------------ the cuda backend */

int
kb_cuda_describe(kb_backend *be, int device)
{
	be->api = kb_cuda_api(be->err, sizeof(be->err));
	if (!be->api || be->api->device_info(device, &be->info, be->err, sizeof(be->err)) != KBC_OK)
		return KBC_ERROR;
	be->nvml = kb_nvml_device(be->info.pci_bus_id);
	be->clock_default_mhz = kb_nvml_default_sm_clock(be->nvml);
	return KBC_OK;
}

static void
cuda_close(kb_backend *be)
{
	/* Closing a wedged device would wait for its stream: leave it. */
	if (be->api && be->ctx && !wedged(be))
		be->api->close(be->ctx);
	be->ctx = NULL;
}

static int
cuda_alloc(kb_backend *be, size_t bytes, void **p)
{
	return refuse_wedged(be) ? KBC_ERROR : cuda_rc(be, be->api->alloc(be->ctx, bytes, p, be->err, sizeof(be->err)));
}

static void
cuda_free(kb_backend *be, void *p)
{
	/* cudaFree waits for the device: a wedged device's memory stays (see above). */
	if (!wedged(be))
		be->api->free(be->ctx, p);
}

static int
cuda_fill(kb_backend *be, void *p, int dtype, int64_t rows, int64_t cols, int init,
		  double scale, int64_t modulo, uint64_t seed, uint32_t stream)
{
	return refuse_wedged(be) ? KBC_ERROR
		: cuda_rc(be, be->api->fill(be->ctx, p, dtype, rows, cols, init, scale, modulo, seed, stream,
									be->err, sizeof(be->err)));
}

static int
cuda_to_host(kb_backend *be, void *dst, const void *src, size_t bytes)
{
	return refuse_wedged(be) ? KBC_ERROR
		: cuda_rc(be, be->api->to_host(be->ctx, dst, src, bytes, be->err, sizeof(be->err)));
}

static int
cuda_call(kb_backend *be, const kb_call *c, int phase)
{
	return refuse_wedged(be) ? KBC_ERROR : cuda_rc(be, be->api->call(be->ctx, c, phase, be->err, sizeof(be->err)));
}

static int
cuda_sync(kb_backend *be, double timeout_s)
{
	return refuse_wedged(be) ? KBC_ERROR : cuda_rc(be, be->api->sync(be->ctx, timeout_s, be->err, sizeof(be->err)));
}

static int
cuda_time_one(kb_backend *be, const kb_call *c, void *flush, size_t flush_bytes,
			  double *op_ns, double *total_ns, double timeout_s)
{
	return refuse_wedged(be) ? KBC_ERROR
		: cuda_rc(be, be->api->time_one(be->ctx, c, flush, flush_bytes, op_ns, total_ns, timeout_s,
										be->err, sizeof(be->err)));
}

static int
cuda_time_graph(kb_backend *be, const kb_call *c, int64_t ncalls, void *flush, size_t flush_bytes,
				double *op_ns, double *total_ns, double timeout_s)
{
	return refuse_wedged(be) ? KBC_ERROR
		: cuda_rc(be, be->api->time_graph(be->ctx, c, ncalls, flush, flush_bytes, op_ns, total_ns, timeout_s,
										  be->err, sizeof(be->err)));
}

static double
cuda_clock_mhz(kb_backend *be)
{
	return kb_nvml_sm_clock(be->nvml);
}

static const kb_backend_ops cuda_ops = {
	.name = "cuda",
	.close = cuda_close,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.fill = cuda_fill,
	.to_host = cuda_to_host,
	.call = cuda_call,
	.sync = cuda_sync,
	.time_one = cuda_time_one,
	.time_graph = cuda_time_graph,
	.clock_mhz = cuda_clock_mhz,
};

/* Open cuda:device; on failure be->err says "cuda:N is not available: why". */
int
kb_be_open_cuda(kb_backend *be, int device)
{
	memset(be, 0, sizeof(*be));
	be->ops = &cuda_ops;
	be->cuda = true;
	be->device = device;
	be->clock_default_mhz = -1;
	if (refuse_wedged(be) || kb_cuda_describe(be, device) != KBC_OK ||
		be->api->open(device, &be->ctx, be->err, sizeof(be->err)) != KBC_OK)
	{
		char		why[sizeof(be->err)];

		snprintf(why, sizeof(why), "%s", be->err);
		/* cut at the size of the result's message it becomes, as that would be */
		if (snprintf(be->err, sizeof(be->err), "cuda:%d is not available: %s", device, why) >= (int) sizeof(be->err))
			be->err[sizeof(be->err) - 1] = '\0';
		return KBC_ERROR;
	}
	return KBC_OK;
}
