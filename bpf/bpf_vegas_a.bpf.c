// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vegas_a - TCP Vegas-A (Srijith, Jacob, Ananda; seed 000, section IV):
 * per-socket alpha and beta, starting at 1 and 3, that follow the throughput
 * trend. Slow start and loss recovery are Vegas's (the shared machinery).
 * The rule itself is vk_adaptive_decide() in vk_core.h. It decides as the
 * paper's ns-2 agent did by default (semantics=paper, docs/DESIGN.md §3.10).
 */
#define VK_VARIANT		VK_VEGAS_A
#define VK_CA_NAME		"bpf_vegas_a"
#define VK_DEFAULT_PARAMS	.alpha = 1, .beta = 3, .gamma = 1, .semantics = VK_SEM_PAPER
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_adaptive_decide(p, s, &ca->adapt, 0, d);
}
