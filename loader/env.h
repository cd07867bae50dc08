/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What vegasctl needs of the machine before it changes anything: root, a BPF
 * filesystem, kernel BTF, struct_ops for tcp_congestion_ops and struct_ops
 * links, each refusal with its own message saying what to do; and which
 * congestion controls the kernel lists (docs/DESIGN.md §4, §10).
 */
#ifndef VK_ENV_H
#define VK_ENV_H

#include <stdbool.h>

#define VK_VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

/* Held by every command that changes state (struct vk_cmd.mutates). */
#define VK_LOCK_FILE	"/run/vegaskit.lock"

/* 0, or -1 with err naming the first missing prerequisite; takes the lock
 * for a command that changes state, and refuses a pin tree not root's own. */
int vk_check_env(char *err);
/* The state lock on a new open file of its own, held until that fd is closed:
 * the fd, or -1 with err (errno EWOULDBLOCK and err untouched when !wait and
 * someone holds it). */
int vk_lock_fd(bool wait, char *err);
/* Take the state lock (idempotent; held until vk_unlock or exit), or -1 with err. */
int vk_lock(char *err);
void vk_unlock(void);
/* 0 if path is absent or a root-owned directory no one else may enter. */
int vk_pin_dir_check(const char *path, char *err);
/* Is `name` in net.ipv4.tcp_available_congestion_control? */
bool vk_ca_available(const char *name);
/* ... in net.ipv4.tcp_allowed_congestion_control (flag TCP_CONG_NON_RESTRICTED)? */
bool vk_ca_unrestricted(const char *name);
/* Is this process in the initial network namespace? */
bool vk_in_init_netns(void);

#endif
