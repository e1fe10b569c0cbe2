/*
 * compare.c: a paired A/B comparison in one process (kbench.h,
 * kb_compare): two sessions (run.c) on one device with the same inputs,
 * their measurement loops (measure.c) interleaved in rounds of a block of
 * A's calls then a block of B's, and the paired statistics of stats.c over
 * the rounds' medians.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

#define DEFAULT_ROUNDS 10
#define DEFAULT_SAME_PCT 2.0
/* a round's median survives one preempted call of its block */
#define MIN_BLOCK 3

void
kb_compare_request_init(kb_compare_request *r)
{
	memset(r, 0, sizeof(*r));
	kb_request_init(&r->a);
}

void
kb_free_compare_result(kb_compare_result *res)
{
	if (!res)
		return;
	kb_free_result(&res->a);
	kb_free_result(&res->b);
	free(res->a_round_ns);
	free(res->b_round_ns);
	free(res->order);
	memset(res, 0, sizeof(*res));
}

/* The comparison's message from the sides' messages. */
static void
side_messages(kb_compare_result *res, const char *why)
{
	snprintf(res->message, sizeof(res->message), "%s%sa: %s; b: %s", why ? why : "", why ? ": " : "",
			 res->a.message[0] ? res->a.message : kb_status_name(res->a.status),
			 res->b.message[0] ? res->b.message : kb_status_name(res->b.status));
}

kb_status
kb_compare(const kb_compare_request *req, kb_compare_result *res)
{
	kb_request	a = req->a;
	kb_request	rb = req->a;
	const kb_request *ra = &a;
	kb_reporter rep = {ra, 0, 0};
	kb_session	sa,
				sb;
	kb_meter	ma,
				mb;
	kb_status	st_a,
				st_b = KB_CANCELED,
				st;
	int			rounds = req->rounds > 0 ? req->rounds : DEFAULT_ROUNDS;
	double		same_pct = req->same_pct > 0 ? req->same_pct : DEFAULT_SAME_PCT;
	int64_t		k;
	bool		b_open = false;

	memset(res, 0, sizeof(*res));
	/* paired rounds of a fixed size: no adaptive stopping, and the protocols say so */
	a.fixed_count = 1;
	rb.fixed_count = 1;
	rb.impl = req->impl_b;
	rb.entry = req->entry_b;
	rb.impl_version = req->impl_version_b;
	rb.entry_digest = req->entry_digest_b;

	/* setup: both sides, the same inputs */
	st_a = kb_session_open(&sa, ra, &res->a, &rep);
	if (!sa.final && st_a == KB_PASSED)
	{
		st_b = kb_session_open(&sb, &rb, &res->b, &rep);
		b_open = true;
	}
	if (sa.final || st_a != KB_PASSED || sb.final || st_b != KB_PASSED)
	{
		/* a side that cannot start ends the comparison; the other leaves no run */
		res->status = !sa.final && st_a == KB_PASSED ? (sb.final ? res->b.status : st_b) :
			(sa.final ? res->a.status : st_a);
		kb_session_finish(&sa, st_a == KB_PASSED ? KB_CANCELED : st_a);
		if (b_open)
			kb_session_finish(&sb, st_b == KB_PASSED ? KB_CANCELED : st_b);
		else
			res->b.status = KB_CANCELED;
		kb_session_close(&sa);
		if (b_open)
			kb_session_close(&sb);
		side_messages(res, "the comparison could not start");
		return res->status;
	}

	/* warm-up: each side's first call, five-call estimate and warm-up calls */
	kb_meter_init(&ma, &sa.be, &sa.c, ra, &res->a, &rep, sa.flushbuf, &sa.pr);
	kb_meter_init(&mb, &sb.be, &sb.c, &rb, &res->b, &rep, sb.flushbuf, &sb.pr);
	ma.guard = &sa.guard;
	mb.guard = &sb.guard;
	ma.f0 = ma.f1 = mb.f0 = mb.f1 = 0.05;
	st = kb_meter_start(&ma);
	if (st == KB_PASSED)
		st = kb_meter_start(&mb);
	if (st == KB_PASSED)
	{
		double		checks = 2 * (ma.call_ns + mb.call_ns);

		int64_t		cap = sa.pr.max_samples / rounds;	/* max_samples holds, as far as one call a round allows */

		k = (ma.nrep < mb.nrep ? ma.nrep : mb.nrep);
		k = (k + rounds - 1) / rounds;
		if (k < MIN_BLOCK)
			k = MIN_BLOCK;
		if (k > cap)
			k = cap > 0 ? cap : 1;
		res->calls_per_block = k;
		/* the checked calls among those each side will make */
		kb_meter_choose(&ma, k * rounds);
		kb_meter_choose(&mb, k * rounds);
		ma.f0 = 0.05;
		ma.f1 = 0.125;
		ma.rest_after = ((double) mb.nwarm * mb.call_ns + (double) (k * rounds) * (ma.est_ns + mb.est_ns) + checks) / 1e9;
		st = kb_meter_warm(&ma);
		if (st == KB_PASSED)
		{
			mb.f0 = 0.125;
			mb.f1 = 0.2;
			mb.rest_after = ((double) (k * rounds) * (ma.est_ns + mb.est_ns) + checks) / 1e9;
			st = kb_meter_warm(&mb);
		}
		res->a_round_ns = malloc(sizeof(double) * (size_t) rounds);
		res->b_round_ns = malloc(sizeof(double) * (size_t) rounds);
		res->order = calloc((size_t) (2 * rounds + 1), 1);
		if (st == KB_PASSED && (!res->a_round_ns || !res->b_round_ns || !res->order))
		{
			kb_setmsg(&res->a, "out of host memory for %d rounds", rounds);
			st = KB_RUNTIME_ERROR;
		}
		/* sampling: rounds of a block of A's calls, then a block of B's */
		for (int r = 0; st == KB_PASSED && r < rounds; r++)
		{
			double		left = (double) (k * (rounds - r - 1)) * (ma.est_ns + mb.est_ns);
			double		am,
						bm;

			ma.f0 = 0.2 + 0.6 * (double) r / rounds;
			ma.f1 = mb.f0 = 0.2 + 0.6 * (r + 0.5) / rounds;
			mb.f1 = 0.2 + 0.6 * (double) (r + 1) / rounds;
			ma.rest_after = ((double) k * mb.est_ns + left + checks) / 1e9;
			mb.rest_after = (left + checks) / 1e9;
			st = kb_meter_sample(&ma, k, &am);
			if (st != KB_PASSED)
				break;
			res->order[2 * r] = 'A';
			st = kb_meter_sample(&mb, k, &bm);
			if (st != KB_PASSED)
				break;
			res->order[2 * r + 1] = 'B';
			res->a_round_ns[r] = am;
			res->b_round_ns[r] = bm;
			res->rounds = r + 1;
		}
	}
	if (st == KB_PASSED)
		st = kb_meter_settle(&ma);
	if (st == KB_PASSED)
		st = kb_meter_settle(&mb);
	kb_meter_finish(&ma);
	kb_meter_finish(&mb);

	/*
	 * checking: each side as kb_run checks it.  A deadline or a cancel stops
	 * both sides alike; any other failure is the failing side's, and the
	 * other side's run is not kept.
	 */
	if (st == KB_PASSED || st == KB_TIMEOUT || st == KB_CANCELED)
	{
		st_a = kb_session_finish(&sa, st);
		st_b = kb_session_finish(&sb, st);
	}
	else
	{
		bool		a_failed = res->a.message[0] != '\0';

		st_a = kb_session_finish(&sa, a_failed ? st : KB_CANCELED);
		st_b = kb_session_finish(&sb, a_failed ? KB_CANCELED : st);
	}
	kb_session_close(&sa);
	kb_session_close(&sb);
	res->status = st_a != KB_PASSED && st_a != KB_CANCELED ? st_a : st_b != KB_PASSED ? st_b : st_a;
	if (res->status == KB_PASSED && res->rounds == rounds)
	{
		kb_paired_ratio(res->a_round_ns, res->b_round_ns, res->rounds, same_pct, &res->paired);
		snprintf(res->message, sizeof(res->message), "b/a %.4f [%.4f, %.4f] over %d rounds of %lld calls: %s",
				 res->paired.ratio, res->paired.low, res->paired.high, res->rounds,
				 (long long) res->calls_per_block, res->paired.verdict ? res->paired.verdict : "no verdict");
	}
	else
		side_messages(res, NULL);
	/* done: a comparison that stopped early keeps the phase and progress where it stopped */
	if (res->status == KB_PASSED)
		kb_report(&rep, KB_RUN_CHECKING, 1.0, 0);
	return res->status;
}
