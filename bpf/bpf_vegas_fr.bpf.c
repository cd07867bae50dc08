// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vegas_fr - byte-based Vegas with proportional window control (seed 004):
 * one reference R in bytes, the half-packet correction of the queue estimate
 * (section V, half_packet=1) and a window change proportional to R - Q
 * (section VI), see vk_fr_decide() in vk_core.h. As the paper defines it: RTT
 * is the round's average (appendix; semantics=paper) and R = 3 kB, "twice as
 * high as the largest MTU in this simulation setting" (section III, Fig. 3).
 * k = 0.5 is ours: the paper gives no gain.
 */
#define VK_VARIANT		VK_VEGAS_FR
#define VK_CA_NAME		"bpf_vegas_fr"
#define VK_DEFAULT_PARAMS	.gamma = 1, .ref_bytes = 3000, .gain_milli = 500, \
				.semantics = VK_SEM_PAPER, .half_packet = 1
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_fr_decide(p, s, &ca->frac, d);
}
