// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl reset: the host back to the kernel's own controllers, dropping no
 * connection (docs/DESIGN.md §4.7; what vegaskit.service does on stop). In
 * every network namespace a task or a mount holds: a default that is one of
 * ours becomes CC, and established connections on ours move to CC. Then
 * every instance no connection runs any more is unloaded; one that still has
 * some (a move failed) stays, and reset fails saying so. Idempotent: on a host
 * without vegaskit it changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "env.h"
#include "filter.h"
#include "instance.h"
#include "move.h"
#include "names.h"
#include "netns.h"

const char vk_usage_reset[] =
	"reset [--to CC]\n"
	"\n"
	"  --to CC   the kernel controller defaults and connections go to\n"
	"            (default: cubic if registered, else reno)\n";

struct reset {
	char (*names)[VK_NAME_MAX];
	int n;
	const char *to;
	unsigned defaults, moved, failed;
	char *err;
};

static bool ours(const struct reset *r, const char *cc)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->names[i], cc))
			return true;
	return false;
}

static int reset_ns(__u32 inum, void *arg)
{
	struct reset *r = arg;
	char cur[VK_NAME_MAX];
	(void)inum;

	if (!vk_default_read(cur, sizeof(cur)) && ours(r, cur)) {
		if (vk_default_write(r->to))
			return vk_err(r->err, "cannot set a namespace's default to '%s' (outside the "
				      "initial namespace it must be unrestricted: see "
				      "net.ipv4.tcp_allowed_congestion_control)", r->to);
		r->defaults++;
	}
	/* the filter takes VK_FILTER_MAX_CC controllers at a time */
	for (int i = 0; i < r->n; i += VK_FILTER_MAX_CC) {
		struct vk_swap_cfg cfg = {};
		struct vk_move_counts c = {};

		vk_filter_init(&cfg.filter);
		snprintf(cfg.target, sizeof(cfg.target), "%s", r->to);
		for (int k = i; k < r->n && k < i + VK_FILTER_MAX_CC; k++)
			if (vk_filter_controller(&cfg.filter, r->names[k], r->err))
				return -1;
		if (vk_move_established(&cfg, &c, r->err))
			return -1;
		r->moved += c.moved;
		r->failed += c.failed;
	}
	return 0;
}

int vk_cmd_reset(int argc, char **argv)
{
	const struct option opts[] = { VK_OPTS_GLOBAL, { "to", required_argument, NULL, 't' }, {} };
	struct vk_opts o = { .longopts = opts };
	char err[VK_ERR_MAX] = "";
	struct reset r = { .err = err };
	char keep[VK_NAME_MAX + 32] = "";
	int c, ret = 0, unloaded = 0, kept = 0;

	while ((c = vk_getopt(argc, argv, &o)) >= 0)
		if (c == 't' && r.to)
			return vk_usage_error("reset: --to is given twice ('%s', '%s')", r.to, optarg);
		else if (c == 't')
			r.to = optarg;
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	if (r.to && vk_check_name(r.to, err))
		return vk_die(err);
	if (vk_check_env(err))
		return vk_die(err);
	if (!r.to)
		r.to = vk_ca_available("cubic") ? "cubic" : "reno";
	r.n = vk_instance_names(&r.names);
	if (r.n < 0)
		return vk_die("cannot read " VK_PIN_CC);
	if (ours(&r, r.to) || !vk_ca_available(r.to)) {
		snprintf(err, sizeof(err), "--to %s: %s", r.to, ours(&r, r.to) ?
			 "that is one of vegaskit's, which reset unloads" :
			 "no congestion control of that name is registered");
		free(r.names);
		return vk_die(err);
	}
	if (r.n)
		ret = vk_netns_each(reset_ns, &r, err);
	/* an instance some connection still runs (a move that failed) stays: unloaded,
	 * no name would reach its code, and no reset could move them later */
	for (int i = 0; !ret && i < r.n; i++) {
		unsigned on = 0;

		if (vk_sockets_on(r.names[i], &on, err) ||
		    (!on && vk_instance_unload(r.names[i], err)))
			ret = -1;
		else if (on && !kept++)
			snprintf(keep, sizeof(keep), "%s (%u connections)", r.names[i], on);
		else if (!on)
			unloaded++;
	}
	if (vk_cli.json)
		printf("{\"to\":\"%s\",\"defaults_reset\":%u,\"moved\":%u,\"failed\":%u,\"unloaded\":%d}\n",
		       r.to, r.defaults, r.moved, r.failed, unloaded);
	else
		printf("reset to %s: %u namespace default%s, %u connection%s moved (%u failed), "
		       "%d controller%s unloaded\n", r.to, r.defaults, r.defaults == 1 ? "" : "s",
		       r.moved, r.moved == 1 ? "" : "s", r.failed, unloaded, unloaded == 1 ? "" : "s");
	free(r.names);
	if (!ret && kept) {
		snprintf(err, sizeof(err), "%u connections could not be moved to %s: %d controller%s "
			 "kept loaded, %s%s; reset again once they close or move", r.failed, r.to, kept,
			 kept == 1 ? "" : "s", keep, kept > 1 ? " and others" : "");
		ret = -1;
	}
	return ret ? vk_die(err) : 0;
}
