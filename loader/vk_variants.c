// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "vk_variants.h"
#include "vk_embed.h"

VK_EMBED(bpf_vegas)
VK_EMBED(bpf_vegas_a)
VK_EMBED(bpf_pipe)
VK_EMBED(bpf_vegas_fr)

const struct vk_variant_desc vk_variants[] = {
	{ "vegas", VK_VEGAS, "bpf_vegas", "Brakmo/Peterson as in Linux tcp_vegas.c",
	  bpf_vegas_elf_bytes },
	{ "vegas_a", VK_VEGAS_A, "bpf_vegas_a", "Vegas-A, seed 000 section IV (Srijith, Jacob, Ananda)",
	  bpf_vegas_a_elf_bytes },
	{ "pipe", VK_PIPE, "bpf_pipe", "TCP PIPE, seed 002 section IV (Seshadri, Penchalaiah)",
	  bpf_pipe_elf_bytes },
	{ "vegas_fr", VK_VEGAS_FR, "bpf_vegas_fr", "byte-based proportional Vegas, seed 004",
	  bpf_vegas_fr_elf_bytes },
};
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
