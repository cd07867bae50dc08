/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The controllers vegasctl knows (docs/DESIGN.md §3), one per VK_VARIANTS
 * entry of bpf/vk_intf.h, each with its BPF object embedded (embed.h).
 */
#ifndef VK_VARIANTS_H
#define VK_VARIANTS_H

#include <stddef.h>
#include "../bpf/vk_intf.h"

struct vk_variant_desc {
	const char *name;		/* what the user types: vegas, vegas_a, ... */
	enum vk_variant id;
	const char *ca_name;		/* default registered name */
	const char *source;		/* the paper it follows */
	const void *(*elf_bytes)(size_t *sz);
};

extern const struct vk_variant_desc vk_variants[];
extern const size_t vk_nr_variants;

const struct vk_variant_desc *vk_variant_by_name(const char *name);
const struct vk_variant_desc *vk_variant_by_id(enum vk_variant id);
const char *vk_variant_name(enum vk_variant id);

#endif
