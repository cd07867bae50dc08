// SPDX-License-Identifier: GPL-2.0
/*
 * vk_swap_iter - moves established TCP sockets of one network namespace onto
 * another congestion controller (docs/DESIGN.md §4: an iter/tcp program calling
 * bpf_setsockopt(TCP_CONGESTION), Linux >= 5.15 for setsockopt from iter/tcp).
 * The iterator walks the namespace of the task that creates it; vegasctl
 * enters the target namespace first. One vk_swap_rec per considered socket
 * goes to the seq file, so userspace counts exactly what happened.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "vk_intf.h"
#include "vk_sock.bpf.h"
#include "vk_filter.h"

char _license[] SEC("license") = "GPL";

#define SOL_TCP		6
#define TCP_CONGESTION	13

/*
 * Filled in by vegasctl before load. Plain .data, not const volatile .rodata:
 * copying a const volatile array with memcpy lets clang fold it to its
 * initializer, which would hand bpf_setsockopt an empty name.
 */
struct vk_swap_cfg cfg = { .filter = { .port = -1, .lport = -1, .rport = -1 } };

SEC("iter/tcp")
int vk_swap(struct bpf_iter__tcp *ctx)
{
	struct sock_common *skc = ctx->sk_common;
	struct vk_swap_rec rec = {};
	char target[VK_NAME_MAX];
	struct tcp_sock *tp;
	unsigned long ops;
	int state;

	if (!skc)
		return 0;
	/* Connected sockets only: listeners, request and timewait sockets are not moved. */
	state = skc->skc_state;
	if (state != TCP_ESTABLISHED && state != TCP_CLOSE_WAIT && state != TCP_FIN_WAIT1 &&
	    state != TCP_FIN_WAIT2 && state != TCP_LAST_ACK && state != TCP_CLOSING)
		return 0;
	tp = bpf_skc_to_tcp_sock(skc);
	if (!tp)
		return 0;
	vk_fill_id(&rec.id, (struct sock *)tp);
	if (!vk_filter_match(&cfg.filter, &rec.id))
		return 0;
	/*
	 * The same name is not the same code: after `load --replace` sockets
	 * opened before it still run the old ops under the name. The kernel
	 * (tcp_set_congestion_control) compares ops pointers, not names: asking
	 * for the name reinitialises a socket on older code onto the registered
	 * code and leaves one already on it alone. The pointer before and after
	 * says which happened.
	 */
	if (cfg.count_only) {
		/* by name: a plan cannot see older code under the name */
		rec.result = vk_same_name(rec.id.ca, cfg.target) ? VK_SWAP_ALREADY : VK_SWAP_MOVED;
		bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
		return 0;
	}
	ops = (unsigned long)tp->inet_conn.icsk_ca_ops;
	__builtin_memcpy(target, cfg.target, sizeof(target));
	rec.err = bpf_setsockopt(tp, SOL_TCP, TCP_CONGESTION, target, sizeof(target));
	if (rec.err)
		rec.result = VK_SWAP_FAILED;
	else if ((unsigned long)tp->inet_conn.icsk_ca_ops == ops)
		rec.result = VK_SWAP_ALREADY;
	else
		rec.result = vk_same_name(rec.id.ca, cfg.target) ? VK_SWAP_UPGRADED : VK_SWAP_MOVED;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}
