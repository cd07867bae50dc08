// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl swap: move a host, or one network namespace, onto a controller.
 * Sets the namespace's default (net.ipv4.tcp_congestion_control, per netns)
 * for new connections, then moves the established ones chosen by the filters
 * through the vk_swap_iter program (bpf_setsockopt(TCP_CONGESTION) from an
 * iter/tcp walk). Reports the counts and the time the move took, and the
 * previous default: `vegasctl swap PREVIOUS` is the rollback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "embed.h"
#include "filter.h"
#include "netns.h"
#include "params.h"
#include "instance.h"

VK_EMBED(vk_swap_iter)

#define DEFAULT_CC "/proc/sys/net/ipv4/tcp_congestion_control"

struct swap_counts {
	unsigned moved, already, failed;
	int first_err;
	double ms;
};

static int read_default(char *buf, size_t n)
{
	FILE *f = fopen(DEFAULT_CC, "r");

	if (!f || !fgets(buf, (int)n, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_default(const char *name)
{
	int fd = open(DEFAULT_CC, O_WRONLY);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, name, strlen(name));
	close(fd);
	return w == (ssize_t)strlen(name) ? 0 : -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Walk this namespace's TCP sockets once, moving the selected ones. */
static int move_established(const struct vk_swap_cfg *cfg, struct swap_counts *c, char *err)
{
	struct bpf_object *obj;
	struct bpf_link *link = NULL;
	struct vk_swap_cfg *ro;
	struct vk_swap_rec rec;
	int fd = -1, ret = -1;
	ssize_t got;
	double t0;

	obj = vk_open_embedded("vk_swap_iter", vk_swap_iter_elf_bytes, err);
	if (!obj)
		return -1;
	ro = vk_obj_global(obj, ".data", "cfg", sizeof(*ro));
	if (!ro) {
		snprintf(err, VK_ERR_MAX, "embedded swap iterator is malformed (build mismatch)");
		goto out;
	}
	*ro = *cfg;
	if (bpf_object__load(obj)) {
		snprintf(err, VK_ERR_MAX, "cannot load the swap iterator: %s (kernel >= 6.0 needed)",
			 strerror(errno));
		goto out;
	}
	t0 = now_ms();
	link = bpf_program__attach_iter(bpf_object__find_program_by_name(obj, "vk_swap"), NULL);
	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (fd < 0) {
		snprintf(err, VK_ERR_MAX, "cannot start the swap iterator: %s", strerror(errno));
		goto out;
	}
	while ((got = read(fd, &rec, sizeof(rec))) == sizeof(rec)) {
		if (rec.result == VK_SWAP_MOVED)
			c->moved++;
		else if (rec.result == VK_SWAP_ALREADY)
			c->already++;
		else if (!c->failed++)
			c->first_err = rec.err;
	}
	c->ms = now_ms() - t0;
	if (got < 0) {
		snprintf(err, VK_ERR_MAX, "reading the swap iterator: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return ret;
}

int vk_cmd_swap(int argc, char **argv, bool json)
{
	struct vk_swap_cfg cfg = { .port = -1, .lport = -1, .rport = -1 };
	struct swap_counts c = {};
	struct vk_filter flt;
	const char *target, *netns = NULL;
	char err[VK_ERR_MAX], prev[64] = "";
	bool set_default = true, move = true;

	if (argc < 1)
		return vk_usage_error("swap: which controller? (see: vegasctl list)");
	target = argv[0];
	if (vk_check_name(target, err))
		return vk_die(err);
	vk_filter_init(&flt);
	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--netns") && i + 1 < argc) {
			netns = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--from") && i + 1 < argc) {
			if (vk_check_name(argv[++i], err))
				return vk_die(err);
			snprintf(cfg.from, sizeof(cfg.from), "%s", argv[i]);
			continue;
		}
		if (!strcmp(argv[i], "--default-only")) {
			move = false;
			continue;
		}
		if (!strcmp(argv[i], "--established-only")) {
			set_default = false;
			continue;
		}
		r = vk_filter_option(&flt, argc, argv, &i, err);
		if (r < 0)
			return vk_die(err);
		if (r == 0 || flt.netns || flt.ncc) {
			snprintf(err, sizeof(err), "swap: unknown option '%s'", argv[i]);
			return vk_usage_error(err);
		}
	}
	if (!move && !set_default)
		return vk_usage_error("swap: --default-only and --established-only exclude each other");
	/* A filtered move leaves other sockets alone; the default would not. */
	if ((cfg.from[0] || flt.port >= 0 || flt.lport >= 0 || flt.rport >= 0 || flt.has_addr) &&
	    set_default && move)
		set_default = false;
	snprintf(cfg.target, sizeof(cfg.target), "%s", target);
	cfg.port = flt.port;
	cfg.lport = flt.lport;
	cfg.rport = flt.rport;
	cfg.has_addr = flt.has_addr;
	memcpy(cfg.addr, flt.addr, sizeof(cfg.addr));

	if (vk_check_env(err))
		return vk_die(err);
	if (!vk_ca_available(target)) {
		snprintf(err, sizeof(err), "no congestion control named '%s' is registered (see: sysctl net.ipv4.tcp_available_congestion_control)",
			 target);
		return vk_die(err);
	}
	if (netns && vk_netns_enter_named(netns, err))
		return vk_die(err);
	if (read_default(prev, sizeof(prev)))
		return vk_die("cannot read " DEFAULT_CC);
	if (set_default && write_default(target)) {
		if (errno == EPERM)	/* tcp_set_default_congestion_control(), non-init netns */
			snprintf(err, sizeof(err), "a namespace's default must be an unrestricted controller and '%s' is restricted: load it with --unrestricted, allow it in net.ipv4.tcp_allowed_congestion_control, or use --established-only",
				 target);
		else
			snprintf(err, sizeof(err), "cannot set the default to '%s': %s", target,
				 strerror(errno));
		return vk_die(err);
	}
	vk_crash_point("swap:default-set");
	if (move && move_established(&cfg, &c, err)) {
		if (set_default)
			write_default(prev);	/* all or nothing */
		return vk_die(err);
	}
	if (json) {
		printf("{\"target\":\"%s\",\"netns\":\"%s\",\"previous_default\":\"%s\",\"default_set\":%s,"
		       "\"moved\":%u,\"already\":%u,\"failed\":%u,\"first_error\":%d,\"move_ms\":%.3f}\n",
		       target, netns ? netns : "", prev, set_default ? "true" : "false", c.moved,
		       c.already, c.failed, c.first_err, c.ms);
	} else {
		if (set_default)
			printf("default: %s -> %s%s%s\n", prev, target, netns ? " in " : "",
			       netns ? netns : "");
		if (move)
			printf("established: %u moved, %u already on %s, %u failed%s in %.1f ms\n",
			       c.moved, c.already, target, c.failed,
			       c.failed ? " (first error below)" : "", c.ms);
		if (set_default)
			printf("roll back: vegasctl swap %s%s%s\n", prev, netns ? " --netns " : "",
			       netns ? netns : "");
	}
	if (c.failed) {
		snprintf(err, sizeof(err), "%u sockets could not be moved: %s", c.failed,
			 strerror(-c.first_err));
		return vk_die(err);
	}
	return 0;
}
