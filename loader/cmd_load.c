// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl load: register a controller instance of a variant with its
 * parameters, or with --replace upgrade a loaded one in place
 * (docs/DESIGN.md §3, §4). Parameters apply in order: the variant's
 * defaults, the preset, then each KEY=VALUE or --KEY VALUE as given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "env.h"
#include "format.h"
#include "listing.h"
#include "instance.h"
#include "names.h"
#include "params.h"
#include "variants.h"

const char vk_usage_load[] =
	"load VARIANT [--name NAME] [--preset P] [--unrestricted] [--replace] [--dry-run]\n"
	"     [KEY=VALUE | --KEY VALUE]... [--json]\n"
	"\n"
	"  --name NAME      register it as NAME (default: bpf_VARIANT)\n"
	"  --preset P       start from preset P (see: vegasctl list)\n"
	"  --unrestricted   any user, and a namespace's default, may choose it\n"
	"  --replace        upgrade the loaded NAME in place: new connections get it,\n"
	"                   existing ones keep the old; it stays unrestricted if it was\n"
	"  --dry-run        check everything a load would, print what it would load,\n"
	"                   and load nothing (refusals are the load's own)\n"
	"  KEY=VALUE        a parameter of the variant (see: vegasctl list);\n"
	"                   --KEY VALUE and --KEY=VALUE say the same\n";

enum {
	OPT_NAME = VK_OPT_CMD,
	OPT_PRESET,
	OPT_PARAM,		/* + index into vk_param_descs: --KEY VALUE */
};

struct load_args {
	const char *variant, *name, *preset;
	int unrestricted, replace, dry_run;
	int nkv;
	struct load_kv {
		const char *key;	/* "KEY=VALUE", or KEY of a --KEY VALUE */
		const char *value;	/* NULL for KEY=VALUE */
	} *kv;
};

/* load's own options, then every --KEY of every variant. */
static struct option *load_options(struct load_args *a)
{
	const struct option own[] = {
		VK_OPTS_GLOBAL,
		{ "name", required_argument, NULL, OPT_NAME },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "unrestricted", no_argument, &a->unrestricted, 1 },
		{ "replace", no_argument, &a->replace, 1 },
		{ "dry-run", no_argument, &a->dry_run, 1 },
	};
	size_t nown = sizeof(own) / sizeof(own[0]);
	struct option *o = calloc(nown + vk_nr_param_descs + 1, sizeof(*o));

	if (!o)
		return NULL;
	memcpy(o, own, sizeof(own));
	for (size_t i = 0; i < vk_nr_param_descs; i++)
		o[nown + i] = (struct option){ vk_param_descs[i].key, required_argument, NULL,
					       OPT_PARAM + (int)i };
	return o;
}

static void add_kv(struct load_args *a, const char *key, const char *value)
{
	a->kv[a->nkv].key = key;
	a->kv[a->nkv++].value = value;
}

/*
 * A --KEY no variant has: kept as a parameter, so that applying it says
 * "unknown parameter" for this variant. Its value is the next argument.
 */
static int unknown_key(struct load_args *a, int argc, char **argv)
{
	const char *opt = argv[optind - 1];

	if (optopt || strncmp(opt, "--", 2))
		return vk_opt_error('?', argv);
	if (strchr(opt, '='))
		add_kv(a, opt + 2, NULL);
	else if (optind < argc)
		add_kv(a, opt + 2, argv[optind++]);
	else
		return vk_usage_error("load: %.*s needs a value", (int)strcspn(opt, "="), opt);
	return -1;
}

/* One option or argument, in command-line order; -1 to go on, or the exit status. */
static int take(struct load_args *a, int c, int argc, char **argv)
{
	if (c == 1 && !a->variant)
		a->variant = optarg;
	else if (c == 1)
		add_kv(a, optarg, NULL);
	else if (c == OPT_NAME && a->name)
		return vk_usage_error("load: --name is given twice ('%s', '%s')", a->name, optarg);
	else if (c == OPT_NAME)
		a->name = optarg;
	else if (c == OPT_PRESET && a->preset)
		return vk_usage_error("load: --preset is given twice ('%s', '%s')", a->preset, optarg);
	else if (c == OPT_PRESET)
		a->preset = optarg;
	else if (c == '?')
		return unknown_key(a, argc, argv);
	else if (c >= OPT_PARAM && c < OPT_PARAM + (int)vk_nr_param_descs)
		add_kv(a, vk_param_descs[c - OPT_PARAM].key, optarg);
	return -1;
}

/* Returns -1 to go on, or the exit status (help, usage error). */
static int parse(struct load_args *a, int argc, char **argv)
{
	struct option *opts = load_options(a);
	struct vk_opts o = { .shortopts = "-", .longopts = opts, .keep_unknown = true };
	int c, ret = -1;

	a->kv = calloc(argc, sizeof(*a->kv));
	if (!opts || !a->kv) {
		free(opts);
		return vk_die("out of memory");
	}
	while (ret < 0 && (c = vk_getopt(argc, argv, &o)) >= 0)
		ret = take(a, c, argc, argv);
	free(opts);
	if (ret < 0 && c == VK_OPT_EXIT)
		ret = o.status;
	if (ret < 0 && !a->variant)
		ret = vk_usage_error("load: which variant? (see: vegasctl list)");
	return ret;
}

/* The parameters the command line asks for, checked one by one (not yet as a whole). */
static int build_params(const struct load_args *a, const struct vk_variant_desc *v,
			struct vk_params *p, char *err)
{
	const char **keys;
	int dup;

	if (vk_default_params(v, p, err))
		return -1;
	if (a->preset && vk_preset_apply(p, a->preset, err))
		return -1;
	keys = calloc(a->nkv + 1, sizeof(*keys));
	if (!keys)
		return vk_err(err, "out of memory");
	for (int i = 0; i < a->nkv; i++)
		keys[i] = a->kv[i].key;
	dup = vk_param_check_unique(keys, a->nkv, err);
	free(keys);
	if (dup)
		return -1;
	for (int i = 0; i < a->nkv; i++) {
		const struct load_kv *kv = &a->kv[i];

		if (kv->value ? vk_param_set(p, kv->key, kv->value, err) : vk_param_apply(p, kv->key, err))
			return -1;
	}
	return 0;
}

/*
 * Will this load register name afresh (0) or replace it in place (1)? -1
 * with the refusal the load itself would give: decided before anything is
 * touched, so that --dry-run answers exactly as a real load would.
 */
static int plan(const char *name, bool replace, char *err)
{
	struct vk_instance cur;

	if (replace && vk_instance_read(name, &cur, err) == 0 && cur.committed)
		return vk_instance_replace_check(name, err) ? -1 : 1;
	return vk_instance_check_free(name, err) ? -1 : 0;
}

/*
 * Restricted or not: --unrestricted says unrestricted; otherwise a replace
 * keeps what the kernel now says of the live one (its flag, which may also
 * have come from tcp_allowed_congestion_control), so an upgrade never
 * silently takes a namespace's default away; a fresh load is restricted.
 */
static __u32 ca_flags(const struct load_args *a, const char *name, bool replacing)
{
	if (a->unrestricted || (replacing && vk_ca_unrestricted(name)))
		return TCP_CONG_NON_RESTRICTED;
	return 0;
}

/* What a dry run found: the load it would do, in load's own words. */
static void print_plan(const char *name, const struct vk_variant_desc *v,
		       const struct vk_params *p, bool replacing)
{
	bool restricted = !(p->ca_flags & TCP_CONG_NON_RESTRICTED);

	if (vk_cli.json) {
		printf("{\"dry_run\":true,\"action\":\"%s\",\"name\":\"%s\",\"variant\":\"%s\","
		       "\"restricted\":%s,\"params\":", replacing ? "replace" : "load", name, v->name,
		       restricted ? "true" : "false");
		vk_params_print(stdout, p, true);
		printf("}\n");
		return;
	}
	printf("would %s %s (%s, %s): ", replacing ? "replace" : "load", name, v->name,
	       restricted ? "restricted" : "unrestricted");
	vk_params_print(stdout, p, false);
	printf("\n");
}

static int run(const struct load_args *a, char *err)
{
	const struct vk_variant_desc *v = vk_variant_by_name(a->variant);
	const char *name;
	struct vk_instance in;
	struct vk_params p;
	int replacing;

	if (!v)
		return vk_err(err, "unknown variant '%s' (see: vegasctl list)", a->variant);
	if (build_params(a, v, &p, err))
		return -1;
	name = a->name ? a->name : v->ca_name;
	/* the dry run holds the lock too, for a consistent view, only while it looks */
	if (vk_params_validate(&p, err) || vk_check_name(name, err) || vk_check_env(err))
		return -1;
	replacing = plan(name, a->replace, err);
	if (replacing < 0)
		return -1;
	p.ca_flags = ca_flags(a, name, replacing);
	if (a->dry_run) {
		print_plan(name, v, &p, replacing);
		return 0;
	}
	if (replacing ? vk_instance_replace(v, name, &p, err) : vk_instance_load(v, name, &p, err))
		return -1;
	if (!vk_cli.json) {
		printf("%s %s (%s): ", replacing ? "replaced" : "loaded", name, v->name);
		vk_params_print(stdout, &p, false);
		printf("\n");
		return 0;
	}
	if (vk_instance_read(name, &in, err))
		return -1;
	vk_print_instance(&in, true);
	printf("\n");
	return 0;
}

int vk_cmd_load(int argc, char **argv)
{
	struct load_args a = {};
	char err[VK_ERR_MAX] = "";
	int ret = parse(&a, argc, argv);

	if (ret < 0)
		ret = run(&a, err) ? vk_die(err) : 0;
	free(a.kv);
	return ret;
}
