/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vk_filter.h - does a connection pass a FILTER (struct vk_filter, vk_intf.h)?
 * Plain C on fixed-width types and bounded loops, so the same code runs in the
 * swap iterator (BPF) and in vegasctl (flows, trace): one meaning of a filter.
 */
#ifndef VK_FILTER_H_SHARED
#define VK_FILTER_H_SHARED

#include "vk_intf.h"

static __always_inline int vk_same_name(const char *a, const char *b)
{
	for (int i = 0; i < VK_NAME_MAX; i++) {
		if (a[i] != b[i])
			return 0;
		if (!a[i])
			return 1;
	}
	return 1;
}

static __always_inline int vk_same_addr(const __u8 *a, const __u8 *b)
{
	for (int i = 0; i < 16; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static __always_inline int vk_filter_match(const struct vk_filter *f, const struct vk_flow_id *id)
{
	if (f->lport >= 0 && id->sport != f->lport)
		return 0;
	if (f->rport >= 0 && id->dport != f->rport)
		return 0;
	if (f->port >= 0 && id->sport != f->port && id->dport != f->port)
		return 0;
	if (f->has_addr && !vk_same_addr(id->saddr, f->addr) && !vk_same_addr(id->daddr, f->addr))
		return 0;
	if (f->netns && id->netns != f->netns)
		return 0;
	if (!f->ncc)
		return 1;
	for (int i = 0; i < VK_FILTER_MAX_CC; i++)
		if (i < (int)f->ncc && vk_same_name(id->ca, f->cc[i]))
			return 1;
	return 0;
}

#endif
