// SPDX-License-Identifier: GPL-2.0
/* Opening the embedded BPF objects (bpfobj.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "cli.h"
#include "instance.h"		/* VK_PIN_SHARED */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;	/* our own messages say what failed; -v shows libbpf's */
	return vk_cli.verbose ? vfprintf(stderr, fmt, ap) : 0;
}

struct bpf_object *vk_open_embedded(const char *name, const void *(*elf_bytes)(size_t *),
				    char *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = name,
		    .pin_root_path = VK_PIN_SHARED);
	struct bpf_object *obj;
	const void *bytes;
	size_t sz;

	libbpf_set_print(libbpf_print);
	bytes = elf_bytes(&sz);
	obj = bpf_object__open_mem(bytes, sz, &opts);
	if (!obj)
		vk_err(err, "cannot open the embedded %s object: %s", name, strerror(errno));
	return obj;
}

void *vk_obj_global(struct bpf_object *obj, const char *section, const char *var, size_t size)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *map = bpf_object__find_map_by_name(obj, section);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	size_t map_sz = 0;
	char *data;
	int id;

	data = map ? bpf_map__initial_value(map, &map_sz) : NULL;
	id = btf ? btf__find_by_name_kind(btf, section, BTF_KIND_DATASEC) : -1;
	if (!data || id <= 0)
		return NULL;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (!strcmp(btf__name_by_offset(btf, t->name_off), var) && vs->size == size &&
		    vs->offset + size <= map_sz)
			return data + vs->offset;
	}
	return NULL;
}
