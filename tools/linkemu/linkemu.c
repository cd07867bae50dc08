// SPDX-License-Identifier: GPL-2.0
/*
 * linkemu - the testbed's link emulator: command line, control socket and
 * the event loop. See linkemu.h for the link model, link.c for one
 * direction, tun.c for the devices.
 *
 * One thread, one ppoll() over the two TUNs, the control socket, a signalfd
 * and a timerfd armed at the next due event (a packet fully serialized, a
 * packet to release, a scheduled change). The timerfd, not ppoll's own
 * timeout: poll and epoll timeouts get a slack of 0.1% of their length
 * (200 us on a 200 ms sleep), an absolute timerfd expiry gets none, and
 * absolute times do not drift by the time spent computing them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>
#include <net/if.h>
#include "linkemu.h"

#define READ_BUDGET	64	/* packets per TUN per wake-up: neither side starves */
#define MAX_CHANGES	256
#define DIR_AB		1U
#define DIR_BA		2U

static const char usage[] =
"usage: linkemu -a NS:DEV -b NS:DEV [OPTION]...\n"
"Emulate one link, both directions, between TUN device DEV in namespace NS on\n"
"side a and the one on side b. Addresses and routes are the caller's job.\n"
"  -a, --side-a NS:DEV  side a: namespace (name under /var/run/netns, or a path)\n"
"                       and the TUN device to create there\n"
"  -b, --side-b NS:DEV  side b\n"
"      --both SPEC      parameters of both directions (applied first)\n"
"      --ab SPEC        parameters of direction a->b\n"
"      --ba SPEC        parameters of direction b->a\n"
"      --at T:DIR:SPEC  at T seconds after ready, change DIR (ab|ba|both); repeatable\n"
"      --mtu N          MTU of both devices (default 1500)\n"
"      --seed N         seed of the loss generator (default 1)\n"
"      --ctl PATH       control socket (unix datagram) for live changes; one\n"
"                       command per datagram: \"DIR SPEC\" or \"stats\"; the\n"
"                       sender, if bound, gets \"ok\", \"err: why\" or the JSON\n"
"      --qlog PATH      per-packet queue log, CSV t_us,dir,qlen_pkts,event,late_us\n"
"                       (event: enq, deq, drop, loss, or late: a release 1 ms or\n"
"                       more late, by late_us, empty for the others; qlen excludes\n"
"                       the packet being serialized; t_us is CLOCK_MONOTONIC)\n"
"      --stats PATH     also write the final counters (JSON) to PATH\n"
"      --max-spin-us N  busy-poll at most N us before a release, to beat timer\n"
"                       wake-up latency (default 500; 0: never spin)\n"
"      --fifo PRIO      sleep under SCHED_FIFO at PRIO (1..99): a wake-up then waits\n"
"                       for no ordinary task; the busy-poll before a release stays\n"
"                       ordinary (default: the ordinary policy throughout)\n"
"      --fifo-poll PCT  with --fifo, busy-poll under SCHED_FIFO too, for at most PCT\n"
"                       percent of a core (0..50); past it, polls are ordinary\n"
"                       (default 0: every poll ordinary)\n"
"SPEC is key=value[,key=value]...:\n"
"  rate_bps    IP-packet bits per second (k/M/G suffixes ok), 0 = unlimited (default)\n"
"  delay_us    one-way propagation delay, microseconds (default 0)\n"
"  limit_pkts  drop-tail limit, packets waiting for the serializer, 0 = unlimited\n"
"              (default 1000)\n"
"  loss        random loss probability on the wire, 0..1 (default 0)\n"
"  spare_retx  1: the random loss spares TCP retransmissions (IPv4 TCP payload\n"
"              ending at or before the highest end sequence seen for its flow in\n"
"              this direction); drop-tail still drops them. 0 or 1 (default 0)\n"
"Prints \"ready t0_us=T\" when both devices are up, and the counters as one JSON\n"
"line on exit (SIGTERM, SIGINT, SIGHUP); per direction, \"retx\" counts the\n"
"retransmissions read and \"spared\" those the loss drew but spared. Bad\n"
"arguments: exit 2; failure to set up (namespace, device): exit 1.\n";

struct change {
	uint64_t at_ns;		/* after t0 */
	unsigned int dirs;
	struct param_update u;
};

struct opts {
	const char *ns[2], *dev[2];
	unsigned int mtu;
	uint64_t seed;
	const char *ctl, *qlog, *stats;
	uint64_t max_spin_ns;
	int fifo;			/* SCHED_FIFO priority, 0: the default policy */
	unsigned int fifo_poll_pct;	/* share of a core polling may take under it */
	struct param_update init[3];	/* both, ab, ba, in that order */
	struct change changes[MAX_CHANGES];
	unsigned int nchanges;
};

static struct dir dirs[2];	/* [0] a->b, [1] b->a */
static uint64_t t0;

/*
 * Timer wake-ups in a virtual machine can come 55-360 us late (140 us on
 * average measured on our 2-core VMs), SCHED_FIFO or not: two of them would eat most of the
 * 0.5 ms RTT budget. So a release is armed `guard` early and the last stretch
 * is busy-polled (ppoll with a zero timeout plus sched_yield(), still
 * serving the fds and yielding the CPU to anyone runnable). The guard follows
 * the measured lateness as TCP's RTO follows RTT: mean + 2 mean deviations.
 * Only releases get this: a late serialization end costs nothing (link.c).
 * The price is CPU: at 100 Mbit/s releases come every 120 us, so we spin
 * most of the time (measured ~75% of a core, ~40% with --max-spin-us 0).
 */
static struct {
	uint64_t armed;			/* timerfd expiry; TIME_NEVER: disarmed */
	int64_t late_avg, late_dev;	/* ns */
	uint64_t guard, max_guard;	/* ns */
	uint64_t wakes;
} waker = { .armed = TIME_NEVER, .late_avg = 100000, .late_dev = 50000 };

/*
 * --fifo: SCHED_FIFO while asleep, so that a wake-up waits for no ordinary task
 * (decision 42), and the ordinary policy while busy-polling, whose sched_yield()
 * would give a SCHED_FIFO task's CPU to no ordinary task: at 100 Mbit/s the poll
 * fills most of a core, which under SCHED_FIFO no sender could use.
 */
static int fifo_prio;		/* 0: the ordinary policy throughout */
static bool now_fifo;

static int fifo_sleep(bool asleep)
{
	struct sched_param sp = { .sched_priority = asleep ? fifo_prio : 0 };

	if (!fifo_prio || now_fifo == asleep)
		return 0;
	if (sched_setscheduler(0, asleep ? SCHED_FIFO : SCHED_OTHER, &sp))
		return -1;
	now_fifo = asleep;
	return 0;
}

/*
 * --fifo-poll tests a candidate cost of --fifo: each drop to the ordinary policy makes
 * the kernel reschedule at once, and an ordinary task runnable on this CPU may then
 * keep it past the release. The bench measured it no better (docs/DESIGN.md decision
 * 42: the error is mostly the wait to be read), so it is off unless asked for. Polling
 * under SCHED_FIFO starves this CPU's ordinary tasks while it lasts (sched_yield()
 * gives way to equal SCHED_FIFO tasks only, the other emulators), so it runs on a
 * budget: PCT percent of the time elapsed, banked up to FIFO_POLL_BANK_NS. At 1 to 10
 * Mbit/s a poll of a guard's length before each release fits in it; at 100 Mbit/s,
 * where polling fills most of a core, the budget runs out and polls turn ordinary
 * until half the bank is back (not at the next microsecond's refill, which would
 * switch policy, and reschedule, at every turn of the loop).
 */
#define FIFO_POLL_BANK_NS	(2 * NSEC_PER_MSEC)

static struct {
	unsigned int pct;
	uint64_t bank, at;		/* ns of polling allowed; when last counted */
	bool spent;			/* the bank ran dry: ordinary until half full */
	uint64_t fifo_ns, other_ns;	/* time spent polling under each policy */
} fpoll;

/* Count the time since the last call as polling under the policy it ran under (or not
 * polling, if !polled), and say whether the next poll may stay under SCHED_FIFO. */
static bool fifo_poll_ok(uint64_t now, bool polled)
{
	uint64_t dt = now - fpoll.at;

	fpoll.at = now;
	fpoll.bank += dt * fpoll.pct / 100;
	if (fpoll.bank > FIFO_POLL_BANK_NS)
		fpoll.bank = FIFO_POLL_BANK_NS;
	if (polled && now_fifo) {
		fpoll.fifo_ns += dt;
		fpoll.bank = fpoll.bank > dt ? fpoll.bank - dt : 0;
	} else if (polled) {
		fpoll.other_ns += dt;
	}
	if (!fpoll.bank)
		fpoll.spent = true;
	else if (fpoll.bank >= FIFO_POLL_BANK_NS / 2)
		fpoll.spent = false;
	return fpoll.pct && !fpoll.spent;
}

static void waker_sample(uint64_t late)
{
	int64_t err = (int64_t)late - waker.late_avg;

	waker.late_avg += err / 8;
	waker.late_dev += ((err < 0 ? -err : err) - waker.late_dev) / 4;
	waker.wakes++;
	waker.guard = (uint64_t)(waker.late_avg + 2 * waker.late_dev);
	if (waker.guard > waker.max_guard)
		waker.guard = waker.max_guard;
}

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("linkemu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see linkemu --help)\n", stderr);
	exit(2);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("linkemu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned int parse_dirs(const char *s)
{
	if (!strcmp(s, "ab"))
		return DIR_AB;
	if (!strcmp(s, "ba"))
		return DIR_BA;
	if (!strcmp(s, "both"))
		return DIR_AB | DIR_BA;
	return 0;
}

static void parse_side(const char *arg, int i, struct opts *o)
{
	static char buf[2][PATH_MAX + IFNAMSIZ];
	char *colon;

	if (strlen(arg) >= sizeof(buf[i]))
		usage_error("-%c: too long", 'a' + i);
	strcpy(buf[i], arg);
	colon = strrchr(buf[i], ':');
	if (!colon || colon == buf[i] || !colon[1])
		usage_error("-%c %s: expected NS:DEV", 'a' + i, arg);
	*colon = '\0';
	if (strlen(colon + 1) >= IFNAMSIZ || strchr(colon + 1, '/') || strchr(colon + 1, '%'))
		usage_error("-%c %s: bad device name (at most %d characters, no '/' or '%%')",
			    'a' + i, arg, IFNAMSIZ - 1);
	o->ns[i] = buf[i];
	o->dev[i] = colon + 1;
}

static void parse_spec(const char *opt, const char *spec, struct param_update *u)
{
	const char *err = params_parse(spec, u);

	if (err)
		usage_error("--%s: %s", opt, err);
}

/* T:DIR:SPEC, T in seconds (fractions allowed) after ready. */
static void parse_at(const char *arg, struct opts *o)
{
	char buf[600], *dir, *spec, *end;
	struct change *c;
	double t;

	if (o->nchanges == MAX_CHANGES)
		usage_error("--at: more than %d changes", MAX_CHANGES);
	if (strlen(arg) >= sizeof(buf))
		usage_error("--at: too long");
	strcpy(buf, arg);
	dir = strchr(buf, ':');
	spec = dir ? strchr(dir + 1, ':') : NULL;
	if (!spec)
		usage_error("--at %s: expected T:DIR:key=value[,key=value]", arg);
	*dir++ = '\0';
	*spec++ = '\0';
	errno = 0;
	t = strtod(buf, &end);
	if (errno || end == buf || *end || !(t >= 0 && t <= 1e6))
		usage_error("--at %s: bad time '%s' (seconds after ready)", arg, buf);
	c = &o->changes[o->nchanges];
	c->dirs = parse_dirs(dir);
	if (!c->dirs)
		usage_error("--at %s: bad direction '%s' (ab, ba or both)", arg, dir);
	parse_spec("at", spec, &c->u);
	c->at_ns = (uint64_t)llround(t * 1e9);
	o->nchanges++;
}

/*
 * LINKEMU_READ_STALL_US (tests only): sleep this long after the first packet a
 * wake-up reads, the stand-in for losing the CPU in the middle of a batch of
 * reads, which busy hosts do at random (netns-tests/tests/test_calibration.py).
 */
static struct timespec read_stall_ts;

void read_stall(void)
{
	if (read_stall_ts.tv_nsec || read_stall_ts.tv_sec)
		nanosleep(&read_stall_ts, NULL);
}

static void read_stall_from_env(void)
{
	const char *v = getenv("LINKEMU_READ_STALL_US");
	char *end;
	unsigned long us;

	if (!v || !*v)
		return;
	errno = 0;
	us = strtoul(v, &end, 10);
	if (errno || *end || us > 1000000)
		usage_error("LINKEMU_READ_STALL_US=%s: expected 0..1000000", v);
	read_stall_ts.tv_sec = us / 1000000;
	read_stall_ts.tv_nsec = (long)(us % 1000000) * 1000;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_BOTH = 256, O_AB, O_BA, O_AT, O_MTU, O_SEED, O_CTL, O_QLOG, O_STATS,
	       O_SPIN, O_FIFO, O_FIFO_POLL };
	static const struct option longopts[] = {
		{ "side-a", required_argument, NULL, 'a' },
		{ "side-b", required_argument, NULL, 'b' },
		{ "both", required_argument, NULL, O_BOTH },
		{ "ab", required_argument, NULL, O_AB },
		{ "ba", required_argument, NULL, O_BA },
		{ "at", required_argument, NULL, O_AT },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "seed", required_argument, NULL, O_SEED },
		{ "ctl", required_argument, NULL, O_CTL },
		{ "qlog", required_argument, NULL, O_QLOG },
		{ "stats", required_argument, NULL, O_STATS },
		{ "max-spin-us", required_argument, NULL, O_SPIN },
		{ "fifo", required_argument, NULL, O_FIFO },
		{ "fifo-poll", required_argument, NULL, O_FIFO_POLL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned long long v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->mtu = 1500;
	o->seed = 1;
	o->max_spin_ns = 500 * NSEC_PER_USEC;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
		case 'b':
			parse_side(optarg, c - 'a', o);
			break;
		case O_BOTH:
		case O_AB:
		case O_BA:
			parse_spec(longopts[2 + c - O_BOTH].name, optarg, &o->init[c - O_BOTH]);
			break;
		case O_AT:
			parse_at(optarg, o);
			break;
		case O_MTU:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 68 || v > 65535)
				usage_error("--mtu %s: expected 68..65535", optarg);
			o->mtu = (unsigned int)v;
			break;
		case O_SEED:
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-')
				usage_error("--seed %s: expected a non-negative integer", optarg);
			o->seed = v;
			break;
		case O_CTL:
			if (strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path))
				usage_error("--ctl %s: path too long for a unix socket", optarg);
			o->ctl = optarg;
			break;
		case O_QLOG:
			o->qlog = optarg;
			break;
		case O_STATS:
			o->stats = optarg;
			break;
		case O_SPIN:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v > 100000)
				usage_error("--max-spin-us %s: expected 0..100000", optarg);
			o->max_spin_ns = v * NSEC_PER_USEC;
			break;
		case O_FIFO:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > 99)
				usage_error("--fifo %s: expected a priority 1..99", optarg);
			o->fifo = (int)v;
			break;
		case O_FIFO_POLL:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v > 50)
				usage_error("--fifo-poll %s: expected a percentage 0..50", optarg);
			o->fifo_poll_pct = (unsigned int)v;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case ':':
			usage_error("%s needs an argument", argv[optind - 1]);
		default:
			usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->fifo_poll_pct && !o->fifo)
		usage_error("--fifo-poll needs --fifo");
	if (!o->ns[0] || !o->ns[1])
		usage_error("both -a NS:DEV and -b NS:DEV are required");
	if (!strcmp(o->ns[0], o->ns[1]) && !strcmp(o->dev[0], o->dev[1]))
		usage_error("sides a and b are the same device");
}

/* Changes run in time order; equal times keep their command-line order. */
static void sort_changes(struct opts *o)
{
	unsigned int i, j;

	for (i = 1; i < o->nchanges; i++) {
		struct change c = o->changes[i];

		for (j = i; j > 0 && o->changes[j - 1].at_ns > c.at_ns; j--)
			o->changes[j] = o->changes[j - 1];
		o->changes[j] = c;
	}
}

static void apply(unsigned int mask, const struct param_update *u)
{
	if (mask & DIR_AB)
		dir_apply(&dirs[0], u);
	if (mask & DIR_BA)
		dir_apply(&dirs[1], u);
}

static int stats_json(char *buf, size_t len)
{
	int n = snprintf(buf, len, "{\"t0_us\":%" PRIu64 ",\"t_us\":%" PRIu64 ","
			 "\"timer_wakes\":%" PRIu64 ",\"timer_late_us\":%.1f,"
			 "\"spin_guard_us\":%.1f,\"poll_fifo_ms\":%.3f,"
			 "\"poll_other_ms\":%.3f,\"ab\":",
			 t0 / NSEC_PER_USEC, now_ns() / NSEC_PER_USEC, waker.wakes,
			 waker.late_avg / 1e3, waker.guard / 1e3, fpoll.fifo_ns / 1e6,
			 fpoll.other_ns / 1e6);

	n += dir_json(&dirs[0], buf + n, len - n);
	n += snprintf(buf + n, len - n, ",\"ba\":");
	n += dir_json(&dirs[1], buf + n, len - n);
	n += snprintf(buf + n, len - n, "}");
	return n;
}

/*
 * A unix datagram socket: one command per datagram, no framing to get wrong,
 * and a reply goes straight back to a sender that bound an address (Python:
 * bind("") autobinds). Created before any setns(), in our home namespace.
 */
static int ctl_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("control socket: %s", strerror(errno));
	strcpy(sa.sun_path, path);
	/* A stale socket of a killed run may remain; never remove anything else. */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode))
		unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("control socket %s: %s", path, strerror(errno));
	chmod(path, 0600);
	return fd;
}

static void ctl_handle(int fd, uint64_t now)
{
	char cmd[1024], reply[4096];
	struct sockaddr_un from;

	for (;;) {
		socklen_t fromlen = sizeof(from);
		struct param_update u;
		const char *err;
		unsigned int mask;
		char *sp;
		ssize_t n;

		n = recvfrom(fd, cmd, sizeof(cmd) - 1, 0, (struct sockaddr *)&from, &fromlen);
		if (n < 0)
			return;
		cmd[n] = '\0';
		while (n > 0 && (cmd[n - 1] == '\n' || cmd[n - 1] == '\r' || cmd[n - 1] == ' '))
			cmd[--n] = '\0';
		sp = strchr(cmd, ' ');
		if (!strcmp(cmd, "stats")) {
			stats_json(reply, sizeof(reply));
		} else if (!sp) {
			snprintf(reply, sizeof(reply), "err: expected \"DIR key=value...\" or \"stats\"");
		} else {
			*sp = '\0';
			mask = parse_dirs(cmd);
			if (!mask) {
				snprintf(reply, sizeof(reply), "err: bad direction '%.64s' (ab, ba or both)", cmd);
			} else if ((err = params_parse(sp + 1, &u))) {
				snprintf(reply, sizeof(reply), "err: %s", err);
			} else {
				/* Everything due so far ran under the old parameters. */
				dir_advance(&dirs[0], now);
				dir_advance(&dirs[1], now);
				apply(mask, &u);
				snprintf(reply, sizeof(reply), "ok");
			}
		}
		if (fromlen > sizeof(sa_family_t))
			sendto(fd, reply, strlen(reply), MSG_DONTWAIT, (struct sockaddr *)&from,
			       fromlen);
	}
}

static void write_stats_file(const char *path, const char *json)
{
	char tmp[PATH_MAX];
	FILE *f;

	/* Whole or absent: write aside, then rename. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "linkemu: %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "%s\n", json);
	if (fclose(f) || rename(tmp, path))
		fprintf(stderr, "linkemu: %s: %s\n", path, strerror(errno));
}

int main(int argc, char **argv)
{
	static struct opts o;
	char err[512], json[4096];
	uint64_t last_flush;
	unsigned int next_change = 0;
	int home_ns, ctl_fd = -1, sig_fd, i;
	struct pollfd pfd[5];
	struct timespec zero = { 0, 0 }, *tsp = NULL;	/* &zero: polling */
	int timer_fd;
	FILE *qlog = NULL;
	sigset_t mask;
	bool stop = false;

	parse_args(argc, argv, &o);
	read_stall_from_env();
	fifo_prio = o.fifo;
	fpoll.pct = o.fifo_poll_pct;
	fpoll.bank = FIFO_POLL_BANK_NS;
	if (fifo_prio && fifo_sleep(true))
		die("--fifo %d: %s", o.fifo, strerror(errno));
	sort_changes(&o);

	/* Stats go to a pipe the caller may have closed: EPIPE, not death. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0)
		die("signalfd: %s", strerror(errno));

	home_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home_ns < 0)
		die("/proc/self/ns/net: %s", strerror(errno));
	if (o.ctl)
		ctl_fd = ctl_open(o.ctl);
	if (o.qlog) {
		qlog = fopen(o.qlog, "w");
		if (!qlog)
			die("%s: %s", o.qlog, strerror(errno));
		/* Two lines per packet: buffer well, flush about once a second. */
		setvbuf(qlog, NULL, _IOFBF, 1 << 20);
		fputs("t_us,dir,qlen_pkts,event,late_us\n", qlog);
	}

	for (i = 0; i < 2; i++) {
		if (dir_init(&dirs[i], i ? "ba" : "ab", i, o.seed, o.mtu))
			die("out of memory");
		dir_apply(&dirs[i], &o.init[0]);
		dir_apply(&dirs[i], &o.init[1 + i]);
		dirs[i].qlog = qlog;
	}
	for (i = 0; i < 2; i++) {
		int fd = tun_create(home_ns, o.ns[i], o.dev[i], o.mtu, err, sizeof(err));

		if (fd < 0) {
			if (o.ctl)
				unlink(o.ctl);
			die("%s", err);	/* exit closes fd of side a: its device goes */
		}
		dirs[i].in_fd = fd;		/* a's TUN feeds a->b ... */
		dirs[1 - i].out_fd = fd;	/* ... and delivers b->a */
	}
	close(home_ns);

	waker.max_guard = o.max_spin_ns;
	waker.guard = waker.max_guard < 200000 ? waker.max_guard : 200000;
	/* Default slack is 50 us; we want to wake when the packet is due. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (timer_fd < 0)
		die("timerfd: %s", strerror(errno));

	pfd[0] = (struct pollfd){ .fd = dirs[0].in_fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = dirs[1].in_fd, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = sig_fd, .events = POLLIN };
	pfd[3] = (struct pollfd){ .fd = ctl_fd, .events = POLLIN };	/* -1: ignored */
	pfd[4] = (struct pollfd){ .fd = timer_fd, .events = POLLIN };

	t0 = last_flush = fpoll.at = now_ns();
	printf("ready t0_us=%" PRIu64 "\n", t0 / NSEC_PER_USEC);
	fflush(stdout);

	while (!stop) {
		uint64_t now = now_ns(), next, rel;
		bool polled = tsp != NULL;
		int n;

		/* A scheduled change takes effect at its time, not at our wake-up. */
		while (next_change < o.nchanges && t0 + o.changes[next_change].at_ns <= now) {
			struct change *c = &o.changes[next_change++];

			dir_advance(&dirs[0], t0 + c->at_ns);
			dir_advance(&dirs[1], t0 + c->at_ns);
			apply(c->dirs, &c->u);
		}
		dir_advance(&dirs[0], now);
		dir_advance(&dirs[1], now);
		if (qlog && now - last_flush > NSEC_PER_SEC) {
			fflush(qlog);
			last_flush = now;
		}

		rel = dir_next_release(&dirs[0]);
		if (dir_next_release(&dirs[1]) < rel)
			rel = dir_next_release(&dirs[1]);
		next = dir_next_tx_done(&dirs[0]);
		if (dir_next_tx_done(&dirs[1]) < next)
			next = dir_next_tx_done(&dirs[1]);
		if (next_change < o.nchanges && t0 + o.changes[next_change].at_ns < next)
			next = t0 + o.changes[next_change].at_ns;
		if (rel != TIME_NEVER && rel - waker.guard < next)
			next = rel > waker.guard ? rel - waker.guard : 0;
		if (next <= now) {
			/* Within the guard of a release, or more is due: spin. */
			tsp = &zero;
			fifo_sleep(fifo_poll_ok(now, polled));
			sched_yield();
		} else {
			fifo_poll_ok(now, polled);
			tsp = NULL;
			fifo_sleep(true);
			if (next != waker.armed) {
				struct itimerspec its = { 0 };

				if (next != TIME_NEVER) {
					its.it_value.tv_sec = next / NSEC_PER_SEC;
					its.it_value.tv_nsec = next % NSEC_PER_SEC;
				}
				if (timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
					die("timerfd_settime: %s", strerror(errno));
				waker.armed = next;
			}
		}

		n = ppoll(pfd, 5, tsp, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll: %s", strerror(errno));
		}
		if (!n)
			continue;
		now = now_ns();
		if (pfd[0].revents & POLLIN)
			dir_read(&dirs[0], READ_BUDGET);
		if (pfd[1].revents & POLLIN)
			dir_read(&dirs[1], READ_BUDGET);
		if (pfd[3].revents & POLLIN)
			ctl_handle(ctl_fd, now_ns());	/* after the reads, which moved time on */
		if (pfd[2].revents & POLLIN)
			stop = true;
		if (pfd[4].revents & POLLIN) {
			uint64_t expirations;

			/* Drain it; the loop's top finds what is due. */
			if (read(timer_fd, &expirations, sizeof(expirations)) > 0) {
				if (!tsp && now >= waker.armed)	/* we slept on it */
					waker_sample(now - waker.armed);
				waker.armed = TIME_NEVER;
			}
		}
	}

	/* Closing the fds removes the devices; packets still inside are counted. */
	close(dirs[0].in_fd);
	close(dirs[1].in_fd);
	if (o.ctl) {
		close(ctl_fd);
		unlink(o.ctl);
	}
	if (qlog)
		fclose(qlog);
	stats_json(json, sizeof(json));
	printf("%s\n", json);
	fflush(stdout);
	if (o.stats)
		write_stats_file(o.stats, json);
	dir_free(&dirs[0]);
	dir_free(&dirs[1]);
	return 0;
}
