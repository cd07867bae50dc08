/* SPDX-License-Identifier: GPL-2.0 */
/* Subcommands that live in files of their own. argv[0] is the first argument. */
#ifndef VK_CMDS_H
#define VK_CMDS_H

#include <stdbool.h>

int vk_cmd_flows(int argc, char **argv, bool json);
int vk_cmd_trace(int argc, char **argv, bool json);
int vk_cmd_swap(int argc, char **argv, bool json);
int vk_cmd_features(int argc, char **argv, bool json);

/* One line "vegasctl: msg" on stderr; returns 1 (usage errors: 2). */
int vk_die(const char *msg);
int vk_usage_error(const char *msg);

#endif
