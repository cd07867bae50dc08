// SPDX-License-Identifier: GPL-2.0
/*
 * A TUN device inside another network namespace.
 *
 * A TUN device lives in the namespace of the process that opened
 * /dev/net/tun (the file's socket takes current's netns at open time), so we
 * setns() there, open and configure, and setns() home again. The fd keeps
 * working from any namespace. The device is not persistent: it disappears
 * when this process closes the fd or dies, however it dies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include "linkemu.h"

/*
 * TSO/GSO/GRO off, so the stack hands the TUN one real packet per skb and
 * every queue counts real packets (docs/DESIGN.md §6). Without IFF_VNET_HDR a TUN has
 * no hardware offloads anyway and software GSO is segmented before the
 * driver, but GSO still makes TCP build 64 KB bursts; turn it off. The legacy
 * ethtool commands reach the generic feature code, no driver op needed.
 */
static int offloads_off(int sock, const char *dev, char *err, size_t errlen)
{
	static const struct { __u32 cmd; const char *name; } feats[] = {
		{ ETHTOOL_STSO, "tso" }, { ETHTOOL_SGSO, "gso" }, { ETHTOOL_SGRO, "gro" },
	};
	struct ethtool_value ev;
	struct ifreq ifr;
	size_t i;

	for (i = 0; i < sizeof(feats) / sizeof(feats[0]); i++) {
		memset(&ifr, 0, sizeof(ifr));
		strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
		ev.cmd = feats[i].cmd;
		ev.data = 0;
		ifr.ifr_data = (void *)&ev;
		/* EOPNOTSUPP: the feature cannot be on in the first place. */
		if (ioctl(sock, SIOCETHTOOL, &ifr) < 0 && errno != EOPNOTSUPP) {
			snprintf(err, errlen, "%s: %s off: %s", dev, feats[i].name,
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int configure(const char *dev, unsigned int mtu, char *err, size_t errlen)
{
	struct ifreq ifr;
	int sock, ret = -1;

	/* A socket belongs to the namespace it was created in: this one. */
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(sock, SIOCSIFMTU, &ifr) < 0) {
		snprintf(err, errlen, "%s: mtu %u: %s", dev, mtu, strerror(errno));
		goto out;
	}
	if (offloads_off(sock, dev, err, errlen))
		goto out;
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0) {
		snprintf(err, errlen, "%s: get flags: %s", dev, strerror(errno));
		goto out;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0) {
		snprintf(err, errlen, "%s: up: %s", dev, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	close(sock);
	return ret;
}

/*
 * Create TUN `dev` in namespace `ns` (a name under /var/run/netns, or a path
 * if it contains '/'), up, with the given MTU. Returns a non-blocking fd, or
 * -1 with a message in err. Always returns to the namespace home_ns.
 */
int tun_create(int home_ns, const char *ns, const char *dev, unsigned int mtu,
	       char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct ifreq ifr;
	int nsfd, fd = -1;

	if (strchr(ns, '/'))
		snprintf(path, sizeof(path), "%s", ns);
	else
		snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		snprintf(err, errlen, "namespace %s: %s", path, strerror(errno));
		return -1;
	}
	if (setns(nsfd, CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "setns %s: %s", path, strerror(errno));
		close(nsfd);
		return -1;
	}
	close(nsfd);

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
		goto home;
	}
	memset(&ifr, 0, sizeof(ifr));
	/* IFF_NO_PI: reads and writes are bare IP packets, what the rate counts. */
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		snprintf(err, errlen, "%s in %s: TUNSETIFF: %s%s", dev, ns, strerror(errno),
			 errno == EBUSY || errno == EINVAL ? " (name taken?)" : "");
		goto fail;
	}
	if (configure(dev, mtu, err, errlen))
		goto fail;
	goto home;
fail:
	close(fd);
	fd = -1;
home:
	if (setns(home_ns, CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "setns back home: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}
