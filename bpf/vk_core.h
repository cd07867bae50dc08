/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_core.h - the decision rules of the Vegas family, as pure C.
 *
 * No kernel types and no helpers: the BPF controllers include this file and
 * feed it a struct vk_sample built from the socket; the userspace tests
 * (bpf/tests/) compile the same file into a shared library and drive every
 * rule through it. All products are 64-bit and no divisor can be zero (a BPF
 * divide by zero silently yields 0, so we never rely on it).
 */
#ifndef VK_CORE_H
#define VK_CORE_H

#include "vk_intf.h"

#ifndef VK_INLINE
#define VK_INLINE static inline __attribute__((always_inline))
#endif

/* Inputs of one decision; RTTs in microseconds, windows in packets. */
struct vk_sample {
	__u32 cwnd;
	__u32 ssthresh;
	__u32 cwnd_clamp;	/* tp->snd_cwnd_clamp */
	__u32 base_rtt;		/* min over the connection, >= 1 */
	__u32 rtt;		/* min over the last RTT, >= base_rtt */
	__u32 cnt_rtt;		/* RTT samples in the last RTT */
	__u32 acked;		/* packets newly acked by this ACK */
	__u32 ss_grow;		/* ss_every_other_rtt: 1 in a growing RTT */
};

/* Outputs: the new window and what decided it. */
struct vk_decision {
	__u32 cwnd;
	__u32 ssthresh;
	__s32 diff;
	__u32 rule;		/* enum vk_rule */
};

VK_INLINE __u32 vk_min_u32(__u32 a, __u32 b) { return a < b ? a : b; }
VK_INLINE __u32 vk_max_u32(__u32 a, __u32 b) { return a > b ? a : b; }

/* x - 1 without wrapping below zero. */
VK_INLINE __u32 vk_dec1(__u32 x) { return x ? x - 1 : 0; }

VK_INLINE int vk_in_slow_start(__u32 cwnd, __u32 ssthresh)
{
	return cwnd < ssthresh;		/* tcp_in_slow_start() */
}

/* cwnd clamped to [2, snd_cwnd_clamp] (DESIGN section 3). */
VK_INLINE __u32 vk_clamp_cwnd(__u64 cwnd, __u32 clamp)
{
	if (cwnd < 2)
		return 2;
	if (clamp >= 2 && cwnd > clamp)
		return clamp;
	return (__u32)cwnd;
}

/* Fold one RTT sample (ack_sample.rtt_us) into the per-RTT and connection minima. */
VK_INLINE void vk_rtt_sample(__u32 *base_rtt, __u32 *min_rtt, __u32 *cnt_rtt, __s32 rtt_us)
{
	__u32 vrtt;

	if (rtt_us < 0)			/* no valid sample with this ACK */
		return;
	vrtt = (__u32)rtt_us + 1;	/* never a zero RTT or baseRTT (tcp_vegas.c) */
	if (vrtt < *base_rtt)
		*base_rtt = vrtt;
	if (vrtt < *min_rtt)
		*min_rtt = vrtt;
	(*cnt_rtt)++;
}

/*
 * Linux diff, in packets: cwnd * (rtt - base) / base, the backlog scaled by
 * rtt/base (tcp_vegas.c). base >= 1 by construction of vk_rtt_sample().
 */
VK_INLINE __u64 vk_diff_linux(__u32 cwnd, __u32 rtt, __u32 base)
{
	if (rtt <= base || !base)
		return 0;
	return (__u64)cwnd * (rtt - base) / base;
}

/* The papers' diff (seeds 000, 002): cwnd * (rtt - base) / rtt, the backlog. */
VK_INLINE __u64 vk_diff_backlog(__u32 cwnd, __u32 rtt, __u32 base)
{
	if (rtt <= base || !rtt)
		return 0;
	return (__u64)cwnd * (rtt - base) / rtt;
}

/* Window after one slow-start ACK: tcp_slow_start() without the carry-over. */
VK_INLINE __u32 vk_slow_start(__u32 cwnd, __u32 ssthresh, __u32 acked, __u32 clamp)
{
	__u64 next = (__u64)cwnd + acked;

	if (next > ssthresh)
		next = ssthresh;
	if (clamp && next > clamp)
		next = clamp;
	return next > cwnd ? (__u32)next : cwnd;
}

/*
 * ssthresh after a loss. loss_cut 2 is Linux's tcp_reno_ssthresh (cwnd/2);
 * loss_cut 4 is original Vegas, "reduces the window size by 25%" (seed 001,
 * section 2.1), i.e. floor(3/4 cwnd). Never below 2.
 */
VK_INLINE __u32 vk_loss_ssthresh(__u32 cwnd, __u32 loss_cut)
{
	__u64 keep;

	if (loss_cut != 4)
		loss_cut = 2;
	keep = (__u64)cwnd * (loss_cut - 1) / loss_cut;
	return keep < 2 ? 2 : (__u32)keep;
}

/* tcp_current_ssthresh() in TCP_CA_Open, where every Vegas decision runs. */
VK_INLINE __u32 vk_current_ssthresh(__u32 cwnd, __u32 ssthresh)
{
	return vk_max_u32(ssthresh, (cwnd >> 1) + (cwnd >> 2));
}

/*
 * Slow start at an RTT boundary, shared by the Vegas family: Linux exits when
 * diff > gamma and caps cwnd at target+1, target = cwnd*base/rtt
 * (tcp_vegas.c). With ss_every_other_rtt the window grows only in alternate
 * RTTs and the gamma test is made at the end of the frozen RTT, whose RTT was
 * measured at a constant window (seed 001, section 2.1). Returns 1 if it
 * decided (the caller stops), 0 if the socket is not in slow start.
 */
VK_INLINE int vk_slow_start_decide(const struct vk_params *p, const struct vk_sample *s,
				   __u64 diff, struct vk_decision *d)
{
	__u64 target;

	if (!vk_in_slow_start(s->cwnd, s->ssthresh))
		return 0;
	if (diff > p->gamma && (!p->ss_every_other_rtt || !s->ss_grow)) {
		target = (__u64)s->cwnd * s->base_rtt / s->rtt;
		d->cwnd = (__u32)(target + 1 < s->cwnd ? target + 1 : s->cwnd);
		d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));	/* tcp_vegas_ssthresh() */
		d->rule = VK_RULE_SS_EXIT;
	} else if (p->ss_every_other_rtt && !s->ss_grow) {
		d->rule = VK_RULE_SS_FREEZE;
	} else {
		d->cwnd = vk_slow_start(s->cwnd, s->ssthresh, s->acked, s->cwnd_clamp);
		d->rule = VK_RULE_SS_GROW;
	}
	return 1;
}

/* Clamp and ssthresh bookkeeping that ends every Vegas decision (tcp_vegas.c). */
VK_INLINE void vk_finish(const struct vk_sample *s, struct vk_decision *d)
{
	d->cwnd = vk_clamp_cwnd(d->cwnd, s->cwnd_clamp);
	d->ssthresh = vk_current_ssthresh(d->cwnd, d->ssthresh);
}

/* Start a decision: copy the window; RENO if the RTT had too few samples. */
VK_INLINE int vk_decision_begin(const struct vk_sample *s, struct vk_decision *d)
{
	d->cwnd = s->cwnd;
	d->ssthresh = s->ssthresh;
	d->diff = 0;
	d->rule = VK_RULE_NONE;
	if (s->cnt_rtt <= 2 || !s->base_rtt || s->rtt < s->base_rtt) {
		/* "fewer than three samples: not enough to trust" (tcp_vegas.c) */
		d->rule = VK_RULE_RENO;
		return 0;
	}
	return 1;
}

/*
 * Classic Vegas, once per RTT, as Linux tcp_vegas_cong_avoid(): diff > beta
 * -> cwnd-1 (and ssthresh <= cwnd-1), diff < alpha -> cwnd+1, else hold.
 * VK_RULE_RENO tells the caller to run Reno growth instead.
 */
VK_INLINE void vk_vegas_decide(const struct vk_params *p, const struct vk_sample *s,
			       struct vk_decision *d)
{
	__u64 diff;

	if (!vk_decision_begin(s, d))
		return;
	diff = vk_diff_linux(s->cwnd, s->rtt, s->base_rtt);
	d->diff = diff > 0x7fffffff ? 0x7fffffff : (__s32)diff;

	if (!vk_slow_start_decide(p, s, diff, d)) {
		if (diff > p->beta) {
			d->cwnd = vk_dec1(s->cwnd);
			d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));
			d->rule = VK_RULE_DEC;
		} else if (diff < p->alpha) {
			d->cwnd = s->cwnd + 1;
			d->rule = VK_RULE_INC;
		} else {
			d->rule = VK_RULE_HOLD;
		}
	}
	vk_finish(s, d);
}

#endif /* VK_CORE_H */
