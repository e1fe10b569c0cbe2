/*
 * test_runner.c: unit tests of the runner's honesty and of paired A/B
 * comparisons in kernels/ (TAP lines): the paired statistics (kb_paired_ratio)
 * and verdicts on constructed rounds, the CPU flush scaled to the cache,
 * the minimum of samples, the phases a run reports, the estimate, and
 * kb_compare on the CPU (an implementation against itself: same).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

static int	ntest = 0;
static int	nfail = 0;

static void
ok(int cond, const char *fmt,...)
{
	va_list		ap;

	ntest++;
	if (!cond)
		nfail++;
	printf("%sok %d - ", cond ? "" : "not ", ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* A deterministic noise in [-1, 1). */
static double
noise(uint64_t i)
{
	return (double) (kb_mix64(i * 0x9e3779b97f4a7c15ULL + 17) >> 11) / 4503599627370496.0 - 1.0;
}

static void
test_paired(void)
{
	double		a[40],
				b[40];
	kb_paired	p,
				q;
	struct
	{
		double		factor,
					spread;
		const char *want;
	}			cases[] = {
		{1.10, 0.01, "slower"}, {1.00, 0.01, "same"}, {0.90, 0.01, "faster"}, {1.02, 0.05, "ambiguous"},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		for (int i = 0; i < 20; i++)
		{
			a[i] = 1e6 * (1 + cases[c].spread * noise(2 * i + 100 * c));
			b[i] = 1e6 * cases[c].factor * (1 + cases[c].spread * noise(2 * i + 1 + 100 * c));
		}
		kb_paired_ratio(a, b, 20, 2, &p);
		ok(p.verdict && strcmp(p.verdict, cases[c].want) == 0 && p.low <= p.ratio && p.ratio <= p.high,
		   "paired: B %.0f%% of A in %.0f%% noise over 20 rounds: %s (ratio %.4f [%.4f, %.4f])",
		   cases[c].factor * 100, cases[c].spread * 100, p.verdict ? p.verdict : "none", p.ratio, p.low, p.high);
	}
	kb_paired_ratio(a, b, 20, 2, &q);
	ok(q.low == p.low && q.high == p.high, "paired: the bootstrap is deterministic (the same rounds, the same interval)");
	for (int i = 0; i < 5; i++)
		a[i] = b[i] = 1000 + i;
	kb_paired_ratio(a, b, 5, 2, &p);
	ok(p.verdict && strcmp(p.verdict, "same") == 0 && p.ratio == 1 && p.low == 1 && p.high == 1,
	   "paired: identical rounds give ratio 1 [1, 1], same");
	ok(kb_paired_ratio(a, b, 0, 2, &p) == -1 && p.verdict == NULL, "paired: no rounds, no verdict");
	for (int i = 0; i < 5; i++)
		a[i] = 0;
	ok(kb_paired_ratio(a, b, 5, 2, &p) == -1 && p.verdict == NULL, "paired: A's median 0 gives no ratio and no verdict");
	ok(strcmp(kb_verdict(0.95, 0.97, 2), "faster") == 0 && strcmp(kb_verdict(1.03, 1.05, 2), "slower") == 0 &&
	   strcmp(kb_verdict(0.99, 1.01, 2), "same") == 0 && strcmp(kb_verdict(0.97, 1.01, 2), "ambiguous") == 0,
	   "verdict: below 1 - same_pct, above 1 + same_pct, inside, across");
}

static void
test_flush(void)
{
	const char *src = NULL;
	int64_t		cache = kb_cpu_cache_bytes(&src);
	kb_request	r;
	kb_protocol pr;

	ok(cache >= ((int64_t) 256 << 10) && src != NULL, "the CPU's largest cache is read (%lld bytes, from %s)",
	   (long long) cache, src ? src : "?");
	ok(kb_default_flush_bytes(0) >= 2 * cache && kb_default_flush_bytes(0) < 2 * cache + 64,
	   "the CPU flush is twice that cache (%lld bytes), not a fixed 256 MiB", (long long) kb_default_flush_bytes(0));
	ok(kb_default_flush_bytes(1) == (int64_t) 256 << 20, "a GPU's flush stays 256 MiB");
	kb_request_init(&r);
	kb_protocol_of(&r, false, &pr);
	ok(pr.min_samples == KB_MIN_SAMPLES && pr.flush == kb_default_flush_bytes(0),
	   "the default protocol: at least %d samples, the scaled flush", KB_MIN_SAMPLES);
	r.max_samples = 3;
	kb_protocol_of(&r, false, &pr);
	ok(pr.min_samples == 3, "min_samples is at most max_samples");
}

static char phases[256];
static double last_fraction;
static int	rest_known;

static void
record_phase(void *arg, const kb_progress *p)
{
	const char *n = kb_run_phase_name(p->phase);
	size_t		len = strlen(phases);

	(void) arg;
	/* each phase once, in the order first seen */
	if (!strstr(phases, n) && len + strlen(n) + 2 < sizeof(phases))
		snprintf(phases + len, sizeof(phases) - len, "%s%s", len ? " " : "", n);
	last_fraction = p->fraction;
	if (p->phase == KB_RUN_SAMPLING && p->rest_s >= 0)
		rest_known = 1;
}

static void
test_samples_and_phases(void)
{
	kb_request	q;
	kb_result	r;
	kb_status	st;
	volatile int cancel = 0;

	/* a long call: the repetition time alone would give one sample */
	kb_request_init(&q);
	q.op = "layer_norm";
	q.mode = "backward";
	q.axes_json = "{\"rows\":256,\"hidden\":1024,\"dtype\":\"fp32\"}";
	q.warmup_ms = 0.001;
	q.rep_ms = 0.001;
	q.fixed_count = 1;			/* the minimum itself: adaptive stopping would add blocks (stopping.sh) */
	q.progress = record_phase;
	st = kb_run(&q, &r);
	ok(st == KB_PASSED && r.stats.samples == KB_MIN_SAMPLES && !strstr(r.message, "samples"),
	   "a run whose repetition time fits one call still takes %d samples (%lld)", KB_MIN_SAMPLES,
	   (long long) r.stats.samples);
	ok(strcmp(phases, "setup warm-up sampling checking") == 0 && last_fraction == 1.0 && rest_known,
	   "its phases: setup, warm-up, sampling, checking; the time left is known while sampling; it ends at 1 (%s)", phases);
	ok(r.composite_json && strstr(r.composite_json, "at least 10 and at most 100000 samples") &&
	   strstr(r.composite_json, "(twice the CPU's largest cache)"),
	   "the protocol says the minimum and the scaled flush");
	kb_free_result(&r);

	q.max_samples = 3;
	st = kb_run(&q, &r);
	ok(st == KB_PASSED && r.stats.samples == 3 &&
	   strstr(r.message, "only 3 samples, fewer than the protocol's minimum of 10 (max_samples is below it)") &&
	   strstr(r.composite_json, "only 3 samples"),
	   "a run with fewer than 10 samples says so in its message and its run's description (%s)", r.message);
	kb_free_result(&r);

	/* a cancel during sampling: the phase stays sampling, the fraction below 1 */
	phases[0] = '\0';
	q.max_samples = 0;
	q.cancel = &cancel;
	cancel = 1;
	ok(kb_run(&q, &r) == KB_CANCELED && last_fraction < 1.0, "a canceled run does not report a progress of 1");
	kb_free_result(&r);
}

static void
test_estimate(void)
{
	kb_request	q;
	char		how[256];
	double		s1,
				s2,
				big;

	kb_request_init(&q);
	q.op = "layer_norm";
	q.mode = "backward";
	q.axes_json = "{\"rows\":4096,\"hidden\":4096,\"dtype\":\"fp32\"}";
	s1 = kb_estimate_seconds(&q, 0, how, sizeof(how));
	ok(s1 > 1 && s1 < 60 && strstr(how, "cost model"), "the seed layer_norm shape on the CPU: %.1f s %s", s1, how);
	s2 = kb_estimate_seconds(&q, 1e6, how, sizeof(how));
	ok(s2 > 0 && s2 < s1 && strstr(how, "past run"), "with a past run's 1 ms a call: %.2f s %s", s2, how);

	/*
	 * The per-call figure is the slower of the two rates, worked by hand from
	 * layer_norm's backward cost (kernels/ops/layer_norm.c) at 4096x4096 fp32:
	 * bytes = 4 * (3 * 4096^2 + 3 * 4096) + 8 * 4096 = 201,408,512 and
	 * flops = 14 * 4096^2 = 234,881,024.  CPU: 0.4 GB/s gives 503.5 ms, 1 GFLOP/s
	 * 234.9 ms; the call is bandwidth-bound: 504 ms.  GPU: 1 TB/s gives 201.4 us,
	 * 50 TFLOP/s 4.7 us, plus a 5 us launch: 0.206 ms.
	 */
	kb_estimate_seconds(&q, 0, how, sizeof(how));
	ok(strstr(how, "(504 ms a call)") != NULL, "the CPU's per-call estimate is the slower rate's, by hand: %s", how);
	q.device = "cuda:0";
	kb_estimate_seconds(&q, 0, how, sizeof(how));
	ok(strstr(how, "(0.206 ms a call)") != NULL, "the GPU's per-call estimate is the slower rate's plus a launch, by hand: %s", how);
	q.device = NULL;
	q.op = "jsd";
	q.mode = "forward";
	q.axes_json = "{\"tokens\":8192,\"vocab\":128256,\"dtype\":\"fp32\"}";
	big = kb_estimate_seconds(&q, 0, how, sizeof(how));
	ok(big > 120, "README's jsd shape on the CPU is estimated at minutes (%.1f min)", big / 60);
	q.op = "nope";
	ok(kb_estimate_seconds(&q, 0, how, sizeof(how)) < 0, "a request that does not parse has no estimate");
}

static void
test_compare(void)
{
	kb_compare_request q;
	kb_compare_result r;

	kb_compare_request_init(&q);
	q.a.op = "layer_norm";
	q.a.mode = "forward";
	q.a.axes_json = "{\"rows\":16,\"hidden\":64,\"dtype\":\"fp32\"}";
	q.a.impl = "cpu";
	q.impl_b = "cpu";
	q.a.flush_bytes = 0;
	q.a.rep_ms = 5;
	q.a.warmup_ms = 1;
	q.rounds = 12;
	q.same_pct = 25;			/* an implementation against itself, on a shared machine */
	kb_compare(&q, &r);

	/*
	 * A statistical verdict: on a loaded 2-core machine a 5 ms block is now
	 * and then preempted enough to widen the interval past 25% (once in a
	 * fresh-clone run beside a mutation run: [0.744, 1.002], "ambiguous").
	 * One more comparison then; a compare that can never say "same" fails
	 * both.
	 */
	if (!(r.status == KB_PASSED && r.paired.verdict && strcmp(r.paired.verdict, "same") == 0))
	{
		printf("# kb_compare against itself: %s; once more\n", r.message);
		kb_free_compare_result(&r);
		kb_compare(&q, &r);
	}
	ok(r.status == KB_PASSED && r.rounds == 12 && r.paired.verdict && strcmp(r.paired.verdict, "same") == 0,
	   "kb_compare: cpu against itself over 12 rounds is the same within 25%% (%s)", r.message);
	ok(r.order && strcmp(r.order, "ABABABABABABABABABABABAB") == 0 && r.calls_per_block >= 3 &&
	   r.a.nsamples == 12 * r.calls_per_block && r.b.nsamples == r.a.nsamples,
	   "both sides take calls_per_block samples a round, in the order ABAB... (%lld a block)", (long long) r.calls_per_block);
	ok(strcmp(r.a.workload_digest, r.b.workload_digest) == 0 && strcmp(r.a.environment_digest, r.b.environment_digest) == 0 &&
	   strcmp(r.a.protocol_digest, r.b.protocol_digest) == 0 && strcmp(r.a.run_digest, r.b.run_digest) != 0 &&
	   r.a.composite_json && r.b.composite_json,
	   "two runs with the same workload, protocol and environment digests, each its own run");
	kb_free_compare_result(&r);

	q.impl_b = "cuda";
	kb_compare(&q, &r);
	ok(r.status == KB_INVALID_REQUEST && r.b.status == KB_INVALID_REQUEST && r.a.composite_json == NULL &&
	   strstr(r.message, "could not start"),
	   "a side that cannot run ends the comparison before anything is timed (%s)", r.message);
	kb_free_compare_result(&r);

	q.impl_b = "cpu";
	q.a.deadline_ns = kb_now_ns() - 1;
	kb_compare(&q, &r);
	ok(r.status == KB_TIMEOUT && r.paired.verdict == NULL && r.a.composite_json && r.b.composite_json &&
	   strstr(r.a.composite_json, "\"status\":\"timeout\""),
	   "a passed deadline ends both runs as timeout, with manifests and no verdict");
	kb_free_compare_result(&r);
}

/*
 * kb_meter_finish over samples and SM clocks given by hand, n of them; each
 * array holds one more entry past n (a 1400 MHz sample of 1000 ns, kept[n]
 * a sentinel 7) that must not be read or written.
 */
static void
finish_by_hand(double default_mhz, int n, const double *ns_in, const double *clk_in, kb_result *res,
			   unsigned char *kept, double *ns)
{
	kb_backend	be;
	kb_meter	m;

	memset(&be, 0, sizeof(be));
	memset(res, 0, sizeof(*res));
	memset(&m, 0, sizeof(m));
	be.clock_default_mhz = default_mhz;
	memcpy(ns, ns_in, sizeof(double) * (size_t) n);
	ns[n] = 1000;
	memset(kept, 7, (size_t) n + 1);
	res->samples_ns = ns;
	res->sample_kept = kept;
	res->nsamples = n;
	m.be = &be;
	m.res = res;
	m.clk = malloc(sizeof(double) * (size_t) (n + 1));
	memcpy(m.clk, clk_in, sizeof(double) * (size_t) n);
	m.clk[n] = 1400;
	kb_meter_finish(&m);
}

/*
 * NVBench's throttle rule on clocks given by hand (a GPU at a 1980 MHz default):
 * a sample under 75% of the default (1400 < 1485) is discarded, one at the
 * limit or above kept; a clock of 0 is a reading NVML did not give, so its
 * sample is kept and it is not the minimum clock.  Clocks count as sampled
 * only with a default clock, a sample, and a first reading.
 */
static void
test_throttle(void)
{
	kb_result	res;
	double		ns[6];
	unsigned char kept[6];

	finish_by_hand(1980, 5, (double[]) {10, 11, 50, 12, 13}, (double[]) {1980, 1485, 1400, 1700, 0}, &res, kept, ns);
	ok(res.stats.clock_available == 1 && res.stats.clock_mhz_default == 1980, "clocks given: available, default 1980 MHz");
	ok(res.stats.discarded_throttled == 1 && kept[0] == 1 && kept[1] == 1 && kept[2] == 0 && kept[3] == 1 && kept[4] == 1,
	   "only the 1400 MHz sample is discarded (kept: %d %d %d %d %d)", kept[0], kept[1], kept[2], kept[3], kept[4]);
	ok(kept[5] == 7, "nothing past the last sample is read or written (%d)", kept[5]);
	ok(res.stats.clock_mhz_min == 1400, "the lowest clock read is 1400 MHz (the discarded sample's), not the missing reading (%g)",
	   res.stats.clock_mhz_min);
	ok(res.stats.samples == 4 && res.stats.median == 11.5, "the statistics are of the four kept samples, 10 11 12 13: median 11.5 (%g)",
	   res.stats.median);
	ok(strcmp(res.stats.stop_rule, "fixed") == 0 && !res.stats.unstable, "a fixed count is said so, not unstable");

	finish_by_hand(1980, 1, (double[]) {10}, (double[]) {1000}, &res, kept, ns);
	ok(res.stats.clock_available == 1 && res.stats.discarded_throttled == 1 && res.stats.clock_mhz_min == 1000,
	   "one sample with a clock: available, and at 1000 MHz discarded");
	finish_by_hand(1980, 2, (double[]) {10, 11}, (double[]) {1, 1}, &res, kept, ns);
	ok(res.stats.clock_available == 1 && res.stats.discarded_throttled == 2 && res.stats.clock_mhz_min == 1,
	   "readings of 1 MHz are readings: both samples discarded, the minimum 1 MHz");
	finish_by_hand(1, 1, (double[]) {10}, (double[]) {1}, &res, kept, ns);
	ok(res.stats.clock_available == 1 && res.stats.discarded_throttled == 0, "a default of 1 MHz is a default: clocks available");
	finish_by_hand(0, 2, (double[]) {10, 11}, (double[]) {1980, 1980}, &res, kept, ns);
	ok(res.stats.clock_available == 0 && res.stats.clock_mhz_min == 0, "no default clock (0): clocks not available");
	finish_by_hand(1980, 2, (double[]) {10, 11}, (double[]) {0, 1000}, &res, kept, ns);
	ok(res.stats.clock_available == 0 && res.stats.discarded_throttled == 0 && kept[1] == 1,
	   "no first reading: clocks not available, nothing discarded");
	finish_by_hand(1980, 0, (double[]) {0}, (double[]) {0}, &res, kept, ns);
	ok(res.stats.clock_available == 0 && kept[0] == 7, "no samples: clocks not available, nothing written");
}

int
main(void)
{
	const char *start = getenv("TAP_START");

	ntest = start ? atoi(start) : 0;
	test_paired();
	test_flush();
	test_samples_and_phases();
	test_estimate();
	test_throttle();
	test_compare();
	printf("# %d failed\n", nfail);
	return nfail ? 1 : 0;
}
