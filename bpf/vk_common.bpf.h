/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_common.bpf.h - the machinery every vegaskit controller shares
 * (docs/DESIGN.md §3): per-socket state in icsk_ca_priv, RTT sampling in
 * pkts_acked, one decision per RTT when the ACK passes beg_snd_nxt, Reno
 * outside TCP_CA_Open, restart on idle, loss response, the per-flow view in
 * sk_storage, and the struct_ops callbacks themselves.
 *
 * A variant file defines VK_VARIANT, VK_DEFAULT_PARAMS and VK_CA_NAME, includes
 * this header, and then defines vk_variant_decide(), its once-per-RTT rule.
 *
 * Two struct_ops maps share these programs; vegasctl creates one, by the
 * parameter `calls` (docs/DESIGN.md §3.12): vk_ops, the kernel's usual two
 * calls per ACK (pkts_acked, then cong_avoid) with PRR and pacing left to the
 * kernel; vk_ops_one, one call (cong_control) that does both and the kernel's
 * ACK-path work itself (vk_ack_path.bpf.h). The programs only vk_ops uses are
 * named vk2_*, those only vk_ops_one uses vk1_*: vegasctl loads neither set
 * with the other map, so a kernel without the four-argument cong_control
 * never sees vk1_* (loader/instance.c).
 */
#ifndef VK_COMMON_BPF_H
#define VK_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "vk_intf.h"
#include "vk_core.h"
#include "vk_sock.bpf.h"
#include "vk_ack_path.bpf.h"

char _license[] SEC("license") = "GPL";

#define VK_RTT_INF	0x7fffffffu

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

/*
 * Per-socket state; the kernel zeroes it before init. What every ACK reads comes
 * first, so an ACK between decisions touches one cache line of it and no line of
 * the instance's parameters: a line fewer per call where most calls decide
 * nothing (docs/DESIGN.md §5.1).
 */
struct vk_ca {
	__u64 sum_rtt;		/* us, sum over the current RTT (semantics=paper) */
	__u32 beg_snd_nxt;	/* right edge of the window when this RTT began */
	__u32 base_rtt;		/* us, min over the connection */
	__u32 min_rtt;		/* us, min over the current RTT */
	__u32 cnt_rtt;		/* samples in the current RTT */
	__u8 doing_vegas;	/* 1 in TCP_CA_Open */
	__u8 ss_grow;		/* ss_every_other_rtt: this RTT grows the window */
	__u8 counted;		/* init counted it in vk_stats: release may uncount it */
	__u8 trace;		/* the instance's VK_TRACE_ACKS and VK_TRACE_COST as of this
				 * socket's last decision or enable (docs/DESIGN.md §5.1) */
	__u32 prr_delivered;	/* calls=1: delivered in this reduction (PRR) */
	union {			/* one variant's own state; VK_VARIANT says which */
		struct vk_adapt adapt;	/* vegas_a/pipe: per-socket alpha, beta and Th' */
		__s32 frac;		/* vegas_fr: accumulated fractional window, 1/1024 pkt */
		struct vk_plus plus;	/* vegas_plus: mode, rate maximum, probe */
	};
	/* decisions not yet in the flows record nor the counters (vk_record()) */
	__u64 rec_rules;	/* their rules, VK_RECORD_RULE_BITS each, oldest lowest */
	__u32 rec_us;		/* tcp_mstamp (low 32 bits) of the last write */
	__u8 rec_held;		/* how many */
	__u8 rec_written;	/* written at least once since init */
};
/* the trace bits a socket copies: what its per-ACK path and its decisions test */
#define VK_TRACE_SOCKET	(VK_TRACE_ACKS | VK_TRACE_COST)
_Static_assert(sizeof(struct vk_ca) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "struct vk_ca must fit icsk_ca_priv (104 bytes)");
_Static_assert(VK_NR_RULES <= (1 << VK_RECORD_RULE_BITS) &&
	       VK_RECORD_BATCH * VK_RECORD_RULE_BITS <= 64, "held-back rules must fit rec_rules");

/* Parameters of this instance: one mutable, pinned, retunable map. */
struct vk_params vk_params SEC(".data.params") = {
	.magic = VK_PARAMS_MAGIC,
	.variant = VK_VARIANT,
	.loss_cut = 2,
	.alpha_max = 64,
	.calls = 2,
	.keep_base_rtt = 1,
	.idle_relearn = 1,
	.th_tie_milli = VK_TH_TIE_MILLI_DEFAULT,
	VK_DEFAULT_PARAMS
};

#include "vk_flows_map.bpf.h"

/* This instance's counters (struct vk_stats); vegasctl pins it as cc/NAME/stats. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vk_stats);
} vk_stats SEC(".maps");

static __always_inline struct vk_stats *vk_stats_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&vk_stats, &zero);
}

/*
 * Trace records for `vegasctl trace`: the instance's own ring, pinned in its
 * directory by the loader (not by name), so that readers of two instances do not
 * consume each other's records (docs/DESIGN.md §5.1).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VK_TRACE_RING_BYTES);
} vk_events SEC(".maps");

/* Records dropped because the ring was full: reported by `vegasctl trace`. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vk_trace_lost SEC(".maps");

/* Until when tracing may emit (bpf_ktime_get_ns; vk_intf.h: the lease). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vk_trace_until SEC(".maps");

/* The clock while a reader's lease is current, else 0. Asked only once a trace bit
 * is set; a record takes its time from it, one clock read rather than two. */
static __always_inline __u64 vk_trace_clock(void)
{
	__u32 zero = 0;
	__u64 *until = bpf_map_lookup_elem(&vk_trace_until, &zero);
	__u64 now;

	if (!until)
		return 0;
	now = bpf_ktime_get_ns();
	return now < *until ? now : 0;
}

static __always_inline struct tcp_sock *vk_tp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct vk_ca *vk_ca(struct sock *sk)
{
	return (struct vk_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline int vk_after(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq2 - seq1) < 0;
}

/*
 * vegas_plus's competitive mode, per ACK: slow start below ssthresh, then one
 * packet of growth per plus.cnt packets ACKed (vk_plus_cubic_cnt() sets it
 * each round; 0 means cwnd, Reno's rate). Only while the window limits the
 * sender, as the kernel's own controllers grow (tcp_is_cwnd_limited()).
 */
static __always_inline void vk_plus_grow(struct sock *sk, __u32 acked)
{
	struct tcp_sock *tp = vk_tp(sk);
	__u32 cnt = vk_ca(sk)->plus.cnt;
	int ss = vk_in_slow_start(tp->snd_cwnd, tp->snd_ssthresh);

	if (!BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited) &&
	    !(ss && tp->snd_cwnd < 2 * tp->max_packets_out))
		return;
	if (ss) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, cnt ? cnt : tp->snd_cwnd, acked);
}

/* The variant's rule, defined by the variant file after this header. */
static __always_inline void vk_variant_decide(const struct vk_params *p, const struct vk_sample *s,
					      struct vk_ca *ca, struct vk_decision *d);

/* Start a fresh RTT of measurement (tcp_vegas.c vegas_enable()). */
static __always_inline void vk_enable(struct sock *sk)
{
	struct vk_ca *ca = vk_ca(sk);

	ca->doing_vegas = 1;
	ca->trace = vk_params.trace & VK_TRACE_SOCKET;
	ca->beg_snd_nxt = vk_tp(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
	ca->min_rtt = VK_RTT_INF;
}

static __always_inline void vk_reset(struct sock *sk)
{
	struct vk_ca *ca = vk_ca(sk);

	ca->base_rtt = VK_RTT_INF;
	ca->ss_grow = 1;
	/* the variant's own state only: the others share its bytes (a constant branch) */
	if (VK_VARIANT == VK_VEGAS_FR)
		ca->frac = 0;
	else if (VK_VARIANT == VK_VEGAS_PLUS)
		ca->plus = (struct vk_plus){};	/* delay mode, no rate learnt: a new path */
	else	/* Vegas-A/PIPE start each socket at the configured alpha, beta (seed 000, IV) */
		ca->adapt = (struct vk_adapt){ .alpha = vk_params.alpha, .beta = vk_params.beta };
	vk_enable(sk);
}

/* A zeroed record with the flow's identity filled in, or NULL (counted as lost).
 * now: vk_trace_clock()'s. */
static __always_inline struct vk_event *vk_event_new(struct sock *sk, __u32 type, __u64 now)
{
	struct vk_event *e;
	__u32 zero = 0;
	__u64 *lost;

	e = bpf_ringbuf_reserve(&vk_events, sizeof(*e), 0);
	if (!e) {
		lost = bpf_map_lookup_elem(&vk_trace_lost, &zero);
		if (lost)
			__sync_fetch_and_add(lost, 1);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = now;
	e->type = type;
	vk_fill_id(&e->id, sk);
	e->cwnd = vk_tp(sk)->snd_cwnd;
	e->ssthresh = vk_tp(sk)->snd_ssthresh;
	return e;
}

/*
 * Wake the reader once, when the ring fills past a quarter. A wake-up per record
 * costs an irq_work per ACK at full speed; `vegasctl trace` drains the ring every
 * VK_TRACE_POLL_MS anyway, so only the record that crosses the mark wakes it (the
 * queued bytes count this record's reservation), not every record after it while
 * the reader catches up (docs/DESIGN.md §5.1).
 */
static __always_inline void vk_event_submit(struct vk_event *e)
{
	__u64 queued = bpf_ringbuf_query(&vk_events, BPF_RB_AVAIL_DATA);
	bool crossing = queued >= VK_TRACE_WAKE_BYTES &&
			queued < VK_TRACE_WAKE_BYTES + sizeof(*e) + 8;	/* + its header */

	bpf_ringbuf_submit(e, crossing ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Per-RTT decision record: inputs, the rule that fired and the window after. */
static __always_inline void vk_trace_decision(struct sock *sk, const struct vk_params *p,
					      const struct vk_sample *s,
					      const struct vk_adapt *before,
					      const struct vk_decision *d, __u64 now)
{
	struct vk_event *e = vk_event_new(sk, VK_EV_DECISION, now);

	if (!e)
		return;
	e->cwnd = s->cwnd;
	e->ssthresh = s->ssthresh;
	e->rtt_us = s->rtt;
	e->base_rtt_us = s->base_rtt;
	e->cnt_rtt = s->cnt_rtt;
	e->diff = d->diff;
	e->alpha = d->alpha;
	e->beta = d->beta;
	e->cwnd_after = d->cwnd;
	e->ssthresh_after = d->ssthresh;
	e->rule = d->rule;
	e->th_cmp = d->th_cmp;
	e->th_pkts = vk_th_pkts(p, s);
	e->th_rtt_us = s->rtt;
	e->th_prev_pkts = before->prev_pkts;
	e->th_prev_rtt_us = before->prev_rtt;
	e->sent = s->sent;
	e->outstanding = s->outstanding;
	e->mode = d->mode;
	e->foreign_milli = d->foreign_milli;
	vk_event_submit(e);
}

/* Per-ACK record: the RTT sample as the controller saw it. */
static __always_inline void vk_trace_ack(struct sock *sk, __s32 rtt_us, __u32 in_flight,
					 const struct vk_ca *ca, __u64 now)
{
	struct vk_event *e = vk_event_new(sk, VK_EV_ACK, now);

	if (!e)
		return;
	e->rtt_us = rtt_us;
	e->in_flight = in_flight;
	e->base_rtt_us = ca->base_rtt;
	e->cnt_rtt = ca->cnt_rtt;
	/*
	 * The thresholds the next decision compares with, as its record shows
	 * them: the socket's own for the adaptive variants, the instance's live
	 * parameters for Vegas (a retune applies at once), none for vegas_fr.
	 * VK_VARIANT is a constant: the branch costs nothing at run time.
	 */
	if (VK_VARIANT == VK_VEGAS_A || VK_VARIANT == VK_PIPE) {
		e->alpha = ca->adapt.alpha;
		e->beta = ca->adapt.beta;
	} else if (VK_VARIANT == VK_VEGAS || VK_VARIANT == VK_VEGAS_PLUS) {
		e->alpha = vk_params.alpha;
		e->beta = vk_params.beta;
	}
	vk_event_submit(e);
}

/*
 * The held-back decisions into the socket's record (f; NULL: none to be had) and into
 * the instance's counters (st): their count and their rules, oldest first, and the
 * connection's baseRTT; none held back after it. The counters are per CPU, so no
 * two CPUs share a line; still atomic adds: the ops also run in process context
 * (setsockopt, close, the backlog) where a softirq on the same CPU can run another op
 * between a load and its store.
 */
static __always_inline void vk_flush_held(struct vk_flow *f, struct vk_stats *st,
					  struct vk_ca *ca)
{
	__u64 rules = ca->rec_rules;
	__u32 held = ca->rec_held, rule = 0;
	int i;

	for (i = 0; i < VK_RECORD_BATCH && i < held; i++) {
		rule = rules & ((1u << VK_RECORD_RULE_BITS) - 1);
		rules >>= VK_RECORD_RULE_BITS;
		if (rule >= VK_NR_RULES)
			continue;
		if (f)
			f->rule_count[rule]++;
		if (st)
			__sync_fetch_and_add(&st->rule_count[rule], 1);
	}
	if (f) {
		f->base_rtt_us = ca->base_rtt;
		f->decisions += held;
		if (held)
			f->last_rule = rule;
	}
	if (st && held)
		__sync_fetch_and_add(&st->decisions, held);
	ca->rec_rules = 0;
	ca->rec_held = 0;
}

/*
 * The decision into the socket's vk_flow (what `vegasctl flows` lists, and the
 * baseRTT a swap keeps) and into the instance's vk_stats. Both are cold on paths
 * where decisions are an RTT apart: the record's sk_storage lookup was measured at
 * over half of a decision on one machine, a quarter on another (docs/DESIGN.md
 * §5.1). So a socket holds its decisions back and writes both at its first, then
 * once VK_RECORD_BATCH wait or VK_RECORD_AGE_US has passed (the socket's own ACK
 * clock, no helper call), and its release writes what is left. st: the counters if
 * the caller has them, else NULL.
 */
static __always_inline void vk_record(struct sock *sk, struct vk_ca *ca,
				      const struct vk_sample *s, const struct vk_decision *d,
				      struct vk_stats *st)
{
	__u32 now = (__u32)vk_tp(sk)->tcp_mstamp;
	struct vk_flow *f;

	ca->rec_rules |= (__u64)d->rule << (VK_RECORD_RULE_BITS * ca->rec_held);
	ca->rec_held++;
	if (ca->rec_written && ca->rec_held < VK_RECORD_BATCH &&
	    now - ca->rec_us < VK_RECORD_AGE_US)
		return;
	if (!st)
		st = vk_stats_here();
	f = bpf_sk_storage_get(&vk_flows, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (f) {		/* no memory: the counters still count them */
		f->rtt_us = s->rtt;
		f->diff = d->diff;
		f->cwnd = d->cwnd;
		f->ssthresh = d->ssthresh;
		f->alpha = d->alpha;
		f->beta = d->beta;
		f->variant = VK_VARIANT;
		f->mode = d->mode;
		ca->rec_written = 1;
		ca->rec_us = now;
	}
	vk_flush_held(f, st, ca);
}

/*
 * Packets sent since the round began, the ns-2 agent's rttLen
 * (t_seqno_ - v_begseq_): bytes past beg_snd_nxt in whole segments, a partial
 * one counting as one. cong_avoid runs before this ACK releases new data, as
 * the agent's recv() decides before send_much().
 */
static __always_inline __u32 vk_round_sent(const struct tcp_sock *tp, const struct vk_ca *ca)
{
	__s32 bytes = (__s32)(tp->snd_nxt - ca->beg_snd_nxt);
	__u32 mss = tp->mss_cache;

	if (bytes <= 0 || !mss)
		return 0;
	return ((__u32)bytes + mss - 1) / mss;
}

/* Once per RTT: build the sample, let the variant decide, apply, record. st: the
 * instance's counters when the decision is timed (the record's share of it goes there
 * too, record_ns), else NULL. */
static __always_inline void vk_decide_rtt(struct sock *sk, __u32 ack, __u32 acked,
					  struct vk_stats *st)
{
	struct tcp_sock *tp = vk_tp(sk);
	struct vk_ca *ca = vk_ca(sk);
	struct vk_params p = vk_params;	/* one consistent read per decision */
	struct vk_decision d = {};
	struct vk_sample s = {
		.cwnd = tp->snd_cwnd,
		.ssthresh = tp->snd_ssthresh,
		.cwnd_clamp = tp->snd_cwnd_clamp,
		.base_rtt = ca->base_rtt,
		.rtt = vk_round_rtt(p.semantics, ca->min_rtt, ca->sum_rtt, ca->cnt_rtt),
		.cnt_rtt = ca->cnt_rtt,
		.acked = acked,
		.ss_grow = ca->ss_grow,
		.mss = tp->mss_cache,
		.sent = vk_round_sent(tp, ca),
		.outstanding = tp->packets_out,
	};

	if (VK_VARIANT == VK_VEGAS_PLUS) {	/* a constant: the others skip the reads */
		s.now_ms = (__u32)(tp->tcp_mstamp / 1000);
		s.delivered = tp->rate_delivered;
		s.interval_us = tp->rate_interval_us;
	}

	/* Th' as the record shows it: the adaptive variants' own, none for the others
	 * (their bytes of the union are another variant's state) */
	struct vk_adapt before = {};

	if (VK_VARIANT == VK_VEGAS_A || VK_VARIANT == VK_PIPE)
		before = ca->adapt;

	ca->beg_snd_nxt = tp->snd_nxt;	/* the extent of the next RTT */
	ca->trace = p.trace & VK_TRACE_SOCKET;
	vk_variant_decide(&p, &s, ca, &d);
	if (d.rule == VK_RULE_RENO || d.rule == VK_RULE_COMPETE) {
		if (d.rule == VK_RULE_COMPETE)
			vk_plus_grow(sk, acked);
		else
			tcp_reno_cong_avoid(sk, ack, acked);
		d.cwnd = tp->snd_cwnd;
		d.ssthresh = tp->snd_ssthresh;
	} else {
		tp->snd_cwnd = d.cwnd;
		tp->snd_ssthresh = d.ssthresh;
	}
	if (st) {
		__u64 r0 = bpf_ktime_get_ns();

		vk_record(sk, ca, &s, &d, st);
		__sync_fetch_and_add(&st->record_ns, bpf_ktime_get_ns() - r0);
	} else {
		vk_record(sk, ca, &s, &d, NULL);
	}
	if (p.trace & VK_TRACE_DECISIONS) {
		__u64 now = vk_trace_clock();

		if (now)
			vk_trace_decision(sk, &p, &s, &before, &d, now);
	}
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
	ca->min_rtt = VK_RTT_INF;
	ca->ss_grow ^= 1;
}

/*
 * A decision, timed while `vegasctl trace --cost` holds the lease: the BPF run-time
 * statistics give a call's cost, not a decision's, and a decision's cost differs with
 * how long ago the last one ran (docs/DESIGN.md §5.1). Beside it, two clock reads back
 * to back time one read, which the reader takes out of each decision's time (twice:
 * the flows record inside it is timed too, and its own read once). The test
 * reads the socket's copy of the bit, so the parameters' line, a decision's first
 * read, stays inside the timing.
 */
static __always_inline void vk_decide(struct sock *sk, __u32 ack, __u32 acked)
{
	bool timed = (vk_ca(sk)->trace & VK_TRACE_COST) && vk_trace_clock();
	struct vk_stats *st = NULL;
	__u64 t0 = 0, t1, c0;

	if (timed) {
		t0 = bpf_ktime_get_ns();
		st = vk_stats_here();	/* the decision's own lookup, when it counts */
	}
	vk_decide_rtt(sk, ack, acked, st);
	if (!st)
		return;
	t1 = bpf_ktime_get_ns();
	c0 = bpf_ktime_get_ns();
	c0 = bpf_ktime_get_ns() - c0;
	__sync_fetch_and_add(&st->decisions_timed, 1);
	__sync_fetch_and_add(&st->decision_ns, t1 - t0);
	__sync_fetch_and_add(&st->clock_ns, c0);
}

/*
 * A new socket, or one moved onto this controller (a swap re-runs init with
 * icsk_ca_priv zeroed). A socket that a vegaskit controller has decided for
 * before has its baseRTT in sk_storage: relearning it under a standing queue
 * would take the queue for propagation delay, the persistent-congestion
 * problem of seeds 000 (section II) and 001. So keep it, unless told not to.
 */
SEC("struct_ops")
void BPF_PROG(vk_init, struct sock *sk)
{
	struct tcp_sock *tp = vk_tp(sk);
	struct vk_stats *st = vk_stats_here();
	struct vk_flow *f;

	vk_reset(sk);
	if (st) {
		__sync_fetch_and_add(&st->inits, 1);
		/* a new connection starts here before any data: one with data is a move
		 * (an active Fast Open's SYN data counts too: it shows as a move) */
		if (tp->bytes_sent || tp->bytes_received)
			__sync_fetch_and_add(&st->moved_in, 1);
		vk_ca(sk)->counted = 1;
	}
	if (!vk_params.keep_base_rtt)
		return;
	f = bpf_sk_storage_get(&vk_flows, sk, 0, 0);
	if (f && f->base_rtt_us && f->base_rtt_us < VK_RTT_INF)
		vk_ca(sk)->base_rtt = f->base_rtt_us;
}

/* What cong_avoid does (the kernel calls it where the state lets the window grow). */
static __always_inline void vk_grow(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = vk_tp(sk);
	struct vk_ca *ca = vk_ca(sk);

	if (!ca->doing_vegas) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (vk_after(ack, ca->beg_snd_nxt)) {
		vk_decide(sk, ack, acked);
	} else if (VK_VARIANT == VK_VEGAS_PLUS && ca->plus.mode == VK_MODE_COMPETE) {
		vk_plus_grow(sk, acked);		/* competitive mode: CUBIC per ACK */
	} else if (vk_in_slow_start(tp->snd_cwnd, tp->snd_ssthresh) &&
		   (!vk_params.ss_every_other_rtt || ca->ss_grow)) {
		tp->snd_cwnd = vk_slow_start(tp->snd_cwnd, tp->snd_ssthresh, acked,
					     tp->snd_cwnd_clamp);
	}
}

SEC("struct_ops")
void BPF_PROG(vk2_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	vk_grow(sk, ack, acked);
}

/* What pkts_acked does with each ACK's RTT sample; the clock if the ACK is to be
 * traced, else 0 (the caller reads in_flight only then: tracing off costs one load,
 * from the socket's own line; per-ACK tracing switched on or off reaches a socket at
 * its next decision or entry to Open, docs/DESIGN.md §5.1). */
static __always_inline __u64 vk_ack_rtt(struct sock *sk, __s32 rtt_us)
{
	struct vk_ca *ca = vk_ca(sk);

	vk_rtt_sample(&ca->base_rtt, &ca->min_rtt, &ca->sum_rtt, &ca->cnt_rtt, rtt_us);
	return (ca->trace & VK_TRACE_ACKS) ? vk_trace_clock() : 0;
}

SEC("struct_ops")
void BPF_PROG(vk2_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	__u64 now = vk_ack_rtt(sk, sample->rtt_us);

	if (now)
		vk_trace_ack(sk, sample->rtt_us, sample->in_flight, vk_ca(sk), now);
}

/* Vegas logic only in TCP_CA_Open; Reno in CWR, Recovery and Loss. */
static __always_inline void vk_state(struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vk_enable(sk);
	else
		vk_ca(sk)->doing_vegas = 0;
}

SEC("struct_ops")
void BPF_PROG(vk2_set_state, struct sock *sk, __u8 new_state)
{
	vk_state(sk, new_state);
}

/*
 * calls=1: the ACK's RTT sample (rs->rtt_us is the sample pkts_acked gets:
 * tcp_clean_rtx_queue() puts it in the rate sample), then what
 * tcp_cong_control() does for a controller without cong_control: PRR in CWR
 * and Recovery, else cong_avoid where the ACK may raise the window, and the
 * pacing rate. The one difference from calls=2 in what the rule sees: an ACK
 * that ends a recovery counts its RTT sample in the round vk_enable() opens,
 * where pkts_acked, running before the state changes, counted it in the round
 * that is then discarded.
 */
SEC("struct_ops")
void BPF_PROG(vk1_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = vk_tp(sk);
	__u64 now = vk_ack_rtt(sk, rs->rtt_us);

	if (now)	/* in_flight as ack_sample has it */
		vk_trace_ack(sk, rs->rtt_us, tp->mss_cache * (tp->delivered - rs->prior_delivered),
			     vk_ca(sk), now);
	if (vk_ap_in_reduction(sk)) {
		vk_ap_prr(sk, &vk_ca(sk)->prr_delivered, flag, rs);
	} else if (vk_ap_may_raise(sk, flag)) {
		vk_grow(sk, ack, rs->acked_sacked);
		tp->snd_cwnd_stamp = (__u32)bpf_jiffies64();	/* tcp_cong_avoid() */
	}
	vk_ap_pacing(sk);
}

SEC("struct_ops")
void BPF_PROG(vk1_set_state, struct sock *sk, __u8 new_state)
{
	vk_ap_set_state(sk, new_state, &vk_ca(sk)->prr_delivered);
	vk_state(sk, new_state);
}

/*
 * Restart after idle, or sending from nothing in flight: the path may have
 * changed, relearn (tcp_vegas.c). ns-2's agent has no such event, and with
 * idle_relearn=0 neither do we: a bulk flow whose window empties keeps its
 * baseRTT (docs/DESIGN.md §3.10, item 11).
 * A retransmission timeout with loss_cut=4: the kernel has just set ssthresh
 * from vk_ssthresh() (3/4 of cwnd, the duplicate-ACK cut) and tells us
 * CA_EVENT_LOSS before it collapses cwnd. Original Vegas halves ssthresh on a
 * timeout (ns-2 tcp-vegas.cc timeout(): CLOSE_SSTHRESH_HALF; seed 001,
 * footnote 3: ssthresh is W0/2 after a TO), so we halve it here.
 */
SEC("struct_ops")
void BPF_PROG(vk_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START) {
		/* vegas_plus away from delay mode keeps all: the queue is a competitor's,
		 * a baseRTT relearned behind it would pass the next probe on a full
		 * buffer, and its mode changes only at a decision, with its record.
		 * TX_START also fires when a recovery has marked every segment lost
		 * (docs/DESIGN.md §3.11) */
		if (vk_params.idle_relearn &&
		    (VK_VARIANT != VK_VEGAS_PLUS || vk_ca(sk)->plus.mode == VK_MODE_DELAY))
			vk_reset(sk);
	} else if (event == CA_EVENT_LOSS && vk_params.loss_cut == 4)
		vk_tp(sk)->snd_ssthresh = vk_loss_ssthresh(vk_tp(sk)->snd_cwnd, 2);
}

SEC("struct_ops")
__u32 BPF_PROG(vk_ssthresh, struct sock *sk)
{
	if (VK_VARIANT == VK_VEGAS_PLUS)
		return vk_plus_loss(&vk_ca(sk)->plus, vk_tp(sk)->snd_cwnd, vk_params.loss_cut);
	return vk_loss_ssthresh(vk_tp(sk)->snd_cwnd, vk_params.loss_cut);
}

/* Closed or moved away (the kernel calls release on both, even for a socket
 * never initialised: counted says whether init saw it). The decisions held back
 * go into the record and the counters now, so a swap's next init finds the
 * baseRTT as it stands. */
SEC("struct_ops")
void BPF_PROG(vk_release, struct sock *sk)
{
	struct vk_ca *ca = vk_ca(sk);
	struct vk_stats *st;
	struct vk_flow *f;

	if (!ca->counted)
		return;
	st = vk_stats_here();
	if (ca->rec_held) {
		f = bpf_sk_storage_get(&vk_flows, sk, 0, 0);
		vk_flush_held(f, st, ca);
	}
	if (st)
		__sync_fetch_and_add(&st->releases, 1);
}

SEC("struct_ops")
__u32 BPF_PROG(vk_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

/* What both forms share; vegasctl may rename the controller before registering. */
#define VK_OPS_SHARED						\
	.init		= (void *)vk_init,			\
	.ssthresh	= (void *)vk_ssthresh,			\
	.cwnd_event	= (void *)vk_cwnd_event,		\
	.undo_cwnd	= (void *)vk_undo_cwnd,			\
	.release	= (void *)vk_release,			\
	.name		= VK_CA_NAME

/* calls=2: the kernel's usual two calls per ACK. */
SEC(".struct_ops.link")
struct tcp_congestion_ops vk_ops = {
	VK_OPS_SHARED,
	.pkts_acked	= (void *)vk2_pkts_acked,
	.cong_avoid	= (void *)vk2_cong_avoid,
	.set_state	= (void *)vk2_set_state,
};

/* calls=1: the same controller in one call per ACK (Linux >= 6.10). */
SEC(".struct_ops.link")
struct tcp_congestion_ops vk_ops_one = {
	VK_OPS_SHARED,
	.cong_control	= (void *)vk1_cong_control,
	.set_state	= (void *)vk1_set_state,
};

#endif /* VK_COMMON_BPF_H */
