/*
 * jsd.h: what the C side (jsd.c: the plan, the reference, the CPU
 * implementation) and the CUDA side (jsd.cu) of jsd must agree on: the
 * tensor slots of a call (the order of jsd_plan) and beta.
 */
#ifndef KB_JSD_H
#define KB_JSD_H

#define JSD_BETA 0.5			/* the CPU and CUDA kernels compute with (float) JSD_BETA */

/*
 * Tensor slots of a jsd call.  JSD_DZ (the gradient of the logits the student log-probs came
 * from) is the backward's output and JSD_G (the loss's upstream gradient, one fp32 value) its
 * input; the forward and full calls have the first JSD_DZ tensors only.
 */
enum { JSD_X, JSD_Y, JSD_LOSS, JSD_DX, JSD_ROW_LOSS, JSD_DZ, JSD_G, JSD_NT };

#endif
