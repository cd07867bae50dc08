// SPDX-License-Identifier: GPL-2.0
/* A trace record as a CSV line, without printf (tracecsv.h). */
#include <string.h>
#include "format.h"
#include "tracecsv.h"

const char vk_trace_csv_header[] =
	"time_s,type,netns,saddr,sport,daddr,dport,ca,state,cwnd,ssthresh,in_flight,rtt_us,"
	"base_rtt_us,cnt_rtt,diff,alpha,beta,th,th_prev,cwnd_after,ssthresh_after,rule,th_cmp,"
	"sent,outstanding,mode,foreign\n";

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

static char *put_u64(char *p, unsigned long long v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_s64(char *p, long long v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, 0ull - (unsigned long long)v);
	}
	return put_u64(p, (unsigned long long)v);
}

/* width digits, zero-padded: the fraction after a decimal point */
static char *put_frac(char *p, unsigned long long v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

/* thousandths as a decimal with three places: what printf's %.3f gives for
 * milli / 1000.0, except that it stays exact past 2^43, where the double rounds */
static char *put_milli(char *p, bool neg, unsigned long long m)
{
	if (neg)
		*p++ = '-';
	p = put_u64(p, m / 1000);
	*p++ = '.';
	return put_frac(p, m % 1000, 3);
}

/* The identity's columns, formatted at its first record and kept. */
static const struct vk_csv_id *id_text(struct vk_csv_ids *ids, const struct vk_flow_id *id)
{
	struct vk_flow_id key = *id;
	struct vk_csv_id *s;
	char addr[64], *p;

	key.ca_state = 0;
	key.pad = 0;
	s = &ids->slot[(key.netns ^ key.sport ^ ((unsigned)key.dport << 7) ^ key.saddr[15] ^
			((unsigned)key.daddr[15] << 3)) & (VK_TRACE_CSV_IDS - 1)];
	if (s->used && !memcmp(&s->id, &key, sizeof(key)))
		return s;
	s->id = key;
	s->used = true;
	p = put_u64(s->text, key.netns);
	*p++ = ',';
	vk_format_addr(key.saddr, addr, sizeof(addr));
	p = put_str(p, addr);
	*p++ = ',';
	p = put_u64(p, key.sport);
	*p++ = ',';
	vk_format_addr(key.daddr, addr, sizeof(addr));
	p = put_str(p, addr);
	*p++ = ',';
	p = put_u64(p, key.dport);
	*p++ = ',';
	/* the kernel's name need not end in NUL within the field */
	memcpy(p, key.ca, strnlen(key.ca, sizeof(key.ca)));
	p += strnlen(key.ca, sizeof(key.ca));
	s->len = (unsigned short)(p - s->text);
	return s;
}

size_t vk_trace_csv(char *buf, const struct vk_event *e, struct vk_csv_ids *ids)
{
	const struct vk_csv_id *id = id_text(ids, &e->id);
	bool dec = e->type == VK_EV_DECISION;
	char *p = buf;

	p = put_u64(p, e->ts_ns / 1000000000ull);
	*p++ = '.';
	p = put_frac(p, e->ts_ns % 1000000000ull, 9);
	p = put_str(p, dec ? ",decision," : ",ack,");
	memcpy(p, id->text, id->len);
	p += id->len;
	*p++ = ',';
	p = put_str(p, vk_ca_state_name(e->id.ca_state));
	*p++ = ',';
	p = put_u64(p, e->cwnd);
	*p++ = ',';
	p = put_u64(p, e->ssthresh);
	*p++ = ',';
	p = put_u64(p, e->in_flight);
	*p++ = ',';
	p = put_s64(p, e->rtt_us);
	*p++ = ',';
	p = put_u64(p, e->base_rtt_us);
	*p++ = ',';
	p = put_u64(p, e->cnt_rtt);
	*p++ = ',';
	if (!dec) {		/* an ACK record has the thresholds and nothing after */
		*p++ = ',';
		p = put_u64(p, e->alpha);
		*p++ = ',';
		p = put_u64(p, e->beta);
		p = put_str(p, ",,,,,,,,,,\n");
		return (size_t)(p - buf);
	}
	p = put_s64(p, e->diff);
	*p++ = ',';
	p = put_u64(p, e->alpha);
	*p++ = ',';
	p = put_u64(p, e->beta);
	*p++ = ',';
	p = put_milli(p, false, vk_event_th_milli(e->th_pkts, e->th_rtt_us));
	*p++ = ',';
	p = put_milli(p, false, vk_event_th_milli(e->th_prev_pkts, e->th_prev_rtt_us));
	*p++ = ',';
	p = put_u64(p, e->cwnd_after);
	*p++ = ',';
	p = put_u64(p, e->ssthresh_after);
	*p++ = ',';
	p = put_str(p, vk_rule_name(e->rule));
	*p++ = ',';
	p = put_s64(p, e->th_cmp);
	*p++ = ',';
	p = put_u64(p, e->sent);
	*p++ = ',';
	p = put_u64(p, e->outstanding);
	*p++ = ',';
	p = put_str(p, vk_mode_name(e->mode));
	*p++ = ',';
	p = put_milli(p, e->foreign_milli < 0,
		      e->foreign_milli < 0 ? 0ull - (unsigned long long)(long long)e->foreign_milli
					 : (unsigned long long)e->foreign_milli);
	*p++ = '\n';
	return (size_t)(p - buf);
}
