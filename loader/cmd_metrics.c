// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl metrics: every instance's counters in the Prometheus text format
 * (docs/DESIGN.md §4.9), to stdout, to a node_exporter textfile (written
 * whole, then renamed into place), or served on a loopback address until
 * SIGINT or SIGTERM. A reader: it takes no lock and changes nothing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cli.h"
#include "env.h"
#include "format.h"
#include "instance.h"
#include "variants.h"

const char vk_usage_metrics[] =
	"metrics [--textfile FILE | --listen ADDR:PORT]\n"
	"\n"
	"  --textfile FILE      write FILE whole, then rename it into place (node_exporter's\n"
	"                       textfile collector reads *.prom in its directory)\n"
	"  --listen ADDR:PORT   serve GET /metrics on a loopback address (127.0.0.1:9464,\n"
	"                       [::1]:9464) until SIGINT or SIGTERM\n"
	"Without either, the metrics go to stdout once.\n";

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static unsigned long long trace_lost(void)
{
	int fd = bpf_obj_get(VK_PIN_TRACE_LOST), key = 0;
	__u64 v = 0;

	if (fd >= 0) {
		bpf_map_lookup_elem(fd, &key, &v);
		close(fd);
	}
	return v;
}

/* Summed over CPUs without a snapshot: a release counted before its init can show for a
 * moment, so the gauge never goes below 0. */
static long long live(const struct vk_stats *st)
{
	return st->inits > st->releases ? (long long)(st->inits - st->releases) : 0;
}
static long long started(const struct vk_stats *st) { return (long long)st->inits; }
static long long moved_in(const struct vk_stats *st) { return (long long)st->moved_in; }
static long long timed(const struct vk_stats *st) { return (long long)st->decisions_timed; }

/* The per-instance socket counts: one family each. */
static const struct {
	const char *name, *type, *help;
	long long (*value)(const struct vk_stats *st);
} counts[] = {
	{ "vegaskit_sockets", "gauge",
	  "Connections on the instance now: started or moved onto it, less closed or moved away.", live },
	{ "vegaskit_sockets_started_total", "counter",
	  "Connections that started on the instance or were moved onto it.", started },
	{ "vegaskit_sockets_moved_in_total", "counter",
	  "Of those, connections moved onto it with data already sent or received (swap, apply).",
	  moved_in },
	{ "vegaskit_decisions_timed_total", "counter",
	  "Decisions timed while a `vegasctl trace --cost` ran (it prints what they cost).", timed },
};

struct row {
	struct vk_instance in;
	struct vk_stats st;
	bool has_stats;
};

/* The exposition: each family's lines together, as the format asks. */
static int write_metrics(FILE *f, char *err)
{
	char (*names)[VK_NAME_MAX];
	int n = vk_instance_names(&names), k = 0;
	struct row *rows;

	if (n < 0)
		return vk_err(err, "cannot read " VK_PIN_CC);
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		free(names);
		return vk_err(err, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		struct row *r = &rows[k];
		int s;

		if (vk_instance_read(names[i], &r->in, err) || !r->in.committed)
			continue;
		s = vk_instance_stats(names[i], &r->st, err);
		if (s < 0)
			goto fail;
		r->has_stats = s == 0;
		k++;
	}
	family(f, "vegaskit_controller_info", "gauge",
	       "A controller instance vegaskit loaded: its variant, restrictedness and registration.");
	for (int i = 0; i < k; i++)
		fprintf(f, "vegaskit_controller_info{controller=\"%s\",variant=\"%s\",restricted=\"%s\","
			"registered=\"%s\"} 1\n", rows[i].in.name,
			rows[i].in.has_params ? vk_variant_name(rows[i].in.params.variant) : "other-version",
			vk_ca_unrestricted(rows[i].in.name) ? "false" : "true",
			rows[i].in.registered ? "true" : "false");
	family(f, "vegaskit_params_generation", "gauge", "Retunes of the instance's parameters since it was loaded.");
	for (int i = 0; i < k; i++)
		if (rows[i].in.has_params)
			fprintf(f, "vegaskit_params_generation{controller=\"%s\"} %u\n", rows[i].in.name,
				rows[i].in.params.generation);
	for (size_t m = 0; m < sizeof(counts) / sizeof(counts[0]); m++) {
		family(f, counts[m].name, counts[m].type, counts[m].help);
		for (int i = 0; i < k; i++)
			if (rows[i].has_stats)
				fprintf(f, "%s{controller=\"%s\"} %lld\n", counts[m].name,
					rows[i].in.name, counts[m].value(&rows[i].st));
	}
	family(f, "vegaskit_decisions_total", "counter",
	       "Per-RTT decisions of the instance, by the rule that fired.");
	for (int i = 0; i < k; i++)
		for (int r = 0; rows[i].has_stats && r < VK_NR_RULES; r++)
			fprintf(f, "vegaskit_decisions_total{controller=\"%s\",rule=\"%s\"} %llu\n",
				rows[i].in.name, vk_rule_name(r),
				(unsigned long long)rows[i].st.rule_count[r]);
	family(f, "vegaskit_trace_records_lost_total", "counter",
	       "Trace records dropped because the ring buffer was full (all instances).");
	fprintf(f, "vegaskit_trace_records_lost_total %llu\n", trace_lost());
	free(rows);
	free(names);
	return 0;
fail:
	free(rows);
	free(names);
	return -1;
}

static int to_textfile(const char *file, char *err)
{
	char tmp[4096];
	FILE *f;
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", file, (int)getpid()) >= (int)sizeof(tmp))
		return vk_err(err, "--textfile: the path is too long");
	f = fopen(tmp, "w");
	if (!f)
		return vk_err(err, "cannot write %s: %s", tmp, strerror(errno));
	ret = write_metrics(f, err);
	if ((ferror(f) | fclose(f)) && !ret)	/* both: fclose must run either way */
		ret = vk_err(err, "cannot write %s: %s", tmp, strerror(errno));
	if (!ret && rename(tmp, file))
		ret = vk_err(err, "cannot rename %s to %s: %s", tmp, file, strerror(errno));
	if (ret)
		unlink(tmp);
	return ret;
}

/* ADDR:PORT on a loopback address, v4 or [v6]; "localhost" is 127.0.0.1. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, char *err)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	unsigned long long port;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (!colon || vk_parse_uint(colon + 1, 65535, &port) || !port)
		return vk_err(err, "--listen '%s': expected ADDR:PORT, as 127.0.0.1:9464 or [::1]:9464", s);
	hl = colon - s;
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return vk_err(err, "--listen: '%.*s' is not an address", (int)(hl > 40 ? 40 : hl), s);
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((unsigned short)port);
		*len = sizeof(*a4);
		if ((ntohl(a4->sin_addr.s_addr) >> 24) == 127)
			return 0;
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((unsigned short)port);
		*len = sizeof(*a6);
		if (IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr))
			return 0;
	} else {
		return vk_err(err, "--listen: '%s' is not an IP address", host);
	}
	return vk_err(err, "--listen %s: metrics are served on a loopback address only "
		      "(127.0.0.0/8, ::1); put a proxy in front to expose them", host);
}

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* One request: GET /metrics gets the exposition, anything else a short refusal. */
static void serve_one(int c)
{
	char req[4096], *body = NULL, err[VK_ERR_MAX] = "";
	size_t got = 0, blen = 0;
	const char *status = "200 OK";
	struct timeval tv = { 2, 0 };
	FILE *f;
	ssize_t r;

	/* a client that neither sends nor reads holds the server 2 s, not for ever */
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (got < sizeof(req) - 1 && (r = read(c, req + got, sizeof(req) - 1 - got)) > 0) {
		got += r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	f = open_memstream(&body, &blen);
	if (!f)
		return;
	if (strncmp(req, "GET ", 4))
		status = "405 Method Not Allowed";
	else if (strncmp(req + 4, "/metrics ", 9) && strncmp(req + 4, "/metrics?", 9))
		status = "404 Not Found";
	if (strcmp(status, "200 OK"))
		fprintf(f, "%s: GET /metrics\n", status);
	else if (write_metrics(f, err))
		status = "500 Internal Server Error", fprintf(f, "%s\n", err);
	fclose(f);
	dprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		"Content-Length: %zu\r\nConnection: close\r\n\r\n", status, blen);
	for (size_t off = 0; off < blen && (r = write(c, body + off, blen - off)) > 0;)
		off += r;
	free(body);
}

static int serve(const char *spec, char *err)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, waitmask;
	struct sockaddr_storage ss;
	socklen_t len = 0;
	int s, one = 1;

	if (parse_listen(spec, &ss, &len, err))
		return -1;
	s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return vk_err(err, "socket: %s", strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&ss, len) || listen(s, 16)) {
		vk_err(err, "cannot listen on %s: %s", spec, strerror(errno));
		close(s);
		return -1;
	}
	/* SIGINT and SIGTERM only while ppoll waits: one that arrives between the check
	 * of `stopping` and the wait is delivered by the wait itself, not lost */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	printf("serving http://%s/metrics\n", spec);
	fflush(stdout);
	while (!stopping) {
		struct pollfd pfd = { .fd = s, .events = POLLIN };
		int c;

		if (ppoll(&pfd, 1, NULL, &waitmask) <= 0)
			continue;	/* EINTR: a signal, which the loop test sees */
		c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			/* out of descriptors or memory: wait instead of spinning */
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				usleep(100 * 1000);
			continue;
		}
		serve_one(c);
		close(c);
	}
	close(s);
	return 0;
}

int vk_cmd_metrics(int argc, char **argv)
{
	const struct option opts[] = {
		VK_OPTS_GLOBAL,
		{ "textfile", required_argument, NULL, 't' },
		{ "listen", required_argument, NULL, 'l' },
		{}
	};
	struct vk_opts o = { .longopts = opts };
	const char *textfile = NULL, *listen_on = NULL;
	char err[VK_ERR_MAX] = "";
	int c, ret;

	while ((c = vk_getopt(argc, argv, &o)) >= 0) {
		const char **slot = c == 't' ? &textfile : c == 'l' ? &listen_on : NULL;

		if (slot && *slot)
			return vk_usage_error("metrics: --%s is given twice", c == 't' ? "textfile" : "listen");
		if (slot)
			*slot = optarg;
	}
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	if (textfile && listen_on)
		return vk_usage_error("metrics: --textfile and --listen exclude each other");
	if (vk_check_env(err))
		return vk_die(err);
	if (listen_on)
		ret = serve(listen_on, err);
	else if (textfile)
		ret = to_textfile(textfile, err);
	else
		ret = write_metrics(stdout, err);
	return ret ? vk_die(err) : 0;
}
