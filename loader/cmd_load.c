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
#include "instance.h"
#include "names.h"
#include "params.h"
#include "variants.h"

const char vk_usage_load[] =
	"load VARIANT [--name NAME] [--preset P] [--unrestricted] [--replace]\n"
	"     [KEY=VALUE | --KEY VALUE]... [--json]\n"
	"\n"
	"  --name NAME      register it as NAME (default: bpf_VARIANT)\n"
	"  --preset P       start from preset P (see: vegasctl list)\n"
	"  --unrestricted   any user, and a namespace's default, may choose it\n"
	"  --replace        upgrade the loaded NAME in place: new connections get it,\n"
	"                   existing ones keep the old\n"
	"  KEY=VALUE        a parameter of the variant (see: vegasctl list);\n"
	"                   --KEY VALUE and --KEY=VALUE say the same\n";

enum {
	OPT_NAME = VK_OPT_CMD,
	OPT_PRESET,
	OPT_PARAM,		/* + index into vk_param_descs: --KEY VALUE */
};

struct load_args {
	const char *variant, *name, *preset;
	int unrestricted, replace;
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

/* The parameters the command line asks for, validated. */
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
	p->ca_flags = a->unrestricted ? TCP_CONG_NON_RESTRICTED : 0;
	return vk_params_validate(p, err);
}

/* Register (or replace) name; *replaced says which it did. */
static int load(const struct vk_variant_desc *v, const char *name, const struct vk_params *p,
		bool replace, bool *replaced, char *err)
{
	struct vk_instance cur;

	*replaced = replace && vk_instance_read(name, &cur, err) == 0 && cur.committed;
	if (*replaced)
		return vk_instance_replace(v, name, p, err);
	if (vk_ca_available(name))
		return vk_err(err, "a congestion control named '%s' is already registered", name);
	return vk_instance_load(v, name, p, err);
}

static int run(const struct load_args *a, char *err)
{
	const struct vk_variant_desc *v = vk_variant_by_name(a->variant);
	const char *name;
	struct vk_instance in;
	struct vk_params p;
	bool replaced;

	if (!v)
		return vk_err(err, "unknown variant '%s' (see: vegasctl list)", a->variant);
	if (build_params(a, v, &p, err))
		return -1;
	name = a->name ? a->name : v->ca_name;
	if (vk_check_name(name, err) || vk_check_env(err) ||
	    load(v, name, &p, a->replace, &replaced, err))
		return -1;
	if (!vk_cli.json) {
		printf("%s %s (%s): ", replaced ? "replaced" : "loaded", name, v->name);
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
