// SPDX-License-Identifier: GPL-2.0
/*
 * Exports the inline decision core (bpf/vk_core.h) as plain functions so the
 * userspace tests (bpf/tests/test_*_core*.py, via ctypes in vkcore.py) drive the very code the
 * BPF controllers compile.
 */
#include <linux/types.h>
#include "../vk_core.h"

void vkt_vegas_decide(const struct vk_params *p, const struct vk_sample *s, struct vk_decision *d)
{
	vk_vegas_decide(p, s, d);
}

void vkt_rtt_sample(__u32 *base, __u32 *min, __u64 *sum, __u32 *cnt, __s32 rtt_us)
{
	vk_rtt_sample(base, min, sum, cnt, rtt_us);
}

__u32 vkt_round_rtt(__u32 semantics, __u32 min, __u64 sum, __u32 cnt)
{
	return vk_round_rtt(semantics, min, sum, cnt);
}

__s64 vkt_diff_agent(__u32 outstanding, __u32 sent, __u32 rtt, __u32 base)
{
	return vk_diff_agent(outstanding, sent, rtt, base);
}

int vkt_cmp_throughput_paper(__u32 pkts, __u32 rtt, __u32 prev_pkts, __u32 prev_rtt, __u32 tie)
{
	return vk_cmp_throughput_paper(pkts, rtt, prev_pkts, prev_rtt, tie);
}

__u32 vkt_loss_ssthresh(__u32 cwnd, __u32 loss_cut)
{
	return vk_loss_ssthresh(cwnd, loss_cut);
}

__u32 vkt_slow_start(__u32 cwnd, __u32 ssthresh, __u32 acked, __u32 clamp)
{
	return vk_slow_start(cwnd, ssthresh, acked, clamp);
}

__u32 vkt_clamp_cwnd(__u64 cwnd, __u32 clamp)
{
	return vk_clamp_cwnd(cwnd, clamp);
}

void vkt_adaptive_decide(const struct vk_params *p, const struct vk_sample *s, struct vk_adapt *a,
			 int pipe, struct vk_decision *d)
{
	vk_adaptive_decide(p, s, a, pipe, d);
}

void vkt_fr_decide(const struct vk_params *p, const struct vk_sample *s, __s32 *frac,
		   struct vk_decision *d)
{
	vk_fr_decide(p, s, frac, d);
}

void vkt_plus_decide(const struct vk_params *p, const struct vk_sample *s, struct vk_plus *st,
		     struct vk_decision *d)
{
	vk_plus_decide(p, s, st, d);
}

__u32 vkt_cbrt(__u64 x)
{
	return vk_cbrt(x);
}

__u32 vkt_plus_loss(struct vk_plus *st, __u32 cwnd, __u32 loss_cut)
{
	return vk_plus_loss(st, cwnd, loss_cut);
}

/* the ctypes mirror of struct vk_plus checks its size against this */
__u32 vkt_plus_size(void)
{
	return sizeof(struct vk_plus);
}

__u32 vkt_plus_cubic_cnt(struct vk_plus *st, const struct vk_sample *s)
{
	return vk_plus_cubic_cnt(st, s);
}
