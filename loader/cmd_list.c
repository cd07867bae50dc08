// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl list: the variants with their defaults and presets, then every
 * instance vegaskit registered and its state (docs/DESIGN.md §4).
 */
#include <stdio.h>
#include <stdlib.h>
#include "cli.h"
#include "env.h"
#include "format.h"
#include "listing.h"
#include "instance.h"
#include "params.h"
#include "variants.h"

const char vk_usage_list[] = "list [--json]";

static int print_variants(bool json, char *err)
{
	struct vk_params def;

	printf(json ? "{\"variants\":[" : "VARIANT    DEFAULT NAME   SOURCE\n");
	for (size_t i = 0; i < vk_nr_variants; i++) {
		const struct vk_variant_desc *v = &vk_variants[i];

		if (vk_default_params(v, &def, err))
			return -1;
		if (json) {
			printf("%s{\"variant\":\"%s\",\"default_name\":\"%s\",\"source\":\"%s\",\"defaults\":",
			       i ? "," : "", v->name, v->ca_name, v->source);
			vk_params_print(stdout, &def, true);
			printf(",\"presets\":");
			vk_presets_print(stdout, v->id, true);
			printf("}");
		} else {
			printf("%-10s %-14s %s\n  defaults: ", v->name, v->ca_name, v->source);
			vk_params_print(stdout, &def, false);
			printf("\n  presets:\n");
			vk_presets_print(stdout, v->id, false);
		}
	}
	return 0;
}

int vk_cmd_list(int argc, char **argv)
{
	char (*names)[VK_NAME_MAX];
	char err[VK_ERR_MAX] = "";
	int n, ret, shown = 0;
	bool json;

	ret = vk_getopt_args(argc, argv, 0, -1, NULL);
	if (ret >= 0)
		return ret;
	json = vk_cli.json;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	if (vk_check_env(err))
		return vk_die(err);
	n = vk_instance_names(&names);
	if (n < 0)
		return vk_die("cannot read " VK_PIN_CC);
	if (print_variants(json, err)) {
		free(names);
		return vk_die(err);
	}
	printf(json ? "],\"instances\":[" : "\nNAME            VARIANT   STATE      PARAMETERS\n");
	for (int i = 0; i < n; i++) {
		struct vk_instance in;

		if (vk_instance_read(names[i], &in, err))
			continue;
		if (json && shown++)
			printf(",");
		vk_print_instance(&in, json);
	}
	if (json)
		printf("]}\n");
	free(names);
	return 0;
}
