// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl flows: live connections on vegaskit controllers and their internals
 * (baseRTT, RTT, diff, alpha, beta, cwnd, decision counters), read from the
 * shared vk_flows sk_storage by the bpf_sk_storage_map iterator.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vk_cmds.h"
#include "vk_embed.h"
#include "vk_format.h"
#include "vk_params.h"
#include "vk_registry.h"

VK_EMBED(vk_flows_iter)

#define MAX_INSTANCES 256

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
	char src[64], dst[64];

	vk_format_addr(r->id.saddr, src, sizeof(src));
	vk_format_addr(r->id.daddr, dst, sizeof(dst));
	if (json) {
		printf("%s{\"netns\":%u,\"saddr\":\"%s\",\"sport\":%u,\"daddr\":\"%s\",\"dport\":%u,"
		       "\"ca\":\"%s\",\"state\":\"%s\",\"cwnd\":%u,\"srtt_us\":%u,\"base_rtt_us\":%u,"
		       "\"rtt_us\":%u,\"diff\":%d,\"alpha\":%u,\"beta\":%u,\"decision_cwnd\":%u,"
		       "\"last_rule\":\"%s\",\"decisions\":%llu,\"rules\":{",
		       first ? "" : ",", r->id.netns, src, r->id.sport, dst, r->id.dport, r->id.ca,
		       vk_ca_state_name(r->id.ca_state), r->snd_cwnd, r->srtt_us, f->base_rtt_us,
		       f->rtt_us, f->diff, f->alpha, f->beta, f->cwnd, vk_rule_name(f->last_rule),
		       (unsigned long long)f->decisions);
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

/* Run the iterator once and print every matching record. */
static int dump(const struct vk_filter *flt, bool all, bool json)
{
	static char names[MAX_INSTANCES][VK_NAME_MAX];
	struct bpf_object *obj;
	struct bpf_link *link = NULL;
	struct vk_flow_rec rec;
	char err[VK_ERR_MAX];
	int iter_fd = -1, n, shown = 0, ret = 1;
	ssize_t got;

	n = vk_instance_names(names, MAX_INSTANCES);
	obj = vk_open_embedded("vk_flows_iter", vk_flows_iter_elf_bytes, err);
	if (!obj)
		return vk_die(err);
	if (bpf_object__load(obj)) {
		snprintf(err, sizeof(err), "cannot load the flows iterator: %s", strerror(errno));
		vk_die(err);
		goto out;
	}
	{
		union bpf_iter_link_info info = {};
		LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
			    .link_info_len = sizeof(info));

		info.map.map_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "vk_flows"));
		link = bpf_program__attach_iter(bpf_object__find_program_by_name(obj, "vk_dump_flows"),
						&opts);
	}
	iter_fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (iter_fd < 0) {
		snprintf(err, sizeof(err), "cannot start the flows iterator: %s", strerror(errno));
		vk_die(err);
		goto out;
	}
	if (json)
		printf("[");
	else
		printf("%-10s %-21s %-21s %-13s %6s %9s %8s %6s %5s %5s %9s %6s %6s %6s %6s\n", "NETNS",
		       "LOCAL", "REMOTE", "CC", "CWND", "BASE_RTT", "RTT", "DIFF", "ALPHA", "BETA",
		       "DECISIONS", "INC", "DEC", "HOLD", "RENO");
	while ((got = read(iter_fd, &rec, sizeof(rec))) == sizeof(rec)) {
		if (!vk_filter_match(flt, &rec.id) || (!all && !ours(rec.id.ca, names, n)))
			continue;
		print_rec(&rec, json, shown++ == 0);
	}
	if (json)
		printf("]\n");
	if (got < 0) {
		snprintf(err, sizeof(err), "reading the flows iterator: %s", strerror(errno));
		vk_die(err);
		goto out;
	}
	ret = 0;
out:
	if (iter_fd >= 0)
		close(iter_fd);
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return ret;
}

int vk_cmd_flows(int argc, char **argv, bool json)
{
	struct vk_filter flt;
	char err[VK_ERR_MAX];
	bool all = false;

	vk_filter_init(&flt);
	for (int i = 0; i < argc; i++) {
		int r = vk_filter_option(&flt, argc, argv, &i, err);

		if (r < 0)
			return vk_die(err);
		if (r > 0)
			continue;
		if (!strcmp(argv[i], "--all")) {
			all = true;
			continue;
		}
		snprintf(err, sizeof(err), "flows: unknown option '%s'", argv[i]);
		return vk_usage_error(err);
	}
	if (vk_check_env(err))
		return vk_die(err);
	if (access(VK_PIN_FLOWS, F_OK)) {	/* nothing loaded: no flows, not an error */
		printf(json ? "[]\n" : "no vegaskit controller is loaded\n");
		return 0;
	}
	return dump(&flt, all, json);
}
