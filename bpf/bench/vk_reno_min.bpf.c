// SPDX-License-Identifier: GPL-2.0
/*
 * vk_reno_min - the floor of `make bench`'s per-call cost stage (docs/DESIGN.md
 * §9.1): the least a BPF congestion controller can be, Reno through the
 * kernel's own kfuncs, so that what our controllers cost per ACK can be put
 * beside what any BPF controller costs. Built for the bench only; vegasctl
 * never embeds it, the bench registers it with bpftool.
 */
#include "reno_floor.bpf.h"

SEC(".struct_ops.link")
struct tcp_congestion_ops vk_reno_min = {
	.cong_avoid	= (void *)rf_cong_avoid,
	.ssthresh	= (void *)rf_ssthresh,
	.undo_cwnd	= (void *)rf_undo_cwnd,
	.name		= "vk_reno_min",
};
