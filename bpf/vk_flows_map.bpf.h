/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_flows_map.bpf.h - the per-connection view every controller writes and the
 * flows iterator reads (struct vk_flow in sk_storage). Pinned by name, so all
 * objects that include this share one map: that is what lets a socket keep
 * its baseRTT when it moves from one of our controllers to another.
 */
#ifndef VK_FLOWS_MAP_BPF_H
#define VK_FLOWS_MAP_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vk_flow);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} vk_flows SEC(".maps");

#endif /* VK_FLOWS_MAP_BPF_H */
