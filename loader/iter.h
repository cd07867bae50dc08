/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way vegasctl runs a BPF iterator (flows, swap, and the feature
 * probes that load iterator programs): open an embedded object with only the
 * named program set to load, load it, attach the program as an iterator
 * (over a map, if it iterates one), and read an iterator instance's output
 * as fixed-size records, one callback each (docs/DESIGN.md §4, §10).
 */
#ifndef VK_ITER_H
#define VK_ITER_H

#include <stddef.h>

struct bpf_object;
struct bpf_link;

/* Open embedded object `name`; only program `prog` will load (NULL: all). */
struct bpf_object *vk_iter_open(const char *name, const void *(*elf_bytes)(size_t *),
				const char *prog, char *err);
/* Load an opened object; -1 with err = strerror(errno) if the kernel refuses. */
int vk_iter_load(struct bpf_object *obj, char *err);
/*
 * Attach program `prog` of a loaded object as an iterator, over the object's
 * map `map` if not NULL. `what` names the iterator in messages.
 */
struct bpf_link *vk_iter_attach(struct bpf_object *obj, const char *prog, const char *map,
				const char *what, char *err);

/* Called per record; non-zero stops the walk and is returned. */
typedef int (*vk_iter_fn)(const void *rec, void *arg);
/*
 * Start one iterator instance of link (it sees the namespace we are in now)
 * and call fn on each `size`-byte record. 0, fn's non-zero, or -1 with err.
 */
int vk_iter_each(struct bpf_link *link, size_t size, vk_iter_fn fn, void *arg,
		 const char *what, char *err);

#endif
