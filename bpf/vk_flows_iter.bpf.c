// SPDX-License-Identifier: GPL-2.0
/*
 * vk_flows_iter - one struct vk_flow_rec per live connection that a vegaskit
 * controller has decided for: what `vegasctl flows` prints. get_info is not
 * available to BPF controllers, so the view lives in the shared vk_flows
 * sk_storage (docs/DESIGN.md §3.4) and is read here, by one of two walks:
 *
 *  - vk_dump_flows walks the sk_storage map itself (iter/bpf_sk_storage_map):
 *    every socket of every namespace in one pass. Some kernels refuse this
 *    program type with EPERM (docs/DESIGN.md §10).
 *  - vk_dump_flows_tcp walks one namespace's TCP sockets (iter/tcp) and looks
 *    each one up in the same map; vegasctl runs it once per namespace.
 *
 * Both write the same record, so userspace cannot tell them apart. vegasctl
 * loads only the one it uses (autoload), so a refused program type costs
 * nothing on the other path.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "vk_intf.h"
#include "vk_sock.bpf.h"

char _license[] SEC("license") = "GPL";

#include "vk_flows_map.bpf.h"	/* libbpf reuses the controllers' pinned map */

static __always_inline void emit(struct seq_file *seq, struct tcp_sock *tp,
				 const struct vk_flow *f)
{
	struct vk_flow_rec rec = {};

	vk_fill_id(&rec.id, (struct sock *)tp);
	rec.snd_cwnd = tp->snd_cwnd;
	rec.srtt_us = tp->srtt_us >> 3;
	__builtin_memcpy(&rec.flow, f, sizeof(rec.flow));
	bpf_seq_write(seq, &rec, sizeof(rec));
}

SEC("iter/bpf_sk_storage_map")
int vk_dump_flows(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct vk_flow *f = ctx->value;
	struct sock *sk = ctx->sk;	/* read once: a re-read is unchecked for NULL */
	struct tcp_sock *tp;

	if (!sk || !f)
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (tp)
		emit(ctx->meta->seq, tp, f);
	return 0;
}

SEC("iter/tcp")
int vk_dump_flows_tcp(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp;
	struct vk_flow *f;

	if (!skc)
		return 0;
	/* Full sockets only: request and timewait sockets carry no storage. */
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	f = bpf_sk_storage_get(&vk_flows, tp, 0, 0);
	if (f)
		emit(ctx->meta->seq, tp, f);
	return 0;
}
