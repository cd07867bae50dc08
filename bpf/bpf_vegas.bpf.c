// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vegas - classic TCP Vegas (Brakmo/Peterson) with the semantics of Linux
 * net/ipv4/tcp_vegas.c, so it can stand in for the native module. Options:
 * ss_every_other_rtt (original slow start, seed 001 section 2.1) and
 * loss_cut (2: Linux halving, 4: the original 25% cut).
 */
#define VK_VARIANT		VK_VEGAS
#define VK_CA_NAME		"bpf_vegas"
#define VK_DEFAULT_PARAMS	.alpha = 2, .beta = 4, .gamma = 1	/* Linux defaults */
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_vegas_decide(p, s, d);
}
