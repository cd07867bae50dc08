/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel features vegaskit uses, each with its probe (loader/cmd_features.c). */
#ifndef VK_FEATURES_H
#define VK_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct vk_feature {
	const char *name;	/* key in `vegasctl features --json` */
	const char *what;
	const char *used_by;
	bool (*probe)(void);
};

extern const struct vk_feature vk_features[];
extern const size_t vk_nr_features;

#endif
