/*
 * estimate.c: how long a request will take, before it runs.
 *
 * What the protocol will do is known from the request: setup (filling the
 * inputs), one untimed first call, the five-call estimate (flush included),
 * the warm-up and repetition times turned into counts from that estimate
 * (at least min_samples samples), then the check against the float64
 * reference.  Only the time of one call is not: the caller gives it when a
 * past run of the same workload and implementation on the device says it,
 * else the cost model (the operation's bytes and FLOPs, kernels/ops) at a
 * calibrated rate:
 *
 *   CPU (kbench's C code, and other implementations on the CPU):
 *       0.4 GB/s of the pass's bytes or 1 GFLOP/s, whichever is slower;
 *       measured with `kbench run` on the development machine (2 shared
 *       vCPUs under load): layer_norm, jsd and megatron_cross_entropy
 *       moved 0.29-0.52 GB/s, distill_jsd_loss did 0.95 GFLOP/s.  A faster
 *       host finishes sooner than estimated.
 *   GPU: 1 TB/s or 50 TFLOP/s, plus 5 us a call (a launch).
 *
 * Filling the inputs is counted as one call and the check as two (the
 * float64 reference reads every compared row once in double precision);
 * the flush is a memset at 4 GB/s on the CPU, 1 TB/s on a GPU.  Docs:
 * docs/KERNELS.md, "Estimates".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kb_int.h"

#define CPU_BYTES_PER_S 0.4e9
#define CPU_FLOPS 1e9
#define CPU_MEMSET_BYTES_PER_S 4e9
#define GPU_BYTES_PER_S 1e12
#define GPU_FLOPS 50e12
#define GPU_LAUNCH_NS 5e3

static int64_t
clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

double
kb_estimate_seconds(const kb_request *req, double per_call_ns, char *how, size_t howlen)
{
	kb_case		cs;
	char		err[256];
	double		bytes = 0,
				flops = 0,
				flush_ns,
				est,
				total;
	kb_protocol pr;
	int64_t		nwarm,
				nrep;

	if (kb_parse_case(req, &cs, err, sizeof(err)) != KB_PASSED)
		return -1;
	if (!kb_case_cost(&cs, &bytes, &flops, err, sizeof(err)))
		return -1;
	if (per_call_ns > 0)
	{
		if (how)
			snprintf(how, howlen, "from a past run on the device (%.3g ms a call)", per_call_ns / 1e6);
	}
	else if (cs.cuda)
	{
		per_call_ns = fmax(bytes / GPU_BYTES_PER_S, flops / GPU_FLOPS) * 1e9 + GPU_LAUNCH_NS;
		if (how)
			snprintf(how, howlen, "from the cost model at 1 TB/s or 50 TFLOP/s (%.3g ms a call)", per_call_ns / 1e6);
	}
	else
	{
		per_call_ns = fmax(bytes / CPU_BYTES_PER_S, flops / CPU_FLOPS) * 1e9;
		if (how)
			snprintf(how, howlen, "from the cost model at 0.4 GB/s or 1 GFLOP/s (%.3g ms a call)", per_call_ns / 1e6);
	}
	if (per_call_ns < 1)
		per_call_ns = 1;
	/* the protocol's counts and flush, as the run will take them (plan.c) */
	kb_protocol_of(req, cs.cuda, &pr);
	flush_ns = (double) pr.flush / (cs.cuda ? GPU_BYTES_PER_S : CPU_MEMSET_BYTES_PER_S) * 1e9;

	/* as the measurement loop turns times into counts */
	est = per_call_ns + flush_ns;
	nwarm = clamp64((int64_t) floor(pr.warmup_ms * 1e6 / est), 1, pr.max_samples);
	nrep = clamp64((int64_t) floor(pr.rep_ms * 1e6 / est), pr.min_samples, pr.max_samples);
	total = per_call_ns * 2			/* filling the inputs, the prepare call */
		+ per_call_ns				/* the first call */
		+ 5 * est					/* the five-call estimate */
		+ (double) nwarm * per_call_ns
		+ (double) nrep * est
		+ 2 * per_call_ns;			/* the check */
	return total / 1e9;
}
