/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linkemu - one emulated link between two network namespaces, mahimahi style:
 * a TUN device on each side and this process in between. Per direction, the
 * link is ns-2's: a drop-tail queue counted in packets, a serializer at the
 * link rate, then a propagation delay line; random (Bernoulli) loss hits a
 * packet "on the wire", after it has used its queue slot and its transmission
 * time. With spare_retx on, that random loss spares TCP retransmissions
 * (a segment whose payload ends at or before the highest end sequence the
 * link has seen for its flow and direction): a model-validation aid,
 * docs/DESIGN.md §6.2. Drop-tail drops spare nothing.
 *
 * Times are CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns(), so queue logs
 * line up with BPF traces). Internally they are nanoseconds, so that a
 * serialization time such as 52 bytes at 10 Mbit/s (41.6 us) is not rounded
 * once per packet; every interface (CLI, control socket, logs) speaks
 * microseconds.
 */
#ifndef LINKEMU_H
#define LINKEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define NSEC_PER_USEC	UINT64_C(1000)
#define NSEC_PER_MSEC	UINT64_C(1000000)
#define NSEC_PER_SEC	UINT64_C(1000000000)
#define TIME_NEVER	UINT64_MAX

/* Limits on parameters: sane values, and no overflow in nanosecond sums. */
#define MAX_RATE_BPS	100000000000ULL		/* 100 Gbit/s */
#define MAX_DELAY_US	10000000ULL		/* 10 s one way */
#define MAX_LIMIT_PKTS	1000000U
#define DEFAULT_LIMIT	1000U			/* Linux's default txqueuelen */

enum {
	P_RATE	= 1 << 0,
	P_DELAY	= 1 << 1,
	P_LIMIT	= 1 << 2,
	P_LOSS	= 1 << 3,
	P_SPARE	= 1 << 4,
};

struct link_params {
	uint64_t rate_bps;	/* bits of IP packet per second; 0: unlimited */
	uint64_t delay_us;	/* one-way propagation delay */
	uint32_t limit_pkts;	/* packets that may wait for the serializer; 0: unlimited */
	double loss;		/* Bernoulli loss probability per packet */
	bool spare_retx;	/* random loss never hits a TCP retransmission */
};

/* A partial update: only the fields named in `set` change. */
struct param_update {
	unsigned int set;
	struct link_params p;
};

/*
 * One packet slot. While the packet waits for (or is in) the serializer, t_ns
 * is its arrival time; once serialized it is its release time.
 */
struct pkt {
	uint64_t t_ns;
	uint32_t len;
	bool lost;
	bool retx;		/* a TCP retransmission (see retx_seen) */
	uint8_t data[];
};

/*
 * All packets of one direction, oldest first, in one FIFO ring:
 * [head, serv) are on the wire (delay line), [serv, tail) wait for or are in
 * the serializer. Both stages are FIFO, so one ring keeps the order for free.
 * Indices are free-running counters; the capacity is a power of two.
 */
struct ring {
	uint8_t *mem;
	size_t slot_size;
	uint32_t cap;
	uint32_t head, serv, tail;
};

struct link_stats {
	uint64_t pkts_in, bytes_in;	/* read from the input TUN */
	uint64_t pkts_out, bytes_out;	/* written to the output TUN */
	uint64_t dropped;		/* drop-tail: queue full on arrival */
	uint64_t lost;			/* random loss */
	uint64_t retx;			/* TCP retransmissions read (before drop-tail) */
	uint64_t spared;		/* retransmissions random loss drew but spared */
	uint64_t overflow;		/* no memory for another packet */
	uint64_t errors;		/* failed reads/writes of a TUN */
	uint32_t qlen_max;
	/* releases after their due time: a stalled emulator (a busy host) adds
	 * delay no controller caused, which delay-based ones read as queue. A lower
	 * bound: "now" is taken once before a burst of writes, a scheduled change
	 * catches up at its own time, and what arrived during a stall waited unread */
	uint64_t late_max_ns;
	uint64_t late_1ms;		/* releases 1 ms or more late */
	uint64_t late_sum_ns;		/* over every release: its mean is delay on every packet */
	uint64_t released;
};

/*
 * The highest end sequence seen per TCP flow (IPv4 4-tuple) of a direction,
 * in a small fixed table: linear probing over RETX_PROBE slots, and a flow
 * finding them all taken evicts its home slot (its next segment then counts
 * as new data). Hundreds of flows fit; the testbed has a handful.
 */
#define RETX_SLOTS	1024U		/* power of two */
#define RETX_PROBE	8U

struct flow_seq {
	uint32_t saddr, daddr;		/* network order, as on the wire */
	uint16_t sport, dport;
	uint32_t end;			/* highest seq + payload length seen */
	bool used;
};

struct dir {
	const char *name;		/* "ab" or "ba" */
	int in_fd, out_fd;
	struct link_params p;
	struct ring r;
	uint32_t waiting;		/* queue length, excluding the packet in service */
	uint32_t inflight;		/* packets in the delay line, not lost */
	bool busy;			/* the packet at r.serv is being serialized */
	uint64_t tx_done_ns;		/* when it is fully serialized */
	uint64_t last_release_ns;	/* releases never go backwards: no reordering */
	uint64_t rng[4];
	struct link_stats st;
	struct flow_seq flows[RETX_SLOTS];
	FILE *qlog;
};

/* link.c */
int dir_init(struct dir *d, const char *name, unsigned int index, uint64_t seed,
	     unsigned int mtu);
void dir_free(struct dir *d);
void dir_read(struct dir *d, unsigned int budget);	/* each packet stamped as read */
void read_stall(void);
void dir_advance(struct dir *d, uint64_t now);
uint64_t dir_next_release(const struct dir *d);
uint64_t dir_next_tx_done(const struct dir *d);
void dir_apply(struct dir *d, const struct param_update *u);
int dir_json(const struct dir *d, char *buf, size_t len);
const char *params_parse(const char *spec, struct param_update *u);

/* tun.c */
int tun_create(int home_ns, const char *ns, const char *dev, unsigned int mtu,
	       char *err, size_t errlen);

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif /* LINKEMU_H */
