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
"""
from __future__ import annotations

import statistics

from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed.leftovers import owner_env
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair
from vegaskit.testbed.vtrace import Trace

from .flows import one_flow

CC = "bpf_vegas"
MODES = {"off": None, "decisions": ["--decisions"], "all": []}



def one_setting(rounds: int, seconds: float, offloads: bool) -> dict:
    gbit = {m: [] for m in MODES}
    cost = {m: [] for m in MODES if m != "off"}
    cpu_cost = {m: [] for m in cost}
    records = {m: [] for m in cost}
    lost = {m: [] for m in cost}
    with Lab() as lab:
        p = veth_pair(lab, offloads=offloads)
        port = 7000
        order = list(MODES)
        for rnd in range(rounds):
            this, cpu = {}, {}
            for mode in (order if rnd % 2 == 0 else list(reversed(order))):
                port += 1
                if MODES[mode] is None:
                    f = one_flow(lab, p, CC, port, seconds)
                else:
                    with Trace(*MODES[mode], "--controller", CC, env=owner_env(lab.prefix)) as t:
                        f = one_flow(lab, p, CC, port, seconds)
                    records[mode].append(len(t.records))
                    lost[mode].append(t.lost or 0)
                this[mode], cpu[mode] = f.bytes_per_s * 8, f.cpu_s_per_gb
            for m, v in this.items():
                gbit[m].append(v / 1e9)
            for m in cost:
                cost[m].append(1 - this[m] / this["off"])
                cpu_cost[m].append(cpu[m] / cpu["off"] - 1)
    return {"gbit_s": {m: summary(v) for m, v in gbit.items()},
            "cost": {m: summary(v) for m, v in cost.items()},
            "cpu_cost": {m: summary(v) for m, v in cpu_cost.items()},
            "records_per_run": {m: statistics.median(v) for m, v in records.items()},
            "lost_total": {m: sum(v) for m, v in lost.items()}}


def run(rounds: int, seconds: float) -> dict:
    return {"rounds": rounds, "seconds": seconds,
            "offloads_off": one_setting(rounds, seconds, False),
            "offloads_default": one_setting(rounds, seconds, True)}
