/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Controller names: what the kernel accepts as a tcp_congestion_ops name and
 * vegasctl as a bpffs directory (docs/DESIGN.md §4). bpffs refuses '.' in
 * names (it reserves them for maps.debug and friends) but controller names
 * may contain it, so a directory spells '.' as VK_PIN_DOT (bpf/vk_intf.h), a
 * character names cannot contain: the mapping is one-to-one.
 */
#ifndef VK_NAMES_H
#define VK_NAMES_H

#include "../bpf/vk_intf.h"

/* 1 to VK_NAME_MAX-1 letters, digits, '_' and '.', not starting with '.'. */
int vk_check_name(const char *name, char *err);
/* name -> its directory's name, and back; out has room for VK_NAME_MAX. */
void vk_name_to_dir(char *out, const char *name);
void vk_name_from_dir(char *out, const char *dir);

#endif
