/*
 * distill_jsd_loss.h: constants and the workspace layout shared by the C
 * side (distill_jsd_loss.c plans the memory) and the CUDA side
 * (distill_jsd_loss.cu uses it).
 */
#ifndef KB_DISTILL_JSD_LOSS_H
#define KB_DISTILL_JSD_LOSS_H

#include <stdbool.h>

#include "../kb_abi.h"

#define DJ_BETA 0.5
#define DJ_WEIGHT_HARD 0.5
#define DJ_WEIGHT_SOFT 0.5
#define DJ_TEMPERATURE 1.0
/* Bytes the two chunk logits buffers may use together on the GPU (v1; v2: 4 GiB, so the
 * seed's 8192 tokens are one chunk: fewer, larger GEMMs and no fp32 dW accumulation). */
#define DJ_CHUNK_BUDGET ((int64_t) 1 << 30)
#define DJ_CHUNK_BUDGET_V2 ((int64_t) 4 << 30)
#define DJ_CUBLAS_WS ((int64_t) 32 << 20)

/* Axis slots (the OperationSpec's order). */
enum { DJ_T = 0, DJ_V = 1, DJ_H = 2, DJ_HS = 3 };

/* Tensor slots. */
enum { DJ_XS, DJ_WS, DJ_XT, DJ_WT, DJ_TARGET, DJ_LOSS, DJ_GXS, DJ_GWS, DJ_TOKEN_LOSS, DJ_NT };

#ifndef __CUDACC__
/*
 * The check's bound D = 2E + F on the error of a token's log-probabilities (the derivation is
 * distill_jsd_loss.c's, above dj_check): zs, zt its V student and teacher logits, as_, at their
 * sums of |products| over ks and kt terms, ub the unit of the logits' dtype; *lse_s and *lse_t get
 * the two log-sum-exps.
 */
double		kb_dj_log_bound(const double *zs, const double *zt, const double *as_, const double *at, int64_t V,
							int64_t ks, int64_t kt, double ub, double *lse_s, double *lse_t);
#endif

/* Workspace of the CUDA implementation, in bytes from c->ws. */
typedef struct dj_layout
{
	int64_t		chunk;			/* tokens per chunk */
	int64_t		zs;				/* student logits / gradient, [chunk, V] bf16 */
	int64_t		zt;				/* teacher logits, [chunk, V] bf16 */
	int64_t		gw;				/* fp32 accumulator of grad_student_weight, [V, Hs]
								 * (none in v2 when all tokens are one chunk: dW_s is written in bf16) */
	int64_t		stats;			/* per-row statistics, [chunk, 4] fp32 */
	int64_t		cublas;			/* cuBLASLt workspace */
	int64_t		total;
} dj_layout;

KB_HD int64_t
dj_align(int64_t x)
{
	return (x + 255) / 256 * 256;
}

KB_HD dj_layout
dj_cuda_layout(int64_t T, int64_t V, int64_t Hs, int variant)
{
	dj_layout	l;
	int64_t		c = (variant >= 2 ? DJ_CHUNK_BUDGET_V2 : DJ_CHUNK_BUDGET) / (V * 2 * 2);
	bool		accumulate;

	c = c >= 256 ? c / 256 * 256 : (c < 1 ? 1 : c);
	if (c > T)
		c = T;
	accumulate = variant < 2 || c < T;
	l.chunk = c;
	l.zs = 0;
	l.zt = dj_align(l.zs + c * V * 2);
	l.gw = dj_align(l.zt + c * V * 2);
	l.stats = dj_align(l.gw + (accumulate ? V * Hs * 4 : 0));
	l.cublas = dj_align(l.stats + c * 4 * 4);
	l.total = l.cublas + DJ_CUBLAS_WS;
	return l;
}

#endif
