/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_intf.h - the one contract between the BPF controllers and userspace
 * (vegasctl, the tests, the trace tools). Everything both sides must agree on
 * lives here and nowhere else: parameter layout, variant ids, decision rules,
 * per-flow storage and trace records.
 *
 * Only fixed-width types, so the file compiles against vmlinux.h (BPF) and
 * against <linux/types.h> (userspace).
 */
#ifndef VK_INTF_H
#define VK_INTF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* "VKP8": layout version 8, of the parameters and the trace record alike (vegasctl
 * refuses an instance of another version, and switches no tracing on for it) */
#define VK_PARAMS_MAGIC		0x564b5038u
#define VK_NAME_MAX		16		/* TCP_CA_NAME_MAX, with the NUL */

/*
 * The lists below are the one place each set of names is written. C expands
 * them with an X macro; the build generates the Python constants from these
 * lines (tools/gen_intf.py), so keep one X(...) per line.
 *
 * Variants: id, vegasctl's name (the BPF object is bpf/bpf_NAME.bpf.c and the
 * default controller name bpf_NAME), and where its rule comes from
 * (docs/references.md).
 */
#define VK_VARIANTS(X)								\
	X(VK_VEGAS,	vegas,		"Brakmo/Peterson as in Linux tcp_vegas.c")	\
	X(VK_VEGAS_A,	vegas_a,	"Vegas-A (Srijith, Jacob, Ananda), section IV")\
	X(VK_PIPE,	pipe,		"TCP PIPE (Seshadri, Penchalaiah), section IV")\
	X(VK_VEGAS_FR,	vegas_fr,	"byte-based proportional Vegas (Improving the Fairness ... of TCP-Vegas)")\
	X(VK_VEGAS_PLUS, vegas_plus,	"ours: Vegas band, a competitive mode against buffer-fillers (docs/DESIGN.md 3.11)")

#define VK_ENUM_ID(id, ...) id,
enum vk_variant {
	VK_VARIANTS(VK_ENUM_ID)
	VK_NR_VARIANTS,
};

/* Which rule of a per-RTT decision fired (trace records, counters, tests). */
#define VK_RULES(X)								\
	X(VK_RULE_NONE,		none,		"not a decision point")		\
	X(VK_RULE_RENO,		reno,		"<= 2 RTT samples in the last RTT: Reno growth") \
	X(VK_RULE_SS_GROW,	ss_grow,	"slow start, diff <= gamma: keep growing") \
	X(VK_RULE_SS_FREEZE,	ss_freeze,	"slow start, the RTT without growth (ss_every_other_rtt)") \
	X(VK_RULE_SS_EXIT,	ss_exit,	"slow start, diff > gamma: cwnd <= target+1, leave") \
	X(VK_RULE_INC,		inc,		"cwnd + 1")			\
	X(VK_RULE_DEC,		dec,		"cwnd - 1")			\
	X(VK_RULE_HOLD,		hold,		"cwnd unchanged")		\
	X(VK_RULE_INC_ADAPT,	inc_adapt,	"vegas_a/pipe: cwnd+1, alpha+1, beta+1") \
	X(VK_RULE_DEC_ADAPT,	dec_adapt,	"vegas_a/pipe: cwnd-1, alpha-1, beta-1") \
	X(VK_RULE_PROP,		prop,		"vegas_fr: proportional step k*(R-Q)/mss") \
	X(VK_RULE_TO_COMPETE,	to_compete,	"vegas_plus: a foreign queue above foreign_max for 3 rounds: competitive mode") \
	X(VK_RULE_TO_COMPETE_DELAY, to_compete_delay, "vegas_plus: queueing delay >= base/2 with <= 2*beta of ours, 3 rounds: competitive mode") \
	X(VK_RULE_RECALL,	recall,		"vegas_plus: within 64 rounds of a passed probe, a competitor (or the band shed a quarter of the probe's window): competitive, the probe's saved window back") \
	X(VK_RULE_COMPETE,	compete,	"vegas_plus, competitive mode: CUBIC's growth (RFC 9438)") \
	X(VK_RULE_PROBE,	probe,		"vegas_plus, competitive mode: drain to the delay-mode window, two rounds") \
	X(VK_RULE_PROBE_FAIL,	probe_fail,	"vegas_plus: the probe's backlog stayed above beta+1, or its rate under 3/4 of the best: window restored, competitive") \
	X(VK_RULE_TO_DELAY,	to_delay,	"vegas_plus: the probe drained the queue to beta+1 of ours: delay mode") \
	X(VK_RULE_TO_COMPETE_RISE, to_compete_rise, "vegas_plus: the round's RTT rise% above its lowest of the last 1-2 rate epochs, 3 rounds: competitive mode")

enum vk_rule {
	VK_RULES(VK_ENUM_ID)
	VK_NR_RULES,
};

/*
 * How a per-RTT decision reads its measurements (docs/DESIGN.md §3.10). exact:
 * the round's minimum RTT and exact fractions of cwnd (Linux tcp_vegas.c);
 * paper: the papers' ns-2 agent, i.e. the round's average RTT, diff from the
 * packets outstanding and the packets sent in the round, rounded to a whole
 * packet, and Th (sent/rtt) compared at half a packet per round. vegas_fr
 * takes only the average RTT (its paper defines the rest with cwnd).
 */
#define VK_SEMANTICS(X)								\
	X(VK_SEM_EXACT,		exact,		"min RTT of the round, exact fractions (Linux)") \
	X(VK_SEM_PAPER,		paper,		"the ns-2 agent: average RTT, its counts, rounded diff")

enum vk_semantics {
	VK_SEMANTICS(VK_ENUM_ID)
	VK_NR_SEMANTICS,
};

/* vegas_plus's modes (docs/DESIGN.md §3.11); every other variant is always in delay. */
#define VK_MODES(X)								\
	X(VK_MODE_DELAY,	delay,		"the Vegas band on its own backlog") \
	X(VK_MODE_COMPETE,	compete,	"CUBIC's growth and cut, against a buffer-filling flow") \
	X(VK_MODE_PROBE,	probe,		"two rounds at the delay-mode window: is the queue still foreign?")

enum vk_mode {
	VK_MODES(VK_ENUM_ID)
	VK_NR_MODES,
};

/* The kernel's congestion states (enum tcp_ca_state), by value, as we print them. */
#define VK_CA_STATES(X)								\
	X(VK_CA_OPEN,		open,		"TCP_CA_Open")			\
	X(VK_CA_DISORDER,	disorder,	"TCP_CA_Disorder")		\
	X(VK_CA_CWR,		cwr,		"TCP_CA_CWR")			\
	X(VK_CA_RECOVERY,	recovery,	"TCP_CA_Recovery")		\
	X(VK_CA_LOSS,		loss,		"TCP_CA_Loss")

enum vk_ca_state {
	VK_CA_STATES(VK_ENUM_ID)
	VK_NR_CA_STATES,
};

/*
 * Where vegasctl pins what outlives it (root-only): one directory per
 * instance under VK_PIN_ROOT/cc/. bpffs refuses '.' in names, which
 * controller names may contain, so a directory spells '.' as VK_PIN_DOT, a
 * character names cannot contain.
 */
#define VK_PIN_ROOT	"/sys/fs/bpf/vegaskit"
#define VK_PIN_DOT	'+'

/* vegas_plus's compete_ss: what a detection's switch to competitive mode does to
 * the window (docs/DESIGN.md §3.11) */
enum vk_plus_ss {
	VK_PLUS_SS_NONE,	/* CUBIC's growth from the window delay mode left */
	VK_PLUS_SS_TO_LOSS,	/* slow start until the first loss */
	VK_PLUS_SS_CAPPED,	/* slow start up to the window of the best rate seen */
};

/* th_tie_milli's default: Th ties within half a packet per round (docs/DESIGN.md §3.10) */
#define VK_TH_TIE_MILLI_DEFAULT	500

/* vegas_plus's rate_epoch: delay-mode rounds in an epoch of the rate maximum
 * (docs/DESIGN.md §3.11); the per-socket counter is 16 bits */
#define VK_PLUS_RATE_EPOCH_DEFAULT	64
#define VK_PLUS_RATE_EPOCH_MIN		8
#define VK_PLUS_RATE_EPOCH_MAX		4096

/* vegas_plus: a sign of a competitor held this many delay-mode rounds in a row is one
 * (docs/DESIGN.md §3.11); analysis.riseruns replays the rule with it */
#define VK_PLUS_DETECT_ROUNDS		3

/*
 * Parameters of one registered controller instance. Lives in the object's
 * ".data.params" map (one element), pinned so that `vegasctl set` can retune a
 * running controller; every per-RTT decision reads it afresh, so a retune
 * applies at the next decision of every socket.
 */
struct vk_params {
	__u32 magic;		/* VK_PARAMS_MAGIC */
	__u32 variant;		/* enum vk_variant, fixed at build time */
	__u32 alpha;		/* packets; vegas_a/pipe: initial per-socket alpha */
	__u32 beta;		/* packets; vegas_a/pipe: initial per-socket beta */
	__u32 gamma;		/* packets: slow-start exit threshold */
	__u32 alpha_max;	/* vegas_a/pipe: cap on the adaptive alpha */
	__u32 ss_every_other_rtt; /* 1: original Vegas slow start (seed 001, 2.1) */
	__u32 loss_cut;		/* 2: halve on loss (Linux); 4: cut by 1/4 (seed 001) */
	__u32 ref_bytes;	/* vegas_fr: reference R, bytes */
	__u32 gain_milli;	/* vegas_fr: k in thousandths, (0, 1000] */
	__u32 generation;	/* bumped by every retune */
	__u32 ca_flags;		/* tcp_congestion_ops.flags given at load (informational) */
	__u32 trace;		/* VK_TRACE_* bits, set by `vegasctl trace`; 0: no cost */
	__u32 keep_base_rtt;	/* 1: a socket moved here from another vegaskit
				 * controller keeps its baseRTT (sk_storage) */
	__u32 ops_map_id;	/* set by vegasctl: the struct_ops map these params
				 * belong to (detects an interrupted --replace) */
	__u32 semantics;	/* enum vk_semantics */
	__u32 half_packet;	/* vegas_fr: 1 adds mss/2 to Q (seed 004, section V) */
	__u32 th_tie_milli;	/* vegas_a/pipe, semantics=paper: Th ties within this
				 * many thousandths of a packet per round */
	__u32 foreign_max;	/* vegas_plus: packets of foreign queue that, held for
				 * 3 rounds, mean a buffer-filling competitor */
	__u32 compete;		/* vegas_plus: 0 never leaves delay mode (the ablation) */
	__u32 idle_relearn;	/* 1: sending from nothing in flight or after idle
				 * relearns baseRTT (tcp_vegas.c); 0: keeps it (ns-2) */
	__u32 compete_ss;	/* vegas_plus, entering competitive mode on a detection:
				 * 1 slow start to the first loss; 2 slow start up to the
				 * window of the best rate seen; 0 none (VK_PLUS_SS_*) */
	__u32 rate_epoch;	/* vegas_plus: delay-mode rounds in an epoch of the rate
				 * maximum, which forgets after two (VK_PLUS_RATE_EPOCH_*) */
	__u32 rise;		/* vegas_plus: percent by which the round's RTT, held 3
				 * rounds, above its lowest of the last one or two rate
				 * epochs means a loss-based flow's sawtooth; 0: off */
	__u32 calls;		/* struct_ops calls per ACK, fixed at load: 2 pkts_acked
				 * and cong_avoid (the kernel does PRR and pacing); 1
				 * cong_control, which does them (Linux >= 6.10) */
};

/* What the controllers emit into their ring buffers (vk_events, one an instance). */
#define VK_TRACE_DECISIONS	0x1	/* one record per per-RTT decision */
#define VK_TRACE_ACKS		0x2	/* one record per ACK with an RTT sample */
/* no records: each decision timed into vk_stats (`vegasctl trace --cost`) */
#define VK_TRACE_COST		0x4
#define VK_TRACE_BITS		(VK_TRACE_DECISIONS | VK_TRACE_ACKS | VK_TRACE_COST)
/*
 * Tracing also needs a lease: the controllers emit only while
 * bpf_ktime_get_ns() < vk_trace_until[0], which `vegasctl trace` pushes
 * VK_TRACE_LEASE_NS ahead every time it polls. A reader that dies (SIGKILL)
 * stops all tracing within the lease, whatever trace bits it left set.
 */
#define VK_TRACE_LEASE_NS	1000000000ull
/*
 * The trace ring (8 MiB) wakes its reader only past a quarter full; the reader
 * drains it every VK_TRACE_POLL_MS without being woken (docs/DESIGN.md §5.1).
 */
#define VK_TRACE_RING_BYTES	(8u << 20)
#define VK_TRACE_WAKE_BYTES	(VK_TRACE_RING_BYTES / 4)
#define VK_TRACE_POLL_MS	50

enum vk_event_type {
	VK_EV_ACK	= 1,
	VK_EV_DECISION	= 2,
};

/*
 * Per-connection view kept in sk_storage (get_info is not allowed for BPF CCs).
 * A socket writes it at its first decision, then once VK_RECORD_BATCH decisions
 * wait or VK_RECORD_AGE_US has passed since the last write, whichever is first,
 * and at release (its counts and baseRTT): a write is a cold sk_storage lookup,
 * measured at over half of a decision on one machine and a quarter on another
 * (docs/DESIGN.md §5.1). The fields of "the last decision" are those of the last
 * decision written.
 */
#define VK_RECORD_BATCH		12		/* the decisions a socket holds back, at most */
#define VK_RECORD_RULE_BITS	5		/* a held-back decision's rule */
#define VK_RECORD_AGE_US	250000u		/* the oldest a record gets while its socket decides */

struct vk_flow {
	__u32 base_rtt_us;	/* min RTT over the connection; survives a swap */
	__u32 rtt_us;		/* RTT used by the last decision written */
	__s32 diff;		/* last diff: packets (vegas family) or bytes (vegas_fr) */
	__u32 cwnd;
	__u32 ssthresh;
	__u32 alpha;
	__u32 beta;
	__u32 variant;
	__u32 last_rule;
	__u32 mode;		/* enum vk_mode (vegas_plus; delay for the others) */
	__u64 decisions;
	__u64 rule_count[VK_NR_RULES];
};

/*
 * An instance's counters, for `vegasctl metrics` (docs/DESIGN.md §4.9): one
 * per CPU, summed by the reader; pinned as cc/NAME/stats and kept across a
 * `load --replace`, so old and new code count into the same totals.
 */
struct vk_stats {
	__u64 inits;		/* sockets that started on it or were moved onto it */
	__u64 moved_in;		/* of them: moved onto it with data already sent or received */
	__u64 releases;		/* of them: closed, or moved away */
	__u64 decisions;	/* per-RTT decisions */
	__u64 rule_count[VK_NR_RULES];
	/* VK_TRACE_COST: decisions timed, their time, the share of it in the flows
	 * record (sk_storage) and, timed beside each, one clock read's (taken out by
	 * the reader; docs/DESIGN.md §5.1) */
	__u64 decisions_timed;
	__u64 decision_ns;
	__u64 record_ns;
	__u64 clock_ns;
};

/* Which connection: the identity shared by trace records and `vegasctl flows`. */
struct vk_flow_id {
	__u32 netns;		/* network namespace inode number */
	__u16 family;
	__u8 ca_state;		/* TCP_CA_Open = 0, ... */
	__u8 pad;
	__u8 saddr[16];		/* IPv4-mapped IPv6 for AF_INET */
	__u8 daddr[16];
	__u16 sport;		/* host order */
	__u16 dport;
	char ca[VK_NAME_MAX];	/* the controller instance */
};

/* One line of `vegasctl flows`, written by the sk_storage iterator. */
struct vk_flow_rec {
	struct vk_flow_id id;
	__u32 snd_cwnd;		/* the socket's, now */
	__u32 srtt_us;
	struct vk_flow flow;
};

/*
 * Which connections a command looks at: the FILTER options of `flows`,
 * `trace` and `swap`. One struct and one match (bpf/vk_filter.h), compiled
 * into the swap iterator and into vegasctl alike.
 */
#define VK_FILTER_MAX_CC	16

struct vk_filter {
	__s32 lport, rport;	/* -1: any */
	__s32 port;		/* either end; -1: any */
	__u32 has_addr;
	__u8 addr[16];		/* either end; IPv4-mapped for IPv4 */
	__u32 netns;		/* inode; 0: any */
	__u32 ncc;		/* 0: any controller */
	char cc[VK_FILTER_MAX_CC][VK_NAME_MAX];
};

/* What `vegasctl swap` moves (the swap iterator's .data). */
struct vk_swap_cfg {
	char target[VK_NAME_MAX];	/* controller to move sockets onto */
	struct vk_filter filter;	/* which sockets (--from is its controller list) */
	__u32 count_only;		/* 1: move nothing; "moved" counts sockets not on
					 * target's name (apply's plan, docs/DESIGN.md §4.7) */
};

enum vk_swap_result {
	VK_SWAP_MOVED = 0,	/* now on target */
	VK_SWAP_ALREADY = 1,	/* was on target */
	VK_SWAP_FAILED = 2,	/* bpf_setsockopt refused (errno in err) */
	VK_SWAP_UPGRADED = 3,	/* was on target's name but older code (load --replace): now
				 * on the code registered under it */
};

/* One record per socket the swap iterator considered (after filtering). */
struct vk_swap_rec {
	struct vk_flow_id id;	/* id.ca: the controller before the swap */
	__u32 result;		/* enum vk_swap_result */
	__s32 err;
};

/*
 * One trace record. Addresses are IPv4-mapped IPv6 for AF_INET flows, so one
 * layout serves both families. Th of this decision and Th' of the previous one
 * come as their two terms, packets over microseconds: the reader divides
 * (vk_event_th_milli), not the ACK path.
 */
struct vk_event {
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 type;		/* enum vk_event_type */
	__s32 th_cmp;		/* decision: sign of Th - Th' as the rule saw it */
	struct vk_flow_id id;
	__u32 cwnd;		/* before the decision / at the ACK */
	__u32 ssthresh;
	__u32 in_flight;	/* ACK: ack_sample.in_flight */
	__s32 rtt_us;		/* ACK: the sample; decision: the round's RTT the rule used */
	__u32 base_rtt_us;
	__u32 cnt_rtt;		/* decision: samples in the RTT */
	__s32 diff;		/* decision: packets (bytes for vegas_fr) */
	__u32 alpha;
	__u32 beta;
	__u32 cwnd_after;
	__u32 ssthresh_after;
	__u32 rule;		/* enum vk_rule */
	__u32 th_pkts;		/* decision: Th = th_pkts / th_rtt_us (paper: sent/rtt) */
	__u32 th_rtt_us;
	__u32 th_prev_pkts;	/* Th' alike */
	__u32 th_prev_rtt_us;
	__u32 sent;		/* decision: packets sent in the round (ns-2 rttLen) */
	__u32 outstanding;	/* decision: tp->packets_out after the ACK */
	__u32 mode;		/* decision: enum vk_mode after it (vegas_plus) */
	__s32 foreign_milli;	/* decision: vegas_plus's foreign queue, packets x 1000 */
};

/* A record's Th in packets per second x 1000, as the trace prints it; 0 without an RTT. */
static inline __u64 vk_event_th_milli(__u32 pkts, __u32 rtt_us)
{
	return rtt_us ? (__u64)pkts * 1000000000ull / rtt_us : 0;
}

#endif /* VK_INTF_H */
