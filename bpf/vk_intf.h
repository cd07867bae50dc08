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

#define VK_PARAMS_MAGIC		0x564b5031u	/* "VKP1": layout version 1 */
#define VK_NAME_MAX		16		/* TCP_CA_NAME_MAX, with the NUL */

enum vk_variant {
	VK_VEGAS	= 0,	/* Brakmo/Peterson as in Linux tcp_vegas.c */
	VK_VEGAS_A	= 1,	/* seed 000, section IV */
	VK_PIPE		= 2,	/* seed 002, section IV */
	VK_VEGAS_FR	= 3,	/* seed 004 */
	VK_NR_VARIANTS,
};

/* Which rule of a per-RTT decision fired (trace records, counters, tests). */
enum vk_rule {
	VK_RULE_NONE = 0,	/* not a decision point */
	VK_RULE_RENO,		/* <= 2 RTT samples in the last RTT: Reno growth */
	VK_RULE_SS_GROW,	/* slow start, diff <= gamma: keep growing */
	VK_RULE_SS_FREEZE,	/* slow start, the RTT without growth (ss_every_other_rtt) */
	VK_RULE_SS_EXIT,	/* slow start, diff > gamma: cwnd <= target+1, leave */
	VK_RULE_INC,		/* cwnd + 1 */
	VK_RULE_DEC,		/* cwnd - 1 */
	VK_RULE_HOLD,		/* cwnd unchanged */
	VK_RULE_INC_ADAPT,	/* vegas_a/pipe: cwnd+1, alpha+1, beta+1 */
	VK_RULE_DEC_ADAPT,	/* vegas_a/pipe: cwnd-1, alpha-1, beta-1 */
	VK_RULE_PROP,		/* vegas_fr: proportional step k*(R-Q)/mss */
	VK_NR_RULES,
};

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
};

/* Per-connection view kept in sk_storage (get_info is not allowed for BPF CCs). */
struct vk_flow {
	__u32 base_rtt_us;	/* min RTT over the connection; survives a swap */
	__u32 rtt_us;		/* RTT used by the last decision */
	__s32 diff;		/* last diff: packets (vegas family) or bytes (vegas_fr) */
	__u32 cwnd;
	__u32 ssthresh;
	__u32 alpha;
	__u32 beta;
	__u32 variant;
	__u32 last_rule;
	__u32 pad;
	__u64 decisions;
	__u64 rule_count[VK_NR_RULES];
};

#endif /* VK_INTF_H */
