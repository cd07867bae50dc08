// SPDX-License-Identifier: GPL-2.0
/*
 * One direction of the link: drop-tail queue -> serializer -> delay line.
 *
 * Event-driven with virtual time: a packet starts service when the previous
 * one finished (tx_done_ns), not when this process happened to wake up, so
 * wake-up latency never leaks into the rate. Wake-up latency does delay the
 * write of a due packet by a few microseconds, but never its order.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "linkemu.h"

#define RING_INIT_SLOTS	1024U
#define RING_MAX_BYTES	(256UL << 20)	/* per direction: ~170k full-size packets */

static inline struct pkt *slot(const struct ring *r, uint32_t i)
{
	return (struct pkt *)(r->mem + (size_t)(i & (r->cap - 1)) * r->slot_size);
}

/* xoshiro256**: fast, and seeded per direction so each has its own stream. */
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(uint64_t s[4])
{
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_unit(uint64_t s[4])
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int dir_init(struct dir *d, const char *name, unsigned int index, uint64_t seed,
	     unsigned int mtu)
{
	uint64_t x = seed ^ (0x5851f42d4c957f2dULL * (index + 1));
	int i;

	memset(d, 0, sizeof(*d));
	d->name = name;
	d->in_fd = d->out_fd = -1;
	d->p.limit_pkts = DEFAULT_LIMIT;
	for (i = 0; i < 4; i++)
		d->rng[i] = splitmix64(&x);

	/* Slots hold a full MTU; 16-byte aligned so the headers stay aligned. */
	d->r.slot_size = (sizeof(struct pkt) + mtu + 15) & ~(size_t)15;
	d->r.cap = RING_INIT_SLOTS;
	d->r.mem = malloc(d->r.cap * d->r.slot_size);
	return d->r.mem ? 0 : -ENOMEM;
}

void dir_free(struct dir *d)
{
	free(d->r.mem);
	d->r.mem = NULL;
}

/* Double the ring, keeping packets in order; false when at the memory cap. */
static bool ring_grow(struct ring *r)
{
	uint32_t n = r->tail - r->head, i;
	uint8_t *mem;

	if ((size_t)r->cap * 2 * r->slot_size > RING_MAX_BYTES)
		return false;
	mem = malloc((size_t)r->cap * 2 * r->slot_size);
	if (!mem)
		return false;
	for (i = 0; i < n; i++)
		memcpy(mem + (size_t)i * r->slot_size, slot(r, r->head + i), r->slot_size);
	free(r->mem);
	r->mem = mem;
	r->serv -= r->head;
	r->tail = n;
	r->head = 0;
	r->cap *= 2;
	return true;
}

static void qlog(struct dir *d, uint64_t t_ns, const char *event)
{
	if (d->qlog)
		fprintf(d->qlog, "%" PRIu64 ",%s,%u,%s,\n", t_ns / NSEC_PER_USEC, d->name,
			d->waiting, event);
}

/*
 * A release 1 ms or more late, with its time: the counters say how late the
 * emulator ran, the log says when, which is what decides whether a stall
 * spoiled a run: one while a flow learns its base RTT lasts the whole run
 * (docs/DESIGN.md §7.1).
 */
static void qlog_late(struct dir *d, uint64_t now, uint64_t late)
{
	if (d->qlog)
		fprintf(d->qlog, "%" PRIu64 ",%s,%u,late,%" PRIu64 "\n", now / NSEC_PER_USEC,
			d->name, d->waiting, late / NSEC_PER_USEC);
}

static uint64_t ser_ns(const struct dir *d, uint32_t len)
{
	if (!d->p.rate_bps)
		return 0;
	/* len <= 64 KiB, so len * 8e9 fits easily in 64 bits. */
	return (uint64_t)len * 8 * NSEC_PER_SEC / d->p.rate_bps;
}

/* The serializer became free at free_ns: take the next waiting packet. */
static void start_next(struct dir *d, uint64_t free_ns)
{
	struct pkt *p;
	uint64_t start;

	if (d->busy || !d->waiting)
		return;
	p = slot(&d->r, d->r.serv);
	start = p->t_ns > free_ns ? p->t_ns : free_ns;
	d->busy = true;
	d->tx_done_ns = start + ser_ns(d, p->len);
	d->waiting--;
	qlog(d, start, "deq");
}

/*
 * The packet at serv is fully serialized: it goes on the wire, or is lost
 * there (a retransmission is spared when spare_retx is on). The delay in
 * force now is the one it travels with, and its release is clamped to the
 * previous release, so a shorter new delay bunches packets up behind the old
 * ones instead of overtaking them.
 */
static void finish_tx(struct dir *d)
{
	struct pkt *p = slot(&d->r, d->r.serv);
	uint64_t done = d->tx_done_ns;
	bool lose = d->p.loss > 0 && rng_unit(d->rng) < d->p.loss;

	d->busy = false;
	d->r.serv++;
	/* A spared retransmission has drawn too: the draws per packet do not change. */
	if (lose && d->p.spare_retx && p->retx) {
		d->st.spared++;
		lose = false;
	}
	if (lose) {
		p->lost = true;
		p->t_ns = d->last_release_ns;	/* keeps the ring's times monotonic */
		d->st.lost++;
		qlog(d, done, "loss");
	} else {
		uint64_t rel = done + d->p.delay_us * NSEC_PER_USEC;

		if (rel < d->last_release_ns)
			rel = d->last_release_ns;
		p->t_ns = rel;
		d->last_release_ns = rel;
		d->inflight++;
	}
	start_next(d, done);
}

static void release_due(struct dir *d, uint64_t now)
{
	struct ring *r = &d->r;

	while (r->head != r->serv) {
		struct pkt *p = slot(r, r->head);

		if (p->t_ns > now)
			break;
		if (!p->lost) {
			uint64_t late = now - p->t_ns;

			d->st.late_sum_ns += late;
			d->st.released++;
			if (late > d->st.late_max_ns)
				d->st.late_max_ns = late;
			if (late >= NSEC_PER_MSEC) {
				d->st.late_1ms++;
				qlog_late(d, now, late);
			}
			d->inflight--;
			if (write(d->out_fd, p->data, p->len) == (ssize_t)p->len) {
				d->st.pkts_out++;
				d->st.bytes_out += p->len;
			} else {
				d->st.errors++;
			}
		}
		r->head++;
	}
}

/* Run everything due at or before now. */
void dir_advance(struct dir *d, uint64_t now)
{
	while (d->busy && d->tx_done_ns <= now)
		finish_tx(d);
	release_due(d, now);
}

/*
 * The next release: the one event whose timing the user sees (as delay). A
 * serialization end may be handled late at no cost: the next packet's start
 * and this one's release are computed from tx_done_ns, not from the clock.
 */
uint64_t dir_next_release(const struct dir *d)
{
	return d->r.head != d->r.serv ? slot(&d->r, d->r.head)->t_ns : TIME_NEVER;
}

uint64_t dir_next_tx_done(const struct dir *d)
{
	return d->busy ? d->tx_done_ns : TIME_NEVER;
}

static inline uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/*
 * Is this packet a TCP retransmission? A TCP segment with payload whose
 * sequence range ends at or before the highest end seen so far for its flow
 * in this direction (modulo 2^32); otherwise its end becomes the highest.
 * The TUN carries bare IP (IFF_NO_PI). Anything but a whole, unfragmented
 * IPv4 TCP segment with payload is not a retransmission, and is not recorded.
 */
static bool retx_seen(struct dir *d, const uint8_t *b, size_t n)
{
	uint32_t saddr, daddr, seq, end, h, i;
	uint16_t sport, dport;
	size_t ihl, tot, doff;
	struct flow_seq *f, *free_slot = NULL;

	if (n < 20 || b[0] >> 4 != 4 || b[9] != 6)
		return false;
	ihl = (size_t)(b[0] & 15) * 4;
	tot = (size_t)b[2] << 8 | b[3];
	/* fragments: MF set or a nonzero offset */
	if (ihl < 20 || tot < ihl + 20 || tot > n || ((b[6] & 0x3f) | b[7]))
		return false;
	doff = (size_t)(b[ihl + 12] >> 4) * 4;
	if (doff < 20 || tot <= ihl + doff)		/* no payload, or a bad offset */
		return false;
	memcpy(&saddr, b + 12, 4);
	memcpy(&daddr, b + 16, 4);
	memcpy(&sport, b + ihl, 2);
	memcpy(&dport, b + ihl + 2, 2);
	seq = get32(b + ihl + 4);
	end = seq + (uint32_t)(tot - ihl - doff);

	h = saddr * 0x9e3779b1U ^ daddr * 0x85ebca6bU ^
	    ((uint32_t)sport << 16 | dport) * 0xc2b2ae35U;
	h ^= h >> 15;
	for (i = 0; i < RETX_PROBE; i++) {
		f = &d->flows[(h + i) & (RETX_SLOTS - 1)];
		if (!f->used) {
			if (!free_slot)
				free_slot = f;
			continue;
		}
		if (f->saddr == saddr && f->daddr == daddr && f->sport == sport &&
		    f->dport == dport) {
			if ((int32_t)(end - f->end) <= 0)
				return true;
			f->end = end;
			return false;
		}
	}
	f = free_slot ? free_slot : &d->flows[h & (RETX_SLOTS - 1)];
	*f = (struct flow_seq){ .saddr = saddr, .daddr = daddr, .sport = sport,
				.dport = dport, .end = end, .used = true };
	return false;
}

/* Read up to budget packets waiting on the input TUN, each dated when it is read. */
void dir_read(struct dir *d, unsigned int budget)
{
	uint64_t now = now_ns();
	size_t room = d->r.slot_size - sizeof(struct pkt);
	struct ring *r = &d->r;

	static uint8_t scratch[65536];	/* sink for packets we have no room for */
	const unsigned int first_budget = budget - 1;	/* budget's value after the first read */

	while (budget--) {
		struct pkt *p = NULL;
		bool retx;
		ssize_t n;

		dir_advance(d, now);		/* free what is due: the ring's room */
		if (r->tail - r->head < r->cap || ring_grow(r))
			p = slot(r, r->tail);
		n = read(d->in_fd, p ? p->data : scratch, p ? room : sizeof(scratch));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				d->st.errors++;
			return;
		}
		if (n == 0)
			return;
		/*
		 * The packet's own arrival, read after it is in hand: the wake-up's time
		 * would date a packet that came while this loop ran (or lost the CPU
		 * mid-batch) before it came, and release it early, under the configured
		 * delay. Traced on 2 busy cores: an RTT 1.45 ms under the path's, which a
		 * Vegas flow kept as its baseRTT (docs/DESIGN.md §6.2).
		 */
		now = now_ns();
		if (budget == first_budget)
			read_stall();
		/* Settle the queue to that time: the drop-tail test needs its length then,
		 * and the log stays in time order. */
		dir_advance(d, now);
		d->st.pkts_in++;
		d->st.bytes_in += n;
		/* Before drop-tail: a dropped segment was seen, its resend is a retransmission. */
		retx = retx_seen(d, p ? p->data : scratch, (size_t)n);
		d->st.retx += retx;
		if (!p) {
			d->st.overflow++;
			continue;
		}
		/* ns-2 DropTail: drop when `limit` packets already wait. */
		if (d->p.limit_pkts && d->waiting >= d->p.limit_pkts) {
			d->st.dropped++;
			qlog(d, now, "drop");
			continue;
		}
		p->t_ns = now;
		p->len = n;
		p->lost = false;
		p->retx = retx;
		r->tail++;
		d->waiting++;
		if (d->waiting > d->st.qlen_max)
			d->st.qlen_max = d->waiting;
		qlog(d, now, "enq");
		start_next(d, now);
	}
}

/*
 * New parameters apply from now on: a rate to packets that start service
 * after the change (the one being serialized finishes at the old rate), a
 * delay to packets that finish serialization after it, a limit to later
 * arrivals (packets already queued beyond a smaller limit stay).
 */
void dir_apply(struct dir *d, const struct param_update *u)
{
	if (u->set & P_RATE)
		d->p.rate_bps = u->p.rate_bps;
	if (u->set & P_DELAY)
		d->p.delay_us = u->p.delay_us;
	if (u->set & P_LIMIT)
		d->p.limit_pkts = u->p.limit_pkts;
	if (u->set & P_LOSS)
		d->p.loss = u->p.loss;
	if (u->set & P_SPARE)
		d->p.spare_retx = u->p.spare_retx;
}

int dir_json(const struct dir *d, char *buf, size_t len)
{
	const struct link_stats *s = &d->st;

	return snprintf(buf, len,
		"{\"rate_bps\":%" PRIu64 ",\"delay_us\":%" PRIu64 ",\"limit_pkts\":%u,"
		"\"loss\":%.15g,\"spare_retx\":%d,\"pkts_in\":%" PRIu64 ",\"bytes_in\":%" PRIu64 ","
		"\"pkts_out\":%" PRIu64 ",\"bytes_out\":%" PRIu64 ",\"dropped\":%" PRIu64 ","
		"\"lost\":%" PRIu64 ",\"retx\":%" PRIu64 ",\"spared\":%" PRIu64 ","
		"\"overflow\":%" PRIu64 ",\"errors\":%" PRIu64 ","
		"\"qlen\":%u,\"qlen_max\":%u,\"in_service\":%d,\"inflight\":%u,"
		"\"late_max_us\":%.1f,\"late_1ms\":%" PRIu64 ",\"late_mean_us\":%.1f}",
		d->p.rate_bps, d->p.delay_us, d->p.limit_pkts, d->p.loss, d->p.spare_retx,
		s->pkts_in, s->bytes_in, s->pkts_out, s->bytes_out, s->dropped,
		s->lost, s->retx, s->spared, s->overflow, s->errors, d->waiting, s->qlen_max, d->busy,
		d->inflight, s->late_max_ns / 1e3, s->late_1ms,
		s->released ? s->late_sum_ns / 1e3 / s->released : 0.0);
}

static const char *parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return "not a non-negative integer";
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end)
		return "not a non-negative integer";
	if (*out > max)
		return "too large";
	return NULL;
}

/* Bits per second, with an optional decimal suffix: 1500000, 1.5M, 10G. */
static const char *parse_rate(const char *s, uint64_t *out)
{
	double v, mult = 1;
	char *end;

	if ((*s < '0' || *s > '9') && *s != '.')
		return "not a rate";
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return "not a rate";
	switch (*end) {
	case 'k': case 'K': mult = 1e3; end++; break;
	case 'm': case 'M': mult = 1e6; end++; break;
	case 'g': case 'G': mult = 1e9; end++; break;
	}
	if (*end)
		return "not a rate (bits/s, optional k/M/G suffix)";
	v *= mult;
	if (!(v >= 0) || v > (double)MAX_RATE_BPS)
		return "rate out of range";
	*out = (uint64_t)llround(v);
	return NULL;
}

/*
 * "key=value[,key=value]..." (commas or blanks between pairs) into an
 * update. Returns NULL, or a message naming the bad pair.
 */
const char *params_parse(const char *spec, struct param_update *u)
{
	static char msg[160];
	char buf[512], *save = NULL, *tok;

	memset(u, 0, sizeof(*u));
	if (strlen(spec) >= sizeof(buf))
		return "parameter list too long";
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ", \t\r\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\r\n", &save)) {
		char *val = strchr(tok, '=');
		const char *err = NULL;
		uint64_t v;

		if (!val) {
			snprintf(msg, sizeof(msg), "'%s': expected key=value", tok);
			return msg;
		}
		*val++ = '\0';
		if (!strcmp(tok, "rate_bps")) {
			err = parse_rate(val, &u->p.rate_bps);
			u->set |= P_RATE;
		} else if (!strcmp(tok, "delay_us")) {
			err = parse_u64(val, MAX_DELAY_US, &u->p.delay_us);
			u->set |= P_DELAY;
		} else if (!strcmp(tok, "limit_pkts")) {
			err = parse_u64(val, MAX_LIMIT_PKTS, &v);
			u->p.limit_pkts = (uint32_t)v;
			u->set |= P_LIMIT;
		} else if (!strcmp(tok, "loss")) {
			char *end;

			errno = 0;
			u->p.loss = strtod(val, &end);
			if (errno || end == val || *end || !(u->p.loss >= 0 && u->p.loss <= 1))
				err = "not a probability in [0, 1]";
			u->set |= P_LOSS;
		} else if (!strcmp(tok, "spare_retx")) {
			if (!strcmp(val, "0") || !strcmp(val, "1"))
				u->p.spare_retx = val[0] == '1';
			else
				err = "expected 0 or 1";
			u->set |= P_SPARE;
		} else {
			snprintf(msg, sizeof(msg), "unknown key '%s' (rate_bps, delay_us, "
				 "limit_pkts, loss, spare_retx)", tok);
			return msg;
		}
		if (err) {
			snprintf(msg, sizeof(msg), "%s=%s: %s", tok, val, err);
			return msg;
		}
	}
	if (!u->set)
		return "no parameters";
	return NULL;
}
