// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl - load, tune, inspect and unload vegaskit's BPF congestion controllers.
 * Every read command takes --json. Bad input: one line on stderr, exit 1 (2 for
 * usage), and nothing changed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "params.h"
#include "instance.h"
#include "variants.h"

#define TCP_CONG_NON_RESTRICTED	0x1	/* include/net/tcp.h */
#define MAX_INSTANCES		256

static const char usage[] =
"usage: vegasctl [-v] COMMAND [ARGS]\n"
"  list [--json]                       variants, defaults, presets and loaded instances\n"
"  load VARIANT [--name NAME] [--preset P] [--unrestricted] [--replace]\n"
"       [KEY=VALUE | --KEY VALUE]... [--json]\n"
"                                      register a controller (default name bpf_VARIANT);\n"
"                                      --replace upgrades a loaded one in place: new\n"
"                                      connections get it, existing ones keep the old\n"
"  unload NAME                         unregister it and remove its pins\n"
"  set NAME KEY=VALUE...               retune a loaded controller live\n"
"  show NAME [--json]                  parameters and state of one instance\n"
"  flows [FILTER]... [--all] [--via sk_storage|tcp] [--json]\n"
"                                      live connections on our controllers: baseRTT, RTT,\n"
"                                      diff, alpha, beta, cwnd, decision counters\n"
"  trace [FILTER]... [--decisions | --acks] [--duration S] [--count N] [--json]\n"
"                                      stream per-ACK and per-RTT records (CSV by default)\n"
"  swap CC [--netns NAME] [--from CC] [-L P] [-R P] [--port P] [--addr A]\n"
"       [--default-only | --established-only] [--json]\n"
"                                      make CC the default and move established\n"
"                                      connections onto it; swap back to roll back\n"
"  features [--json]                   which kernel features vegaskit uses are here\n"
"FILTER: -L/--lport P  -R/--rport P  --port P  --addr A  --netns NAME|INODE  --controller NAME\n";

static bool json;

int vk_die(const char *msg)
{
	fprintf(stderr, "vegasctl: %s\n", msg);
	return 1;
}

int vk_usage_error(const char *msg)
{
	fprintf(stderr, "vegasctl: %s (see: vegasctl --help)\n", msg);
	return 2;
}


static const char *state_of(const struct vk_instance *in)
{
	if (!in->has_link)
		return "incomplete";	/* interrupted load or unload: `unload` removes it */
	if (!in->registered)
		return "stale";		/* pinned link, but the kernel lost it */
	if (!in->has_params || in->params.ops_map_id != in->map_id)
		return "inconsistent";	/* params do not belong to the live controller */
	return "registered";
}

static void print_instance(const struct vk_instance *in)
{
	if (json) {
		printf("{\"name\":\"%s\",\"variant\":\"%s\",\"state\":\"%s\",\"restricted\":%s,"
		       "\"generation\":%u,\"link_id\":%u,\"map_id\":%u,\"params\":",
		       in->name, in->has_params ? vk_variant_name(in->params.variant) : "unknown",
		       state_of(in),
		       in->params.ca_flags & TCP_CONG_NON_RESTRICTED ? "false" : "true",
		       in->params.generation, in->link_id, in->map_id);
		if (in->has_params)
			vk_params_print(stdout, &in->params, true);
		else
			printf("null");
		printf("}");
		return;
	}
	printf("%-15s %-9s %-10s ", in->name,
	       in->has_params ? vk_variant_name(in->params.variant) : "?", state_of(in));
	if (in->has_params)
		vk_params_print(stdout, &in->params, false);
	printf("\n");
}

static int cmd_list(void)
{
	static char names[MAX_INSTANCES][VK_NAME_MAX];
	char err[VK_ERR_MAX];
	struct vk_params def;
	int n;

	if (vk_check_env(err))
		return vk_die(err);
	n = vk_instance_names(names, MAX_INSTANCES);
	if (n < 0)
		return vk_die("cannot read " VK_PIN_CC);
	printf(json ? "{\"variants\":[" : "VARIANT   DEFAULT NAME  SOURCE\n");
	for (size_t i = 0; i < vk_nr_variants; i++) {
		const struct vk_variant_desc *v = &vk_variants[i];

		if (vk_default_params(v, &def, err))
			return vk_die(err);
		if (json) {
			printf("%s{\"variant\":\"%s\",\"default_name\":\"%s\",\"source\":\"%s\",\"defaults\":",
			       i ? "," : "", v->name, v->ca_name, v->source);
			vk_params_print(stdout, &def, true);
			printf(",\"presets\":");
			vk_presets_print(stdout, v->id, true);
			printf("}");
		} else {
			printf("%-9s %-13s %s\n  defaults: ", v->name, v->ca_name, v->source);
			vk_params_print(stdout, &def, false);
			printf("\n  presets:\n");
			vk_presets_print(stdout, v->id, false);
		}
	}
	printf(json ? "],\"instances\":[" : "\nNAME            VARIANT   STATE      PARAMETERS\n");
	for (int i = 0; i < n; i++) {
		struct vk_instance in;

		if (vk_instance_read(names[i], &in, err))
			continue;
		if (json && i)
			printf(",");
		print_instance(&in);
	}
	if (json)
		printf("]}\n");
	return 0;
}

static int cmd_load(int argc, char **argv)
{
	const struct vk_variant_desc *v;
	const char *name = NULL, *preset = NULL;
	struct vk_instance cur;
	char err[VK_ERR_MAX], kv[160];
	struct vk_params p;
	bool unrestricted = false, replace = false;
	int i;

	if (argc < 1)
		return vk_usage_error("load: which variant? (see: vegasctl list)");
	v = vk_variant_by_name(argv[0]);
	if (!v) {
		snprintf(err, sizeof(err), "unknown variant '%s' (see: vegasctl list)", argv[0]);
		return vk_die(err);
	}
	if (vk_default_params(v, &p, err))
		return vk_die(err);
	/* First pass: name and preset, so that KEY=VALUE overrides the preset. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") || !strcmp(argv[i], "--preset")) {
			if (i + 1 >= argc)
				return vk_usage_error("--name and --preset need a value");
			if (argv[i][2] == 'n')
				name = argv[i + 1];
			else
				preset = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--unrestricted")) {
			unrestricted = true;
		} else if (!strcmp(argv[i], "--replace")) {
			replace = true;
		}
	}
	if (preset && vk_preset_apply(&p, preset, err))
		return vk_die(err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--name") || !strcmp(a, "--preset")) {
			i++;
			continue;
		}
		if (!strcmp(a, "--unrestricted") || !strcmp(a, "--replace"))
			continue;
		if (!strncmp(a, "--", 2)) {	/* --alpha 3 is alpha=3 */
			if (strchr(a, '=') || i + 1 >= argc) {
				snprintf(kv, sizeof(kv), "%s", a + 2);
				if (!strchr(kv, '='))
					return vk_usage_error("option needs a value");
			} else {
				snprintf(kv, sizeof(kv), "%s=%s", a + 2, argv[++i]);
			}
			a = kv;
		}
		if (vk_param_apply(&p, a, err))
			return vk_die(err);
	}
	if (vk_params_validate(&p, err))
		return vk_die(err);
	if (!name)
		name = v->ca_name;
	if (vk_check_name(name, err))
		return vk_die(err);
	p.ca_flags = unrestricted ? TCP_CONG_NON_RESTRICTED : 0;
	if (vk_check_env(err))
		return vk_die(err);
	if (replace && vk_instance_read(name, &cur, err) == 0 && cur.has_link) {
		if (vk_instance_replace(v, name, &p, err))
			return vk_die(err);
	} else {
		replace = false;
		if (vk_ca_available(name)) {
			snprintf(err, sizeof(err), "a congestion control named '%s' is already registered",
				 name);
			return vk_die(err);
		}
		if (vk_instance_load(v, name, &p, err))
			return vk_die(err);
	}
	if (!json) {
		printf("%s %s (%s): ", replace ? "replaced" : "loaded", name, v->name);
		vk_params_print(stdout, &p, false);
		printf("\n");
	} else {
		struct vk_instance in;

		if (vk_instance_read(name, &in, err))
			return vk_die(err);
		print_instance(&in);
		printf("\n");
	}
	return 0;
}

static int read_one(const char *name, struct vk_instance *in)
{
	char err[VK_ERR_MAX];

	if (vk_check_name(name, err) || vk_check_env(err) || vk_instance_read(name, in, err))
		return vk_die(err);
	if (!in->has_params) {
		snprintf(err, sizeof(err), "'%s' has no readable parameters (interrupted load?): vegasctl unload %s",
			 name, name);
		return vk_die(err);
	}
	return 0;
}

static int cmd_set(int argc, char **argv)
{
	char err[VK_ERR_MAX];
	struct vk_instance in;
	struct vk_params p;

	if (argc < 2)
		return vk_usage_error("set: usage is 'set NAME KEY=VALUE...'");
	if (read_one(argv[0], &in))
		return 1;
	p = in.params;
	for (int i = 1; i < argc; i++)
		if (vk_param_apply(&p, argv[i], err))
			return vk_die(err);
	if (vk_params_validate(&p, err))
		return vk_die(err);
	p.generation++;
	if (vk_instance_write_params(argv[0], &p, err))
		return vk_die(err);
	printf("%s: ", argv[0]);
	vk_params_print(stdout, &p, false);
	printf("\n");
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	struct vk_instance in;
	char err[VK_ERR_MAX];

	if (argc != 1)
		return vk_usage_error("show: usage is 'show NAME'");
	if (vk_check_name(argv[0], err))
		return vk_die(err);
	if (vk_check_env(err) || vk_instance_read(argv[0], &in, err))
		return vk_die(err);
	print_instance(&in);
	if (json)
		printf("\n");
	return 0;
}

static int cmd_unload(int argc, char **argv)
{
	char err[VK_ERR_MAX];

	if (argc != 1)
		return vk_usage_error("unload: usage is 'unload NAME'");
	if (vk_check_name(argv[0], err) || vk_check_env(err) || vk_instance_unload(argv[0], err))
		return vk_die(err);
	printf("unloaded %s\n", argv[0]);
	return 0;
}

/* Pull out the global flags (-v, --json) wherever they appear. */
static int strip_globals(int argc, char **argv)
{
	int n = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose"))
			vk_verbose = true;
		else
			argv[n++] = argv[i];
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *cmd;

	argc = strip_globals(argc - 1, argv + 1);
	argv++;
	if (argc < 1)
		return vk_usage_error("which command?");
	cmd = argv[0];
	argc--;
	argv++;
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "list"))
		return argc ? vk_usage_error("list takes no arguments") : cmd_list();
	if (!strcmp(cmd, "load"))
		return cmd_load(argc, argv);
	if (!strcmp(cmd, "unload"))
		return cmd_unload(argc, argv);
	if (!strcmp(cmd, "set"))
		return cmd_set(argc, argv);
	if (!strcmp(cmd, "show"))
		return cmd_show(argc, argv);
	if (!strcmp(cmd, "flows"))
		return vk_cmd_flows(argc, argv, json);
	if (!strcmp(cmd, "trace"))
		return vk_cmd_trace(argc, argv, json);
	if (!strcmp(cmd, "swap"))
		return vk_cmd_swap(argc, argv, json);
	if (!strcmp(cmd, "features"))
		return vk_cmd_features(argc, argv, json);
	fprintf(stderr, "vegasctl: unknown command '%s' (see: vegasctl --help)\n", cmd);
	return 2;
}
