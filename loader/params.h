/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Controller parameters (docs/DESIGN.md §3, §4): keys, presets and validation;
 * one table serves parsing, printing and the docs.
 */
#ifndef VK_PARAMS_H
#define VK_PARAMS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "../bpf/vk_intf.h"
#include "cli.h"		/* VK_ERR_MAX */

/*
 * vegas_fr needs R > mss/2 (its paper; docs/DESIGN.md §3). The loader cannot know every future
 * socket's MSS, so it checks against the Ethernet MSS with timestamps (1500 -
 * 20 - 20 - 12); smaller MSS values (the packet-size experiment uses 536
 * and 256) only make the condition easier to meet.
 */
#define VK_FR_MSS_MAX 1448
#define VK_FR_REF_MAX (16u << 20)	/* ref_bytes cap */

enum vk_param_kind {
	VK_P_COUNT,	/* non-negative integer (packets, bytes) */
	VK_P_BOOL,	/* 0 or 1 */
	VK_P_CUT,	/* loss cut: 2 (1/2) or 4 (1/4) */
	VK_P_GAIN,	/* real in (0, 1], stored in thousandths */
	VK_P_FRAC,	/* real in [0, 1], stored in thousandths */
	VK_P_SEM,	/* enum vk_semantics, by name */
};

struct vk_param_desc {
	const char *key;
	enum vk_param_kind kind;
	size_t off;		/* offsetof(struct vk_params, field) */
	unsigned variants;	/* bit (1 << enum vk_variant) for each variant it applies to */
	const char *help;
	bool at_load;		/* fixed when the instance is registered: `set` refuses a
				 * change, `apply` replaces the instance for one */
};

extern const struct vk_param_desc vk_param_descs[];
extern const size_t vk_nr_param_descs;

const struct vk_param_desc *vk_param_find(const char *key, enum vk_variant v);
/* Apply one "key=value" to p; on error, fill err and return -1 (p untouched). */
int vk_param_apply(struct vk_params *p, const char *kv, char *err);
/* The same for a key and its value given apart (load's --KEY VALUE). */
int vk_param_set(struct vk_params *p, const char *key, const char *val, char *err);
/* -1 with err if two of the KEY[=VALUE] strings name the same key. */
int vk_param_check_unique(const char *const *kvs, int n, char *err);
/* Apply a named preset; -1 with err if the variant has no such preset. */
int vk_preset_apply(struct vk_params *p, const char *preset, char *err);
/* Whole-struct checks: alpha <= beta, alpha_max >= alpha, R, k ... */
int vk_params_validate(const struct vk_params *p, char *err);
/* -1 with err if `to` changes a parameter fixed at load from `from`. */
int vk_params_check_live(const struct vk_params *from, const struct vk_params *to, char *err);
/* The presets of a variant, for `list`: lines, or a JSON object. */
void vk_presets_print(FILE *f, enum vk_variant v, bool json);
/* "alpha=2 beta=4 ..." or a JSON object of the keys that apply to the variant. */
void vk_params_print(FILE *f, const struct vk_params *p, bool json);
/* "key = value" lines of the keys that apply to the variant (TOML, as export writes). */
void vk_params_print_toml(FILE *f, const struct vk_params *p);
unsigned vk_param_value(const struct vk_params *p, const struct vk_param_desc *d);

#endif
