/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection filters of `flows`, `trace` and `swap` (docs/DESIGN.md §4, §5):
 * which connections a command looks at, parsed from the FILTER options
 * (cli.h) and matched against a struct vk_flow_id from the kernel.
 */
#ifndef VK_FILTER_H
#define VK_FILTER_H

#include <stdbool.h>
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
/* Each parses one option's value into f; -1 with err if it is not valid. */
int vk_filter_port(const char *s, int *port, char *err);
int vk_filter_addr(struct vk_filter *f, const char *s, char *err);
int vk_filter_netns(struct vk_filter *f, const char *s, char *err);	/* name or inode */
int vk_filter_controller(struct vk_filter *f, const char *name, char *err);
bool vk_filter_match(const struct vk_filter *f, const struct vk_flow_id *id);

#endif
