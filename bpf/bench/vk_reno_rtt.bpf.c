// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_rtt - the second floor of `make bench`'s per-call cost stage
 * (docs/DESIGN.md §9.1): vk_reno_min plus the one thing every delay-based
 * controller must do on each ACK, keep the smallest RTT sample (pkts_acked).
 * tcp_vegas.c and each of ours pay a second struct_ops call per ACK for it, a
 * fixed cost of the hook that vk_reno_min, with one call per ACK, does not
 * show. Built for the bench only; the bench registers it with bpftool.
 */
#include "reno_floor.bpf.h"

struct rr_ca {
	__u32 min_rtt_us;
};

static __always_inline struct rr_ca *rr_ca(struct sock *sk)
{
	return (struct rr_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

SEC("struct_ops")
void BPF_PROG(rr_init, struct sock *sk)
{
	rr_ca(sk)->min_rtt_us = ~0U;
}

SEC("struct_ops")
void BPF_PROG(rr_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct rr_ca *ca = rr_ca(sk);

	if (sample->rtt_us > 0 && (__u32)sample->rtt_us < ca->min_rtt_us)
		ca->min_rtt_us = sample->rtt_us;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_rtt = {
	.init		= (void *)rr_init,
	.cong_avoid	= (void *)rf_cong_avoid,
	.pkts_acked	= (void *)rr_pkts_acked,
	.ssthresh	= (void *)rf_ssthresh,
	.undo_cwnd	= (void *)rf_undo_cwnd,
	.name		= "vk_reno_rtt",
};
