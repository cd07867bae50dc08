/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace lease and the registry of live readers (docs/DESIGN.md §5.1).
 *
 * Lease (bpf/vk_intf.h, VK_TRACE_LEASE_NS): the controllers emit records only
 * until the time in the pinned vk_trace_until map, which every reader keeps
 * pushing ahead; when no reader is left alive it runs out within a second.
 *
 * Registry (VK_TRACE_REG): each reader holds an exclusive flock on its own file
 * there, listing the instances and trace bits it wants. The kernel drops the
 * flock when the reader dies, SIGKILL included, so a file whose flock can be
 * taken belongs to a dead reader. Every change of the bits goes through one
 * reconciliation under the state lock (env.h): dead readers' files go, and each
 * instance's bits become the union of what the live files claim. If any file's
 * state or claims cannot be read, that round changes nothing.
 *
 * Each instance has its own ring: readers of different instances read apart, and
 * two readers of one instance split its stream (each record goes to whichever
 * consumes it first; each filters its share).
 */
#ifndef VK_TRACELEASE_H
#define VK_TRACELEASE_H

#include <stdbool.h>
#include <linux/types.h>
#include "instance.h"

#define VK_TRACE_REG	"/run/vegaskit-trace"

/* The pinned map's fd, or -1 (no controller loaded, or one from before leases). */
int vk_lease_open(void);
/* Extend the lease to now + VK_TRACE_LEASE_NS. */
int vk_lease_renew(int fd);
/* Do trace bits `bits` of instance `name` emit for a live reader: set, claimed
 * by a live reader's registry file, and the lease current? */
bool vk_tracing_live(const char *name, __u32 bits);

/* Register this process as a reader of `names` with `bits` and switch them on;
 * returns how many of them now carry the bits, or -1 with err. First, under
 * the state lock, drain(arg) if no other live reader claims one of `names`:
 * what their rings then hold was left by dead ones; beside a live reader of
 * one of them it is that reader's. */
int vk_reg_start(char (*names)[VK_NAME_MAX], int n, __u32 bits, void (*drain)(void *),
		 void *arg, char *err);
/* Clear what dead readers left on, if the state lock is free right now. */
void vk_reg_sweep(void);
/* Unregister this reader and switch off what no live reader still wants. */
void vk_reg_stop(void);

#endif
