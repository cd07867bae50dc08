/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Reno the bench floors are made of (vk_reno_min, vk_reno_rtt, vk_reno_one;
 * docs/DESIGN.md §9.1): each op one call of the kernel's own Reno kfunc. A floor
 * that keeps the per-ACK minimum RTT defines RF_MIN_RTT first, and one that sets
 * cong_control RF_CONG_CONTROL: libbpf refuses an object with a struct_ops
 * program no map uses, so each floor gets only the programs it names.
 */
#ifndef VK_RENO_FLOOR_BPF_H
#define VK_RENO_FLOOR_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

#ifndef RF_CONG_CONTROL
SEC("struct_ops")
void BPF_PROG(rf_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}
#endif

SEC("struct_ops")
__u32 BPF_PROG(rf_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(rf_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

#ifdef RF_MIN_RTT
struct rf_ca {
	__u32 min_rtt_us;
	__u32 prr_delivered;	/* vk_reno_one: delivered in this reduction (PRR) */
};

static __always_inline struct rf_ca *rf_ca(struct sock *sk)
{
	return (struct rf_ca *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

/* The least a delay-based controller does with each ACK's RTT sample. */
static __always_inline void rf_rtt_sample(struct sock *sk, long rtt_us)
{
	struct rf_ca *ca = rf_ca(sk);

	if (rtt_us > 0 && (__u32)rtt_us < ca->min_rtt_us)
		ca->min_rtt_us = rtt_us;
}

SEC("struct_ops")
void BPF_PROG(rf_init, struct sock *sk)
{
	rf_ca(sk)->min_rtt_us = ~0U;
}
#endif

#endif /* VK_RENO_FLOOR_BPF_H */
