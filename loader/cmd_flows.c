// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl flows: live connections on vegaskit controllers and their internals
 * (baseRTT, RTT, diff, alpha, beta, cwnd, decision counters), read from the
 * shared vk_flows sk_storage by one of the two walks of vk_flows_iter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "embed.h"
#include "env.h"
#include "fault.h"
#include "filter.h"
#include "format.h"
#include "instance.h"
#include "iter.h"
#include "netns.h"

VK_EMBED(vk_flows_iter)

const char vk_usage_flows[] =
	"flows [FILTER]... [--all] [--via sk_storage|tcp] [--json]\n"
	"\n"
	"  --all            connections on any controller, not only vegaskit's\n"
	"  --via WALK       sk_storage: one pass over the shared storage, every namespace;\n"
	"                   tcp: one walk per namespace (default: the first the kernel takes)\n"
	VK_USAGE_FILTER;

/* Is this controller one of ours (registered through vegaskit)? */
static bool ours(const char *ca, char names[][VK_NAME_MAX], int n)
{
	for (int i = 0; i < n; i++)
		if (!strncmp(ca, names[i], VK_NAME_MAX))
			return true;
	return false;
}

static void print_rec(const struct vk_flow_rec *r, bool json, bool first)
{
	const struct vk_flow *f = &r->flow;
	char src[64], dst[64], ca[VK_JSON_BUF(VK_NAME_MAX)];

	vk_format_addr(r->id.saddr, src, sizeof(src));
	vk_format_addr(r->id.daddr, dst, sizeof(dst));
	if (json) {
		printf("%s{\"netns\":%u,\"saddr\":\"%s\",\"sport\":%u,\"daddr\":\"%s\",\"dport\":%u,"
		       "\"ca\":\"%s\",\"state\":\"%s\",\"cwnd\":%u,\"srtt_us\":%u,\"base_rtt_us\":%u,"
		       "\"rtt_us\":%u,\"diff\":%d,\"alpha\":%u,\"beta\":%u,\"decision_cwnd\":%u,"
		       "\"last_rule\":\"%s\",\"mode\":\"%s\",\"decisions\":%llu,\"rules\":{",
		       first ? "" : ",", r->id.netns, src, r->id.sport, dst, r->id.dport,
		       vk_json_escape(ca, sizeof(ca), r->id.ca, sizeof(r->id.ca)),
		       vk_ca_state_name(r->id.ca_state), r->snd_cwnd, r->srtt_us, f->base_rtt_us,
		       f->rtt_us, f->diff, f->alpha, f->beta, f->cwnd, vk_rule_name(f->last_rule),
		       vk_mode_name(f->mode), (unsigned long long)f->decisions);
		for (int i = 1; i < VK_NR_RULES; i++)
			printf("%s\"%s\":%llu", i > 1 ? "," : "", vk_rule_name(i),
			       (unsigned long long)f->rule_count[i]);
		printf("}}");
		return;
	}
	snprintf(src + strlen(src), sizeof(src) - strlen(src), ":%u", r->id.sport);
	snprintf(dst + strlen(dst), sizeof(dst) - strlen(dst), ":%u", r->id.dport);
	printf("%-10u %-21s %-21s %-13s %6u %9u %8u %6d %5u %5u %9llu %6llu %6llu %6llu %6llu\n",
	       r->id.netns, src, dst, r->id.ca, r->snd_cwnd, f->base_rtt_us, f->rtt_us, f->diff,
	       f->alpha, f->beta, (unsigned long long)f->decisions,
	       (unsigned long long)(f->rule_count[VK_RULE_INC] + f->rule_count[VK_RULE_INC_ADAPT]),
	       (unsigned long long)(f->rule_count[VK_RULE_DEC] + f->rule_count[VK_RULE_DEC_ADAPT]),
	       (unsigned long long)f->rule_count[VK_RULE_HOLD],
	       (unsigned long long)f->rule_count[VK_RULE_RENO]);
}

/* What one `flows` run prints, whichever walk produced the records. */
struct dump {
	const struct vk_filter *flt;
	bool all, json;
	char (*names)[VK_NAME_MAX];	/* our instances */
	int nnames, shown;
	struct bpf_link *link;
	char *err;
};

static int print_flow(const void *rec, void *arg)
{
	const struct vk_flow_rec *r = rec;
	struct dump *d = arg;

	if (vk_filter_match(d->flt, &r->id) && (d->all || ours(r->id.ca, d->names, d->nnames)))
		print_rec(r, d->json, d->shown++ == 0);
	return 0;
}

/* Print every matching record of one iterator instance. */
static int print_iter(struct dump *d)
{
	return vk_iter_each(d->link, sizeof(struct vk_flow_rec), print_flow, d, "flows", d->err);
}

/* Open the flows object with only program `prog` to be loaded, and load it. */
static struct bpf_object *load_walk(const char *prog, const char *feature, char *err)
{
	struct bpf_object *obj;

	if (vk_refused(feature)) {
		vk_err(err, "%s", strerror(EPERM));
		return NULL;
	}
	obj = vk_iter_open("vk_flows_iter", vk_flows_iter_elf_bytes, prog, err);
	if (obj && vk_iter_load(obj, err)) {
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* One pass over the shared sk_storage map: every namespace at once. */
static int walk_storage(struct dump *d)
{
	return print_iter(d);
}

/* iter/tcp sees the namespace it is started in: start one per namespace. */
static int walk_one_netns(__u32 inum, void *arg)
{
	struct dump *d = arg;

	if (d->flt->netns && d->flt->netns != inum)
		return 0;
	return print_iter(d);
}

static int walk_tcp(struct dump *d)
{
	return vk_netns_each(walk_one_netns, d, d->err) ? -1 : 0;
}

static const struct walk {
	const char *via, *prog, *feature;	/* feature: its `vegasctl features` key */
	const char *map;			/* the map the iterator walks, if any */
	int (*run)(struct dump *d);
} walks[] = {
	{ "sk_storage", "vk_dump_flows", "iter_sk_storage_map", "vk_flows", walk_storage },
	{ "tcp", "vk_dump_flows_tcp", "iter_tcp_sk_storage", NULL, walk_tcp },
};

/*
 * Load the first walk the kernel accepts (only `via` if given), then print.
 * The single-pass sk_storage walk comes first: it also sees connections in a
 * namespace that no task or mount holds any more (docs/DESIGN.md §10).
 */
static int dump(struct dump *d, const char *via)
{
	struct bpf_object *obj = NULL;
	const struct walk *w = NULL;
	char why[2][VK_ERR_MAX] = { "", "" };
	int ret;

	for (size_t i = 0; i < sizeof(walks) / sizeof(walks[0]) && !obj; i++) {
		if (via && strcmp(via, walks[i].via))
			continue;
		w = &walks[i];
		obj = load_walk(w->prog, w->feature, why[i]);
		/* Attached here too: a refusal at attach falls back like one at load. */
		d->link = obj ? vk_iter_attach(obj, w->prog, w->map, "flows", why[i]) : NULL;
		if (obj && !d->link) {
			bpf_object__close(obj);
			obj = NULL;
		}
		if (!obj && vk_cli.verbose)
			fprintf(stderr, "vegasctl: flows: the kernel refused the %s walk: %s\n",
				w->via, why[i]);
	}
	if (!obj) {
		if (via)
			snprintf(d->err, VK_ERR_MAX, "this kernel refuses the %s walk of flows: %s",
				 via, why[w - walks]);
		else
			snprintf(d->err, VK_ERR_MAX, "cannot list flows: this kernel refuses both the sk_storage walk (%.60s) and the per-namespace TCP walk (%.60s)",
				 why[0], why[1]);
		return vk_die(d->err);
	}
	if (d->json)
		printf("[");
	else
		printf("%-10s %-21s %-21s %-13s %6s %9s %8s %6s %5s %5s %9s %6s %6s %6s %6s\n", "NETNS",
		       "LOCAL", "REMOTE", "CC", "CWND", "BASE_RTT", "RTT", "DIFF", "ALPHA", "BETA",
		       "DECISIONS", "INC", "DEC", "HOLD", "RENO");
	ret = w->run(d);
	if (d->json)
		printf("]\n");
	fflush(stdout);
	bpf_link__destroy(d->link);
	bpf_object__close(obj);
	return ret ? vk_die(d->err) : 0;
}

/* Returns -1 to go on, or the exit status (help, usage error). */
static int parse(struct vk_filter *flt, struct dump *d, const char **via, int argc, char **argv)
{
	int all = 0;
	const struct option opts[] = {
		VK_OPTS_GLOBAL, VK_OPTS_FILTER,
		{ "all", no_argument, &all, 1 },
		{ "via", required_argument, NULL, VK_OPT_CMD },
		{}
	};
	struct vk_opts o = { .longopts = opts, .filter = flt };
	int c;

	while ((c = vk_getopt(argc, argv, &o)) >= 0) {
		if (c != VK_OPT_CMD)
			continue;
		if (*via)
			return vk_usage_error("flows: --via is given twice ('%s', '%s'): give it once",
					      *via, optarg);
		if (strcmp(optarg, "sk_storage") && strcmp(optarg, "tcp"))
			return vk_usage_error("flows: --via takes sk_storage or tcp, not '%s'", optarg);
		*via = optarg;
	}
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	d->all = all;
	return -1;
}

int vk_cmd_flows(int argc, char **argv)
{
	struct vk_filter flt;
	char err[VK_ERR_MAX] = "";
	const char *via = NULL;
	struct dump d = { .flt = &flt, .err = err };
	int ret;

	vk_filter_init(&flt);
	ret = parse(&flt, &d, &via, argc, argv);
	if (ret >= 0)
		return ret;
	d.json = vk_cli.json;
	if (vk_check_env(err))
		return vk_die(err);
	if (access(VK_PIN_FLOWS, F_OK)) {	/* nothing loaded: no flows, not an error */
		printf(d.json ? "[]\n" : "no vegaskit controller is loaded\n");
		return 0;
	}
	d.nnames = vk_instance_names(&d.names);
	if (d.nnames < 0)
		return vk_die("cannot read " VK_PIN_CC);
	ret = dump(&d, via);
	free(d.names);
	return ret;
}
