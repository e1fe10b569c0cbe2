/*
 * cpu_rows.h: what the CPU implementations of the C operations share to run
 * at the speed of a plain loop (issue 31): a row of a tensor read as float
 * (fp32 in place, bf16 converted once into a row buffer), a row written back
 * from float, and sums in double over eight independent lanes.
 *
 * Before, every element went through the out-of-line kb_get/kb_set with a
 * dtype switch and one serial double accumulator per sum: nothing could be
 * vectorised.  The lanes keep the sums in double (the tolerances of
 * docs/KERNELS.md bound a sum of n terms by kb_gamma(n) whatever its order;
 * eight partial sums have a smaller error than one serial sum) while letting
 * the compiler use SIMD registers; kernels/Makefile compiles kernels/ops with
 * -O3 for that.  kb_expf is an exp the compiler can vectorise (libm's expf
 * is a call per element): within 2 ulp of exp over the range a softmax uses,
 * tested against exp() by test/kernels/test_kernels.c.
 */
#ifndef KB_CPU_ROWS_H
#define KB_CPU_ROWS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../kb_int.h"

#define KB_LANES 8

/* Row [off, off + n) of p as float: p itself for fp32, else converted into buf (n floats). */
static inline const float *
kb_row_in(const void *p, int dt, int64_t off, int64_t n, float *buf)
{
	const uint16_t *h = (const uint16_t *) p + off;

	if (dt == KB_FP32)
		return (const float *) p + off;
	for (int64_t j = 0; j < n; j++)
		buf[j] = kb_bf2f(h[j]);
	return buf;
}

/* Where a row of float results goes: p itself for fp32, else buf (then kb_row_out). */
static inline float *
kb_row_dst(void *p, int dt, int64_t off, float *buf)
{
	return dt == KB_FP32 ? (float *) p + off : buf;
}

/* Finish a row written at kb_row_dst: bf16 rounds buf into p (round to nearest even). */
static inline void
kb_row_out(void *p, int dt, int64_t off, int64_t n, const float *buf)
{
	uint16_t   *h = (uint16_t *) p + off;

	if (dt == KB_FP32)
		return;
	for (int64_t j = 0; j < n; j++)
		h[j] = kb_f2bf(buf[j]);
}

/* Scratch for row buffers: nfloats floats, NULL for fp32 (nothing to convert). */
static inline float *
kb_row_scratch(int dt, int64_t nfloats)
{
	return dt == KB_FP32 ? NULL : (float *) malloc(sizeof(float) * (size_t) (nfloats > 0 ? nfloats : 1));
}

/* Lanes summed in a fixed order (so a result does not depend on the SIMD width). */
static inline double
kb_lanes_total(const double *a)
{
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* max x[j] (n >= 1) */
static inline float
kb_max_f(const float *x, int64_t n)
{
	float		m[KB_LANES],
				r;
	int64_t		j = 0;

	for (int k = 0; k < KB_LANES; k++)
		m[k] = x[0];
	for (; j + KB_LANES <= n; j += KB_LANES)
		for (int k = 0; k < KB_LANES; k++)
			m[k] = x[j + k] > m[k] ? x[j + k] : m[k];
	for (; j < n; j++)
		m[0] = x[j] > m[0] ? x[j] : m[0];
	r = m[0];
	for (int k = 1; k < KB_LANES; k++)
		r = m[k] > r ? m[k] : r;
	return r;
}

/* sum x[j] in double */
static inline double
kb_sum_f(const float *x, int64_t n)
{
	double		a[KB_LANES] = {0};
	int64_t		j = 0;

	for (; j + KB_LANES <= n; j += KB_LANES)
		for (int k = 0; k < KB_LANES; k++)
			a[k] += (double) x[j + k];
	for (; j < n; j++)
		a[j % KB_LANES] += (double) x[j];
	return kb_lanes_total(a);
}

/* sum (x[j] - m)^2 in double, the difference taken in float */
static inline double
kb_sumsq_dev_f(const float *x, float m, int64_t n)
{
	double		a[KB_LANES] = {0};
	int64_t		j = 0;

	for (; j + KB_LANES <= n; j += KB_LANES)
		for (int k = 0; k < KB_LANES; k++)
		{
			float		d = x[j + k] - m;

			a[k] += (double) d * d;
		}
	for (; j < n; j++)
	{
		float		d = x[j] - m;

		a[j % KB_LANES] += (double) d * d;
	}
	return kb_lanes_total(a);
}

/*
 * exp(x) in float, branch-free: x = n ln2 + r with n = round(x / ln2) (the
 * 1.5 * 2^23 trick rounds to nearest without a call), |r| <= ln2 / 2, r from
 * a two-part ln2 (Cody-Waite) so that it is exact to float; e^r by its
 * Taylor series to degree 7 (truncation below 1e-8 relative), times 2^n
 * built in the exponent bits.  x is clamped to [-87, 88]: e^-87 = 1.6e-38
 * (the smallest normal float is 1.2e-38; below it the result is e^-87
 * instead of a subnormal or zero, an absolute error under 2e-38), and
 * e^88 = 1.65e38 is the largest before float overflows.
 */
static inline float
kb_expf(float x)
{
	const float big = 12582912.0f;	/* 1.5 * 2^23 */
	float		n,
				r,
				p,
				s;
	int32_t		e;

	x = x < -87.0f ? -87.0f : x;	/* two selects, not nested: the loop stays vectorisable */
	x = x > 88.0f ? 88.0f : x;
	n = (x * 1.44269504088896341f + big) - big;
	r = x - n * 0.693359375f;	/* ln2's first 9 bits: n * this is exact */
	r = r - n * -2.12194440e-4f;	/* the rest of ln2 */
	p = 1.0f / 5040.0f;
	p = p * r + 1.0f / 720.0f;
	p = p * r + 1.0f / 120.0f;
	p = p * r + 1.0f / 24.0f;
	p = p * r + 1.0f / 6.0f;
	p = p * r + 0.5f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	e = ((int32_t) n + 127) << 23;
	memcpy(&s, &e, sizeof(s));
	return p * s;
}

/* e[j] = exp(x[j] - shift), and their sum in double */
static inline double
kb_exp_shift_f(float *restrict e, const float *restrict x, float shift, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		e[j] = kb_expf(x[j] - shift);
	return kb_sum_f(e, n);
}

#endif
