// SPDX-License-Identifier: GPL-2.0
/*
 * tracecsv_check - vk_trace_csv() against printf, record by record.
 *
 * The reference is the line as `vegasctl trace` printed it with printf before
 * tracecsv.c, column for column. Events are drawn from a seeded generator:
 * IPv4 and IPv6 connections, more of them than the identity table holds (so
 * slots are replaced), negative samples, diffs and foreign queues, names out of
 * range, a state that changes under a kept identity, and the extremes of every
 * field. Prints "checked N" and exits 0, or prints the first difference and
 * exits 1. Built and run by tools/tests/test_trace_csv.py.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../format.h"
#include "../tracecsv.h"

static unsigned long long state = 88172645463325252ull;

static unsigned long long next(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

/* a value with a fair chance of each extreme */
static unsigned long long draw(unsigned long long max)
{
	switch (next() % 6) {
	case 0: return 0;
	case 1: return max;
	case 2: return next() % 10;
	default: return max == ~0ull ? next() : next() % (max + 1);
	}
}

static long long draw_signed(long long lo, long long hi)
{
	switch (next() % 6) {
	case 0: return lo;
	case 1: return hi;
	case 2: return (long long)(next() % 21) - 10;
	default: return lo + (long long)(next() % (unsigned long long)(hi - lo));
	}
}

static void reference(char *buf, size_t n, const struct vk_event *e)
{
	bool dec = e->type == VK_EV_DECISION;
	char src[64], dst[64];
	int o;

	vk_format_addr(e->id.saddr, src, sizeof(src));
	vk_format_addr(e->id.daddr, dst, sizeof(dst));
	o = snprintf(buf, n, "%llu.%09llu,%s,%u,%s,%u,%s,%u,%s,%s,%u,%u,%u,%d,%u,%u",
		     e->ts_ns / 1000000000ull, e->ts_ns % 1000000000ull, dec ? "decision" : "ack",
		     e->id.netns, src, e->id.sport, dst, e->id.dport, e->id.ca,
		     vk_ca_state_name(e->id.ca_state), e->cwnd, e->ssthresh, e->in_flight, e->rtt_us,
		     e->base_rtt_us, e->cnt_rtt);
	if (dec)
		snprintf(buf + o, n - o, ",%d,%u,%u,%.3f,%.3f,%u,%u,%s,%d,%u,%u,%s,%.3f\n", e->diff,
			 e->alpha, e->beta, vk_event_th_milli(e->th_pkts, e->th_rtt_us) / 1000.0,
			 vk_event_th_milli(e->th_prev_pkts, e->th_prev_rtt_us) / 1000.0,
			 e->cwnd_after, e->ssthresh_after, vk_rule_name(e->rule), e->th_cmp, e->sent,
			 e->outstanding, vk_mode_name(e->mode), e->foreign_milli / 1000.0);
	else
		snprintf(buf + o, n - o, ",,%u,%u,,,,,,,,,,\n", e->alpha, e->beta);
}

/* One of 200 connections: more than the table's slots. */
static void identity(struct vk_flow_id *id, unsigned k)
{
	static const char *const cas[] = { "bpf_vegas", "bpf_vegas_a", "vk_ns2.jb",
					   "bpf_vegas_plus", "a_name_15_long" };

	memset(id, 0, sizeof(*id));
	id->netns = 4026531840u + k % 7;
	id->sport = (unsigned short)(1024 + k * 331);
	id->dport = (unsigned short)(k % 3 ? 5201 : 65535);
	if (k % 4 == 0) {		/* IPv6 */
		id->family = 10;
		inet_pton(AF_INET6, k % 8 ? "2001:db8::1" : "fe80::abcd:1", id->saddr);
		inet_pton(AF_INET6, "2001:db8:ffff::2", id->daddr);
		id->daddr[15] = (unsigned char)k;
	} else {
		id->family = 2;
		id->saddr[10] = id->saddr[11] = id->daddr[10] = id->daddr[11] = 0xff;
		id->saddr[12] = 198; id->saddr[13] = 18; id->saddr[14] = 1;
		id->saddr[15] = (unsigned char)k;
		id->daddr[12] = 198; id->daddr[13] = 19; id->daddr[14] = 255;
		id->daddr[15] = (unsigned char)(k * 7);
	}
	strncpy(id->ca, cas[k % 5], sizeof(id->ca) - 1);
}

int main(int argc, char **argv)
{
	static struct vk_csv_ids ids;
	long n = argc > 1 ? atol(argv[1]) : 200000;
	char want[1024], got[VK_TRACE_CSV_MAX + 1];

	for (long i = 0; i < n; i++) {
		struct vk_event e;
		size_t len;

		memset(&e, 0, sizeof(e));
		identity(&e.id, (unsigned)(next() % 200));
		e.id.ca_state = (unsigned char)draw(7);	/* past the names: "?" */
		e.type = next() % 3 ? VK_EV_DECISION : VK_EV_ACK;
		e.ts_ns = draw(~0ull);
		e.cwnd = (__u32)draw(~0u);
		e.ssthresh = (__u32)draw(~0u);
		e.in_flight = (__u32)draw(~0u);
		e.rtt_us = (__s32)draw_signed(-2147483647ll - 1, 2147483647ll);
		e.base_rtt_us = (__u32)draw(~0u);
		e.cnt_rtt = (__u32)draw(~0u);
		e.diff = (__s32)draw_signed(-2147483647ll - 1, 2147483647ll);
		e.alpha = (__u32)draw(~0u);
		e.beta = (__u32)draw(~0u);
		/* Th below 8,796 packets a microsecond (2^43 thousandths a second): there the
		 * reference's double is within a millionth of the quotient, so its %.3f is
		 * exact; above, it rounds and ours does not */
		e.th_pkts = (__u32)draw(8796);
		e.th_rtt_us = (__u32)draw(~0u);
		e.th_prev_pkts = (__u32)draw(8796);
		e.th_prev_rtt_us = (__u32)draw(~0u);
		e.cwnd_after = (__u32)draw(~0u);
		e.ssthresh_after = (__u32)draw(~0u);
		e.rule = (__u32)draw(VK_NR_RULES + 2);
		e.th_cmp = (__s32)draw_signed(-1, 2);
		e.sent = (__u32)draw(~0u);
		e.outstanding = (__u32)draw(~0u);
		e.mode = (__u32)draw(VK_NR_MODES + 1);
		e.foreign_milli = (__s32)draw_signed(-2147483647ll - 1, 2147483647ll);
		reference(want, sizeof(want), &e);
		len = vk_trace_csv(got, &e, &ids);
		if (len > VK_TRACE_CSV_MAX) {
			printf("record %ld: %zu bytes, more than VK_TRACE_CSV_MAX\n", i, len);
			return 1;
		}
		got[len] = '\0';
		if (strcmp(want, got)) {
			printf("record %ld differs:\nprintf: %sours:   %s", i, want, got);
			return 1;
		}
	}
	printf("checked %ld\n", n);
	return 0;
}
