// SPDX-License-Identifier: GPL-2.0
/*
 * vk_flows_iter - walks the shared vk_flows sk_storage map (every connection a
 * vegaskit controller has decided for, in every namespace) and writes one
 * struct vk_flow_rec per live connection: what `vegasctl flows` prints.
 * get_info is not available to BPF controllers, hence this (DESIGN section 3).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "vk_intf.h"
#include "vk_sock.bpf.h"

char _license[] SEC("license") = "GPL";

#include "vk_flows_map.bpf.h"	/* libbpf reuses the controllers' pinned map */

SEC("iter/bpf_sk_storage_map")
int vk_dump_flows(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct vk_flow *f = ctx->value;
	struct sock *sk = ctx->sk;
	struct vk_flow_rec rec = {};
	struct tcp_sock *tp;

	if (!sk || !f)
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	vk_fill_id(&rec.id, sk);
	rec.snd_cwnd = tp->snd_cwnd;
	rec.srtt_us = tp->srtt_us >> 3;
	__builtin_memcpy(&rec.flow, f, sizeof(rec.flow));
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
