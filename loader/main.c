// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl - load, tune, inspect and unload vegaskit's BPF congestion
 * controllers (docs/DESIGN.md §4). This file only dispatches: the global
 * options before the command, then the command's handler from the table;
 * `vegasctl --help` is made from the table and the commands' own usage.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"

/* TEXT: --json is refused, the output has one form (docs/DESIGN.md §4) */
#define CMD(name, summary) { #name, vk_cmd_##name, vk_usage_##name, summary, false, true }
#define MUTATING(name, summary) { #name, vk_cmd_##name, vk_usage_##name, summary, true, true }
#define TEXT(name, summary) { #name, vk_cmd_##name, vk_usage_##name, summary, false, false }
#define MUTATING_TEXT(name, summary) { #name, vk_cmd_##name, vk_usage_##name, summary, true, false }

static const struct vk_cmd commands[] = {
	CMD(list, "variants, defaults, presets and loaded instances"),
	MUTATING(load, "register a controller (default name bpf_VARIANT), or upgrade one in place"),
	MUTATING_TEXT(unload, "unregister it and remove its pins"),
	MUTATING_TEXT(set, "retune a loaded controller live"),
	CMD(show, "parameters and state of one instance"),
	CMD(flows, "live connections on our controllers: baseRTT, RTT, diff, alpha, beta, cwnd, decision counters"),
	CMD(trace, "stream per-ACK and per-RTT records (CSV by default)"),
	MUTATING(swap, "make CC the default and move established connections onto it; swap back to roll back"),
	CMD(features, "which kernel features vegaskit uses are here"),
	MUTATING(apply, "bring the host to the state a configuration file declares (--dry-run: the plan)"),
	TEXT(export, "the live state as a configuration file apply reads"),
	TEXT(metrics, "every instance's counters for Prometheus: stdout, a textfile, or served on localhost"),
	MUTATING(reset, "back to the kernel's controllers: defaults and connections moved, all unloaded"),
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Each command's synopsis (its usage up to the blank line), then its summary. */
static int usage(void)
{
	printf("usage: vegasctl [-v] [--json] COMMAND [ARGS]\n");
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		vk_print_synopsis(&commands[i], "  ", "  ");
		printf("        %s\n", commands[i].summary);
	}
	fputs(VK_USAGE_FILTER, stdout);
	printf("-v/--verbose (libbpf's messages too) and --json may stand anywhere;\n"
	       "vegasctl COMMAND --help: that command's options\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { VK_OPTS_GLOBAL, {} };
	struct vk_opts o = { .shortopts = "+", .longopts = opts, .help = usage };

	if (vk_getopt(argc, argv, &o) == VK_OPT_EXIT)
		return o.status;
	if (optind >= argc)
		return vk_usage_error("which command?");
	if (!strcmp(argv[optind], "help"))
		return usage();
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		if (strcmp(argv[optind], commands[i].name))
			continue;
		vk_cli.cmd = &commands[i];
		if (vk_cli.json && !commands[i].json)
			return vk_json_refused();
		return commands[i].run(argc - optind, argv + optind);
	}
	return vk_usage_error("unknown command '%s'", argv[optind]);
}
