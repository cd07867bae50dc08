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
	__u32 rtt;		/* the round's RTT, >= base_rtt: its minimum, or
				 * its average (vk_round_rtt()) */
	__u32 cnt_rtt;		/* RTT samples in the last RTT */
	__u32 acked;		/* packets newly acked by this ACK */
	__u32 ss_grow;		/* ss_every_other_rtt: 1 in a growing RTT */
	__u32 mss;		/* bytes (vegas_fr) */
	/* semantics=paper: the ns-2 agent's two counts (docs/DESIGN.md §3.10) */
	__u32 sent;		/* packets sent in the round: rttLen = t_seqno_ - v_begseq_ */
	__u32 outstanding;	/* packets out after this ACK (the agent's t_seqno_ -
				 * last_ack_ is one more: vk_diff_agent()) */
	__u32 now_ms;		/* vegas_plus: the host's clock (tcp_mstamp), ms */
	__u32 delivered;	/* vegas_plus: the kernel's last delivery-rate sample, */
	__u32 interval_us;	/* packets over us (tp->rate_delivered, rate_interval_us) */
};

/* Per-socket adaptive state of Vegas-A and PIPE: thresholds and Th' of the last decision. */
struct vk_adapt {
	__u32 alpha;
	__u32 beta;
	__u32 prev_pkts;	/* Th' = prev_pkts / prev_rtt; prev_rtt 0: none yet */
	__u32 prev_rtt;
};

/* Outputs: the new window and what decided it. */
struct vk_decision {
	__u32 cwnd;
	__u32 ssthresh;
	__s32 diff;		/* packets (vegas family) or bytes (vegas_fr) */
	__u32 rule;		/* enum vk_rule */
	__u32 alpha;		/* thresholds in force after the decision */
	__u32 beta;
	__s32 th_cmp;		/* vegas_a/pipe: sign of Th - Th' as compared */
	__u32 mode;		/* enum vk_mode after the decision */
	__s32 foreign_milli;	/* vegas_plus: the foreign queue, packets x 1000 */
};

VK_INLINE __u32 vk_min_u32(__u32 a, __u32 b) { return a < b ? a : b; }
VK_INLINE __u32 vk_max_u32(__u32 a, __u32 b) { return a > b ? a : b; }
VK_INLINE __u64 vk_min_u64(__u64 a, __u64 b) { return a < b ? a : b; }
VK_INLINE __u64 vk_max_u64(__u64 a, __u64 b) { return a > b ? a : b; }

VK_INLINE __s32 vk_sat_s32(__u64 x) { return x > 0x7fffffff ? 0x7fffffff : (__s32)x; }

/* A signed diff saturated to 32 bits (the agent's delta can be negative). */
VK_INLINE __s32 vk_sat_diff(__s64 x)
{
	return x > 0x7fffffff ? 0x7fffffff : x < -0x7fffffff ? -0x7fffffff : (__s32)x;
}

/* Sign of a - b: 1, 0 or -1. */
VK_INLINE int vk_cmp_u64(__u64 a, __u64 b) { return a > b ? 1 : a < b ? -1 : 0; }
VK_INLINE int vk_cmp_s64(__s64 a, __s64 b) { return a > b ? 1 : a < b ? -1 : 0; }

/* x - 1 without wrapping below zero. */
VK_INLINE __u32 vk_dec1(__u32 x) { return x ? x - 1 : 0; }

VK_INLINE int vk_in_slow_start(__u32 cwnd, __u32 ssthresh)
{
	return cwnd < ssthresh;		/* tcp_in_slow_start() */
}

/* cwnd clamped to [2, snd_cwnd_clamp] (docs/DESIGN.md §3). */
VK_INLINE __u32 vk_clamp_cwnd(__u64 cwnd, __u32 clamp)
{
	if (cwnd < 2)
		return 2;
	if (clamp >= 2 && cwnd > clamp)
		return clamp;
	return (__u32)cwnd;
}

/*
 * Fold one RTT sample (ack_sample.rtt_us) into the connection minimum and the
 * round's minimum, sum and count.
 */
VK_INLINE void vk_rtt_sample(__u32 *base_rtt, __u32 *min_rtt, __u64 *sum_rtt, __u32 *cnt_rtt,
			     __s32 rtt_us)
{
	__u32 vrtt;

	if (rtt_us < 0)			/* no valid sample with this ACK */
		return;
	vrtt = (__u32)rtt_us + 1;	/* never a zero RTT or baseRTT (tcp_vegas.c) */
	if (vrtt < *base_rtt)
		*base_rtt = vrtt;
	if (vrtt < *min_rtt)
		*min_rtt = vrtt;
	*sum_rtt += vrtt;
	(*cnt_rtt)++;
}

/*
 * The RTT a decision uses (docs/DESIGN.md §3.10). Linux takes the round's
 * minimum. The papers' ns-2 agent takes the average of the round's samples,
 * "rtt = v_sumRTT_ / v_cntRTT_" (ns-2.35 tcp/tcp-vegas.cc, recv()); seed 004's
 * appendix defines RTT(t_n) the same way.
 */
VK_INLINE __u32 vk_round_rtt(__u32 semantics, __u32 min_rtt, __u64 sum_rtt, __u32 cnt_rtt)
{
	__u64 avg;

	if (semantics != VK_SEM_PAPER || !cnt_rtt)
		return min_rtt;
	avg = sum_rtt / cnt_rtt;
	return avg < min_rtt ? min_rtt : avg > 0x7fffffffu ? 0x7fffffffu : (__u32)avg;
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

/*
 * The ns-2 agent's diff (docs/DESIGN.md §3.10), from its own counts:
 *   expect = (t_seqno_ - last_ack_) / baseRTT
 *   actual = rttLen / rtt                          packets sent in the round
 *   delta  = int((expect - actual) * baseRTT + 0.5)
 * (ns-2.35 tcp/tcp-vegas.cc, recv()). An ns-2 ACK names the last packet
 * received, not the next expected, so t_seqno_ - last_ack_ is the packets
 * outstanding after the ACK plus one: a whole window under ns-2's per-packet
 * ACKs. Hence delta = outstanding + 1 - sent*base/rtt + 1/2, truncated toward
 * zero as int() truncates (exact arithmetic here, where the agent rounds in
 * doubles), so it can be negative. Done in integers on magnitudes (no signed
 * divide in BPF); counts are capped at 2^30 so no product overflows.
 */
VK_INLINE __s64 vk_diff_agent(__u32 outstanding, __u32 sent, __u32 rtt, __u32 base)
{
	__u64 pos, neg;

	if (!rtt)
		return 0;
	outstanding = vk_min_u32(outstanding, 1u << 30) + 1;	/* t_seqno_ - last_ack_ */
	sent = vk_min_u32(sent, 1u << 30);
	pos = 2ull * outstanding * rtt + rtt;
	neg = 2ull * sent * base;
	return pos >= neg ? (__s64)((pos - neg) / (2ull * rtt)) :
			    -(__s64)((neg - pos) / (2ull * rtt));
}

/*
 * The packets Th counts: the agent's actual rate is the packets sent in the
 * round over its RTT (v_actual_ = rttLen/rtt); Linux's form, and the papers'
 * text, count cwnd ([VegasA] §II: actual = cwnd/rtt).
 */
VK_INLINE __u32 vk_th_pkts(const struct vk_params *p, const struct vk_sample *s)
{
	return p->semantics == VK_SEM_PAPER ? s->sent : s->cwnd;
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
	d->alpha = 0;
	d->beta = 0;
	d->th_cmp = 0;
	d->mode = VK_MODE_DELAY;
	d->foreign_milli = 0;
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
	__s64 diff;
	int vegas = vk_decision_begin(s, d);

	d->alpha = p->alpha;
	d->beta = p->beta;
	if (!vegas)
		return;
	/* paper: the ns-2 agent's delta from its own counts (docs/DESIGN.md §3.10) */
	diff = p->semantics == VK_SEM_PAPER ?
	       vk_diff_agent(s->outstanding, s->sent, s->rtt, s->base_rtt) :
	       (__s64)vk_min_u64(vk_diff_linux(s->cwnd, s->rtt, s->base_rtt), 0x7fffffff);
	d->diff = vk_sat_diff(diff);

	if (!vk_slow_start_decide(p, s, diff < 0 ? 0 : diff, d)) {
		if (diff > (__s64)p->beta) {
			d->cwnd = vk_dec1(s->cwnd);
			d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));
			d->rule = VK_RULE_DEC;
		} else if (diff < (__s64)p->alpha) {
			d->cwnd = s->cwnd + 1;
			d->rule = VK_RULE_INC;
		} else {
			d->rule = VK_RULE_HOLD;
		}
	}
	vk_finish(s, d);
}

/* Sign of (diff - thresh) for the papers' diff = cwnd*(rtt-base)/rtt, exactly:
 * compares cwnd*(rtt-base) with thresh*rtt, so no division rounds a tie away. */
VK_INLINE int vk_cmp_backlog(__u32 cwnd, __u32 rtt, __u32 base, __u32 thresh)
{
	return vk_cmp_u64(rtt > base ? (__u64)cwnd * (rtt - base) : 0, (__u64)thresh * rtt);
}

/* Sign of Th - Th' with Th = pkts/rtt, exactly; no previous decision counts as Th' = 0. */
VK_INLINE int vk_cmp_throughput(__u32 pkts, __u32 rtt, __u32 prev_pkts, __u32 prev_rtt)
{
	if (!prev_rtt)
		return pkts ? 1 : 0;
	return vk_cmp_u64((__u64)pkts * prev_rtt, (__u64)prev_pkts * rtt);
}

/*
 * Th - Th' as the papers' agent sees it, Th = packets sent in the round over
 * its RTT, a tie when they differ by less than `tie` (thousandths of a packet
 * per round, th_tie; default half a packet): |sent - sent' * rtt/rtt'| < tie.
 * ns-2 compares two doubles on a clock with no jitter, so a saturated
 * bottleneck gives Th == Th' exactly, round after round. Measured RTTs differ
 * by microseconds every round; the resolution is that of the count itself,
 * one packet, halved. docs/DESIGN.md §3.10 gives the measured RTT noise it
 * must stay above. tie 0: any difference counts, as the agent's doubles.
 * Counts are capped at 2^20 so 1000 * count * rtt fits in 64 bits.
 */
VK_INLINE int vk_cmp_throughput_paper(__u32 pkts, __u32 rtt, __u32 prev_pkts, __u32 prev_rtt,
				      __u32 tie)
{
	__u64 now, before, band;

	if (!prev_rtt || !rtt)
		return pkts ? 1 : 0;
	now = 1000ull * vk_min_u32(pkts, 1u << 20) * prev_rtt;		/* Th * rtt * rtt' */
	before = 1000ull * vk_min_u32(prev_pkts, 1u << 20) * rtt;	/* Th' * rtt * rtt' */
	band = (__u64)vk_min_u32(tie, 1000) * prev_rtt;
	if (now > before && now - before >= band)
		return 1;
	if (before > now && before - now >= band)
		return -1;
	return 0;
}

/*
 * Vegas-A (seed 000, section IV) and PIPE (seed 002, section IV), once per RTT in
 * congestion avoidance. diff is the papers' backlog form; Th is this RTT's
 * actual rate and Th' that of the previous decision. Our reading, docs/DESIGN.md §3:
 *
 *   alpha < diff < beta:   Th > Th' -> cwnd+1, alpha+1, beta+1; else hold
 *   diff < alpha           (PIPE: diff <= alpha)
 *     alpha == 1           -> cwnd+1
 *     Th > Th'             -> cwnd+1
 *     Th < Th'             (PIPE: Th <= Th') -> cwnd-1, alpha-1, beta-1
 *     Th == Th'            -> hold (Vegas-A only)
 *   diff > beta            (PIPE: diff >= beta) -> cwnd-1, alpha-1, beta-1
 *   otherwise (Vegas-A: diff == alpha or diff == beta) -> hold
 *
 * Seed 002's printed pseudocode nests "diff >= beta" inside "alpha == 1" and its
 * section II flips the signs of the basic Vegas rule; both are typesetting
 * errors (the text and seed 000 agree on the rule above), not PIPE's design.
 * alpha never drops below 1 nor rises above alpha_max, and alpha and beta move
 * together, so beta - alpha never changes.
 *
 * With semantics=paper, diff is the agent's delta from its own counts and Th
 * the packets sent in the round over its RTT, compared at half a packet per
 * round, so the ties PIPE and Vegas-A treat differently (diff == alpha,
 * diff == beta, Th == Th') occur as they did in the papers' ns-2 runs; with
 * exact, they almost never do (docs/DESIGN.md §3.10).
 *
 * Th' is "the actual throughput at previous rtt" (seed 000, IV), so every
 * round that measured an RTT updates it, a Reno-fallback round too. Outside
 * TCP_CA_Open the kernel does not call cong_avoid, so no round is seen: the
 * first round after a loss compares with the last one before it, as the
 * agent's first post-loss round does (docs/DESIGN.md §3.10).
 */
VK_INLINE void vk_adaptive_decide(const struct vk_params *p, const struct vk_sample *s,
				  struct vk_adapt *a, int pipe, struct vk_decision *d)
{
	int lo, hi, th;
	__u32 pkts = vk_th_pkts(p, s);
	__s64 diff;

	if (!vk_decision_begin(s, d)) {
		d->alpha = a->alpha;
		d->beta = a->beta;
		if (s->cnt_rtt && s->rtt >= s->base_rtt && s->base_rtt) {
			a->prev_pkts = pkts;		/* a measured round: Th' */
			a->prev_rtt = s->rtt;
		}
		return;
	}
	if (p->semantics == VK_SEM_PAPER) {
		diff = vk_diff_agent(s->outstanding, s->sent, s->rtt, s->base_rtt);
		lo = vk_cmp_s64(diff, a->alpha);
		hi = vk_cmp_s64(diff, a->beta);
		th = vk_cmp_throughput_paper(pkts, s->rtt, a->prev_pkts, a->prev_rtt,
					     p->th_tie_milli);
	} else {
		diff = (__s64)vk_diff_backlog(s->cwnd, s->rtt, s->base_rtt);
		lo = vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, a->alpha);
		hi = vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, a->beta);
		th = vk_cmp_throughput(pkts, s->rtt, a->prev_pkts, a->prev_rtt);
	}
	d->diff = vk_sat_diff(diff);
	/* slow start's gamma test takes this diff, the papers' /rtt backlog, not Linux's
	 * /base form: [VegasA] section IV keeps Vegas's definitions of expected, actual
	 * and diff, and the agent's slow-start branch tests its delta (docs/DESIGN.md
	 * §11, item 7) */
	if (!vk_slow_start_decide(p, s, diff < 0 ? 0 : diff, d)) {
		int below = pipe ? lo <= 0 : lo < 0;
		int above = pipe ? hi >= 0 : hi > 0;

		d->th_cmp = th;
		if (lo > 0 && hi < 0)
			d->rule = th > 0 ? VK_RULE_INC_ADAPT : VK_RULE_HOLD;
		else if (below)
			d->rule = a->alpha <= 1 || th > 0 ? VK_RULE_INC :
				  th < 0 || pipe ? VK_RULE_DEC_ADAPT : VK_RULE_HOLD;
		else if (above)
			d->rule = VK_RULE_DEC_ADAPT;
		else
			d->rule = VK_RULE_HOLD;

		if (d->rule == VK_RULE_INC || d->rule == VK_RULE_INC_ADAPT)
			d->cwnd = s->cwnd + 1;
		if (d->rule == VK_RULE_INC_ADAPT && a->alpha < p->alpha_max) {
			a->alpha++;
			a->beta++;
		}
		if (d->rule == VK_RULE_DEC_ADAPT) {
			d->cwnd = vk_dec1(s->cwnd);
			d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));
			if (a->alpha > 1) {
				a->alpha--;
				a->beta--;
			}
		}
	}
	a->prev_pkts = pkts;
	a->prev_rtt = s->rtt;
	d->alpha = a->alpha;
	d->beta = a->beta;
	vk_finish(s, d);
}

#define VK_FRAC_ONE	1024	/* fractional window unit: 1/1024 packet */

/*
 * Byte-based Vegas with proportional control (seed 004), once per RTT:
 *   Q = cwnd*mss*(rtt-base)/rtt + mss/2     backlog in bytes, plus the half
 *                                           packet of section V (half_packet=0
 *                                           drops it, to test that section)
 *   step = k*(R - Q)/mss packets            section VI: change proportional to
 *                                           the error; fractions accumulate in
 *                                           *frac (1/1024 packet) across RTTs
 * The paper gives no gain; k is ours (default 0.5, in (0, 1]). Slow start exits
 * when the backlog in packets exceeds gamma, as for the rest of the family.
 * Divisions are on magnitudes: BPF (before cpu v4) has no signed divide.
 */
VK_INLINE void vk_fr_decide(const struct vk_params *p, const struct vk_sample *s,
			    __s32 *frac, struct vk_decision *d)
{
	__u32 mss = s->mss ? s->mss : 1;
	__u64 backlog, q, mag;
	__s64 err, acc, whole, next;

	if (!vk_decision_begin(s, d))
		return;
	backlog = s->rtt > s->base_rtt ?
		  (__u64)s->cwnd * mss * (s->rtt - s->base_rtt) / s->rtt : 0;
	q = backlog + (p->half_packet ? mss / 2 : 0);	/* section V's correction */
	d->diff = vk_sat_s32(q);
	if (!vk_slow_start_decide(p, s, backlog / mss, d)) {
		err = (__s64)p->ref_bytes - (__s64)q;
		mag = (__u64)(err < 0 ? -err : err) * p->gain_milli * VK_FRAC_ONE / (1000ull * mss);
		acc = *frac + (err < 0 ? -(__s64)mag : (__s64)mag);
		whole = acc < 0 ? -(__s64)((__u64)-acc / VK_FRAC_ONE) : (__s64)((__u64)acc / VK_FRAC_ONE);
		*frac = (__s32)(acc - whole * VK_FRAC_ONE);
		next = (__s64)s->cwnd + whole;
		d->cwnd = next < 2 ? 2 : next > 0xffffffffll ? 0xffffffffu : (__u32)next;
		if (whole < 0)
			d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));
		d->rule = VK_RULE_PROP;
	}
	vk_finish(s, d);
}

/*
 * vegas_plus (ours, docs/DESIGN.md §3.11): per-socket state. The rate is the
 * window the path carried per base RTT (vk_plus_rate()), in thousandths of a
 * packet; its windowed maximum is our best estimate of the bottleneck's rate
 * as a window (the BDP), kept as the maximum of this epoch and the last.
 */
struct vk_plus {
	__u32 rate_max[2];	/* this epoch's maximum, the last epoch's (saturating) */
	__u32 rtt_lo[2];	/* delay mode: the lowest round RTT (us) of this rate
				 * epoch and of the last; 0: none yet (the last's: no
				 * whole epoch since the start or a return to delay) */
	__u32 saved_cwnd;	/* competitive window, restored if a probe fails */
	__u32 probe_cwnd;	/* the window the probe set (less later: a loss cut it);
				 * after a passed probe, the window it passed with */
	__u32 w_max;		/* compete: CUBIC's W_max, the window at the last loss */
	__u32 w_start;		/* compete: cwnd when this growth epoch began */
	__u32 epoch_ms;		/* compete: now_ms when it began; 0: at the next round */
	__u32 cnt;		/* compete: ACKed packets per packet of growth; 0: cwnd */
	__u16 probe_epoch;	/* now_ms >> VK_PLUS_PROBE_SHIFT of the last probe, low bits */
	__u16 epoch_rounds;	/* delay mode: rounds in this rate epoch */
	__u8 mode;		/* enum vk_mode */
	__u8 streak;		/* delay mode: consecutive rounds with a sign of a competitor */
	__u8 probe_rounds;	/* probe: rounds at the drained window so far */
	__u8 recall;		/* delay mode: rounds left to undo the last passed probe */
};

#define VK_PLUS_PROBE_SHIFT	11	/* probe every 2^11 ms = 2.048 s of the host clock */
#define VK_PLUS_PROBE_ROUNDS	2	/* a round to drain, a round to measure */
#define VK_PLUS_RECALL_ROUNDS	64	/* a passed probe can be undone this long */
#define VK_PLUS_COUNT_CAP	(1u << 20)	/* keeps 1000 * count * rtt within 64 bits */

/* The window the path carries now, cwnd*base/rtt, thousandths of a packet. */
VK_INLINE __u64 vk_plus_window_rate(const struct vk_sample *s)
{
	return s->rtt ? 1000ull * vk_min_u32(s->cwnd, VK_PLUS_COUNT_CAP) * s->base_rtt / s->rtt : 0;
}

/*
 * The path's rate as a window per base RTT, thousandths of a packet: the
 * kernel's delivery-rate sample (tcp_rate_gen(), what BBR filters), else
 * cwnd*base/rtt. Not cwnd over the round's RTT alone: right after slow start
 * the round's minimum RTT predates the queue the overshoot built, and that
 * quotient read twice the path's rate (traced: 32.6 packets on a 17-packet
 * path), which the maximum then kept as the path's.
 */
VK_INLINE __u64 vk_plus_rate(const struct vk_sample *s)
{
	if (s->interval_us)
		return 1000ull * vk_min_u32(s->delivered, VK_PLUS_COUNT_CAP) * s->base_rtt /
		       s->interval_us;
	return vk_plus_window_rate(s);
}

/*
 * The foreign queue, thousandths of a packet: the queue our best rate implies
 * for this round's queueing delay, rate_max*(rtt-base)/base, less our own
 * backlog, cwnd*(rtt-base)/rtt. Alone, our rate is the path's and the two
 * agree; beside a flow that holds the buffer our rate falls while the delay
 * stays, and the difference is the queue that is not ours.
 */
VK_INLINE __s32 vk_plus_foreign(__u64 rate_max, __u32 cwnd, __u32 rtt, __u32 base)
{
	__u64 total, own;

	if (rtt <= base || !base)
		return 0;
	total = vk_min_u64(rate_max, 1000ull * VK_PLUS_COUNT_CAP) * (rtt - base) / base;
	own = 1000ull * vk_min_u32(cwnd, VK_PLUS_COUNT_CAP) * (rtt - base) / rtt;
	return total > own ? vk_sat_s32(total - own) : 0;
}

/*
 * The standing delay: the round's queueing delay is at least half the base
 * RTT (a queue of half the BDP or more) while our own backlog is at most
 * 2*beta, so most of that queue is not ours. The rate maximum cannot see a
 * competitor that was there from our first round (our best rate is then our
 * share); this can. It is the same identity read the other way: our window
 * is then at most three times our own backlog, which alone happens only on a
 * path of at most 2*(2*beta) packets (docs/DESIGN.md §3.11, limits).
 */
VK_INLINE int vk_plus_standing(const struct vk_params *p, const struct vk_sample *s)
{
	return s->rtt > s->base_rtt && 2ull * (s->rtt - s->base_rtt) >= s->base_rtt &&
	       vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, 2 * p->beta) <= 0;
}

/*
 * The rise: the round's RTT stands rise% or more above the lowest round RTT of
 * this rate epoch and the last (64-128 delay-mode rounds by default). It reads
 * no baseRTT, so a baseRTT learned behind a loss-based flow's standing queue
 * does not blind it: that flow must cut on loss and refill, and its sawtooth
 * moves the whole queue, where ours moves at most our own band of alpha..beta
 * packets (docs/DESIGN.md §3.11, "the rise"). 0 turns it off. Armed only once
 * the low has a whole epoch behind it (rtt_lo[1] set by the epoch's turn):
 * within the first epoch of a flow, or of a return to delay mode, another
 * flow's slow start raises the RTT as much (replayed: 37-41% in pairs).
 */
VK_INLINE int vk_plus_rising(const struct vk_params *p, const struct vk_sample *s,
			     const struct vk_plus *st)
{
	__u32 lo = st->rtt_lo[0] && st->rtt_lo[0] < st->rtt_lo[1] ? st->rtt_lo[0]
								 : st->rtt_lo[1];

	return p->rise && lo && s->rtt > lo &&
	       100ull * (s->rtt - lo) >= (__u64)p->rise * lo;
}

/*
 * floor(cbrt(x)) for x < 2^63: Newton's step r = (2r + x/r^2)/3 from above,
 * never rising (it would step between the floor and one more), a fixed 44
 * times: from 2^21 it falls by a third a step until near, then converges
 * quadratically. No branch on x: a bisection's branches took the BPF
 * verifier past 10^6 instructions, following each outcome apart.
 */
VK_INLINE __u32 vk_cbrt(__u64 x)
{
	__u64 r = (1u << 21) - 1, next;
	int i;

	if (!x)
		return 0;
	for (i = 0; i < 44; i++) {	/* r >= floor(cbrt(x)) >= 1: no zero divisor */
		next = (2 * r + x / (r * r)) / 3;
		r = next < r ? next : r;
	}
	return (__u32)r;
}

#define VK_SSTHRESH_INF		0x7fffffffu	/* the kernel's TCP_INFINITE_SSTHRESH */
#define VK_PLUS_CUBIC_BETA_MILLI 700	/* RFC 9438 §4.6: beta_cubic = 0.7 */
#define VK_PLUS_CUBIC_T_MAX_MS	(1u << 20)	/* keeps (t - K)^3 within 64 bits */

/*
 * Competitive mode's growth, once per round: CUBIC's (RFC 9438 §4), the
 * kernel's default, since Reno's AIMD loses to it as the BDP grows (measured:
 * 0.78 of the fair share against cubic at 10 Mbit/s, 80 ms; docs/DESIGN.md
 * §3.11). Returns cnt, the ACKed packets per packet of growth that bring cwnd
 * to W(t + RTT) within this round:
 *   W(t) = C (t - K)^3 + W_max, C = 0.4 packets/s^3,   (§4.2, eq. 1)
 *   K = cbrt((W_max - cwnd_epoch) / C)                  (§4.2, eq. 2)
 * never below Reno's estimate from the epoch's start, alpha = 3(1-beta)/(1+beta)
 * packets per round (§4.3), and at most 1.5 cwnd (§4.2).
 */
VK_INLINE __u32 vk_plus_cubic_cnt(struct vk_plus *st, const struct vk_sample *s)
{
	__u64 cwnd = s->cwnd, k, t, d, grow, target, est;

	if (!st->epoch_ms) {		/* a loss or the switch to compete */
		st->epoch_ms = s->now_ms | 1;
		st->w_start = s->cwnd;
		if (st->w_max < s->cwnd)
			st->w_max = s->cwnd;
	}
	/* ms: K^3 = (W_max - cwnd_epoch) / 0.4 s^3 = that * 2.5e9 ms^3 */
	k = vk_cbrt((__u64)vk_min_u32(st->w_max > st->w_start ? st->w_max - st->w_start : 0,
				      VK_PLUS_COUNT_CAP) * 2500000000ull);
	t = (__u32)(s->now_ms - st->epoch_ms) + s->base_rtt / 1000;
	t = vk_min_u64(t, VK_PLUS_CUBIC_T_MAX_MS);
	d = t > k ? t - k : k - t;
	grow = 4 * d * d * d / 10000000000ull;	/* C d^3, d in ms: 0.4e-9 per ms^3 */
	if (t > k)
		target = st->w_max + grow;
	else
		target = st->w_max > grow ? st->w_max - grow : 0;
	/* Reno's estimate: 0.9/1.7 packets per round of this round's RTT */
	est = st->w_start + 9000ull * t / (17ull * vk_max_u32(s->rtt, 1));
	target = vk_min_u64(vk_max_u64(target, est), cwnd + cwnd / 2);
	if (target <= cwnd)		/* at W(t): next to no growth (§4.2) */
		return (__u32)vk_min_u64(100 * cwnd, 0xffffffffu);
	return (__u32)vk_max_u64(cwnd / (target - cwnd), 1);
}

/*
 * ssthresh after a loss: the family's cut in delay mode; in competitive mode
 * and its probe, CUBIC's (RFC 9438 §4.6) and a new growth epoch from the
 * window lost at, or from (1 + beta)/2 of it when that is below the last
 * W_max (fast convergence, §4.7: a flow that lost share gives up more, so
 * two flows of ours that went competitive against each other converge; measured
 * without it at 10 Mbit/s, 20 ms: a pair's Jain index 0.95 to 0.96 in 2 of 6).
 */
VK_INLINE __u32 vk_plus_loss(struct vk_plus *st, __u32 cwnd, __u32 loss_cut)
{
	__u64 keep;

	if (st->mode == VK_MODE_DELAY)
		return vk_loss_ssthresh(cwnd, loss_cut);
	st->w_max = cwnd < st->w_max ?
		    (__u32)((__u64)cwnd * (1000 + VK_PLUS_CUBIC_BETA_MILLI) / 2000) : cwnd;
	st->epoch_ms = 0;
	keep = (__u64)cwnd * VK_PLUS_CUBIC_BETA_MILLI / 1000;
	return keep < 2 ? 2 : (__u32)keep;
}

/*
 * A probe that found a competitor, or could not tell: competitive mode again.
 * The competitive window comes back, unless a loss cut the probe's own window
 * meanwhile (the kernel's cut stands). A path that got slower must not keep us
 * competitive for good: each failed probe forgets an eighth of the best rate,
 * our own rounds keep it up.
 */
VK_INLINE void vk_plus_probe_fail(struct vk_plus *st, const struct vk_sample *s,
				  struct vk_decision *d)
{
	st->mode = VK_MODE_COMPETE;
	st->rate_max[0] -= st->rate_max[0] >> 3;
	st->rate_max[1] -= st->rate_max[1] >> 3;
	if (s->cwnd >= st->probe_cwnd)
		d->cwnd = vk_max_u32(st->saved_cwnd, s->cwnd);
	d->rule = VK_RULE_PROBE_FAIL;
}

/*
 * vegas_plus, once per RTT (docs/DESIGN.md §3.11):
 *
 *   delay    the Vegas band on our own backlog, exactly: below alpha cwnd+1,
 *            above beta cwnd-1, else hold; slow start as the family's. A
 *            foreign queue >= foreign_max, or a standing delay, for 3 rounds
 *            -> compete. Within 64 rounds of a passed probe, also the
 *            band shedding a quarter of the probe's window; and then
 *            compete resumes with the window that probe gave up (recall).
 *   compete  CUBIC's growth and cut (vk_plus_cubic_cnt(), vk_plus_loss(); the
 *            caller grows the window per ACK). At each 2.048 s boundary of the host clock,
 *            probe: the window becomes min(cwnd*base/rtt, the best rate) +
 *            alpha, what delay mode would hold alone.
 *   probe    two rounds at that window; then if our backlog is at most
 *            beta+1 and our rate at least 3/4 of the best seen, the path is
 *            ours: -> delay (keep the window, relearn the rate from it); else
 *            -> compete with the window restored and the best rate lowered
 *            by an eighth.
 *
 * The probe's schedule is the host's clock, not the flow's: every vegas_plus
 * flow of a host probes in the same rounds, so flows of ours that compete
 * with each other drain together and see that no buffer-filler is left.
 */
VK_INLINE void vk_plus_decide(const struct vk_params *p, const struct vk_sample *s,
			      struct vk_plus *st, struct vk_decision *d)
{
	__u16 epoch = (__u16)(s->now_ms >> VK_PLUS_PROBE_SHIFT);
	__u64 rate, rate_max;
	__s32 foreign;
	int lo, hi, begun;

	begun = vk_decision_begin(s, d);	/* it zeroes the record's thresholds: first */
	d->alpha = p->alpha;
	d->beta = p->beta;
	if (!begun) {
		/* a round with too few samples to judge still counts toward the probe,
		 * and one that ends it fails: at a window of 2 every round is such a
		 * round, and a probe that waited for a judgeable one never ended
		 * (traced against bbr at 10 Mbit/s, 20 ms: 25.6 s at cwnd 2) */
		if (st->mode == VK_MODE_PROBE) {
			if (++st->probe_rounds < VK_PLUS_PROBE_ROUNDS) {
				d->rule = VK_RULE_PROBE;	/* no growth while probing */
			} else {
				vk_plus_probe_fail(st, s, d);
				vk_finish(s, d);
			}
		}
		d->mode = st->mode;
		return;
	}
	rate = vk_plus_rate(s);
	d->diff = vk_sat_diff((__s64)vk_diff_backlog(s->cwnd, s->rtt, s->base_rtt));

	if (st->mode == VK_MODE_DELAY && vk_slow_start_decide(p, s, (__u64)d->diff, d)) {
		d->mode = st->mode;
		vk_finish(s, d);
		return;
	}
	/* the rate maximum: every round outside slow start; epochs turn in delay mode only,
	 * so a long competition does not teach it our share as the path's rate. An epoch
	 * is rate_epoch rounds (the loader keeps it in 8-4096) */
	rate = vk_min_u64(rate, 0xffffffffu);
	if (rate > st->rate_max[0])
		st->rate_max[0] = rate;
	if (st->mode == VK_MODE_DELAY && (!st->rtt_lo[0] || s->rtt < st->rtt_lo[0]))
		st->rtt_lo[0] = s->rtt;
	if (st->mode == VK_MODE_DELAY && ++st->epoch_rounds >= p->rate_epoch) {
		st->rate_max[1] = st->rate_max[0];
		st->rate_max[0] = rate;
		st->rtt_lo[1] = st->rtt_lo[0];
		st->rtt_lo[0] = s->rtt;
		st->epoch_rounds = 0;
	}
	rate_max = st->rate_max[0] > st->rate_max[1] ? st->rate_max[0] : st->rate_max[1];
	foreign = vk_plus_foreign(rate_max, s->cwnd, s->rtt, s->base_rtt);
	d->foreign_milli = foreign;

	if (st->mode == VK_MODE_DELAY) {
		int by_rate = (__u64)foreign >= 1000ull * p->foreign_max;
		/* after a passed probe the rate maximum is the probe's, perhaps a share:
		 * the band giving up a quarter of the probe's window says the same */
		int shed = st->recall && 4ull * s->cwnd <= 3ull * st->probe_cwnd;

		int rising = vk_plus_rising(p, s, st);
		int standing = vk_plus_standing(p, s);

		if (p->compete && (by_rate || shed || rising || standing))
			st->streak++;
		else
			st->streak = 0;
		if (st->streak >= VK_PLUS_DETECT_ROUNDS) {
			st->mode = VK_MODE_COMPETE;
			st->streak = 0;
			/* within 64 rounds of a passed probe: that probe saw a competitor's
			 * halving, not its departure; undo it (the saved competitive window).
			 * Rounds, not the clock: the competitor refills the queue in rounds */
			d->cwnd = st->recall ? vk_max_u32(s->cwnd, st->saved_cwnd) : s->cwnd;
			d->rule = st->recall ? VK_RULE_RECALL :
				  by_rate ? VK_RULE_TO_COMPETE :
				  rising && !standing ? VK_RULE_TO_COMPETE_RISE : VK_RULE_TO_COMPETE_DELAY;
			st->recall = 0;
			st->probe_epoch = epoch;	/* the first probe at the next boundary */
			/* a competitor just seen: our window is what delay mode left
			 * us, perhaps a few packets; slow start finds a share as a new
			 * flow's would. A recall knows its window: no slow start.
			 * compete_ss 2 stops at the window of the best rate seen: from
			 * a window near the BDP, slow start to the first loss doubles
			 * past BDP + buffer (traced at 100 Mbit/s, 80 ms) */
			if (d->rule == VK_RULE_RECALL || p->compete_ss == VK_PLUS_SS_NONE)
				d->ssthresh = d->cwnd;
			else if (p->compete_ss == VK_PLUS_SS_CAPPED)
				d->ssthresh = (__u32)vk_max_u64(d->cwnd, vk_min_u64(rate_max / 1000,
								   VK_PLUS_COUNT_CAP));
			else
				d->ssthresh = VK_SSTHRESH_INF;
			st->w_max = d->cwnd;		/* CUBIC's curve from this window */
			st->epoch_ms = 0;
			st->cnt = 0;			/* Reno's growth until the next round */
		} else {
			if (st->recall)
				st->recall--;
			lo = vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, p->alpha);
			hi = vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, p->beta);
			if (hi > 0) {
				d->cwnd = vk_dec1(s->cwnd);
				d->ssthresh = vk_min_u32(s->ssthresh, vk_dec1(d->cwnd));
				d->rule = VK_RULE_DEC;
			} else if (lo < 0) {
				d->cwnd = s->cwnd + 1;
				d->rule = VK_RULE_INC;
			} else {
				d->rule = VK_RULE_HOLD;
			}
		}
	} else if (st->mode == VK_MODE_COMPETE) {
		if (epoch != st->probe_epoch) {
			st->probe_epoch = epoch;
			st->saved_cwnd = s->cwnd;
			st->mode = VK_MODE_PROBE;
			st->probe_rounds = 0;
			/* the window the path carries now, or the best rate if less: with
			 * the queue already empty the first is our whole window, and a probe
			 * that keeps it only refills the queue and fails (traced) */
			d->cwnd = (__u32)vk_min_u64(vk_min_u64(vk_plus_window_rate(s), rate_max) / 1000 +
						    p->alpha, s->cwnd);
			st->probe_cwnd = d->cwnd;
			d->ssthresh = vk_min_u32(s->ssthresh, d->cwnd);	/* no slow start */
			d->rule = VK_RULE_PROBE;
		} else {
			/* compete_ss 2: CUBIC's epoch (left at 0 by the detection)
			 * begins where its capped slow start ends, or its curve would
			 * start below the window */
			if (p->compete_ss != VK_PLUS_SS_CAPPED ||
			    !vk_in_slow_start(s->cwnd, s->ssthresh))
				st->cnt = vk_plus_cubic_cnt(st, s);
			d->rule = VK_RULE_COMPETE;
		}
	} else if (++st->probe_rounds < VK_PLUS_PROBE_ROUNDS) {
		d->rule = VK_RULE_PROBE;
	} else if (!p->compete ||
		   (vk_cmp_backlog(s->cwnd, s->rtt, s->base_rtt, p->beta + 1) <= 0 &&
		    4 * vk_max_u64(rate, vk_plus_window_rate(s)) >= 3 * rate_max)) {
		/* the probe's window leaves alpha of ours queued if the queue is ours
		 * alone: it drained, and the path carries our window at 3/4 or more of
		 * the best rate we have seen, so whatever filled it has gone (a queue
		 * drained only because a loss-based competitor has just halved leaves
		 * us a share, not the path: measured, docs/DESIGN.md §3.11). The
		 * rate is also read from the window: the kernel's sample right after
		 * the drain spans the pause the cut made and reads low (traced). The
		 * probe's rate is the path's now. */
		st->mode = VK_MODE_DELAY;
		st->streak = 0;
		st->epoch_rounds = 0;
		st->rate_max[0] = st->rate_max[1] = rate;
		st->rtt_lo[0] = s->rtt;
		st->rtt_lo[1] = 0;		/* the rise unarmed for an epoch */
		st->recall = VK_PLUS_RECALL_ROUNDS;
		st->probe_cwnd = s->cwnd;	/* the window the path looked to carry */
		d->ssthresh = vk_dec1(s->cwnd);
		d->rule = VK_RULE_TO_DELAY;
	} else {
		vk_plus_probe_fail(st, s, d);
	}
	d->mode = st->mode;
	vk_finish(s, d);
}

#endif /* VK_CORE_H */
