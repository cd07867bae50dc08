#!/usr/bin/env python3
"""tcpccretrans  TCP retransmissions with the congestion state and window, any
congestion controller. bcc, tracepoints only.

USAGE: .venv/bin/python tools/trace/tcpccretrans.py [-h] [-T] [-t] [--ktime] [-L PORTS]
           [-R PORTS] [--csv] [-d SECONDS] [interval [count]]

Source: tcp:tcp_retransmit_skb (one event per retransmission attempt; ERR is
non-zero when it could not be sent). STATE is the TCP socket state, from the
tracepoint. CA_STATE is the congestion state as last set (tcp:tcp_cong_state_set;
"?" if no change was seen since tracing began: a retransmission in Open, such as
a tail-loss probe, on a flow that never left Open shows "?"), and CWND, SSTHRESH
and SRTT_US are as of the last segment the socket received (tcp:tcp_probe, before
that segment was processed); "-" if none was seen. The .bt version
(tcpccretrans.bt) reads all of them from the socket at the retransmission.

With an interval: per flow, the number of retransmissions in the interval (like
bcc tcpretrans -c) with the last CA_STATE, CWND and SSTHRESH.
"""
from __future__ import annotations

import tracecommon as tc  # the tools' shared code, beside them

EXAMPLES = """\
    tcpccretrans.py                # every retransmission
    tcpccretrans.py -R 5201 -t     # flows to remote port 5201, with timestamps
    tcpccretrans.py --csv          # CSV
    tcpccretrans.py 1 5            # per-flow counts every second, 5 times
"""

BPF_PROGRAM = tc.C_SOCKINFO + r"""
struct event_t {
    u64 ts_ns;
    u64 skaddr;
    u8 saddr[16];
    u8 daddr[16];
    u16 sport;
    u16 dport;
    u16 family;
    u8 ca_state;
    u8 probed;
    s32 state;
    s32 err;
    u32 cwnd;
    u32 ssthresh;
    u32 srtt;
};

BPF_PERF_OUTPUT(events);

TRACEPOINT_PROBE(tcp, tcp_retransmit_skb)
{
    FILTER
    struct event_t ev = {};
    u64 sk = (u64)args->skaddr;
    ev.ts_ns = bpf_ktime_get_ns();
    ev.skaddr = sk;
    COPY_ADDRS(ev, args);
    ev.sport = args->sport;
    ev.dport = args->dport;
    ev.family = args->family;
    ev.state = args->state;
    ev.err = args->err;
    ev.ca_state = UNKNOWN_STATE;
    struct sockinfo_t *si = socks.lookup(&sk);
    if (si) {
        ev.ca_state = si->ca_state;
        ev.probed = si->probed;
        ev.cwnd = si->cwnd;
        ev.ssthresh = si->ssthresh;
        ev.srtt = si->srtt;
    }
    events.perf_submit(args, &ev, sizeof(ev));
    return 0;
}
"""

EVENT_COLS = [*tc.FLOW_COLS, tc.Col("STATE", -11, "state"), tc.Col("CA_STATE", -8, "ca_state"),
              tc.Col("CWND", 6, "cwnd"), tc.Col("SSTHRESH", 10, "ssthresh"),
              tc.Col("SRTT_US", 8, "srtt_us"), tc.Col("ERR", 4, "err")]
SUMMARY_COLS = [*tc.FLOW_COLS, tc.Col("RETRANS", 7, "retrans"), tc.Col("FAILED", 6, "failed"),
                tc.Col("CA_STATE", -8, "ca_state"), tc.Col("CWND", 6, "cwnd"),
                tc.Col("SSTHRESH", 10, "ssthresh")]


def main() -> int:
    args = tc.parser("tcpccretrans", __doc__.split("\n\n")[0], EXAMPLES,
                     summary="retransmissions, last state and window").parse_args()
    summary = args.interval is not None
    started = tc.start(args, BPF_PROGRAM, "retransmissions", EVENT_COLS, SUMMARY_COLS,
                       STATE_CHANGE_HOOK="")
    if started is None:
        return 0
    b, out, run = started
    none = out.none
    tally: dict[tc.Flow, dict] = {}

    def on_event(cpu, data, size):
        e = b["events"].event(data)
        flow = tc.Flow.of(e)
        ca = "?" if e.ca_state == tc.UNKNOWN_STATE else tc.ca_state_name(e.ca_state)
        cwnd = e.cwnd if e.probed else none
        ssthresh = tc.ssthresh_text(e.ssthresh, args.csv) if e.probed else none
        if summary:
            t = tally.setdefault(flow, {"retrans": 0, "failed": 0})
            t["retrans"] += 1
            t["failed"] += e.err != 0
            t.update(ca=ca, cwnd=cwnd, ssthresh=ssthresh)
            return
        out.row(e.ts_ns, [flow, tc.tcp_state_name(e.state), ca, cwnd, ssthresh,
                          e.srtt if e.probed else none, e.err])

    def on_interval(now_ns):
        for flow in sorted(tally, key=tc.Flow.sort_key):
            t = tally[flow]
            out.row(now_ns, [flow, t["retrans"], t["failed"], t["ca"], t["cwnd"], t["ssthresh"]])
        tally.clear()

    run.open("events", on_event)
    return run.run(on_interval if summary else None)


if __name__ == "__main__":
    tc.main_guard(main)
