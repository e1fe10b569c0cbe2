/*
 * stats.c: the statistics of the timing protocol.
 *
 * Quantiles by linear interpolation between order statistics (numpy's and
 * torch.quantile's default, what triton.testing.do_bench reports), MAD as
 * the median of absolute deviations from the median (unscaled), and a
 * distribution-free 95% interval for the median from order statistics:
 * the number of samples below the true median is Binomial(n, 1/2), so
 * [x_(l), x_(n-l+1)] covers it with probability 1 - 2 P(B <= l-1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_int.h"

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

double
kb_quantile(const double *sorted, int64_t n, double q)
{
	double		pos;
	int64_t		i;

	if (n <= 0)
		return 0;
	pos = q * (double) (n - 1);
	i = (int64_t) floor(pos);
	if (i >= n - 1)
		return sorted[n - 1];
	return sorted[i] + (pos - (double) i) * (sorted[i + 1] - sorted[i]);
}

void
kb_median_ci_ranks(int64_t n, int64_t *lo, int64_t *hi)
{
	/* Largest l with P(B <= l-1) <= 0.025, B ~ Binomial(n, 1/2). */
	double		logp;
	double		cdf = 0;
	int64_t		l = 0;

	if (n < 6)
	{
		/* Too few samples for 95%: the whole range (coverage 1 - 2^(1-n)). */
		*lo = 1;
		*hi = n > 0 ? n : 1;
		return;
	}
	logp = (double) n * log(0.5);	/* log P(B = 0) */
	for (int64_t k = 0; k < n; k++)
	{
		double		p = exp(logp);

		if (cdf + p > 0.025)
			break;
		cdf += p;
		l = k + 1;
		/* P(B = k+1) = P(B = k) * (n - k) / (k + 1) */
		logp += log((double) (n - k)) - log((double) (k + 1));
	}
	if (l < 1)
		l = 1;
	*lo = l;
	*hi = n - l + 1;
}

/* stdev / mean of n samples (the n - 1 stdev; NVBench's stdrel): 0 with fewer than 2, or a mean of 0 */
double
kb_stdrel(const double *v, int64_t n)
{
	double		mean = 0,
				m2 = 0;

	/* Welford: one pass, no cancellation */
	for (int64_t i = 0; i < n; i++)
	{
		double		d = v[i] - mean;

		mean += d / (double) (i + 1);
		m2 += d * (v[i] - mean);
	}
	if (n < 2 || mean <= 0)
		return 0;
	return sqrt(m2 / (double) (n - 1)) / mean;
}

void
kb_compute_stats(const double *v, int64_t n, kb_stats *st)
{
	double	   *s;
	double	   *dev;
	double		sum = 0;
	int64_t		lo,
				hi;

	st->samples = n;
	if (n <= 0)
		return;
	s = malloc(sizeof(double) * (size_t) n);
	dev = malloc(sizeof(double) * (size_t) n);
	if (!s || !dev)
	{
		free(s);
		free(dev);
		st->samples = 0;
		return;
	}
	memcpy(s, v, sizeof(double) * (size_t) n);
	qsort(s, (size_t) n, sizeof(double), cmp_double);
	for (int64_t i = 0; i < n; i++)
		sum += s[i];
	st->mean = sum / (double) n;
	st->minimum = s[0];
	st->maximum = s[n - 1];
	st->median = kb_quantile(s, n, 0.5);
	st->p05 = kb_quantile(s, n, 0.05);
	st->p20 = kb_quantile(s, n, 0.2);
	st->p80 = kb_quantile(s, n, 0.8);
	st->p95 = kb_quantile(s, n, 0.95);
	for (int64_t i = 0; i < n; i++)
		dev[i] = fabs(s[i] - st->median);
	qsort(dev, (size_t) n, sizeof(double), cmp_double);
	st->mad = kb_quantile(dev, n, 0.5);
	st->stdrel = kb_stdrel(v, n);
	kb_median_ci_ranks(n, &lo, &hi);
	st->ci95_lo = s[lo - 1];
	st->ci95_hi = s[hi - 1];
	free(s);
	free(dev);
}

/* ------------------------------------------------------------ paired A/B */

/* splitmix64: a small, fixed generator, so a bootstrap gives the same interval every time. */
static uint64_t
splitmix64(uint64_t *s)
{
	uint64_t	z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
median_of(double *v, int64_t n)
{
	qsort(v, (size_t) n, sizeof(double), cmp_double);
	return kb_quantile(v, n, 0.5);
}

const char *
kb_verdict(double low, double high, double same_pct)
{
	double		s = same_pct / 100.0;

	if (high < 1 - s)
		return "faster";
	if (low > 1 + s)
		return "slower";
	if (low >= 1 - s && high <= 1 + s)
		return "same";
	return "ambiguous";
}

int
kb_paired_ratio(const double *a, const double *b, int64_t n, double same_pct, kb_paired *out)
{
	double	   *ra,
			   *rb,
			   *boot;
	uint64_t	state = 0x6b62656e6368ULL + (uint64_t) n;	/* "kbench" + n: fixed */
	int64_t		nb = 0;

	memset(out, 0, sizeof(*out));
	if (n < 1)
		return -1;
	ra = malloc(sizeof(double) * (size_t) n);
	rb = malloc(sizeof(double) * (size_t) n);
	boot = malloc(sizeof(double) * KB_BOOTSTRAP_RESAMPLES);
	if (!ra || !rb || !boot)
	{
		free(ra);
		free(rb);
		free(boot);
		return -1;
	}
	memcpy(ra, a, sizeof(double) * (size_t) n);
	memcpy(rb, b, sizeof(double) * (size_t) n);
	out->a_median = median_of(ra, n);
	out->b_median = median_of(rb, n);
	out->ratio = out->a_median > 0 ? out->b_median / out->a_median : NAN;
	/* resample whole rounds, so that each A stays with the B timed beside it */
	for (int s = 0; s < KB_BOOTSTRAP_RESAMPLES; s++)
	{
		double		ma,
					mb;

		for (int64_t k = 0; k < n; k++)
		{
			int64_t		i = (int64_t) (splitmix64(&state) % (uint64_t) n);

			ra[k] = a[i];
			rb[k] = b[i];
		}
		ma = median_of(ra, n);
		mb = median_of(rb, n);
		if (ma > 0)
			boot[nb++] = mb / ma;
	}
	if (nb > 0 && out->ratio == out->ratio)
	{
		qsort(boot, (size_t) nb, sizeof(double), cmp_double);
		out->low = kb_quantile(boot, nb, 0.025);
		out->high = kb_quantile(boot, nb, 0.975);
		out->verdict = kb_verdict(out->low, out->high, same_pct);
	}
	else
		out->low = out->high = NAN;
	free(ra);
	free(rb);
	free(boot);
	return out->verdict ? 0 : -1;
}
