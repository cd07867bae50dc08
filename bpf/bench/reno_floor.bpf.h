/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Reno both bench floors are made of (vk_reno_min, vk_reno_rtt;
 * docs/DESIGN.md §9.1): each op one call of the kernel's own Reno kfunc.
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

SEC("struct_ops")
void BPF_PROG(rf_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

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

#endif /* VK_RENO_FLOOR_BPF_H */
