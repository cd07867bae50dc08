// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_vegas_plus - ours (docs/DESIGN.md §3.11): the Vegas band on the flow's
 * own backlog while the queue is its own; CUBIC's growth and cut while a flow that fills
 * the buffer shares the bottleneck (a foreign queue, or a standing delay, held
 * 3 rounds); a probe every 2.048 s of the host clock that drains to the
 * delay-mode window and returns to delay mode once the queue is its own again,
 * undone (recall) if the competitor shows again within 64 rounds. alpha = beta = 3:
 * one backlog value to hold, the setting seed 001 (2.2) calls fair. The rule
 * is vk_plus_decide() in vk_core.h.
 */
#define VK_VARIANT		VK_VEGAS_PLUS
#define VK_CA_NAME		"bpf_vegas_plus"
#define VK_DEFAULT_PARAMS	.alpha = 3, .beta = 3, .gamma = 1, .foreign_max = 8, .compete = 1, \
				  .compete_ss = VK_PLUS_SS_TO_LOSS, \
				  .rate_epoch = VK_PLUS_RATE_EPOCH_DEFAULT
#include "vk_common.bpf.h"

static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d)
{
	vk_plus_decide(p, s, &ca->plus, d);
}
