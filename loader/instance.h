/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Registered instances and their bpffs pins. Layout (root-only, 0700):
 *   /sys/fs/bpf/vegaskit/cc/NAME/params   the instance's .data.params map
 *   /sys/fs/bpf/vegaskit/cc/NAME/link     its struct_ops link: the registration
 *   /sys/fs/bpf/vegaskit/shared/vk_flows  per-flow sk_storage, shared by all
 *   /sys/fs/bpf/vegaskit/shared/vk_events the trace ring buffer, and
 *   /sys/fs/bpf/vegaskit/shared/vk_trace_lost its drop counter
 * The link pin is written last: an instance directory without it is a load that
 * was interrupted, reported as such by `list` and removed by `unload`.
 */
#ifndef VK_REGISTRY_H
#define VK_REGISTRY_H

#include <stdbool.h>
#include <linux/types.h>
#include "../bpf/vk_intf.h"
#include "variants.h"

#define VK_PIN_CC	VK_PIN_ROOT "/cc"
#define VK_PIN_SHARED	VK_PIN_ROOT "/shared"
#define VK_PIN_FLOWS	VK_PIN_SHARED "/vk_flows"
#define VK_PIN_EVENTS	VK_PIN_SHARED "/vk_events"
#define VK_PIN_TRACE_LOST VK_PIN_SHARED "/vk_trace_lost"

struct vk_instance {
	char name[VK_NAME_MAX];
	struct vk_params params;
	bool has_params;	/* params pin present and readable */
	bool has_link;		/* link pin present: the load completed */
	bool registered;	/* the kernel lists the name as available */
	__u32 link_id;
	__u32 map_id;		/* the struct_ops map */
};

extern bool vk_verbose;
void vk_crash_point(const char *point);
bool vk_refused(const char *feature);
struct bpf_object;

/* Open (not load) an embedded object with the shared pins as its pin root. */
struct bpf_object *vk_open_embedded(const char *name, const void *(*elf_bytes)(size_t *),
				    char *err);
/* Address of global `var` (of `size` bytes) in an opened object's `section` map. */
void *vk_obj_global(struct bpf_object *obj, const char *section, const char *var, size_t size);
int vk_check_name(const char *name, char *err);
int vk_check_env(char *err);
bool vk_ca_available(const char *name);
int vk_default_params(const struct vk_variant_desc *v, struct vk_params *p, char *err);
int vk_instance_load(const struct vk_variant_desc *v, const char *name,
		     const struct vk_params *p, char *err);
int vk_instance_replace(const struct vk_variant_desc *v, const char *name,
			const struct vk_params *p, char *err);
int vk_instance_read(const char *name, struct vk_instance *inst, char *err);
int vk_instance_write_params(const char *name, const struct vk_params *p, char *err);
int vk_instance_unload(const char *name, char *err);
/* All instance names under VK_PIN_CC, sorted; returns the count or -1. */
int vk_instance_names(char names[][VK_NAME_MAX], int max);

#endif
