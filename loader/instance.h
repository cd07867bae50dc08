/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Registered controller instances and their bpffs pins (docs/DESIGN.md §4).
 * Layout (root-only, 0700), under VK_PIN_ROOT from bpf/vk_intf.h:
 *   VK_PIN_ROOT/cc/NAME/params           the instance's .data.params map
 *   VK_PIN_ROOT/cc/NAME/link             its struct_ops link: the registration, or
 *   VK_PIN_ROOT/cc/NAME/ops              its struct_ops map, where the kernel has
 *                                        no struct_ops links (< 6.4) and the map
 *                                        itself is registered (docs/DESIGN.md §4.3)
 *   VK_PIN_ROOT/cc/NAME/stats            its counters
 *   VK_PIN_ROOT/cc/NAME/events           its trace ring buffer (§5.1)
 *   VK_PIN_ROOT/shared/vk_flows          per-flow sk_storage, shared by all
 *   VK_PIN_ROOT/shared/vk_trace_lost     the rings' drop counter, and
 *   VK_PIN_ROOT/shared/vk_trace_until    the trace lease
 * NAME is spelled as names.h says. The commit point is the link pin (pinned
 * last), or for a map registration the registration itself (after every pin):
 * an instance without it is a load that was interrupted, reported as such by
 * `list` and removed by `unload`.
 */
#ifndef VK_INSTANCE_H
#define VK_INSTANCE_H

#include <stdbool.h>
#include <linux/types.h>
#include "../bpf/vk_intf.h"
#include "variants.h"

#define VK_PIN_CC		VK_PIN_ROOT "/cc"
#define VK_PIN_SHARED		VK_PIN_ROOT "/shared"
#define VK_PIN_FLOWS		VK_PIN_SHARED "/vk_flows"
#define VK_PIN_TRACE_LOST	VK_PIN_SHARED "/vk_trace_lost"
#define VK_PIN_TRACE_UNTIL	VK_PIN_SHARED "/vk_trace_until"
#define VK_LEAF_STATS		"stats"		/* under VK_PIN_CC/NAME/ */
#define VK_LEAF_EVENTS		"events"

#define TCP_CONG_NON_RESTRICTED	0x1	/* include/net/tcp.h: vk_params.ca_flags */

struct vk_instance {
	char name[VK_NAME_MAX];
	struct vk_params params;
	bool has_params;	/* params pin present and readable */
	bool other_version;	/* params readable, but of another layout (magic) */
	bool committed;		/* the load completed: link pinned, or map registered */
	bool by_map;		/* registered through its struct_ops map (no links) */
	bool registered;	/* the kernel lists the name as available */
	__u32 link_id;
	__u32 map_id;		/* the struct_ops map */
};

/* The variant's built-in parameters, from its embedded object. */
int vk_default_params(const struct vk_variant_desc *v, struct vk_params *p, char *err);
/* Does this kernel register controllers through struct_ops links (Linux >= 6.4)? */
bool vk_struct_ops_links(void);
/* Does it take the one-call form, cong_control(sk, ack, flag, rs) (Linux >= 6.10)? */
bool vk_one_call_supported(void);
/* Register `name` with parameters p and pin it; all or nothing. */
int vk_instance_load(const struct vk_variant_desc *v, const char *name,
		     const struct vk_params *p, char *err);
/* 0 if nothing is registered or pinned under name, else -1 with load's refusal. */
int vk_instance_check_free(const char *name, char *err);
/* 0 if the committed instance name can be replaced in place, else -1 with err. */
int vk_instance_replace_check(const char *name, char *err);
/* Swap a loaded instance's code and parameters in place (load --replace). */
int vk_instance_replace(const struct vk_variant_desc *v, const char *name,
			const struct vk_params *p, char *err);
/* Read an instance's state, finishing an interrupted replace on the way. */
int vk_instance_read(const char *name, struct vk_instance *inst, char *err);
int vk_instance_write_params(const char *name, const struct vk_params *p, char *err);
int vk_instance_unload(const char *name, char *err);
/* The instance's counters summed over CPUs: 0, 1 if it has none (loaded by an
 * older vegaskit), -1 with err. */
int vk_instance_stats(const char *name, struct vk_stats *st, char *err);
/*
 * The instance names under VK_PIN_CC, sorted, in a malloc'd array (free it,
 * even when empty): returns how many, or -1.
 */
int vk_instance_names(char (**names)[VK_NAME_MAX]);
/* An fd of the instance's own trace ring (VK_LEAF_EVENTS), or -1 with errno. */
int vk_instance_events_fd(const char *name);

#endif
