/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The configuration file `vegasctl apply` reads and `export` writes: a strict
 * subset of TOML 1.0 (docs/DESIGN.md §4.7). Whatever this parser accepts,
 * every TOML parser reads the same way; whatever TOML allows beyond the subset
 * (inline tables, dotted keys, multi-line strings and arrays, dates, hex,
 * exponents, tables under an array of tables) is refused with its
 * line and what to write instead, never misread. This file knows TOML only;
 * what the tables mean is apply's (apply.h).
 */
#ifndef VK_CONF_H
#define VK_CONF_H

#include <stdbool.h>
#include <stdio.h>

#define VK_CONF_MAX_BYTES	(1u << 20)
#define VK_CONF_MAX_DEPTH	4	/* [a.b.c.d] */

enum vk_conf_type {
	VK_CONF_STR,
	VK_CONF_INT,		/* text: decimal digits, a '-' kept, '+' and '_' removed */
	VK_CONF_REAL,		/* text: digits '.' digits, the same */
	VK_CONF_BOOL,		/* text: "true" or "false" */
	VK_CONF_STRS,		/* an array of strings */
};

struct vk_conf_kv {
	char *key;
	enum vk_conf_type type;
	char *text;
	char **strs;
	int nstrs;
	int line;
};

struct vk_conf_table {
	char *path[VK_CONF_MAX_DEPTH];
	int depth;		/* 0: the keys before the first header */
	bool array;		/* [[path]]: one element of an array of tables */
	bool implicit;		/* made by a deeper header ([a.b] makes [a]) */
	int line;
	struct vk_conf_kv *kv;
	int nkv;
};

struct vk_conf {
	struct vk_conf_table *t;
	int nt;
};

/* Parse file; 0, or -1 with err "FILE:LINE: what is wrong". */
int vk_conf_read(const char *file, struct vk_conf *c, char *err);
/* The same for text in memory: len bytes, and a '\0' at text[len]; `name` stands for the
 * file in messages. */
int vk_conf_parse(const char *name, const char *text, unsigned long len, struct vk_conf *c,
		  char *err);
void vk_conf_free(struct vk_conf *c);
/* "a string", "an integer", ... for messages. */
const char *vk_conf_type_name(enum vk_conf_type t);
/* A string as a TOML basic string's inside ('"', '\\' and controls escaped), to f. */
void vk_conf_print_str(FILE *f, const char *s);

#endif
