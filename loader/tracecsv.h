/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace record as the CSV line `vegasctl trace` prints (docs/DESIGN.md §5.1),
 * written without printf: at a record every few ACKs the reader's formatting
 * was most of what tracing cost the host. A connection's identity columns are
 * formatted once and kept, keyed by the identity, in a small table.
 */
#ifndef VK_TRACECSV_H
#define VK_TRACECSV_H

#include <stdbool.h>
#include <stddef.h>
#include "../bpf/vk_intf.h"

/* The longest line vk_trace_csv() writes, its newline included. */
#define VK_TRACE_CSV_MAX	512
#define VK_TRACE_CSV_IDS	64	/* identities kept (a power of two) */

extern const char vk_trace_csv_header[];

struct vk_csv_id {
	struct vk_flow_id id;		/* ca_state and pad zeroed: not part of the key */
	unsigned short len;
	bool used;
	char text[200];		/* "netns,saddr,sport,daddr,dport,ca" */
};

struct vk_csv_ids {
	struct vk_csv_id slot[VK_TRACE_CSV_IDS];
};

/* e as one CSV line in buf (VK_TRACE_CSV_MAX bytes); returns its length. */
size_t vk_trace_csv(char *buf, const struct vk_event *e, struct vk_csv_ids *ids);

#endif
