// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl features: which kernel features vegaskit uses are here, in the
 * manner of `bpftool feature probe`. Each is probed, never assumed from the
 * kernel version: builds of one version differ (docs/DESIGN.md §10). BTF
 * facts come from the running kernel's BTF; program types and helpers from
 * loading the smallest program that needs them (bpf/vk_probe.bpf.c).
 */
#include <errno.h>
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

/*
 * A probe's answer. LACKS is the kernel's: why says what it refused or did not
 * have, so a test that skips on it can name the reason. BROKEN is ours (the
 * embedded probe object would not open, or lacks the program named): never a
 * "no", since a test would then skip for a defect of this project.
 */
enum { BROKEN = -1, LACKS = 0, HAS = 1 };

/* A kernel feature vegaskit uses, and its probe. */
struct feature {
	const char *name;	/* key in `vegasctl features --json` */
	const char *what;
	const char *used_by;
	int (*probe)(char *why);	/* HAS, LACKS or BROKEN; why filled unless HAS */
};

static int btf_has(const char *name, int kind, char *why)
{
	struct btf *btf = btf__parse_raw(VK_VMLINUX_BTF);
	int has;

	if (!btf) {
		vk_err(why, "no readable BTF at %s: %s", VK_VMLINUX_BTF, strerror(errno));
		return LACKS;
	}
	has = btf__find_by_name_kind(btf, name, kind) > 0;
	btf__free(btf);
	if (!has)
		vk_err(why, "no %s in the kernel's BTF", name);
	return has ? HAS : LACKS;
}

/* Load only `prog` of the probe object; the storage map only if it needs one. */
static int prog_loads(const char *prog, char *why)
{
	char err[VK_ERR_MAX] = "";
	struct bpf_object *obj;
	int ans;

	if (vk_fail_point("probe_program"))	/* the tests' stand-in for a probe of ours gone wrong */
		prog = "probe_renamed";
	obj = vk_iter_open("vk_probe", vk_probe_elf_bytes, prog, err);

	if (!obj) {
		vk_err(why, "the embedded probe object: %s", err);
		return BROKEN;
	}
	/* with no such program nothing would load, and the empty load would read as yes */
	if (!bpf_object__find_program_by_name(obj, prog)) {
		bpf_object__close(obj);
		vk_err(why, "the embedded probe object has no program %s", prog);
		return BROKEN;
	}
	bpf_map__set_autocreate(bpf_object__find_map_by_name(obj, "probe_storage"),
				!strcmp(prog, "probe_iter_tcp_storage"));
	ans = vk_iter_load(obj, err) == 0 ? HAS : LACKS;
	if (ans == LACKS)
		vk_err(why, "the kernel refused %s: %s", prog, err);
	bpf_object__close(obj);
	return ans;
}

static int map_type(enum bpf_map_type type, const char *what, char *why)
{
	int ret = libbpf_probe_bpf_map_type(type, NULL);

	if (ret == 0) {
		vk_err(why, "the kernel refused a %s map", what);
		return LACKS;
	}
	if (ret > 0)
		return HAS;
	/* an error: the kernel refusing what the probe loads first (socket storage needs a
	 * BTF object) is its answer too; anything else is a probe that could not ask */
	if (ret == -EPERM || ret == -EINVAL || ret == -EOPNOTSUPP || ret == -524 /* ENOTSUPP */) {
		vk_err(why, "the kernel refused the %s map probe: %s", what, strerror(-ret));
		return LACKS;
	}
	vk_err(why, "cannot probe %s maps: %s", what, strerror(-ret));
	return BROKEN;
}

static int p_btf(char *why)
{
	if (access(VK_VMLINUX_BTF, R_OK)) {
		vk_err(why, "no %s: %s", VK_VMLINUX_BTF, strerror(errno));
		return LACKS;
	}
	return btf_has("sock", BTF_KIND_STRUCT, why);
}
static int p_struct_ops(char *why) { return btf_has("bpf_struct_ops_tcp_congestion_ops", BTF_KIND_STRUCT, why); }
static int p_struct_ops_link(char *why) { return btf_has("bpf_struct_ops_link", BTF_KIND_STRUCT, why); }
static int p_link_update(char *why) { return btf_has("bpf_struct_ops_map_link_update", BTF_KIND_FUNC, why); }
static int p_one_call(char *why)
{
	if (vk_one_call_supported())
		return HAS;
	vk_err(why, "tcp_congestion_ops.cong_control takes no ACK and flags in the kernel's BTF");
	return LACKS;
}
static int p_sk_storage(char *why) { return map_type(BPF_MAP_TYPE_SK_STORAGE, "socket storage", why); }
static int p_ringbuf(char *why) { return map_type(BPF_MAP_TYPE_RINGBUF, "ring buffer", why); }
static int p_iter_tcp(char *why) { return prog_loads("probe_iter_tcp", why); }
static int p_iter_tcp_storage(char *why) { return prog_loads("probe_iter_tcp_storage", why); }
static int p_iter_sk_storage(char *why) { return prog_loads("probe_iter_sk_storage", why); }
static int p_iter_setsockopt(char *why) { return prog_loads("probe_iter_setsockopt", why); }

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

#define N_FEATURES (sizeof(features) / sizeof(features[0]))

int vk_cmd_features(int argc, char **argv)
{
	static char why[N_FEATURES][VK_ERR_MAX];
	int ans[N_FEATURES], broken = 0;
	struct utsname u;
	char rel[VK_JSON_BUF(sizeof(u.release))], esc[VK_JSON_BUF(VK_ERR_MAX)];
	int ret = vk_getopt_args(argc, argv, 0, -1, NULL);

	if (ret >= 0)
		return ret;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	if (geteuid() != 0)
		return vk_die("features: must be run as root (probing loads BPF programs): try sudo");
	for (size_t i = 0; i < N_FEATURES; i++) {
		if (vk_refused(features[i].name)) {
			ans[i] = LACKS;
			vk_err(why[i], "refused by VEGASCTL_REFUSE (fault injection, for the tests)");
		} else {
			ans[i] = features[i].probe(why[i]);
		}
		if (ans[i] == BROKEN) {
			fprintf(stderr, "vegasctl: features: cannot probe %s: %s\n", features[i].name,
				why[i]);
			broken++;
		}
	}
	if (broken)		/* no table that would read a defect of ours as a kernel's "no" */
		return 1;
	uname(&u);
	if (vk_cli.json) {
		printf("{\"kernel\":\"%s\",\"features\":{",
		       vk_json_escape(rel, sizeof(rel), u.release, sizeof(u.release)));
		for (size_t i = 0; i < N_FEATURES; i++)
			printf("%s\"%s\":%s", i ? "," : "", features[i].name,
			       ans[i] == HAS ? "true" : "false");
		printf("},\"why\":{");
		for (size_t i = 0, n = 0; i < N_FEATURES; i++)
			if (ans[i] != HAS)
				printf("%s\"%s\":\"%s\"", n++ ? "," : "", features[i].name,
				       vk_json_escape(esc, sizeof(esc), why[i], VK_ERR_MAX));
		printf("}}\n");
		return 0;
	}
	printf("kernel %s\n%-20s %-4s %-44s %s\n", u.release, "FEATURE", "HAS", "WHAT", "USED BY");
	for (size_t i = 0; i < N_FEATURES; i++)
		printf("%-20s %-4s %-44s %s\n", features[i].name, ans[i] == HAS ? "yes" : "no",
		       features[i].what, features[i].used_by);
	for (size_t i = 0; i < N_FEATURES; i++)
		if (ans[i] != HAS)
			printf("%s: %s\n", features[i].name, why[i]);
	return 0;
}
