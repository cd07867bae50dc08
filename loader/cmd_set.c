// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl set: retune a loaded instance live. The new parameters are
 * validated as a whole before one map update writes them; every per-RTT
 * decision reads them afresh (docs/DESIGN.md §3, §4).
 */
#include <stdio.h>
#include "cli.h"
#include "env.h"
#include "instance.h"
#include "names.h"
#include "params.h"

const char vk_usage_set[] = "set NAME KEY=VALUE...";

/* The instance's live parameters, or -1 with err. */
static int read_params(const char *name, struct vk_params *p, char *err)
{
	struct vk_instance in;

	if (vk_check_name(name, err) || vk_check_env(err) || vk_instance_read(name, &in, err))
		return -1;
	if (!in.committed)
		return vk_err(err, "'%s' is incomplete (an interrupted load): retuning it would change "
			      "nothing that runs; vegasctl unload %s", name, name);
	if (in.other_version)
		return vk_err(err, "'%s' was loaded by another vegaskit version (parameter layout "
			      "differs): retune it with that vegasctl, or unload and load it again",
			      name);
	if (!in.has_params)
		return vk_err(err, "'%s' has no readable parameters (interrupted load?): vegasctl unload %s",
			      name, name);
	*p = in.params;
	return 0;
}

int vk_cmd_set(int argc, char **argv)
{
	char err[VK_ERR_MAX] = "";
	struct vk_params p, live;
	const char *name;
	int ret = vk_getopt_args(argc, argv, 2, -1, "set NAME KEY=VALUE...");

	if (ret >= 0)
		return ret;
	name = argv[optind];
	if (read_params(name, &p, err))
		return vk_die(err);
	live = p;
	if (vk_param_check_unique((const char *const *)argv + optind + 1, argc - optind - 1, err))
		return vk_die(err);
	for (int i = optind + 1; i < argc; i++)
		if (vk_param_apply(&p, argv[i], err))
			return vk_die(err);
	if (vk_params_validate(&p, err) || vk_params_check_live(&live, &p, err))
		return vk_die(err);
	p.generation++;
	if (vk_instance_write_params(name, &p, err))
		return vk_die(err);
	printf("%s: ", name);
	vk_params_print(stdout, &p, false);
	printf("\n");
	return 0;
}
