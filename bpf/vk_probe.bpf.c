// SPDX-License-Identifier: GPL-2.0
/*
 * vk_probe - the smallest programs that need each kernel feature vegaskit
 * uses, for `vegasctl features` (docs/DESIGN.md §10). vegasctl loads them one
 * at a time (autoload) and reports which the kernel accepts. Nothing here is
 * pinned or attached, so a probe leaves no trace.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define SOL_TCP		6
#define TCP_CONGESTION	13

/* A private (unpinned) storage map, so probing never touches the shared one. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} probe_storage SEC(".maps");

SEC("iter/tcp")
int probe_iter_tcp(struct bpf_iter__tcp *ctx)
{
	return 0;
}

SEC("iter/bpf_sk_storage_map")
int probe_iter_sk_storage(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	return 0;
}

/* What the iter/tcp flows walk needs: storage lookups from an iterator. */
SEC("iter/tcp")
int probe_iter_tcp_storage(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp = skc ? bpf_skc_to_tcp_sock(skc) : NULL;

	if (tp)
		bpf_sk_storage_get(&probe_storage, tp, 0, 0);
	return 0;
}

/* What `vegasctl swap` needs: setsockopt(TCP_CONGESTION) from an iterator. */
SEC("iter/tcp")
int probe_iter_setsockopt(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct tcp_sock *tp = skc ? bpf_skc_to_tcp_sock(skc) : NULL;
	char cc[16] = "reno";

	if (tp && skc->skc_state == 99)	/* never true: verifier only */
		bpf_setsockopt(tp, SOL_TCP, TCP_CONGESTION, cc, sizeof(cc));
	return 0;
}
