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

#endif
