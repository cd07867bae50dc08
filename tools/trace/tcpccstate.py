#!/usr/bin/env python3
"""tcpccstate  TCP congestion-state changes (open, disorder, cwr, recovery, loss)
of every flow, whatever its congestion controller. bcc, tracepoints only.

USAGE: .venv/bin/python tools/trace/tcpccstate.py [-h] [-T] [-t] [--ktime] [-L PORTS]
           [-R PORTS] [--csv] [-d SECONDS] [interval [count]]

Source: tcp:tcp_cong_state_set (tcp_set_ca_state()), which gives the new state
only; the old one is the last change this tool saw for the socket ("?" before
that: the flow changed state before tracing began, or never did). MS is the time
spent in the old state ("-" if unknown). Calls that do not change the state are
not shown.

CWND, SSTHRESH and SRTT_US are the values as of the last segment the socket
received (tcp:tcp_probe, which fires before the segment is processed), i.e. the
window in force when the state changed; "-" if no segment was seen yet. The
.bt version (tcpccstate.bt) reads them from the socket itself at the change.

With an interval: one line per flow that changed state, counting the entries
into each state during the interval, with the state and cwnd at its end.
"""
from __future__ import annotations

import tracecommon as tc  # the tools' shared code, beside them

EXAMPLES = """\
    tcpccstate.py                  # every congestion-state change
    tcpccstate.py -R 5201 -T       # flows to remote port 5201, with times
    tcpccstate.py --csv --ktime    # CSV, CLOCK_MONOTONIC timestamps
    tcpccstate.py -L 5201 1        # per-flow counts of state entries every second
"""

BPF_PROGRAM = r"""
struct event_t {
    u64 ts_ns;
    u64 skaddr;
    u64 since_ns;
    u8 saddr[16];
    u8 daddr[16];
    u16 sport;
    u16 dport;
    u16 family;
    u8 old;
    u8 new;
    u32 cwnd;
    u32 ssthresh;
    u32 srtt;
    u32 probed;
};

BPF_PERF_OUTPUT(events);
""" + tc.C_SOCKINFO     # after event_t: its STATE_CHANGE_HOOK (below) sends one

HOOK = r"""
    struct event_t ev = {};
    ev.ts_ns = now;
    ev.skaddr = (u64)args->skaddr;
    ev.since_ns = since;
    COPY_ADDRS(ev, args);
    ev.sport = args->sport;
    ev.dport = args->dport;
    ev.family = args->family;
    ev.old = old;
    ev.new = new;
    ev.cwnd = si->cwnd;
    ev.ssthresh = si->ssthresh;
    ev.srtt = si->srtt;
    ev.probed = si->probed;
    events.perf_submit(args, &ev, sizeof(ev));
"""

EVENT_COLS = [*tc.FLOW_COLS, tc.Col("OLD", -8, "old"), tc.Col("NEW", -8, "new"),
              tc.Col("MS", 8, "ms"), tc.Col("CWND", 6, "cwnd"),
              tc.Col("SSTHRESH", 10, "ssthresh"), tc.Col("SRTT_US", 8, "srtt_us")]
STATE_COUNTS = list(reversed(tc.CA_STATES))   # the loss states first
SUMMARY_COLS = [*tc.FLOW_COLS, *(tc.Col(s.upper(), 8, s.lower()) for s in STATE_COUNTS),
                tc.Col("STATE", -8, "state"), tc.Col("CWND", 6, "cwnd")]


def main() -> int:
    args = tc.parser("tcpccstate", __doc__.split("\n\n")[0], EXAMPLES,
                     summary="entries into each state, last state and cwnd").parse_args()
    summary = args.interval is not None
    started = tc.start(args, BPF_PROGRAM, "congestion-state changes", EVENT_COLS, SUMMARY_COLS,
                       STATE_CHANGE_HOOK=HOOK)
    if started is None:
        return 0
    b, out, run = started
    none = out.none
    tally: dict[tc.Flow, dict] = {}

    def on_event(cpu, data, size):
        e = b["events"].event(data)
        flow = tc.Flow.of(e)
        new = tc.ca_state_name(e.new)
        cwnd = e.cwnd if e.probed else none
        if summary:
            t = tally.setdefault(flow, dict.fromkeys(STATE_COUNTS, 0))
            if new in t:
                t[new] += 1
            t["state"], t["cwnd"] = new, cwnd
            return
        old = "?" if e.old == tc.UNKNOWN_STATE else tc.ca_state_name(e.old)
        ms = f"{(e.ts_ns - e.since_ns) / 1e6:.3f}" if e.since_ns else none
        out.row(e.ts_ns, [flow, old, new, ms, cwnd,
                          tc.ssthresh_text(e.ssthresh, args.csv) if e.probed else none,
                          e.srtt if e.probed else none])

    def on_interval(now_ns):
        for flow in sorted(tally, key=tc.Flow.sort_key):
            t = tally[flow]
            out.row(now_ns, [flow, *(t[s] for s in STATE_COUNTS), t["state"], t["cwnd"]])
        tally.clear()

    run.open("events", on_event)
    return run.run(on_interval if summary else None)


if __name__ == "__main__":
    tc.main_guard(main)
