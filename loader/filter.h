/* SPDX-License-Identifier: GPL-2.0 */
/* Connection filters and text formatting shared by `flows` and `trace`. */
#ifndef VK_FORMAT_H
#define VK_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include "../bpf/vk_intf.h"

#define VK_FILTER_MAX_CC 16

struct vk_filter {
	int lport, rport, port;		/* -1: any; port matches either end */
	bool has_addr;
	__u8 addr[16];			/* IPv4-mapped for IPv4; matches either end */
	__u32 netns;			/* inode; 0: any */
	int ncc;
	char cc[VK_FILTER_MAX_CC][VK_NAME_MAX];
};

void vk_filter_init(struct vk_filter *f);
/*
 * If argv[*i] is a filter option (-L/--lport, -R/--rport, --port, --addr,
 * --netns, --controller), consume it (and its value) and return 1; return 0
 * if it is not one; -1 with err on a bad value.
 */
int vk_filter_option(struct vk_filter *f, int argc, char **argv, int *i, char *err);
bool vk_filter_match(const struct vk_filter *f, const struct vk_flow_id *id);

void vk_format_addr(const __u8 addr[16], char *buf, size_t n);
const char *vk_rule_name(__u32 rule);
const char *vk_ca_state_name(__u8 state);

#endif
