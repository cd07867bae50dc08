// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl unload: unregister an instance and remove its pins, also one that
 * an interrupted load or unload left incomplete (docs/DESIGN.md §4).
 */
#include <stdio.h>
#include "cli.h"
#include "env.h"
#include "instance.h"
#include "names.h"

const char vk_usage_unload[] = "unload NAME";

int vk_cmd_unload(int argc, char **argv)
{
	char err[VK_ERR_MAX] = "";
	const char *name;
	int ret = vk_getopt_args(argc, argv, 1, 1, "unload NAME");

	if (ret >= 0)
		return ret;
	name = argv[optind];
	if (vk_check_name(name, err) || vk_check_env(err) || vk_instance_unload(name, err))
		return vk_die(err);
	printf("unloaded %s\n", name);
	return 0;
}
