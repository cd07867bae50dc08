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

static __always_inline void vk_fill_id(struct vk_flow_id *id, struct sock *sk)
{
	struct sock_common *skc = &sk->__sk_common;
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;

	id->netns = BPF_CORE_READ(skc, skc_net.net, ns.inum);
	id->family = BPF_CORE_READ(skc, skc_family);
	id->sport = BPF_CORE_READ(skc, skc_num);
	id->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	if (id->family == VK_AF_INET6) {
		BPF_CORE_READ_INTO(&id->saddr, skc, skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&id->daddr, skc, skc_v6_daddr);
	} else {
		/* IPv4-mapped IPv6: ::ffff:a.b.c.d */
		id->saddr[10] = id->saddr[11] = id->daddr[10] = id->daddr[11] = 0xff;
		bpf_core_read(&id->saddr[12], 4, &skc->skc_rcv_saddr);
		bpf_core_read(&id->daddr[12], 4, &skc->skc_daddr);
	}
	bpf_probe_read_kernel_str(id->ca, sizeof(id->ca), BPF_CORE_READ(icsk, icsk_ca_ops, name));
	id->ca_state = BPF_CORE_READ_BITFIELD_PROBED(icsk, icsk_ca_state);
}

#endif /* VK_SOCK_BPF_H */
