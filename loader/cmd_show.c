// SPDX-License-Identifier: GPL-2.0
/* vegasctl show: the parameters and state of one instance (docs/DESIGN.md §4). */
#include <stdio.h>
#include "cli.h"
#include "env.h"
#include "format.h"
#include "listing.h"
#include "instance.h"
#include "names.h"

const char vk_usage_show[] = "show NAME [--json]";

int vk_cmd_show(int argc, char **argv)
{
	struct vk_instance in;
	char err[VK_ERR_MAX] = "";
	int ret = vk_getopt_args(argc, argv, 1, 1, "show NAME");

	if (ret >= 0)
		return ret;
	if (vk_check_name(argv[optind], err) || vk_check_env(err) ||
	    vk_instance_read(argv[optind], &in, err))
		return vk_die(err);
	vk_print_instance(&in, vk_cli.json);
	if (vk_cli.json)
		printf("\n");
	return 0;
}
