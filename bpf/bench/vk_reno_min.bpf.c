// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_min - the floor of `make bench`'s per-call cost stage (docs/DESIGN.md
 * §9.1): the least a BPF congestion controller can be, Reno through the
 * kernel's own kfuncs, so that what our controllers cost per ACK can be put
 * beside what any BPF controller costs. Built for the bench only; vegasctl
 * never embeds it, the bench registers it with bpftool.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

SEC("struct_ops")
void BPF_PROG(rm_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(rm_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(rm_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_min = {
	.cong_avoid	= (void *)rm_cong_avoid,
	.ssthresh	= (void *)rm_ssthresh,
	.undo_cwnd	= (void *)rm_undo_cwnd,
	.name		= "vk_reno_min",
};
