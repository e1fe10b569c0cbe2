/*
 * layer_norm.h: what the C side (layer_norm.c: the plan, the reference, the
 * CPU implementation) and the CUDA side (layer_norm.cu) of layer_norm must
 * agree on: the tensor slots of a call (the order of ln_plan) and eps.
 */
#ifndef KB_LAYER_NORM_H
#define KB_LAYER_NORM_H

#define LN_EPS 1e-6				/* the CPU and CUDA kernels add (float) LN_EPS */

/* Tensor slots of a layer_norm call. */
enum { LN_X, LN_W, LN_B, LN_Y, LN_MEAN, LN_RSTD, LN_DY, LN_DX, LN_DW, LN_DB, LN_NT };

#endif
