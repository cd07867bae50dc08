/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network namespaces: entering one by name, and visiting every one that a
 * task or an nsfs mount holds (for walks that, like iter/tcp, see only the
 * namespace of the task that starts them: `flows --via tcp`, `swap --netns`;
 * docs/DESIGN.md §4, §10).
 */
#ifndef VK_NETNS_H
#define VK_NETNS_H

#include <limits.h>
#include <stddef.h>
#include <linux/types.h>

#define VK_NETNS_RUN		"/var/run/netns"
#define VK_NETNS_PATH_MAX	(sizeof(VK_NETNS_RUN) + 1 + NAME_MAX + 1)

/* VK_NETNS_RUN/NAME into path (n >= VK_NETNS_PATH_MAX), or -1 with err for a
 * NAME that `ip netns` could not have made: never a truncated path. */
int vk_netns_path(const char *name, char *path, size_t n, char *err);
/* Enter the namespace `ip netns` calls NAME (/var/run/netns/NAME). */
int vk_netns_enter_named(const char *name, char *err);

/*
 * Call fn(arg) inside the namespace `ip netns` calls name (NULL: where we are)
 * and come back: fn's return, or -1 with err if the namespace cannot be
 * entered or left.
 */
int vk_netns_in(const char *name, int (*fn)(void *arg), void *arg, char *err);
/*
 * Call fn once per distinct network namespace, from inside it; return to the
 * caller's namespace after each call and at the end. A namespace no task and
 * no mount holds (only sockets keep it alive) cannot be entered and is not
 * visited. fn returns 0 to go on, non-zero to stop (and that is returned).
 */
typedef int (*vk_netns_fn)(__u32 inum, void *arg);
int vk_netns_each(vk_netns_fn fn, void *arg, char *err);

#endif
