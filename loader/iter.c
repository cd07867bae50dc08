// SPDX-License-Identifier: GPL-2.0
/* Running a BPF iterator from an embedded object (iter.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "cli.h"
#include "iter.h"

struct bpf_object *vk_iter_open(const char *name, const void *(*elf_bytes)(size_t *),
				const char *prog, char *err)
{
	struct bpf_object *obj = vk_open_embedded(name, elf_bytes, err);
	struct bpf_program *p;

	if (obj && prog)
		bpf_object__for_each_program(p, obj)
			bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
	return obj;
}

int vk_iter_load(struct bpf_object *obj, char *err)
{
	if (bpf_object__load(obj))
		return vk_err(err, "%s", strerror(errno));
	return 0;
}

struct bpf_link *vk_iter_attach(struct bpf_object *obj, const char *prog, const char *map,
				const char *what, char *err)
{
	union bpf_iter_link_info info = {};
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
	struct bpf_program *p = bpf_object__find_program_by_name(obj, prog);
	struct bpf_link *link;

	if (map)
		info.map.map_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, map));
	link = p ? bpf_program__attach_iter(p, map ? &opts : NULL) : NULL;
	if (!link)
		vk_err(err, "cannot attach the %s iterator: %s", what, strerror(p ? errno : ENOENT));
	return link;
}

int vk_iter_each(struct bpf_link *link, size_t size, vk_iter_fn fn, void *arg,
		 const char *what, char *err)
{
	int fd = bpf_iter_create(bpf_link__fd(link)), ret = 0;
	ssize_t got = 0;
	void *rec;

	if (fd < 0)
		return vk_err(err, "cannot start the %s iterator: %s", what, strerror(errno));
	rec = malloc(size);
	if (!rec) {
		close(fd);
		return vk_err(err, "cannot start the %s iterator: %s", what, strerror(ENOMEM));
	}
	while (!ret && (got = read(fd, rec, size)) == (ssize_t)size)
		ret = fn(rec, arg);
	if (!ret && got < 0)
		ret = vk_err(err, "reading the %s iterator: %s", what, strerror(errno));
	free(rec);
	close(fd);
	return ret;
}
