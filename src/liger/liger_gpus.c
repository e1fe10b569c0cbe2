/*
 * liger_gpus.c: GPU name (torch.cuda.get_device_name) -> hardware.
 *
 * Each rule names a product prefix.  A gpu_name matches a rule when it is
 * the prefix itself, or the prefix followed by a space or a hyphen and more
 * text (so "NVIDIA A10" does not match "NVIDIA A100").  What follows the
 * separator is the form factor for datacenter parts ("NVIDIA A100-SXM4-80GB"
 * -> product "NVIDIA A100", formFactor "SXM4-80GB"; "NVIDIA H100 80GB HBM3"
 * -> "NVIDIA H100", "80GB HBM3"); for consumer and workstation boards the
 * whole name is the product ("NVIDIA GeForce RTX 3090 Ti") and there is no
 * form factor.  A name no rule matches is not guessed: the row is skipped
 * with "unknown gpu".
 */
#include "liger_internal.h"

#include <string.h>

typedef enum
{
	FAMILY,						/* product = prefix; the rest is the form factor */
	WHOLE_NAME					/* product = the whole name; no form factor */
} gpu_naming;

typedef struct gpu_rule
{
	const char *prefix;
	const char *vendor;
	const char *architecture;
	gpu_naming	naming;
} gpu_rule;

static const gpu_rule gpu_rules[] = {
	/* NVIDIA datacenter: Volta, Turing, Ampere, Ada, Hopper, Blackwell */
	{"Tesla V100", "nvidia", "sm_70", FAMILY},
	{"NVIDIA V100", "nvidia", "sm_70", FAMILY},
	{"Tesla T4", "nvidia", "sm_75", FAMILY},
	{"NVIDIA T4", "nvidia", "sm_75", FAMILY},
	{"NVIDIA A100", "nvidia", "sm_80", FAMILY},
	{"NVIDIA A800", "nvidia", "sm_80", FAMILY},
	{"NVIDIA A30", "nvidia", "sm_80", FAMILY},
	{"NVIDIA A10", "nvidia", "sm_86", FAMILY},
	{"NVIDIA A10G", "nvidia", "sm_86", FAMILY},
	{"NVIDIA A40", "nvidia", "sm_86", FAMILY},
	{"NVIDIA L4", "nvidia", "sm_89", FAMILY},
	{"NVIDIA L40", "nvidia", "sm_89", FAMILY},
	{"NVIDIA L40S", "nvidia", "sm_89", FAMILY},
	{"NVIDIA H100", "nvidia", "sm_90", FAMILY},
	{"NVIDIA H800", "nvidia", "sm_90", FAMILY},
	{"NVIDIA H200", "nvidia", "sm_90", FAMILY},
	{"NVIDIA H20", "nvidia", "sm_90", FAMILY},
	{"NVIDIA GH200", "nvidia", "sm_90", FAMILY},
	{"NVIDIA B100", "nvidia", "sm_100", FAMILY},
	{"NVIDIA B200", "nvidia", "sm_100", FAMILY},
	{"NVIDIA GB200", "nvidia", "sm_100", FAMILY},
	{"NVIDIA B300", "nvidia", "sm_103", FAMILY},
	{"NVIDIA GB300", "nvidia", "sm_103", FAMILY},

	/* NVIDIA workstation boards */
	{"NVIDIA RTX A4000", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA RTX A5000", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA RTX A6000", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA RTX 6000 Ada Generation", "nvidia", "sm_89", WHOLE_NAME},

	/* NVIDIA GeForce: Turing, Ampere, Ada, Blackwell */
	{"NVIDIA GeForce RTX 2080", "nvidia", "sm_75", WHOLE_NAME},
	{"NVIDIA GeForce RTX 3060", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA GeForce RTX 3070", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA GeForce RTX 3080", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA GeForce RTX 3090", "nvidia", "sm_86", WHOLE_NAME},
	{"NVIDIA GeForce RTX 4060", "nvidia", "sm_89", WHOLE_NAME},
	{"NVIDIA GeForce RTX 4070", "nvidia", "sm_89", WHOLE_NAME},
	{"NVIDIA GeForce RTX 4080", "nvidia", "sm_89", WHOLE_NAME},
	{"NVIDIA GeForce RTX 4090", "nvidia", "sm_89", WHOLE_NAME},
	{"NVIDIA GeForce RTX 5070", "nvidia", "sm_120", WHOLE_NAME},
	{"NVIDIA GeForce RTX 5080", "nvidia", "sm_120", WHOLE_NAME},
	{"NVIDIA GeForce RTX 5090", "nvidia", "sm_120", WHOLE_NAME},

	/* AMD Instinct (ROCm reports the marketing name) */
	{"AMD Instinct MI210", "amd", "gfx90a", FAMILY},
	{"AMD Instinct MI250", "amd", "gfx90a", FAMILY},
	{"AMD Instinct MI250X", "amd", "gfx90a", FAMILY},
	{"AMD Instinct MI300A", "amd", "gfx942", FAMILY},
	{"AMD Instinct MI300X", "amd", "gfx942", FAMILY},
	{"AMD Instinct MI325X", "amd", "gfx942", FAMILY},
	{"AMD Instinct MI350X", "amd", "gfx950", FAMILY},
	{"AMD Instinct MI355X", "amd", "gfx950", FAMILY},
};

bool
ki_liger_gpu_lookup(ki_arena *a, const char *gpu_name, ki_liger_hardware *hw)
{
	const gpu_rule *best = NULL;
	size_t		best_len = 0;

	for (size_t i = 0; i < sizeof(gpu_rules) / sizeof(gpu_rules[0]); i++)
	{
		const gpu_rule *r = &gpu_rules[i];
		size_t		n = strlen(r->prefix);
		char		next;

		if (strncmp(gpu_name, r->prefix, n) != 0)
			continue;
		next = gpu_name[n];
		if (next != '\0' && next != ' ' && next != '-')
			continue;
		if (next != '\0')
		{
			const char *rest = gpu_name + n + 1;
			size_t		rn = strlen(rest);

			/* a separator must be followed by text, without stray blanks */
			if (rn == 0 || rest[0] == ' ' || rest[rn - 1] == ' ')
				continue;
		}
		if (n > best_len)
		{
			best = r;
			best_len = n;
		}
	}
	if (best == NULL)
		return false;

	hw->vendor = best->vendor;
	hw->architecture = best->architecture;
	if (best->naming == WHOLE_NAME)
	{
		hw->product = ki_strndup(a, gpu_name, strlen(gpu_name));
		hw->form_factor = NULL;
	}
	else
	{
		hw->product = best->prefix;
		hw->form_factor = gpu_name[best_len] == '\0' ? NULL :
			ki_strndup(a, gpu_name + best_len + 1, strlen(gpu_name + best_len + 1));
	}
	return hw->product != NULL && (best->naming == WHOLE_NAME || gpu_name[best_len] == '\0' ||
								   hw->form_factor != NULL);
}
