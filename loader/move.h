/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `swap`, `apply` and `reset` share (docs/DESIGN.md §4.5, §4.7): the
 * current namespace's default controller, and one walk of its established
 * sockets through the vk_swap_iter program, moving the selected ones (or, to
 * plan, only counting those a move would change).
 */
#ifndef VK_MOVE_H
#define VK_MOVE_H

#include <stddef.h>
#include "../bpf/vk_intf.h"

#define VK_DEFAULT_CC "/proc/sys/net/ipv4/tcp_congestion_control"

struct vk_move_counts {
	unsigned moved, already, failed;
	unsigned upgraded;	/* of moved: same name, older code (load --replace) */
	int first_err;
	double ms;
};

/* The default of the namespace this thread is in; 0 or -1 (errno). */
int vk_default_read(char *buf, size_t n);
int vk_default_write(const char *name);
/*
 * Walk this namespace's TCP sockets once, moving those cfg selects onto
 * cfg->target; with cfg->count_only, move nothing and count as "moved" those
 * not on the target's name. 0, or -1 with err if the walk could not run.
 */
int vk_move_established(const struct vk_swap_cfg *cfg, struct vk_move_counts *c, char *err);
/*
 * How many connected sockets run the controller named name, in every namespace a
 * task or a mount holds: 0 with *n, or -1 with err. What decides whether an
 * instance may go (apply's rollback, reset): one with connections on it stays.
 */
int vk_sockets_on(const char *name, unsigned *n, char *err);

#endif
