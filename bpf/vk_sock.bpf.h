/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_sock.bpf.h - a connection's identity (struct vk_flow_id) read from its
 * struct sock with CO-RE, for the trace records and the flows iterator alike.
 */
#ifndef VK_SOCK_BPF_H
#define VK_SOCK_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "vk_intf.h"

#define VK_AF_INET6	10

/*
 * Direct loads, not bpf_probe_read_kernel(): every caller holds a BTF pointer
 * (struct_ops' sk, bpf_skc_to_tcp_sock() in the iterators), which the verifier
 * lets a program walk with plain loads that it guards itself. A helper call per
 * field cost a trace record about ten calls (docs/DESIGN.md §5.1).
 */
static __always_inline void vk_fill_id(struct vk_flow_id *id, struct sock *sk)
{
	struct sock_common *skc = &sk->__sk_common;
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	const struct tcp_congestion_ops *ops = icsk->icsk_ca_ops;

	id->netns = skc->skc_net.net->ns.inum;
	id->family = skc->skc_family;
	id->sport = skc->skc_num;
	id->dport = bpf_ntohs(skc->skc_dport);
	if (id->family == VK_AF_INET6) {
		__builtin_memcpy(id->saddr, &skc->skc_v6_rcv_saddr, 16);
		__builtin_memcpy(id->daddr, &skc->skc_v6_daddr, 16);
	} else {
		/* IPv4-mapped IPv6: ::ffff:a.b.c.d */
		id->saddr[10] = id->saddr[11] = id->daddr[10] = id->daddr[11] = 0xff;
		__builtin_memcpy(&id->saddr[12], &skc->skc_rcv_saddr, 4);
		__builtin_memcpy(&id->daddr[12], &skc->skc_daddr, 4);
	}
	if (ops)
		__builtin_memcpy(id->ca, ops->name, sizeof(id->ca));
	id->ca[sizeof(id->ca) - 1] = 0;
	id->ca_state = BPF_CORE_READ_BITFIELD(icsk, icsk_ca_state);
}

#endif /* VK_SOCK_BPF_H */
