// SPDX-License-Identifier: GPL-2.0
/* Addresses, rule, state and instance text as vegasctl prints them (format.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "format.h"
#include "tracelease.h"
#include "instance.h"
#include "params.h"
#include "variants.h"

#define NAME(id, name, what) [id] = #name,

const char *vk_rule_name(__u32 rule)
{
	static const char *const names[VK_NR_RULES] = { VK_RULES(NAME) };

	return rule < VK_NR_RULES ? names[rule] : "?";
}

const char *vk_semantics_name(__u32 sem)
{
	static const char *const names[VK_NR_SEMANTICS] = { VK_SEMANTICS(NAME) };

	return sem < VK_NR_SEMANTICS ? names[sem] : "?";
}

const char *vk_mode_name(__u32 mode)
{
	static const char *const names[VK_NR_MODES] = { VK_MODES(NAME) };

	return mode < VK_NR_MODES ? names[mode] : "?";
}

const char *vk_ca_state_name(__u8 state)
{
	static const char *const names[VK_NR_CA_STATES] = { VK_CA_STATES(NAME) };

	return state < VK_NR_CA_STATES ? names[state] : "?";
}

const char *vk_json_escape(char *buf, size_t n, const char *s, size_t max)
{
	size_t o = 0;

	for (size_t i = 0; i < max && s[i] && o + 7 <= n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			o += snprintf(buf + o, n - o, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			o += snprintf(buf + o, n - o, "\\u%04x", c);
		else
			buf[o++] = (char)c;
	}
	if (n)
		buf[o < n ? o : n - 1] = '\0';
	return buf;
}

void vk_format_addr(const __u8 addr[16], char *buf, size_t n)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(addr, mapped, 12))
		inet_ntop(AF_INET, addr + 12, buf, n);
	else
		inet_ntop(AF_INET6, addr, buf, n);
}

static const char *instance_state(const struct vk_instance *in)
{
	if (!in->committed)
		return "incomplete";	/* interrupted load or unload: `unload` removes it */
	if (!in->registered)
		return "stale";		/* pinned link, but the kernel lost it */
	if (in->other_version)
		return "other-version";	/* loaded by a vegasctl of another params layout */
	if (!in->has_params || in->params.ops_map_id != in->map_id)
		return "inconsistent";	/* params do not belong to the live controller */
	return "registered";
}

/* "off", "decisions", "acks", "cost" or those joined by "+", or "off (reader gone)" when bits are set
 * but no live reader wants them or holds the lease (it died: a live reader's sweep
 * clears them, or, with none left, nothing is emitted). */
static const char *tracing_state(const struct vk_instance *in)
{
	static const char *const names[] = { "off", "decisions", "acks", "decisions+acks", "cost",
					     "decisions+cost", "acks+cost", "decisions+acks+cost" };
	__u32 bits = in->has_params ? in->params.trace & VK_TRACE_BITS : 0;

	if (!bits)
		return "off";
	return vk_tracing_live(in->name, bits) ? names[bits] : "off (reader gone)";
}

void vk_print_instance(const struct vk_instance *in, bool json)
{
	char name[VK_JSON_BUF(VK_NAME_MAX)];

	if (json) {
		printf("{\"name\":\"%s\",\"variant\":\"%s\",\"state\":\"%s\",\"restricted\":%s,"
		       "\"generation\":%u,\"registration\":\"%s\",\"link_id\":%u,\"map_id\":%u,"
		       "\"tracing\":\"%s\",\"params\":",
		       vk_json_escape(name, sizeof(name), in->name, sizeof(in->name)),
		       in->has_params ? vk_variant_name(in->params.variant) : "unknown",
		       instance_state(in),
		       in->params.ca_flags & TCP_CONG_NON_RESTRICTED ? "false" : "true",
		       in->params.generation, in->by_map ? "map" : "link", in->link_id, in->map_id,
		       tracing_state(in));
		if (in->has_params)
			vk_params_print(stdout, &in->params, true);
		else
			printf("null");
		printf("}");
		return;
	}
	printf("%-15s %-9s %-10s ", in->name,
	       in->has_params ? vk_variant_name(in->params.variant) : "?", instance_state(in));
	if (in->has_params)
		vk_params_print(stdout, &in->params, false);
	if (strcmp(tracing_state(in), "off"))
		printf(" [tracing: %s]", tracing_state(in));
	printf("\n");
}
