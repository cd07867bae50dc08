/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state a configuration file declares (docs/DESIGN.md §4.7), read from
 * its TOML (conf.h) and checked as far as a file alone can be: names, variants,
 * parameters, filters. Whether it fits the running kernel is apply's to find.
 *
 *   [controller.NAME]   variant = "vegas_a", preset = "paper", unrestricted = true,
 *                       and any parameter of the variant (alpha = 1, gain = 0.5)
 *   [host]              default = "NAME"       the initial namespace's default
 *   [netns.NAME]        default = "NAME"       a namespace `ip netns` names
 *   [[move]]            to = "NAME", netns = "N", from = ["cubic"], port = 443,
 *                       lport, rport, addr: established connections to move
 */
#ifndef VK_WANT_H
#define VK_WANT_H

#include <limits.h>
#include <stdbool.h>
#include "../bpf/vk_intf.h"
#include "conf.h"
#include "variants.h"

struct vk_want_cc {
	char name[VK_NAME_MAX];
	const struct vk_variant_desc *v;
	struct vk_params p;		/* defaults, then the preset, then the keys */
	bool unrestricted;		/* asked for; never taken back once given */
	int line;
};

struct vk_want_default {
	char netns[NAME_MAX + 1];	/* "": the host (initial namespace) */
	char cc[VK_NAME_MAX];
	int line;
};

struct vk_want_move {
	char netns[NAME_MAX + 1];	/* "": the host */
	struct vk_swap_cfg cfg;		/* target and filter */
	int line;
};

struct vk_want {
	const char *file;
	struct vk_want_cc *cc;
	int ncc;
	struct vk_want_default *def;
	int ndef;
	struct vk_want_move *mv;
	int nmv;
};

/* Read and check file; 0, or -1 with err "FILE:LINE: ..." (w is then empty). */
int vk_want_read(const char *file, struct vk_want *w, char *err);
void vk_want_free(struct vk_want *w);
/* The declared controller named name, or NULL. */
const struct vk_want_cc *vk_want_find_cc(const struct vk_want *w, const char *name);
/* The normalised state, as `apply --check` prints it: a JSON object, or text. */
void vk_want_print(const struct vk_want *w, bool json);

#endif
