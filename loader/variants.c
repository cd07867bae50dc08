// SPDX-License-Identifier: GPL-2.0
/* The variant table, expanded from VK_VARIANTS (variants.h). */
#include <string.h>
#include "variants.h"
#include "embed.h"

#define EMBED(id, name, source) VK_EMBED(bpf_##name)
VK_VARIANTS(EMBED)

#define DESC(id, name, source) { #name, id, "bpf_" #name, source, bpf_##name##_elf_bytes },
const struct vk_variant_desc vk_variants[] = { VK_VARIANTS(DESC) };
const size_t vk_nr_variants = sizeof(vk_variants) / sizeof(vk_variants[0]);

const struct vk_variant_desc *vk_variant_by_name(const char *name)
{
	for (size_t i = 0; i < vk_nr_variants; i++)
		if (!strcmp(vk_variants[i].name, name))
			return &vk_variants[i];
	return NULL;
}

const struct vk_variant_desc *vk_variant_by_id(enum vk_variant id)
{
	for (size_t i = 0; i < vk_nr_variants; i++)
		if (vk_variants[i].id == id)
			return &vk_variants[i];
	return NULL;
}

const char *vk_variant_name(enum vk_variant id)
{
	const struct vk_variant_desc *v = vk_variant_by_id(id);

	return v ? v->name : "unknown";
}
