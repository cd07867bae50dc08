"""Stage: what tracing from inside the controller costs a full-speed flow
(docs/DESIGN.md §5.1, §9.1).

bpf_vegas over one veth with tracing off, with decisions only, and with every
ACK and decision (`vegasctl trace`), in rounds whose order is reversed every
other round; with offloads off (every packet an ACK, the worst case) and with
the kernel's default offloads (a live host's normal case, GRO coalescing). The
cost is 1 - throughput traced / throughput untraced, taken within each round.
On two cores the flow's rate swings between rounds, so the CPU cost is given
too: the host's CPU per GB traced over untraced, minus 1 (the tracer's own work
counted), which the same swings move less. Records and records lost are
counted. Medians with intervals over rounds.

Both of those ratios carry the round-to-round swing of a flow on two busy cores,
too coarse to show a cost of 2% (16 rounds left intervals some 20 points wide).
So the cost is also measured directly, in the same flows: the BPF run time per
ACK of bpf_vegas's programs (the kernel's statistics, on for the whole stage, so every mode pays their two
clock reads alike) traced against untraced, times the ACKs, plus the tracer's
own CPU time, over the untraced flow's CPU for the same bytes. It counts the
work tracing adds, not what that work does to the caches of the rest, nor the
rare wake-up (docs/DESIGN.md §5.1).

bpf_vegas's window answers the RTT, and on a veth a few hundred nanoseconds of
added ACK-path work are a visible part of it, so its throughput cost mixes what
tracing takes with what the window does about it. The third setting traces the
code-only arm of the overhead stage (CODE_ONLY: bpf_vegas's code and records,
Reno's window, offloads off), whose throughput answers to the CPU alone.
"""
from __future__ import annotations

import statistics

from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import leftovers
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair
from vegaskit.testbed.vtrace import Trace

from . import bpfstats, instances
from .flows import one_flow
from .overhead import CODE_ONLY, CODE_ONLY_SPEC

CC = "bpf_vegas"
MODES = {"off": None, "decisions": ["--decisions"], "all": []}
# the stage's settings as run() returns them, and as the report and the figure name them
SETTINGS = (("offloads_off", "off"), ("offloads_default", "default"),
            ("code_only_off", "off, code only"))


def one_setting(rounds: int, seconds: float, offloads: bool, cc: str = CC) -> dict:
    gbit = {m: [] for m in MODES}
    cost = {m: [] for m in MODES if m != "off"}
    cpu_cost = {m: [] for m in cost}
    direct = {m: [] for m in cost}          # CPU tracing adds, over the untraced flow's
    records = {m: [] for m in cost}
    lost = {m: [] for m in cost}
    bpf_ns = {m: [] for m in MODES}         # the controller's BPF run time per ACK
    window = {m: [] for m in cost}          # the sender's mean window, traced / untraced
    srtt = {m: [] for m in MODES}           # its mean smoothed RTT, us
    with Lab() as lab, bpfstats.enabled():
        p = veth_pair(lab, offloads=offloads)
        progs = bpfstats.ops_programs(cc)
        port = 7000
        order = list(MODES)
        for rnd in range(rounds):
            flow, tracer_s = {}, {}
            for mode in (order if rnd % 2 == 0 else list(reversed(order))):
                port += 1
                before = bpfstats.run_stats(progs)
                if MODES[mode] is None:
                    flow[mode] = one_flow(lab, p, cc, port, seconds)
                else:
                    with Trace(*MODES[mode], "--controller", cc, env=leftovers.owner_env(lab.prefix)) as t:
                        flow[mode] = one_flow(lab, p, cc, port, seconds)
                    records[mode].append(len(t.records))
                    lost[mode].append(t.lost or 0)
                    tracer_s[mode] = t.cpu_s
                bpf_ns[mode].append(bpfstats.run_ns(progs, before) / max(flow[mode].acks, 1))
            off = flow["off"]
            for m, f in flow.items():
                gbit[m].append(f.bytes_per_s * 8 / 1e9)
                srtt[m].append(f.srtt_us)
            for m in cost:
                f = flow[m]
                cost[m].append(1 - f.bytes_per_s / off.bytes_per_s)
                cpu_cost[m].append(f.cpu_s_per_gb / off.cpu_s_per_gb - 1)
                if off.cwnd_kb:              # tcp_info's window, which iperf3 gives on Linux
                    window[m].append(f.cwnd_kb / off.cwnd_kb)
                added_s = (bpf_ns[m][-1] - bpf_ns["off"][-1]) * 1e-9 * f.acks + tracer_s[m]
                direct[m].append(added_s / f.gb / off.cpu_s_per_gb)
    return {"gbit_s": {m: summary(v) for m, v in gbit.items()},
            "cost": {m: summary(v) for m, v in cost.items()},
            "cpu_cost": {m: summary(v) for m, v in cpu_cost.items()},
            "direct_cost": {m: summary(v) for m, v in direct.items()},
            "bpf_ns_per_ack": {m: summary(v) for m, v in bpf_ns.items()},
            "window_ratio": {m: summary(v) for m, v in window.items() if v},
            "srtt_us": {m: summary(v) for m, v in srtt.items()},
            "records_per_run": {m: statistics.median(v) for m, v in records.items()},
            "lost_total": {m: sum(v) for m, v in lost.items()}}


def run(rounds: int, seconds: float) -> dict:
    # loaded first, so that a refused load loses no measurement; no socket uses it until
    # its own setting
    with instances.loaded(leftovers.new_owner(), {CODE_ONLY: CODE_ONLY_SPEC}):
        return {"rounds": rounds, "seconds": seconds, "code_only": CODE_ONLY,
                "offloads_off": one_setting(rounds, seconds, False),
                "offloads_default": one_setting(rounds, seconds, True),
                "code_only_off": one_setting(rounds, seconds, False, CODE_ONLY)}
