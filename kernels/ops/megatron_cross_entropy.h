/*
 * megatron_cross_entropy.h: what the C side (megatron_cross_entropy.c: the
 * plan, the reference, the CPU implementation) and the CUDA side
 * (megatron_cross_entropy.cu) must agree on: the tensor slots of a call
 * (the order of ce_plan).
 */
#ifndef KB_MEGATRON_CROSS_ENTROPY_H
#define KB_MEGATRON_CROSS_ENTROPY_H

/* Tensor slots of a megatron_cross_entropy call. */
enum { CE_LOGITS, CE_TARGET, CE_LOSS, CE_GRAD_LOSS, CE_GRAD, CE_NT };

#ifndef __CUDACC__
#include <stdint.h>
/*
 * The check's tolerance of one row's loss (the derivation is
 * megatron_cross_entropy.c's, above ce_check): z the row's V logits, ti its
 * target, loss the float64 reference's, u the unit roundoff; *e_lse gets
 * the bound on lse's absolute error the gradient's tolerance also uses.
 */
double		kb_megatron_ce_row_tol(const double *z, int64_t V, int64_t ti, double loss, double u, double *e_lse);
#endif

#endif
