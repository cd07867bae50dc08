// SPDX-License-Identifier: GPL-2.0
/* Addresses, rule and state names as vegasctl prints them (format.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "format.h"

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
