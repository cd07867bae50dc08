// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl export: the live state as a configuration file `apply` reads
 * (docs/DESIGN.md §4.7): every committed instance with its variant, its
 * restrictedness and every parameter; the host's default; the default of
 * every namespace `ip netns` names. Connections are not state: no [[move]].
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "conf.h"
#include "env.h"
#include "instance.h"
#include "move.h"
#include "netns.h"
#include "params.h"
#include "variants.h"

const char vk_usage_export[] =
	"export\n"
	"\n"
	"Writes the live state to stdout as `vegasctl apply` reads it; instances that\n"
	"are not whole (an interrupted load) are listed as comments.\n";

/* A table key: bare when TOML allows it, else quoted. */
static void print_key(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");

	if (s[0] && !s[n])
		fputs(s, stdout);
	else
		vk_conf_print_str(stdout, s);
}

static int export_instances(char *err)
{
	char (*names)[VK_NAME_MAX];
	int n = vk_instance_names(&names);

	if (n < 0)
		return vk_err(err, "cannot read " VK_PIN_CC);
	for (int i = 0; i < n; i++) {
		struct vk_instance in;

		if (vk_instance_read(names[i], &in, err))
			continue;
		if (!in.committed || !in.registered || !in.has_params || in.other_version) {
			printf("# %s: not exported (%s)\n\n", in.name,
			       !in.committed ? "an interrupted load" : !in.registered ? "no longer registered" :
			       "loaded by another vegaskit version");
			continue;
		}
		printf("[controller.");
		print_key(in.name);
		printf("]\nvariant = \"%s\"\nunrestricted = %s\n", vk_variant_name(in.params.variant),
		       vk_ca_unrestricted(in.name) ? "true" : "false");
		vk_params_print_toml(stdout, &in.params);
		printf("\n");
	}
	free(names);
	return 0;
}

struct ns_default {
	char cc[VK_NAME_MAX];
};

static int read_default(void *arg)
{
	struct ns_default *d = arg;

	return vk_default_read(d->cc, sizeof(d->cc));
}

/* Every namespace `ip netns` names, in name order. */
static int export_netns(char *err)
{
	struct dirent **ents;
	int n = scandir(VK_NETNS_RUN, &ents, NULL, alphasort), ret = 0;

	if (n < 0)
		return 0;	/* no named namespaces */
	for (int i = 0; i < n; i++) {
		struct ns_default d = {};

		if (!ret && ents[i]->d_name[0] != '.' &&
		    vk_netns_in(ents[i]->d_name, read_default, &d, err) == 0) {
			printf("[netns.");
			print_key(ents[i]->d_name);
			printf("]\ndefault = \"%s\"\n\n", d.cc);
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int vk_cmd_export(int argc, char **argv)
{
	char err[VK_ERR_MAX] = "", host[VK_NAME_MAX];
	int ret = vk_getopt_args(argc, argv, 0, 0, "export");

	if (ret >= 0)
		return ret;
	if (vk_check_env(err))
		return vk_die(err);
	if (vk_default_read(host, sizeof(host)))
		return vk_die("cannot read " VK_DEFAULT_CC);
	printf("# The state of this host, as `vegasctl export` read it.\n"
	       "# `vegasctl apply FILE` brings a host to it (docs/DESIGN.md §4.7).\n\n");
	if (export_instances(err))
		return vk_die(err);
	printf("[host]\ndefault = \"%s\"\n\n", host);
	if (export_netns(err))
		return vk_die(err);
	return 0;
}
