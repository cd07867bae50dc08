/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Embeds a built BPF object (build/NAME.bpf.o) in vegasctl and defines
 * NAME_elf_bytes(), the same accessor a bpftool skeleton provides.
 *
 * Why not `bpftool gen skeleton`: Debian 12's backports pair bpftool 7.5,
 * whose skeletons use libbpf 1.5's bpf_map_skeleton.link, with libbpf 1.4.6,
 * so its skeletons do not compile; and vegasctl drives every variant through
 * one generic path (bpf_object__open_mem + BTF), needing only the bytes.
 * The path is relative to the repository root, where make runs the compiler.
 */
#ifndef VK_EMBED_H
#define VK_EMBED_H

#include <stddef.h>

#define VK_EMBED(name)								\
	__asm__(".pushsection .rodata\n"					\
		".balign 8\n"							\
		".global " #name "_obj_start\n"					\
		#name "_obj_start:\n"						\
		".incbin \"build/" #name ".bpf.o\"\n"				\
		".global " #name "_obj_end\n"					\
		#name "_obj_end:\n"						\
		".popsection\n");						\
	extern const char name##_obj_start[], name##_obj_end[];			\
	static const void *name##_elf_bytes(size_t *sz)				\
	{									\
		*sz = (size_t)(name##_obj_end - name##_obj_start);		\
		return name##_obj_start;					\
	}

#endif
