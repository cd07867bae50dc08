/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How vegasctl talks to its user (docs/DESIGN.md §4): the global options every
 * command reads (struct vk_cli), one-line error messages, and the getopt_long
 * helpers for what several commands share: -v/--verbose and --json (taken
 * anywhere on the line), -h/--help, and the connection FILTER options.
 * Depends on nothing else in vegasctl, so every other file may use it.
 */
#ifndef VK_CLI_H
#define VK_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#define VK_ERR_MAX 256		/* every `char *err` buffer: one message line */

struct vk_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the command's name */
	/*
	 * The command's usage: its synopsis ("load VARIANT [--name NAME] ...",
	 * continuation lines indented), a blank line, then its options, one a line.
	 */
	const char *usage;
	const char *summary;			/* one line, for `vegasctl --help` */
	bool mutates;				/* changes state: holds the lock (env.h) */
	bool json;				/* --json changes its output: else refused */
};

/* The global options, set wherever they appear on the command line. */
struct vk_cli {
	bool json;			/* --json: JSON instead of text */
	bool verbose;			/* -v: libbpf's own messages too */
	const struct vk_cmd *cmd;	/* the command running (for its --help) */
};
extern struct vk_cli vk_cli;

/* The length of the valid UTF-8 character at s (n bytes left), or 0. */
size_t vk_utf8_len(const unsigned char *s, size_t n);
/* One line "vegasctl: msg" on stderr, whatever msg holds (invalid UTF-8 and
 * control characters shown as '?'); returns the exit status 1. */
int vk_die(const char *msg);
/* A usage error: "vegasctl: msg (see: vegasctl --help)"; returns 2. */
int vk_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --json given to a command whose output has one form (struct vk_cmd.json); returns 2. */
int vk_json_refused(void);
/* Format a message into err (VK_ERR_MAX bytes) and return -1. */
int vk_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A decimal number of digits only, at most max: 0, or -1 for anything else
 * (a sign, a space, hex, a fraction, an exponent, overflow). Every integer a
 * user types goes through it, so "80", and only that, is port 80.
 */
int vk_parse_uint(const char *s, unsigned long long max, unsigned long long *out);
/*
 * A decimal real: digits with at most one '.', as "0.5", "1", "2." or ".25":
 * 0, or -1 for what strtod would also take (hex, an exponent, a sign, "inf",
 * "nan", leading blanks). Every real a user types goes through it. *frac
 * (if not NULL) gets the number of digits after the point that are not
 * trailing zeros, so a caller can refuse what is finer than its resolution.
 */
int vk_parse_decimal(const char *s, double *out, int *frac);

/* Long-option codes of the shared options; a command's own start at VK_OPT_CMD. */
enum {
	VK_OPT_JSON = 0x100,
	VK_OPT_PORT,
	VK_OPT_ADDR,
	VK_OPT_NETNS,
	VK_OPT_CONTROLLER,
	VK_OPT_CMD,
};

/* Put these in a command's struct option table (the globals in every one). */
#define VK_OPTS_GLOBAL							\
	{ "help", no_argument, NULL, 'h' },				\
	{ "verbose", no_argument, NULL, 'v' },				\
	{ "json", no_argument, NULL, VK_OPT_JSON }
/* The FILTER options that select by port and address (swap takes only these). */
#define VK_OPTS_FILTER_ENDS						\
	{ "lport", required_argument, NULL, 'L' },			\
	{ "rport", required_argument, NULL, 'R' },			\
	{ "port", required_argument, NULL, VK_OPT_PORT },		\
	{ "addr", required_argument, NULL, VK_OPT_ADDR }
#define VK_OPTS_FILTER							\
	VK_OPTS_FILTER_ENDS,						\
	{ "netns", required_argument, NULL, VK_OPT_NETNS },		\
	{ "controller", required_argument, NULL, VK_OPT_CONTROLLER }
#define VK_USAGE_FILTER							\
	"FILTER: -L/--lport P  -R/--rport P  --port P  --addr A  --netns NAME|INODE  --controller NAME\n"

struct vk_filter;

/* How a command's options are parsed (vk_getopt). */
struct vk_opts {
	/* its own short options; a '+' first stops at the first argument, a
	 * '-' returns each argument in its place as option 1 (optarg) */
	const char *shortopts;
	const struct option *longopts;	/* VK_OPTS_GLOBAL, ..., then its own */
	struct vk_filter *filter;	/* FILTER options are parsed into it */
	bool keep_unknown;		/* return '?' for an unknown option */
	int (*help)(void);		/* prints -h/--help; NULL: vk_help */
	int status;			/* the exit status, after VK_OPT_EXIT */
};

#define VK_OPT_EXIT	(-2)

/*
 * getopt_long over a command's argv (argv[0]: the command). Takes the global
 * options wherever they are, the FILTER options (if o->filter), -h/--help,
 * and refuses unknown options and missing values: after a help or a refusal
 * it returns VK_OPT_EXIT with the exit status in o->status. Otherwise it
 * returns the command's next option (0 for one getopt stored through its
 * flag), or -1 at the end, when argv[optind..] are the arguments (options
 * may follow them: GNU permutation).
 */
int vk_getopt(int argc, char **argv, struct vk_opts *o);
/* Refuse an argument the command does not take ("unexpected argument"): 2. */
int vk_unexpected_arg(const char *arg);
/* Refuse the option getopt just returned as c ('?', ':'): exit status 2. */
int vk_opt_error(int c, char **argv);
/*
 * For a command with no options of its own: vk_getopt, then between min and
 * max arguments (max < 0: any), else the usage error "CMD: usage is 'USAGE'".
 * Returns -1 to go on with argv[optind..], or the exit status.
 */
int vk_getopt_args(int argc, char **argv, int min, int max, const char *usage);
/* A command's synopsis, its first line after `first`, the others after `rest`. */
void vk_print_synopsis(const struct vk_cmd *cmd, const char *first, const char *rest);
/* Print the running command's usage on stdout: exit status 0. */
int vk_help(void);

/*
 * The commands, one a file (cmd_NAME.c), dispatched by main.c: the handler
 * and the usage (struct vk_cmd.usage) of each.
 */
#define VK_DECLARE_CMD(name)						\
	int vk_cmd_##name(int argc, char **argv);			\
	extern const char vk_usage_##name[]
VK_DECLARE_CMD(list);
VK_DECLARE_CMD(load);
VK_DECLARE_CMD(unload);
VK_DECLARE_CMD(set);
VK_DECLARE_CMD(show);
VK_DECLARE_CMD(flows);
VK_DECLARE_CMD(trace);
VK_DECLARE_CMD(swap);
VK_DECLARE_CMD(features);
VK_DECLARE_CMD(apply);
VK_DECLARE_CMD(export);
VK_DECLARE_CMD(reset);
VK_DECLARE_CMD(metrics);

#endif
