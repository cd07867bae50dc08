/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connection filters of `flows`, `trace` and `swap` (docs/DESIGN.md §4, §5):
 * which connections a command looks at, parsed from the FILTER options
 * (cli.h) and matched against a struct vk_flow_id from the kernel.
 */
#ifndef VK_FILTER_H
#define VK_FILTER_H

#include <stdbool.h>
#include "../bpf/vk_intf.h"		/* struct vk_filter */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "../bpf/vk_filter.h"		/* vk_filter_match(), shared with the swap iterator */

void vk_filter_init(struct vk_filter *f);
/* Each parses one option's value into f; -1 with err if it is not valid. */
int vk_filter_port(const char *s, int *port, char *err);
int vk_filter_addr(struct vk_filter *f, const char *s, char *err);
int vk_filter_netns(struct vk_filter *f, const char *s, char *err);	/* name or inode */
int vk_filter_controller(struct vk_filter *f, const char *name, char *err);

#endif
