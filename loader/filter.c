// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "filter.h"
#include "params.h"

#define NAME(id, name, what) [id] = #name,

const char *vk_rule_name(__u32 rule)
{
	static const char *const names[VK_NR_RULES] = { VK_RULES(NAME) };

	return rule < VK_NR_RULES ? names[rule] : "?";
}

const char *vk_ca_state_name(__u8 state)
{
	static const char *const names[VK_NR_CA_STATES] = { VK_CA_STATES(NAME) };

	return state < VK_NR_CA_STATES ? names[state] : "?";
}

void vk_filter_init(struct vk_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->lport = f->rport = f->port = -1;
}

static int parse_port(const char *s, int *out, char *err)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > 65535) {
		snprintf(err, VK_ERR_MAX, "'%s' is not a port number", s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_addr(const char *s, __u8 out[16], char *err)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		memset(out, 0, 16);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &a4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, out) == 1)
		return 0;
	snprintf(err, VK_ERR_MAX, "'%s' is not an IPv4 or IPv6 address", s);
	return -1;
}

/* A namespace by inode number or by `ip netns` name. */
static int parse_netns(const char *s, __u32 *out, char *err)
{
	char path[300], *end;
	struct stat st;
	unsigned long v = strtoul(s, &end, 10);

	if (*s && !*end) {
		*out = (__u32)v;
		return 0;
	}
	snprintf(path, sizeof(path), "/var/run/netns/%s", s);
	if (strchr(s, '/') || stat(path, &st)) {
		snprintf(err, VK_ERR_MAX, "no network namespace '%s' (an inode number or an ip-netns name)", s);
		return -1;
	}
	*out = (__u32)st.st_ino;
	return 0;
}

int vk_filter_option(struct vk_filter *f, int argc, char **argv, int *i, char *err)
{
	const char *o = argv[*i], *v;

	if (strcmp(o, "-L") && strcmp(o, "--lport") && strcmp(o, "-R") && strcmp(o, "--rport") &&
	    strcmp(o, "--port") && strcmp(o, "--addr") && strcmp(o, "--netns") &&
	    strcmp(o, "--controller"))
		return 0;
	if (*i + 1 >= argc) {
		snprintf(err, VK_ERR_MAX, "%s needs a value", o);
		return -1;
	}
	v = argv[++*i];
	if (!strcmp(o, "-L") || !strcmp(o, "--lport"))
		return parse_port(v, &f->lport, err) ? -1 : 1;
	if (!strcmp(o, "-R") || !strcmp(o, "--rport"))
		return parse_port(v, &f->rport, err) ? -1 : 1;
	if (!strcmp(o, "--port"))
		return parse_port(v, &f->port, err) ? -1 : 1;
	if (!strcmp(o, "--addr")) {
		f->has_addr = true;
		return parse_addr(v, f->addr, err) ? -1 : 1;
	}
	if (!strcmp(o, "--netns"))
		return parse_netns(v, &f->netns, err) ? -1 : 1;
	if (f->ncc >= VK_FILTER_MAX_CC || strlen(v) >= VK_NAME_MAX) {
		snprintf(err, VK_ERR_MAX, "--controller: too many, or '%s' is too long", v);
		return -1;
	}
	snprintf(f->cc[f->ncc++], VK_NAME_MAX, "%s", v);
	return 1;
}

bool vk_filter_match(const struct vk_filter *f, const struct vk_flow_id *id)
{
	bool cc_ok = f->ncc == 0;

	if (f->lport >= 0 && id->sport != f->lport)
		return false;
	if (f->rport >= 0 && id->dport != f->rport)
		return false;
	if (f->port >= 0 && id->sport != f->port && id->dport != f->port)
		return false;
	if (f->has_addr && memcmp(id->saddr, f->addr, 16) && memcmp(id->daddr, f->addr, 16))
		return false;
	if (f->netns && id->netns != f->netns)
		return false;
	for (int i = 0; i < f->ncc && !cc_ok; i++)
		cc_ok = !strncmp(id->ca, f->cc[i], VK_NAME_MAX);
	return cc_ok;
}

void vk_format_addr(const __u8 addr[16], char *buf, size_t n)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(addr, mapped, 12))
		inet_ntop(AF_INET, addr + 12, buf, n);
	else
		inet_ntop(AF_INET6, addr, buf, n);
}
