// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl's messages and shared option parsing (cli.h). Bad input gets one
 * line on stderr starting "vegasctl: " and a non-zero exit: 2 for usage, 1
 * for everything else (docs/DESIGN.md §4).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "filter.h"

struct vk_cli vk_cli;

size_t vk_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], len, min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (unsigned k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int vk_die(const char *msg)
{
	size_t n, len;

	/* A backstop: a failure must never be reported as an empty line. */
	if (!msg || !*msg)
		msg = "failed without a message (a vegasctl bug: rerun with -v and report it)";
	/* ... nor as two lines, nor as bytes a terminal or a log cannot read:
	 * messages quote what the user gave, cut to fit */
	fputs("vegasctl: ", stderr);
	for (n = strlen(msg); n; msg += len, n -= len) {
		const unsigned char *u = (const unsigned char *)msg;

		len = vk_utf8_len(u, n);
		/* what ends or rewrites a line: C0 and C1 controls (U+0085 is NEL), U+2028/9 */
		if (!len || (len == 1 && ((u[0] < 0x20 && u[0] != '\t') || u[0] == 0x7f)) ||
		    (len == 2 && u[0] == 0xc2 && u[1] < 0xa0) ||
		    (len == 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)))
			fputc('?', stderr), len = len ? len : 1;
		else
			fwrite(msg, 1, len, stderr);
	}
	fputc('\n', stderr);
	return 1;
}

int vk_usage_error(const char *fmt, ...)
{
	char msg[VK_ERR_MAX + 32];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, VK_ERR_MAX, fmt, ap);
	va_end(ap);
	if (n >= VK_ERR_MAX)
		n = VK_ERR_MAX - 1;
	snprintf(msg + n, sizeof(msg) - n, " (see: vegasctl --help)");
	vk_die(msg);
	return 2;
}

int vk_err(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, VK_ERR_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

int vk_parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')	/* rejects "", "-1", "+1", " 1" */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int vk_parse_decimal(const char *s, double *out, int *frac)
{
	size_t ip = strspn(s, "0123456789"), fp = 0;
	char *end;
	double v;

	if (s[ip] == '.')
		fp = strspn(s + ip + 1, "0123456789");
	if (ip + fp == 0 || s[ip + (s[ip] == '.' ? 1 + fp : 0)] != '\0')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	while (fp && s[ip + fp] == '0')		/* "0.500" is as fine as "0.5" */
		fp--;
	if (frac)
		*frac = (int)fp;
	*out = v;
	return 0;
}

/* Apply FILTER option c with value arg: 1 if applied, 0 if not one, -1 on a bad value. */
static int filter_opt(struct vk_filter *f, int c, const char *arg, char *err)
{
	switch (c) {
	case 'L':
		return vk_filter_port(arg, &f->lport, err) ? -1 : 1;
	case 'R':
		return vk_filter_port(arg, &f->rport, err) ? -1 : 1;
	case VK_OPT_PORT:
		return vk_filter_port(arg, &f->port, err) ? -1 : 1;
	case VK_OPT_ADDR:
		return vk_filter_addr(f, arg, err) ? -1 : 1;
	case VK_OPT_NETNS:
		return vk_filter_netns(f, arg, err) ? -1 : 1;
	case VK_OPT_CONTROLLER:
		return vk_filter_controller(f, arg, err) ? -1 : 1;
	}
	return 0;
}

int vk_json_refused(void)
{
	return vk_usage_error("%s: --json does not apply: its output is text only",
			      vk_cli.cmd ? vk_cli.cmd->name : "this command");
}

/* One getopt_long step; 1 if it was an option vk_getopt takes itself. */
static int shared_opt(int c, char **argv, struct vk_opts *o)
{
	char err[VK_ERR_MAX] = "";
	int r;

	switch (c) {
	case 'v':
		vk_cli.verbose = true;
		return 1;
	case VK_OPT_JSON:
		vk_cli.json = true;
		if (vk_cli.cmd && !vk_cli.cmd->json) {
			o->status = vk_json_refused();
			return -1;
		}
		return 1;
	case 'h':
		o->status = o->help ? o->help() : vk_help();
		return -1;
	case ':':
		o->status = vk_opt_error(c, argv);
		return -1;
	case '?':
		if (o->keep_unknown)
			return 0;
		o->status = vk_opt_error(c, argv);
		return -1;
	}
	r = o->filter ? filter_opt(o->filter, c, optarg, err) : 0;
	if (r < 0)
		o->status = vk_die(err);
	return r;
}

/* The word of the option getopt_long just returned: the last it took, or the
 * one before its value. */
static const char *option_word(char **argv)
{
	return argv[optind - 1 - (optarg && optarg == argv[optind - 1])];
}

/*
 * getopt_long takes any unambiguous prefix of a long option ("--repl");
 * vegasctl refuses them: a prefix unique today may name another option
 * tomorrow (load has one per parameter), and scripts should say what they
 * mean (docs/DESIGN.md §4.1). Exit status 2, like any usage error.
 */
static int refuse_abbreviation(const char *word, const struct option *lo)
{
	size_t len = strcspn(word, "=");

	if (!strncmp(word, "--", 2) && len - 2 == strlen(lo->name) &&
	    !strncmp(word + 2, lo->name, len - 2))
		return 0;
	return vk_usage_error("%s%s'%.*s' is short for --%s: spell it out",
			      vk_cli.cmd ? vk_cli.cmd->name : "", vk_cli.cmd ? ": " : "",
			      (int)len, word, lo->name);
}

int vk_getopt(int argc, char **argv, struct vk_opts *o)
{
	static char **started;
	const char *own = o->shortopts ? o->shortopts : "";
	char opts[64], mode[2] = "";
	int c, r;

	if (argv != started) {		/* a new command line: restart getopt */
		started = argv;
		optind = 0;
	}
	opterr = 0;
	if (*own == '+' || *own == '-')
		mode[0] = *own++;
	/* getopt's mode first, then ':' to tell a missing value apart */
	snprintf(opts, sizeof(opts), "%s:hv%s%s", mode, o->filter ? "L:R:" : "", own);
	do {
		int idx = -1;

		c = getopt_long(argc, argv, opts, o->longopts, &idx);
		if (c != -1 && c != '?' && c != ':' && idx >= 0 &&
		    (o->status = refuse_abbreviation(option_word(argv), &o->longopts[idx])))
			return VK_OPT_EXIT;
		r = c == -1 ? 0 : shared_opt(c, argv, o);
	} while (r > 0);
	return r < 0 ? VK_OPT_EXIT : c;
}

int vk_opt_error(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	char cmd[VK_NAME_MAX + 2] = "", opt[64];

	if (vk_cli.cmd)
		snprintf(cmd, sizeof(cmd), "%s: ", vk_cli.cmd->name);
	/*
	 * A long option is the argument itself, without any "=value": getopt
	 * passed it. A short one is optopt (its argument may be a cluster).
	 */
	if (strncmp(arg, "--", 2))
		snprintf(opt, sizeof(opt), "-%c", optopt);
	else
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
	if (c == ':')
		return vk_usage_error("%s%s needs a value", cmd, opt);
	if (optopt && opt[1] == '-')		/* a known long option, given a value */
		return vk_usage_error("%s%s takes no value", cmd, opt);
	return vk_usage_error("%sunknown option '%s'", cmd, opt);
}

int vk_unexpected_arg(const char *arg)
{
	return vk_usage_error("%s: unexpected argument '%s'", vk_cli.cmd->name, arg);
}

int vk_getopt_args(int argc, char **argv, int min, int max, const char *usage)
{
	static const struct option opts[] = { VK_OPTS_GLOBAL, {} };
	struct vk_opts o = { .longopts = opts };
	int c = vk_getopt(argc, argv, &o), n = argc - optind;

	if (c == VK_OPT_EXIT)
		return o.status;
	if (c == -1 && max >= 0 && n > max)
		return vk_unexpected_arg(argv[optind + max]);
	if (c != -1 || n < min)
		return vk_usage_error("%s: usage is '%s'", vk_cli.cmd->name, usage);
	return -1;
}

void vk_print_synopsis(const struct vk_cmd *cmd, const char *first, const char *rest)
{
	const char *u = cmd->usage, *end = strstr(u, "\n\n"), *nl;

	if (!end)
		end = u + strlen(u);
	for (const char *prefix = first; u < end; u = nl + 1, prefix = rest) {
		nl = memchr(u, '\n', end - u);
		if (!nl)
			nl = end;
		printf("%s%.*s\n", prefix, (int)(nl - u), u);
	}
}

int vk_help(void)
{
	const struct vk_cmd *cmd = vk_cli.cmd;
	const char *details = strstr(cmd->usage, "\n\n");

	vk_print_synopsis(cmd, "usage: vegasctl ", "                ");
	printf("%s\n", cmd->summary);
	if (details)
		fputs(details + 1, stdout);
	printf("\nglobal options, anywhere on the line: -v/--verbose (libbpf's messages too), --json\n");
	return 0;
}
