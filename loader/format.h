/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text for what the kernel reports in numbers: addresses, decision rules and
 * congestion states, as `flows` and `trace` print them (docs/DESIGN.md §5).
 * Nothing here reads the system, so the trace's CSV test links it alone.
 */
#ifndef VK_FORMAT_H
#define VK_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include "../bpf/vk_intf.h"

/* Room vk_json_escape needs for at most n bytes: each may become \u00XX. */
#define VK_JSON_BUF(n)	(6 * (n) + 1)
/*
 * s (at most max bytes: kernel names need not end in NUL) as the inside of a
 * JSON string, in buf of n bytes: '"' and '\' escaped, control bytes as
 * \u00XX. Returns buf. Every string from outside vegasctl (a namespace name,
 * a controller name the kernel reports) goes through it before "\"%s\"".
 */
const char *vk_json_escape(char *buf, size_t n, const char *s, size_t max);
/* An IPv4-mapped address as dotted quad, any other as IPv6. */
void vk_format_addr(const __u8 addr[16], char *buf, size_t n);
/* Names from the lists in bpf/vk_intf.h; "?" for a value out of range. */
const char *vk_rule_name(__u32 rule);
const char *vk_ca_state_name(__u8 state);
const char *vk_semantics_name(__u32 sem);
const char *vk_mode_name(__u32 mode);

#endif
