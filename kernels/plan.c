/*
 * plan.c: the tensors a case allocates, and whether they fit on its device
 * (checked before anything is allocated).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_int.h"
#include "opdef.h"

#define DEFAULT_WARMUP_MS 25.0
#define DEFAULT_REP_MS 100.0
#define DEFAULT_MAX_SAMPLES 100000
/* adaptive stopping's targets (docs/KERNELS.md, Stopping: NVBench's 0.5% on a GPU, looser on a shared CPU) */
#define DEFAULT_NOISE_TARGET_PCT_CUDA 0.5
#define DEFAULT_NOISE_TARGET_PCT_CPU 2.0

/* Bytes of every tensor and the workspace of a planned call. */
int64_t
kb_call_bytes(const kb_call *c)
{
	int64_t		b = c->ws_bytes;

	for (int i = 0; i < c->ntensors; i++)
		b += c->rows[i] * c->cols[i] * (int64_t) kb_dtype_size(c->tdtype[i]);
	return b;
}

void
kb_plan_call(const kb_case *cs, kb_call *c, kb_plan *p)
{
	memset(c, 0, sizeof(*c));
	memset(p, 0, sizeof(*p));
	c->op = cs->op->id;
	c->mode = cs->mode;
	c->dtype = cs->dtype;
	memcpy(c->ax, cs->ax, sizeof(c->ax));
	c->variant = cs->variant;
	if (cs->op->def)
		kb_opdef_plan(cs->op, c, p);
	else
		cs->op->plan(c, p, cs->cuda);
}

/* Memory the run needs on its device, including the flush buffer. */
static int64_t
run_bytes(const kb_case *cs, int64_t flush)
{
	kb_call		c;
	kb_plan		p;

	int64_t		sets = 0;

	kb_plan_call(cs, &c, &p);
	/* the guard's other input sets (measure.c), with what a prepare call leaves for each */
	for (int i = 0; i < c.ntensors; i++)
		if (p.init[i] != KB_INIT_NONE || !p.is_output[i])
			sets += (KB_INPUT_SETS - 1) * c.rows[i] * c.cols[i] * (int64_t) kb_dtype_size(c.tdtype[i]);
	return kb_call_bytes(&c) + sets + flush + ((int64_t) 64 << 20);	/* + cuBLASLt and driver slack */
}

void
kb_protocol_of(const kb_request *req, bool cuda, kb_protocol *p)
{
	p->warmup_ms = req->warmup_ms > 0 ? req->warmup_ms : DEFAULT_WARMUP_MS;
	p->rep_ms = req->rep_ms > 0 ? req->rep_ms : DEFAULT_REP_MS;
	p->flush = req->flush_bytes < 0 ? kb_default_flush_bytes(cuda) : req->flush_bytes;
	p->max_samples = req->max_samples > 0 ? req->max_samples : DEFAULT_MAX_SAMPLES;
	p->min_samples = req->min_samples > 0 ? req->min_samples : KB_MIN_SAMPLES;
	if (p->min_samples > p->max_samples)
		p->min_samples = p->max_samples;
	p->adaptive = !req->fixed_count;
	p->noise_target = (req->noise_target_pct > 0 ? req->noise_target_pct
					   : cuda ? DEFAULT_NOISE_TARGET_PCT_CUDA : DEFAULT_NOISE_TARGET_PCT_CPU) / 100.0;
	p->noise_ceiling = 10 * p->noise_target;
	p->max_ms = req->max_ms > 0 ? req->max_ms : 0;	/* 0: 4 x the minimum's time */
}

/*
 * Host memory a run may take: the kernel's MemAvailable (free memory plus
 * the page cache and other memory it can reclaim), else the free pages.
 * Free pages alone refused runs on a host whose memory sat in the page
 * cache (a busy build machine: 0.25 GiB free of 24 GiB, 22 GiB available).
 * 0 when unknown.  $KBENCH_MEMINFO names another meminfo file (the tests').
 */
static double
host_available_bytes(void)
{
	const char *path = getenv("KBENCH_MEMINFO");
	FILE	   *f = fopen(path && path[0] ? path : "/proc/meminfo", "r");
	char		line[256];
	long long	kb = -1;
	long		avail,
				psize;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	if (kb > 0)
		return (double) kb * 1024.0;
	avail = sysconf(_SC_AVPHYS_PAGES);
	psize = sysconf(_SC_PAGESIZE);
	return avail > 0 && psize > 0 ? (double) avail * (double) psize : 0;
}

/* Refuse what cannot fit before anything is allocated. */
kb_status
kb_check_fit(const kb_case *cs, int64_t flush, char *err, size_t errlen)
{
	int64_t		need = run_bytes(cs, flush);

	if (cs->cuda)
	{
		char		why[256];
		const kbc_api *api = kb_cuda_api(why, sizeof(why));
		kbc_device_info info;
		int			n;

		if (!api)
		{
			snprintf(err, errlen, "%s", why);
			return KB_DEVICE_UNAVAILABLE;
		}
		n = api->device_count(why, sizeof(why));
		if (cs->device >= n)
		{
			if (n > 0)
				snprintf(err, errlen, "device cuda:%d does not exist; allowed: cpu, cuda:0..cuda:%d", cs->device, n - 1);
			else
				snprintf(err, errlen, "device cuda:%d does not exist (%s); allowed: cpu", cs->device, n == 0 ? "no CUDA device" : why);
			return KB_DEVICE_UNAVAILABLE;
		}
		if (api->device_info(cs->device, &info, why, sizeof(why)) != KBC_OK)
		{
			snprintf(err, errlen, "cuda:%d: %s", cs->device, why);
			return KB_DEVICE_UNAVAILABLE;
		}
		if (need > info.free_mem)
		{
			snprintf(err, errlen, "workload needs %.2f GiB on cuda:%d, which has %.2f GiB free of %.2f GiB",
					 need / 1073741824.0, cs->device, info.free_mem / 1073741824.0, info.total_mem / 1073741824.0);
			return KB_RESOURCE_EXCEEDED;
		}
	}
	else
	{
		double		have = host_available_bytes();

		if (have > 0 && (double) need > have)
		{
			snprintf(err, errlen, "workload needs %.2f GiB of host memory, %.2f GiB are available",
					 need / 1073741824.0, have / 1073741824.0);
			return KB_RESOURCE_EXCEEDED;
		}
	}
	return KB_PASSED;
}
