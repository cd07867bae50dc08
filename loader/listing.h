/* SPDX-License-Identifier: GPL-2.0 */
/* An instance with its state, as `list`, `show` and `load --json` print it (docs/DESIGN.md §4). */
#ifndef VK_LISTING_H
#define VK_LISTING_H

#include <stdbool.h>

struct vk_instance;

/* One instance: a line, or a JSON object. */
void vk_print_instance(const struct vk_instance *in, bool json);

#endif
