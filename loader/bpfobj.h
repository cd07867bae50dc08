/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF objects built into vegasctl (embed.h): opening one, with the shared
 * maps' pin directory as its pin root and libbpf's messages shown only with
 * -v, and reaching a global variable of an opened, not yet loaded, object
 * (docs/DESIGN.md §4).
 */
#ifndef VK_BPFOBJ_H
#define VK_BPFOBJ_H

#include <stddef.h>

struct bpf_object;

/* Open (not load) an embedded object; NULL with err on failure. */
struct bpf_object *vk_open_embedded(const char *name, const void *(*elf_bytes)(size_t *),
				    char *err);
/* Address of global `var` (of `size` bytes) in an opened object's `section` map. */
void *vk_obj_global(struct bpf_object *obj, const char *section, const char *var, size_t size);

#endif
