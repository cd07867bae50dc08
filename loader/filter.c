// SPDX-License-Identifier: GPL-2.0
/* Connection filters: parsing the FILTER option values, and matching (filter.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "filter.h"
#include "names.h"
#include "netns.h"

void vk_filter_init(struct vk_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->lport = f->rport = f->port = -1;
}

int vk_filter_port(const char *s, int *out, char *err)
{
	unsigned long long v;

	if (*out != -1)
		return vk_err(err, "a port filter is given twice ('%s'): give each of -L, -R, --port once", s);
	if (vk_parse_uint(s, 65535, &v))
		return vk_err(err, "'%s' is not a port number (0-65535, digits only)", s);
	*out = (int)v;
	return 0;
}

int vk_filter_addr(struct vk_filter *f, const char *s, char *err)
{
	struct in_addr a4;

	if (f->has_addr)
		return vk_err(err, "--addr is given twice ('%s'): give it once", s);
	f->has_addr = 1;
	if (inet_pton(AF_INET, s, &a4) == 1) {
		memset(f->addr, 0, 16);
		f->addr[10] = f->addr[11] = 0xff;
		memcpy(f->addr + 12, &a4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, f->addr) == 1)
		return 0;
	return vk_err(err, "'%s' is not an IPv4 or IPv6 address", s);
}

/* A namespace by inode number or by `ip netns` name. */
int vk_filter_netns(struct vk_filter *f, const char *s, char *err)
{
	char path[VK_NETNS_PATH_MAX];
	struct stat st;
	unsigned long long v;

	if (f->netns)
		return vk_err(err, "--netns is given twice ('%s'): give it once", s);
	if (*s >= '0' && *s <= '9') {
		if (vk_parse_uint(s, 0xffffffffull, &v) || !v)
			return vk_err(err, "'%s' is not a namespace inode number (1-4294967295)", s);
		f->netns = (__u32)v;
		return 0;
	}
	if (vk_netns_path(s, path, sizeof(path), err))
		return -1;
	if (stat(path, &st))
		return vk_err(err, "no network namespace '%s' (an inode number or an ip-netns name)", s);
	f->netns = (__u32)st.st_ino;
	return 0;
}

int vk_filter_controller(struct vk_filter *f, const char *name, char *err)
{
	if (vk_check_name(name, err))
		return -1;
	for (__u32 i = 0; i < f->ncc; i++)
		if (!strcmp(f->cc[i], name))
			return vk_err(err, "--controller '%s' is given twice", name);
	if (f->ncc >= VK_FILTER_MAX_CC)
		return vk_err(err, "at most %d --controller options: '%s' is one too many",
			      VK_FILTER_MAX_CC, name);
	snprintf(f->cc[f->ncc++], VK_NAME_MAX, "%s", name);
	return 0;
}
