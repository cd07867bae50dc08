#!/usr/bin/env python3
"""tcpcwnd  Per-ACK congestion window, ssthresh, srtt and a Vegas-style diff
estimate of every TCP flow, whatever its congestion controller (reno, cubic,
bbr, vegaskit's BPF controllers...). bcc, tcp:tcp_probe only.

USAGE: .venv/bin/python tools/trace/tcpcwnd.py [-h] [-T] [-t] [--ktime] [-L PORTS]
           [-R PORTS] [--csv] [-d SECONDS] [interval [count]]

tcp:tcp_probe fires for every segment an established socket receives (on a
sender: every ACK) before the segment is processed, so each line shows the
state the previous ACK left.

DIFF is an ESTIMATE computed here, not the controller's own diff:
    DIFF = CWND * (SRTT - MINRTT) / SRTT
with MINRTT the smallest srtt this tool has seen for the flow (a BPF hash keyed
by sock_cookie, from the moment tracing began). Vegas computes its diff from the
minimum RTT *sample* of the last round and the minimum sample ever (baseRTT);
srtt is a smoothed average (gain 1/8), so this estimate lags. For a flow traced
from its start MINRTT is the handshake's RTT (srtt's first value), measured with
small segments: on a slow link that is below a full-size segment's RTT by about
one serialization time, and DIFF over-reads by about CWND * that time / SRTT
(at most the packets on the wire). For a flow already running when tracing
began, MINRTT is only as low as what srtt has been since. It is a
controller-independent view, to compare reno/cubic/bbr with the Vegas family;
the controllers' own diff comes from `vegasctl trace`.

The latest RTT sample is not a tcp_probe field (it lives in tcp_sock, whose
layout bcc cannot read safely here); tcpcwnd.bt prints it (RTT_US) through BTF.
"""
from __future__ import annotations

import tracecommon as tc  # the tools' shared code, beside them

EXAMPLES = """\
    tcpcwnd.py                 # one line per ACK, all flows
    tcpcwnd.py -R 5201 -t      # flows to remote port 5201, with timestamps
    tcpcwnd.py -L 22,80 --csv  # local ports 22 or 80, CSV
    tcpcwnd.py 1               # per-flow summary every second
    tcpcwnd.py -R 5201 1 10    # ... for remote port 5201, 10 times
"""

BPF_PROGRAM = r"""
#define MAX_FLOWS 16384

struct event_t {
    u64 ts_ns;
    u64 cookie;
    u8 saddr[28];
    u8 daddr[28];
    u16 sport;
    u16 dport;
    u16 family;
    u16 data_len;
    u32 cwnd;
    u32 ssthresh;
    u32 srtt;
    u32 minrtt;
    u32 unacked;
    u64 diff_x100;      /* u64: a window of 10^8 packets (docs/DESIGN.md §10.2) overflows u32 */
};

struct stats_t {
    u8 saddr[28];
    u8 daddr[28];
    u16 sport;
    u16 dport;
    u16 family;
    u16 pad;
    u32 n;
    u32 ndiff;          /* samples with a minimum (past the warm-up) */
    u32 cwnd_min;
    u32 cwnd_max;
    u32 cwnd_last;
    u32 ssthresh_last;
    u32 minrtt;
    u64 cwnd_sum;
    u64 srtt_sum;
    u64 diff_sum_x100;
};

/* Per-flow running minimum of srtt, keyed by sock_cookie (unique across netns). */
BPF_TABLE("lru_hash", u64, u32, minrtt, MAX_FLOWS);
#if SUMMARY
/* Per-flow aggregate of one interval; updates are not atomic, but tcp_probe runs
 * under the socket lock, so the events of one flow never race. */
BPF_HASH(stats, u64, struct stats_t, MAX_FLOWS);
#else
BPF_PERF_OUTPUT(events);
#endif

TRACEPOINT_PROBE(tcp, tcp_probe)
{
    FILTER
    u64 cookie = args->sock_cookie;
    u32 srtt = args->srtt, cwnd = args->snd_cwnd, base = 0;
    u64 diff = 0;
    u32 *m = minrtt.lookup(&cookie);
    if (m) {
        if (srtt && srtt < *m)
            *m = srtt;
        base = *m;
    } else if (srtt) {              /* no RTT measured yet: srtt 0 */
        minrtt.update(&cookie, &srtt);
        base = srtt;
    }
    if (base && srtt >= base)
        diff = (u64)cwnd * (srtt - base) * 100 / srtt;
#if SUMMARY
    struct stats_t *s = stats.lookup(&cookie);
    if (!s) {
        struct stats_t z = {};
        __builtin_memcpy(z.saddr, args->saddr, sizeof(z.saddr));
        __builtin_memcpy(z.daddr, args->daddr, sizeof(z.daddr));
        z.sport = args->sport;
        z.dport = args->dport;
        z.family = args->family;
        z.cwnd_min = 0xffffffff;
        stats.insert(&cookie, &z);
        s = stats.lookup(&cookie);
        if (!s)
            return 0;
    }
    s->n++;
    if (cwnd < s->cwnd_min)
        s->cwnd_min = cwnd;
    if (cwnd > s->cwnd_max)
        s->cwnd_max = cwnd;
    s->cwnd_last = cwnd;
    s->ssthresh_last = args->ssthresh;
    s->minrtt = base;
    s->cwnd_sum += cwnd;
    s->srtt_sum += srtt;
    if (base) {
        s->ndiff++;
        s->diff_sum_x100 += diff;
    }
#else
    struct event_t ev = {};
    ev.ts_ns = bpf_ktime_get_ns();
    ev.cookie = cookie;
    __builtin_memcpy(ev.saddr, args->saddr, sizeof(ev.saddr));
    __builtin_memcpy(ev.daddr, args->daddr, sizeof(ev.daddr));
    ev.sport = args->sport;
    ev.dport = args->dport;
    ev.family = args->family;
    ev.data_len = args->data_len;
    ev.cwnd = cwnd;
    ev.ssthresh = args->ssthresh;
    ev.srtt = srtt;
    ev.minrtt = base;
    ev.diff_x100 = diff;
    ev.unacked = args->snd_nxt - args->snd_una;
    events.perf_submit(args, &ev, sizeof(ev));
#endif
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_destroy_sock)
{
    u64 cookie = args->sock_cookie;
    minrtt.delete(&cookie);
    return 0;
}
"""

EVENT_COLS = [*tc.FLOW_COLS, tc.Col("CWND", 6, "cwnd"), tc.Col("SSTHRESH", 10, "ssthresh"),
              tc.Col("SRTT_US", 8, "srtt_us"), tc.Col("MINRTT_US", 9, "minrtt_us"),
              tc.Col("DIFF", 8, "diff"), tc.Col("UNACKED", 9, "unacked"),
              tc.Col("COOKIE", 7, "cookie")]
SUMMARY_COLS = [*tc.FLOW_COLS, tc.Col("SAMPLES", 7, "samples"), tc.Col("CWND", 6, "cwnd"),
                tc.Col("MIN", 5, "cwnd_min"), tc.Col("AVG", 7, "cwnd_avg"),
                tc.Col("MAX", 5, "cwnd_max"), tc.Col("SSTHRESH", 10, "ssthresh"),
                tc.Col("SRTT_US", 8, "srtt_avg_us"), tc.Col("MINRTT_US", 9, "minrtt_us"),
                tc.Col("DIFF", 8, "diff_avg"), tc.Col("COOKIE", 7, "cookie")]


def main() -> int:
    args = tc.parser("tcpcwnd", __doc__.split("\n\n")[0], EXAMPLES,
                     summary="samples, last/min/avg/max cwnd, avg srtt and diff").parse_args()
    summary = args.interval is not None
    started = tc.start(args, BPF_PROGRAM, "tcp_probe (cwnd per ACK)", EVENT_COLS, SUMMARY_COLS,
                       SUMMARY="1" if summary else "0")
    if started is None:
        return 0
    b, out, run = started
    none = out.none

    def on_event(cpu, data, size):
        e = b["events"].event(data)
        out.row(e.ts_ns, [tc.Flow.of(e, tc.sockaddr_addr), e.cwnd,
                          tc.ssthresh_text(e.ssthresh, args.csv), e.srtt,
                          e.minrtt or none, f"{e.diff_x100 / 100:.2f}" if e.minrtt else none,
                          e.unacked, e.cookie])

    def on_interval(now_ns):
        stats = b["stats"]
        rows = sorted(((k.value, v) for k, v in stats.items()),
                      key=lambda kv: (kv[1].sport, kv[1].dport, kv[0]))
        stats.clear()
        for cookie, s in rows:
            if not s.n:
                continue
            out.row(now_ns, [tc.Flow.of(s, tc.sockaddr_addr), s.n, s.cwnd_last, s.cwnd_min,
                             f"{s.cwnd_sum / s.n:.1f}", s.cwnd_max,
                             tc.ssthresh_text(s.ssthresh_last, args.csv),
                             round(s.srtt_sum / s.n), s.minrtt or none,
                             f"{s.diff_sum_x100 / s.ndiff / 100:.2f}" if s.ndiff else none,
                             cookie])

    if not summary:
        run.open("events", on_event, page_cnt=256)
    return run.run(on_interval if summary else None)


if __name__ == "__main__":
    tc.main_guard(main)
