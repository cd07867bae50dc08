/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace lease (bpf/vk_intf.h, VK_TRACE_LEASE_NS): the controllers emit
 * records only until the time in the pinned vk_trace_until map, which the
 * reader keeps pushing ahead. A reader killed by SIGKILL cannot switch
 * tracing off; its lease runs out instead (docs/DESIGN.md §5.1).
 */
#ifndef VK_TRACELEASE_H
#define VK_TRACELEASE_H

#include <stdbool.h>
#include <linux/types.h>

/* The pinned map's fd, or -1 (no controller loaded, or one from before leases). */
int vk_lease_open(void);
/* Extend the lease to now + VK_TRACE_LEASE_NS. */
int vk_lease_renew(int fd);
/* Do trace bits `bits` emit now: set, and the lease current? */
bool vk_tracing_live(__u32 bits);

#endif
