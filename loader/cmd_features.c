// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl features: which kernel features vegaskit uses are here, in the
 * manner of `bpftool feature probe`. Each is probed, never assumed from the
 * kernel version: builds of one version differ (docs/DESIGN.md §10). BTF
 * facts come from the running kernel's BTF; program types and helpers from
 * loading the smallest program that needs them (bpf/vk_probe.bpf.c).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "instance.h"
#include "format.h"
#include "embed.h"
#include "env.h"
#include "fault.h"
#include "iter.h"

VK_EMBED(vk_probe)

const char vk_usage_features[] = "features [--json]";

/* A kernel feature vegaskit uses, and its probe. */
struct feature {
	const char *name;	/* key in `vegasctl features --json` */
	const char *what;
	const char *used_by;
	bool (*probe)(void);
};

static bool btf_has(const char *name, int kind)
{
	struct btf *btf = btf__parse_raw(VK_VMLINUX_BTF);
	bool has = btf && btf__find_by_name_kind(btf, name, kind) > 0;

	btf__free(btf);
	return has;
}

/* Load only `prog` of the probe object; the storage map only if it needs one. */
static bool prog_loads(const char *prog)
{
	char err[VK_ERR_MAX] = "";
	struct bpf_object *obj = vk_iter_open("vk_probe", vk_probe_elf_bytes, prog, err);
	bool ok;

	if (!obj)
		return false;
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "probe_storage"),
				!strcmp(prog, "probe_iter_tcp_storage"));
	ok = vk_iter_load(obj, err) == 0;
	bpf_object__close(obj);
	return ok;
}

static bool p_btf(void) { return access(VK_VMLINUX_BTF, R_OK) == 0 && btf_has("sock", BTF_KIND_STRUCT); }
static bool p_struct_ops(void) { return btf_has("bpf_struct_ops_tcp_congestion_ops", BTF_KIND_STRUCT); }
static bool p_struct_ops_link(void) { return btf_has("bpf_struct_ops_link", BTF_KIND_STRUCT); }
static bool p_link_update(void) { return btf_has("bpf_struct_ops_map_link_update", BTF_KIND_FUNC); }
static bool p_one_call(void) { return vk_one_call_supported(); }
static bool p_sk_storage(void) { return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_SK_STORAGE, NULL) == 1; }
static bool p_ringbuf(void) { return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1; }
static bool p_iter_tcp(void) { return prog_loads("probe_iter_tcp"); }
static bool p_iter_tcp_storage(void) { return prog_loads("probe_iter_tcp_storage"); }
static bool p_iter_sk_storage(void) { return prog_loads("probe_iter_sk_storage"); }
static bool p_iter_setsockopt(void) { return prog_loads("probe_iter_setsockopt"); }

static const struct feature features[] = {
	{ "btf", "kernel BTF at " VK_VMLINUX_BTF, "everything (CO-RE)", p_btf },
	{ "struct_ops", "BPF tcp_congestion_ops", "every controller", p_struct_ops },
	{ "struct_ops_link", "struct_ops links (Linux >= 6.4)", "load: a pinned registration", p_struct_ops_link },
	{ "link_update", "struct_ops link update (Linux >= 6.4)", "load --replace", p_link_update },
	{ "cong_control_ack", "cong_control with the ACK (Linux >= 6.10)", "load calls=1: one call per ACK", p_one_call },
	{ "sk_storage", "socket local storage maps", "flows, baseRTT kept across swaps", p_sk_storage },
	{ "ringbuf", "BPF ring buffer", "trace", p_ringbuf },
	{ "iter_tcp", "iter/tcp programs", "swap", p_iter_tcp },
	{ "iter_setsockopt", "bpf_setsockopt from iter/tcp (Linux >= 5.15)", "swap of established connections", p_iter_setsockopt },
	{ "iter_sk_storage_map", "iter/bpf_sk_storage_map programs", "flows, one pass over all namespaces", p_iter_sk_storage },
	{ "iter_tcp_sk_storage", "bpf_sk_storage_get from iter/tcp", "flows, one walk per namespace", p_iter_tcp_storage },
};

int vk_cmd_features(int argc, char **argv)
{
	bool json;
	struct utsname u;
	char rel[VK_JSON_BUF(sizeof(u.release))];
	int ret = vk_getopt_args(argc, argv, 0, -1, NULL);

	if (ret >= 0)
		return ret;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	json = vk_cli.json;
	if (geteuid() != 0)
		return vk_die("features: must be run as root (probing loads BPF programs): try sudo");
	uname(&u);
	if (json)
		printf("{\"kernel\":\"%s\",\"features\":{",
		       vk_json_escape(rel, sizeof(rel), u.release, sizeof(u.release)));
	else
		printf("kernel %s\n%-20s %-4s %-44s %s\n", u.release, "FEATURE", "HAS", "WHAT",
		       "USED BY");
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		const struct feature *f = &features[i];
		bool has = !vk_refused(f->name) && f->probe();

		if (json)
			printf("%s\"%s\":%s", i ? "," : "", f->name, has ? "true" : "false");
		else
			printf("%-20s %-4s %-44s %s\n", f->name, has ? "yes" : "no", f->what, f->used_by);
	}
	if (json)
		printf("}}\n");
	return 0;
}
