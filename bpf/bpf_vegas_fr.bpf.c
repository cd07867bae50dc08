// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vegas_fr - byte-based Vegas with proportional window control (seed 004):
 * one reference R in bytes, the half-packet correction of the queue estimate
 * (section V) and a window change proportional to R - Q (section VI), see
 * vk_fr_decide() in vk_core.h. Default R = 4500 bytes (about three 1500-byte
 * packets, within the paper's "twice the largest MTU" guidance of section III),
 * k = 0.5 (the paper gives no gain; ours).
 */
#define VK_VARIANT		VK_VEGAS_FR
#define VK_CA_NAME		"bpf_vegas_fr"
#define VK_DEFAULT_PARAMS	.gamma = 1, .ref_bytes = 4500, .gain_milli = 500
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_fr_decide(p, s, &ca->frac, d);
}
