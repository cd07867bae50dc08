// SPDX-License-Identifier: GPL-2.0
/*
 * vegasctl trace: stream the controllers' per-ACK and per-RTT decision records
 * (struct vk_event) as CSV or JSON lines. Switches tracing on in the selected
 * instances' parameters and off again at exit (also on SIGINT/SIGTERM; after
 * a SIGKILL the other readers' sweep or the lease does it, tracelease.h); the
 * lost-record count goes to stderr, nothing but data to stdout
 * (docs/DESIGN.md §5). CSV, the default, always starts with its header line;
 * --csv and --json (the global flag, wherever it is) exclude each other.
 * --cost prints no records: it times each decision inside the controllers and,
 * at the end, prints what one cost per instance.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "env.h"
#include "filter.h"
#include "format.h"
#include "instance.h"
#include "tracecsv.h"
#include "tracelease.h"

const char vk_usage_trace[] =
	"trace [FILTER]... [--decisions | --acks | --cost] [--duration S] [--count N] [--csv | --json]\n"
	"\n"
	"  --decisions      per-RTT decision records only\n"
	"  --acks           per-ACK records only (default: both)\n"
	"  --cost           no records: time each decision, and print at the end\n"
	"                   what one cost, per controller, and its flows record's\n"
	"                   share (ns, the clock reads' own cost taken out)\n"
	"  --duration S     stop after S seconds (default: at SIGINT or SIGTERM)\n"
	"  --count N        stop after N records\n"
	"  --csv            CSV, with a header line first (the default)\n"
	"  --json           one JSON object a line; --csv and --json exclude each other\n"
	"The count of records printed and lost goes to stderr at the end.\n"
	VK_USAGE_FILTER;

struct trace_ctx {
	struct vk_filter flt;
	bool json;
	long long count;	/* records still to print; < 0: no limit */
	unsigned long long printed;
	bool discard;		/* draining what dead readers left: print nothing */
	struct ring_buffer *rb;
	__u32 bits;		/* record types asked for: another reader may want more */
	struct vk_csv_ids ids;	/* CSV: each connection's identity columns, kept */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One record as a JSON object a line (--json); CSV is tracecsv.c's, the fast path. */
static void print_json(const struct vk_event *e)
{
	bool dec = e->type == VK_EV_DECISION;
	char src[64], dst[64], ca[VK_JSON_BUF(VK_NAME_MAX)];

	vk_format_addr(e->id.saddr, src, sizeof(src));
	vk_format_addr(e->id.daddr, dst, sizeof(dst));
	printf("{\"time_s\":%llu.%09llu,\"type\":\"%s\",\"netns\":%u,\"saddr\":\"%s\",\"sport\":%u,"
	       "\"daddr\":\"%s\",\"dport\":%u,\"ca\":\"%s\",\"state\":\"%s\",\"cwnd\":%u,"
	       "\"ssthresh\":%u,\"in_flight\":%u,\"rtt_us\":%d,\"base_rtt_us\":%u,\"cnt_rtt\":%u",
	       e->ts_ns / 1000000000ull, e->ts_ns % 1000000000ull, dec ? "decision" : "ack",
	       e->id.netns, src, e->id.sport, dst, e->id.dport,
	       vk_json_escape(ca, sizeof(ca), e->id.ca, sizeof(e->id.ca)),
	       vk_ca_state_name(e->id.ca_state), e->cwnd, e->ssthresh, e->in_flight, e->rtt_us,
	       e->base_rtt_us, e->cnt_rtt);
	if (dec)
		printf(",\"diff\":%d,\"alpha\":%u,\"beta\":%u,\"th\":%.3f,\"th_prev\":%.3f,"
		       "\"cwnd_after\":%u,\"ssthresh_after\":%u,\"rule\":\"%s\",\"th_cmp\":%d,"
		       "\"sent\":%u,\"outstanding\":%u,\"mode\":\"%s\",\"foreign\":%.3f}\n",
		       e->diff, e->alpha, e->beta, vk_event_th_milli(e->th_pkts, e->th_rtt_us) / 1000.0,
		       vk_event_th_milli(e->th_prev_pkts, e->th_prev_rtt_us) / 1000.0,
		       e->cwnd_after, e->ssthresh_after, vk_rule_name(e->rule), e->th_cmp, e->sent,
		       e->outstanding, vk_mode_name(e->mode), e->foreign_milli / 1000.0);
	else
		printf(",\"alpha\":%u,\"beta\":%u}\n", e->alpha, e->beta);
}

static int handle(void *arg, void *data, size_t size)
{
	struct trace_ctx *t = arg;
	const struct vk_event *e = data;
	char line[VK_TRACE_CSV_MAX];

	if (t->discard || size < sizeof(*e) || !vk_filter_match(&t->flt, &e->id) || t->count == 0 ||
	    !(t->bits & (e->type == VK_EV_DECISION ? VK_TRACE_DECISIONS : VK_TRACE_ACKS)))
		return 0;
	if (t->json)
		print_json(e);
	else
		fwrite(line, 1, vk_trace_csv(line, e, &t->ids), stdout);
	t->printed++;
	if (t->count > 0 && --t->count == 0)
		stop = 1;
	return 0;
}

static __u64 lost_count(int fd)
{
	__u32 zero = 0;
	__u64 v = 0;

	if (fd >= 0)
		bpf_map_lookup_elem(fd, &zero, &v);
	return v;
}

/* Drop unread what our instances' rings hold; vk_reg_start calls it only when no
 * other live reader claims one of them (a live one's unread records are its own). */
static void drain(void *arg)
{
	struct trace_ctx *t = arg;

	t->discard = 1;
	ring_buffer__consume(t->rb);
	t->discard = 0;
}

enum { OPT_DURATION = VK_OPT_CMD, OPT_COUNT };

struct trace_args {
	int bits;		/* VK_TRACE_*, from the two below */
	int decisions, acks, cost;
	int csv;
	double duration;	/* 0: until a signal */
};

/* Returns -1 to go on, or the exit status (help, usage error). */
static int parse(struct trace_args *a, struct trace_ctx *t, int argc, char **argv, char *err)
{
	const struct option opts[] = {
		VK_OPTS_GLOBAL, VK_OPTS_FILTER,
		{ "decisions", no_argument, &a->decisions, 1 },
		{ "acks", no_argument, &a->acks, 1 },
		{ "cost", no_argument, &a->cost, 1 },
		{ "csv", no_argument, &a->csv, 1 },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "count", required_argument, NULL, OPT_COUNT },
		{}
	};
	struct vk_opts o = { .longopts = opts, .filter = &t->flt };
	unsigned long long n;
	const char *opt;
	double v;
	int c;

	while ((c = vk_getopt(argc, argv, &o)) >= 0) {
		if (c != OPT_DURATION && c != OPT_COUNT)
			continue;
		opt = c == OPT_DURATION ? "duration" : "count";
		if ((c == OPT_DURATION ? a->duration > 0 : t->count > 0)) {
			vk_err(err, "--%s is given twice: give it once", opt);
			return vk_die(err);
		}
		if (c == OPT_COUNT) {
			if (vk_parse_uint(optarg, LLONG_MAX, &n) || !n) {
				vk_err(err, "--count must be a whole number of records >= 1: '%s'", optarg);
				return vk_die(err);
			}
			t->count = (long long)n;
			continue;
		}
		/* a week at most: beyond it a typo is likelier than a plan */
		if (vk_parse_decimal(optarg, &v, NULL) || !(v > 0 && v <= 7 * 86400.0)) {
			vk_err(err, "--duration must be seconds in (0, 604800]: '%s'", optarg);
			return vk_die(err);
		}
		a->duration = v;
	}
	if (c == VK_OPT_EXIT)
		return o.status;
	if (optind < argc)
		return vk_unexpected_arg(argv[optind]);
	if (a->csv && vk_cli.json)
		return vk_usage_error("trace: --csv and --json exclude each other");
	/* the last would have won; both is what giving neither means */
	if (a->decisions && a->acks)
		return vk_usage_error("trace: --decisions and --acks exclude each other "
				      "(give neither for both)");
	if (a->cost && (a->decisions || a->acks))
		return vk_usage_error("trace: --cost times decisions and prints no records: "
				      "give it without --decisions and --acks");
	if (a->cost && t->count > 0)
		return vk_usage_error("trace: --count counts records, and --cost prints none: "
				      "give --duration, or stop it with SIGINT");
	if (a->cost && a->csv)
		return vk_usage_error("trace: --cost prints a line per controller, not CSV: "
				      "leave out --csv (--json for JSON)");
	if (a->cost)
		a->bits = VK_TRACE_COST;
	else if (a->decisions || a->acks)
		a->bits = a->decisions ? VK_TRACE_DECISIONS : VK_TRACE_ACKS;
	t->json = vk_cli.json;
	return -1;
}

/* What --cost measured: each instance's timed decisions since `before`. A decision's
 * time is its span less the three clock reads in it (its own pair's and the two around
 * the flows record inside it), the record's its span less one; a read is timed beside
 * each decision (docs/DESIGN.md §5.1). */
static void print_cost(char (*names)[VK_NAME_MAX], int n, const struct vk_stats *before,
		       bool json)
{
	char err[VK_ERR_MAX], name[VK_JSON_BUF(VK_NAME_MAX)];
	struct vk_stats now;

	for (int i = 0; i < n; i++) {
		__u64 timed = 0;
		double ns = 0, clock = 0, rec = 0;

		if (vk_instance_stats(names[i], &now, err) == 0) {
			timed = now.decisions_timed - before[i].decisions_timed;
			if (timed) {
				clock = (double)(now.clock_ns - before[i].clock_ns) / timed;
				ns = (double)(now.decision_ns - before[i].decision_ns) / timed -
				     3 * clock;
				rec = (double)(now.record_ns - before[i].record_ns) / timed - clock;
			}
		}
		if (json && timed)
			printf("{\"controller\":\"%s\",\"decisions_timed\":%llu,"
			       "\"ns_per_decision\":%.1f,\"record_ns_per_decision\":%.1f,"
			       "\"clock_read_ns\":%.1f}\n",
			       vk_json_escape(name, sizeof(name), names[i], VK_NAME_MAX),
			       (unsigned long long)timed, ns, rec, clock);
		else if (json)
			printf("{\"controller\":\"%s\",\"decisions_timed\":0,"
			       "\"ns_per_decision\":null,\"record_ns_per_decision\":null,"
			       "\"clock_read_ns\":null}\n",
			       vk_json_escape(name, sizeof(name), names[i], VK_NAME_MAX));
		else if (timed)
			printf("%s: %llu decisions timed, %.0f ns each, %.0f of them in the flows "
			       "record (sk_storage); clock reads of %.0f ns taken out\n", names[i],
			       (unsigned long long)timed, ns, rec, clock);
		else
			printf("%s: no decision timed (none of its sockets decided)\n", names[i]);
	}
}

/* 0 if the instance's trace bits would reach running code; else -1 with err. */
static int traceable(const char *name, char *err)
{
	struct vk_instance in;

	if (vk_instance_read(name, &in, err))
		return -1;
	if (!in.committed)
		return vk_err(err, "'%s' is incomplete (an interrupted load): nothing runs to trace; "
			      "vegasctl unload %s", name, name);
	if (in.other_version)
		return vk_err(err, "'%s' was loaded by another vegaskit version (parameter layout "
			      "differs): trace it with that vegasctl, or unload and load it again",
			      name);
	if (!in.has_params)
		return vk_err(err, "'%s' has no readable parameters (interrupted load?): "
			      "vegasctl unload %s", name, name);
	return 0;
}

/*
 * The instances to trace: those --controller names, all of which must be
 * traceable, or else every loaded one that is. A malloc'd array; returns the
 * count, or -1 with err.
 */
static int trace_names(const struct vk_filter *flt, char (**names)[VK_NAME_MAX], char *err)
{
	char why[VK_ERR_MAX] = "";
	int n, kept = 0;

	if (flt->ncc) {
		*names = calloc(flt->ncc, sizeof(**names));
		if (!*names)
			return vk_err(err, "out of memory");
		for (__u32 i = 0; i < flt->ncc; i++) {
			if (traceable(flt->cc[i], err))
				return -1;
			memcpy((*names)[i], flt->cc[i], VK_NAME_MAX);
		}
		return (int)flt->ncc;
	}
	n = vk_instance_names(names);
	if (n < 0)
		return vk_err(err, "cannot read %s: %s", VK_PIN_CC, strerror(errno));
	for (int i = 0; i < n; i++)
		if (traceable((*names)[i], why) == 0)
			memmove((*names)[kept++], (*names)[i], VK_NAME_MAX);
	if (n && !kept)		/* say why the only ones there are cannot be traced */
		return vk_err(err, "no loaded vegaskit controller can be traced (%s)", why);
	if (!kept)
		return vk_err(err, "no vegaskit controller is loaded: nothing to trace (see: vegasctl load)");
	return kept;
}

/*
 * One ring_buffer over the named instances' own rings (instance.h): each instance
 * writes its own, so this reader consumes no other instance's records. fds[i] is
 * names[i]'s ring, kept open while *rb lives (libbpf does not own them); -1 where
 * none was opened. Returns 0, or -1 with err.
 */
static int open_rings(char (*names)[VK_NAME_MAX], int n, int *fds, struct trace_ctx *t,
		      struct ring_buffer **rb, char *err)
{
	for (int i = 0; i < n; i++)
		fds[i] = -1;
	for (int i = 0; i < n; i++) {
		fds[i] = vk_instance_events_fd(names[i]);
		if (fds[i] < 0)
			return vk_err(err, "'%s' has no trace ring of its own (loaded by an older "
				      "vegasctl): unload and load it again", names[i]);
		if (!*rb)
			*rb = ring_buffer__new(fds[i], handle, t, NULL);
		else if (ring_buffer__add(*rb, fds[i], handle, t))
			return vk_err(err, "cannot map the trace ring of '%s'", names[i]);
		if (!*rb)
			return vk_err(err, "cannot map the trace ring of '%s'", names[i]);
	}
	return 0;
}

int vk_cmd_trace(int argc, char **argv)
{
	struct trace_args a = { .bits = VK_TRACE_DECISIONS | VK_TRACE_ACKS };
	struct trace_ctx t = { .count = -1 };
	char (*names)[VK_NAME_MAX] = NULL;
	struct vk_stats *before = NULL;
	struct ring_buffer *rb = NULL;
	char err[VK_ERR_MAX] = "";
	struct timespec t0, now, swept;
	int n, *ring_fds = NULL, lost_fd = -1, lease_fd = -1, ret;
	__u64 lost0;

	vk_filter_init(&t.flt);
	ret = parse(&a, &t, argc, argv, err);
	if (ret >= 0)
		return ret;
	ret = 0;
	/* one write a poll tick, not one per 4 KiB: the loop flushes every tick anyway */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	if (vk_check_env(err))
		return vk_die(err);
	n = trace_names(&t.flt, &names, err);
	if (n <= 0) {
		ret = vk_die(err);
		goto out;
	}
	/* --cost reads no ring: the records there are other readers' */
	ring_fds = a.cost ? NULL : malloc(n * sizeof(*ring_fds));
	if (!a.cost && (!ring_fds || open_rings(names, n, ring_fds, &t, &rb, err))) {
		ret = vk_die(ring_fds ? err : "out of memory");
		goto out;
	}
	lost_fd = a.cost ? -1 : bpf_obj_get(VK_PIN_TRACE_LOST);
	lease_fd = vk_lease_open();
	if (lease_fd < 0) {
		ret = vk_die("cannot open the trace lease " VK_PIN_TRACE_UNTIL
			     " (controllers loaded by an older vegasctl: unload and load them)");
		goto out;
	}
	before = a.cost ? calloc(n, sizeof(*before)) : NULL;
	if (a.cost && !before) {
		ret = vk_die("out of memory");
		goto out;
	}
	for (int i = 0; before && i < n; i++)
		vk_instance_stats(names[i], &before[i], err);	/* none: counts from 0 */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	t.rb = rb;
	lost0 = lost_count(lost_fd);
	if (vk_lease_renew(lease_fd)) {
		ret = vk_die("cannot write the trace lease " VK_PIN_TRACE_UNTIL);
		goto out;
	}
	t.bits = (__u32)a.bits;
	/* records dead readers left in the ring are not live: drained unread */
	if (vk_reg_start(names, n, t.bits, a.cost ? NULL : drain, &t, err) <= 0) {
		ret = vk_die(err[0] ? err : "could not switch tracing on");
		goto out;
	}
	if (!t.json && !a.cost)
		fputs(vk_trace_csv_header, stdout);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	swept = t0;
	while (!stop) {
		/* the controllers wake us only when the ring fills: drain it on every tick */
		int r = rb ? ring_buffer__poll(rb, VK_TRACE_POLL_MS) : 0;

		if (!rb)
			usleep(VK_TRACE_POLL_MS * 1000);	/* a signal cuts it short */
		else if (r >= 0 || r == -EINTR)
			r = ring_buffer__consume(rb);
		if (r < 0 && r != -EINTR) {
			ret = vk_die("polling the trace ring failed");
			break;
		}
		fflush(stdout);
		vk_lease_renew(lease_fd);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* twice a second: a dead reader's bits go within a second of its death */
		if ((now.tv_sec - swept.tv_sec) * 1000000000ll + (now.tv_nsec - swept.tv_nsec) >=
		    500000000ll) {
			vk_reg_sweep();
			swept = now;
		}
		if (a.duration > 0 &&
		    (now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= a.duration)
			break;
	}
	/* Our bits off, unless another reader wants them; the lease stays, for it. */
	vk_reg_stop();
	if (a.cost) {
		print_cost(names, n, before, t.json);
		fflush(stdout);
		goto out;
	}
	ring_buffer__consume(rb);	/* what was already in the ring */
	fflush(stdout);
	fprintf(stderr, "vegasctl: %llu records, %llu lost\n", (unsigned long long)t.printed,
		(unsigned long long)(lost_count(lost_fd) - lost0));
out:
	vk_reg_stop();		/* a no-op unless registered */
	ring_buffer__free(rb);
	for (int i = 0; ring_fds && i < n; i++)
		if (ring_fds[i] >= 0)
			close(ring_fds[i]);
	free(ring_fds);
	if (lost_fd >= 0)
		close(lost_fd);
	if (lease_fd >= 0)
		close(lease_fd);
	free(before);
	free(names);
	return ret;
}
