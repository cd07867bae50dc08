// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_pipe - TCP PIPE (Seshadri, Penchalaiah; seed 002, section IV): the
 * Vegas-A rule with PIPE's boundaries (diff <= alpha, diff >= beta) and ties
 * (Th <= Th' shrinks), see vk_adaptive_decide() in vk_core.h. Those ties
 * occur only with the paper's ns-2 arithmetic, the default (semantics=paper,
 * docs/DESIGN.md §3.10).
 */
#define VK_VARIANT		VK_PIPE
#define VK_CA_NAME		"bpf_pipe"
#define VK_DEFAULT_PARAMS	.alpha = 1, .beta = 3, .gamma = 1, .semantics = VK_SEM_PAPER
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_adaptive_decide(p, s, &ca->adapt, 1, d);
}
