// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_rtt - the second floor of `make bench`'s per-call cost stage
 * (docs/DESIGN.md §9.1): vk_reno_min plus the one thing every delay-based
 * controller must do on each ACK, keep the smallest RTT sample (pkts_acked).
 * tcp_vegas.c and each of ours pay a second struct_ops call per ACK for it, a
 * fixed cost of the hook that vk_reno_min, with one call per ACK, does not
 * show. Built for the bench only; the bench registers it with bpftool.
 */
#define RF_MIN_RTT
#include "reno_floor.bpf.h"

SEC("struct_ops")
void BPF_PROG(rr_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	rf_rtt_sample(sk, sample->rtt_us);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_rtt = {
	.init		= (void *)rf_init,
	.cong_avoid	= (void *)rf_cong_avoid,
	.pkts_acked	= (void *)rr_pkts_acked,
	.ssthresh	= (void *)rf_ssthresh,
	.undo_cwnd	= (void *)rf_undo_cwnd,
	.name		= "vk_reno_rtt",
};
