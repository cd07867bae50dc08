// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl swap: move a host, or one network namespace, onto a controller.
 * Sets the namespace's default (net.ipv4.tcp_congestion_control, per netns)
 * for new connections, then moves the established ones chosen by the filters
 * through the vk_swap_iter program (bpf_setsockopt(TCP_CONGESTION) from an
 * iter/tcp walk). Reports the counts and the time the move took, and the
 * previous default: `vegasctl swap PREVIOUS` is the rollback.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "cli.h"
#include "embed.h"
#include "env.h"
#include "fault.h"
#include "filter.h"
#include "format.h"
#include "move.h"
#include "names.h"
#include "netns.h"

const char vk_usage_swap[] =
	"swap CC [--netns NAME] [--from CC] [-L P] [-R P] [--port P] [--addr A]\n"
	"     [--default-only | --established-only] [--json]\n"
	"\n"
	"  --netns NAME         in the network namespace `ip netns` calls NAME\n"
	"  --from CC            move only connections now on CC\n"
	"  -L/--lport P, -R/--rport P, --port P, --addr A\n"
	"                       move only connections with that local port, remote port,\n"
	"                       port at either end, address at either end; the default\n"
	"                       is then left alone\n"
	"  --default-only       set the default, move nothing\n"
	"  --established-only   move established connections, leave the default\n"
	"The previous default is printed: `vegasctl swap PREVIOUS` rolls back.\n";

enum { OPT_NETNS = VK_OPT_CMD, OPT_FROM };

struct swap_args {
	const char *target, *netns;
	struct vk_swap_cfg cfg;		/* its filter: ports, address, --from */
	int default_only, established_only;
};

/* Returns -1 to go on, or the exit status (help, usage error). */
static int parse(struct swap_args *a, int argc, char **argv, char *err)
{
	const struct option opts[] = {
		VK_OPTS_GLOBAL, VK_OPTS_FILTER_ENDS,
		{ "netns", required_argument, NULL, OPT_NETNS },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "default-only", no_argument, &a->default_only, 1 },
		{ "established-only", no_argument, &a->established_only, 1 },
		{}
	};
	struct vk_opts o = { .longopts = opts, .filter = &a->cfg.filter };
	int c;

	while ((c = vk_getopt(argc, argv, &o)) >= 0) {
		if (c == OPT_NETNS && a->netns) {
			return vk_usage_error("swap: --netns is given twice ('%s', '%s'): give it once",
					      a->netns, optarg);
		} else if (c == OPT_NETNS) {
			a->netns = optarg;
		} else if (c == OPT_FROM) {
			if (vk_filter_controller(&a->cfg.filter, optarg, err))
				return vk_die(err);
		}
	}
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind >= argc)
		return vk_usage_error("swap: which controller? (see: vegasctl list)");
	if (argc - optind > 1)
		return vk_unexpected_arg(argv[optind + 1]);
	a->target = argv[optind];
	if (vk_check_name(a->target, err))
		return vk_die(err);
	if (a->default_only && a->established_only)
		return vk_usage_error("swap: --default-only and --established-only exclude each other");
	return -1;
}

int vk_cmd_swap(int argc, char **argv)
{
	struct swap_args a = {};
	struct vk_swap_cfg *cfg = &a.cfg;
	const struct vk_filter *flt = &a.cfg.filter;
	struct vk_move_counts c = {};
	char err[VK_ERR_MAX] = "", prev[64] = "";
	const char *target, *netns;
	bool set_default, move;
	int ret;

	vk_filter_init(&a.cfg.filter);
	ret = parse(&a, argc, argv, err);
	if (ret >= 0)
		return ret;
	target = a.target;
	netns = a.netns;
	set_default = !a.established_only;
	move = !a.default_only;
	/* A filtered move leaves other sockets alone; the default would not. */
	if ((flt->ncc || flt->port >= 0 || flt->lport >= 0 || flt->rport >= 0 || flt->has_addr) &&
	    set_default && move)
		set_default = false;
	snprintf(cfg->target, sizeof(cfg->target), "%s", target);

	if (vk_check_env(err))
		return vk_die(err);
	if (!vk_ca_available(target)) {
		snprintf(err, sizeof(err), "no congestion control named '%s' is registered (see: sysctl net.ipv4.tcp_available_congestion_control)",
			 target);
		return vk_die(err);
	}
	if (netns && vk_netns_enter_named(netns, err))
		return vk_die(err);
	if (vk_default_read(prev, sizeof(prev)))
		return vk_die("cannot read " VK_DEFAULT_CC);
	/*
	 * Outside the initial namespace the kernel refuses a restricted default
	 * (tcp_set_default_congestion_control), and that refusal leaks a
	 * reference to the controller: it could then never be freed. So the
	 * write is never tried (docs/DESIGN.md §4.5).
	 */
	if (set_default && !vk_in_init_netns() && !vk_ca_unrestricted(target)) {
		snprintf(err, sizeof(err), "a namespace's default must be an unrestricted controller and '%s' is restricted: load it with --unrestricted, allow it in net.ipv4.tcp_allowed_congestion_control, or use --established-only",
			 target);
		return vk_die(err);
	}
	if (set_default && vk_default_write(target)) {
		snprintf(err, sizeof(err), "cannot set the default to '%s': %s", target, strerror(errno));
		return vk_die(err);
	}
	vk_crash_point("swap:default-set");
	if (move && vk_move_established(cfg, &c, err)) {
		/*
		 * All or nothing. prev is safe to write back: a controller that
		 * became a default was made unrestricted by the kernel then.
		 */
		if (set_default && vk_default_write(prev))
			snprintf(err + strlen(err), VK_ERR_MAX - strlen(err),
				 "; and restoring the default '%s' failed: %s", prev, strerror(errno));
		return vk_die(err);
	}
	if (vk_cli.json) {
		char ns[VK_JSON_BUF(NAME_MAX)], pv[VK_JSON_BUF(sizeof(prev))];

		/* target passed vk_check_name; the others are anyone's names */
		printf("{\"target\":\"%s\",\"netns\":\"%s\",\"previous_default\":\"%s\",\"default_set\":%s,"
		       "\"moved\":%u,\"upgraded\":%u,\"already\":%u,\"failed\":%u,\"first_error\":%d,"
		       "\"move_ms\":%.3f}\n",
		       target, vk_json_escape(ns, sizeof(ns), netns ? netns : "", NAME_MAX),
		       vk_json_escape(pv, sizeof(pv), prev, sizeof(prev)),
		       set_default ? "true" : "false", c.moved, c.upgraded, c.already, c.failed,
		       c.first_err, c.ms);
	} else {
		/* a swap to the default's own name (an upgrade's old sockets) changes no default:
		 * there is nothing to roll back to, and older code cannot be asked for by name */
		bool same = !strcmp(prev, target);
		const char *in = netns ? " in " : "", *ns = netns ? netns : "";

		if (set_default && same)
			printf("default: %s (already)%s%s\n", target, in, ns);
		else if (set_default)
			printf("default: %s -> %s%s%s\n", prev, target, in, ns);
		if (move && c.upgraded)
			printf("established: %u moved (%u of them from older code of %s), %u already on "
			       "%s, %u failed%s in %.1f ms\n", c.moved, c.upgraded, target, c.already,
			       target, c.failed, c.failed ? " (first error below)" : "", c.ms);
		else if (move)
			printf("established: %u moved, %u already on %s, %u failed%s in %.1f ms\n",
			       c.moved, c.already, target, c.failed,
			       c.failed ? " (first error below)" : "", c.ms);
		if (set_default && !same)
			printf("roll back: vegasctl swap %s%s%s\n", prev, netns ? " --netns " : "", ns);
	}
	if (c.failed) {
		snprintf(err, sizeof(err), "%u sockets could not be moved: %s", c.failed,
			 strerror(-c.first_err));
		return vk_die(err);
	}
	return 0;
}
