"""Stage: what each struct_ops call of our controllers costs, measured by the
kernel (docs/DESIGN.md §9.1).

The kernel's BPF statistics (bpfstats) give each program's run time and call
count: the cost of the BPF code itself, free of the window behaviour that CPU
per GB mixes in. Each round runs one full-speed flow per controller over a
veth, in an order reversed every other round, and reads the counters of that
controller's programs around it. Per call: run time over calls, per op. Per
ACK: the run time of all its ops over the ACKs the sender received (Tcp
InSegs of its namespace). The floor is vk_reno_min, a BPF controller that is
Reno through the kernel's kfuncs and nothing else; the second floor,
vk_reno_rtt, adds the per-ACK minimum RTT (pkts_acked) that every delay-based
controller needs, so that a hook's fixed cost is told from our code's. Both
are registered with bpftool for the stage; ratios to them are taken round by
round, then summarised. Every figure is a median with its interval over the
rounds.
"""
from __future__ import annotations

import contextlib
import os
import subprocess

from vegaskit import intf, paths
from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import leftovers
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair

from . import bpfstats
from .flows import one_flow

FLOOR = "vk_reno_min"
RTT_FLOOR = "vk_reno_rtt"
FLOORS = (FLOOR, RTT_FLOOR)


@contextlib.contextmanager
def floor_registered(owner: str):
    """The floors registered for the with-block: their links pinned under the owner's
    mark (leftovers.BENCH_PIN_DIR), so a SIGKILLed bench is swept like any run."""
    pins = leftovers.BENCH_PIN_DIR / owner
    pins.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(leftovers.BENCH_PIN_DIR, 0o700)
    try:
        for floor in FLOORS:
            subprocess.run(["bpftool", "struct_ops", "register",
                            str(paths.BUILD / "bench" / f"{floor}.bpf.o"), str(pins)],
                           check=True, capture_output=True, text=True, timeout=60)
        yield
    finally:
        leftovers.unpin_bench(pins)



def run(rounds: int, seconds: float, controllers: list[str] | None = None) -> dict:
    ccs = list(FLOORS) + (controllers or list(intf.CONTROLLERS))
    per_call: dict[str, dict[str, list[float]]] = {cc: {} for cc in ccs}
    per_ack: dict[str, list[float]] = {cc: [] for cc in ccs}
    ratio: dict[str, dict[str, list[float]]] = {f: {cc: [] for cc in ccs} for f in FLOORS}
    with Lab() as lab, floor_registered(lab.prefix), bpfstats.enabled():
        p = veth_pair(lab)
        port = 6400
        progs = {cc: bpfstats.ops_programs(cc) for cc in ccs}
        for rnd in range(rounds):
            this_round = {}
            for cc in (ccs if rnd % 2 == 0 else list(reversed(ccs))):
                port += 1
                before = bpfstats.run_stats(progs[cc])
                flow = one_flow(lab, p, cc, port, seconds)
                after = bpfstats.run_stats(progs[cc])
                total_ns = 0
                for op, (ns1, n1) in after.items():
                    ns0, n0 = before[op]
                    total_ns += ns1 - ns0
                    if n1 > n0:
                        per_call[cc].setdefault(op, []).append((ns1 - ns0) / (n1 - n0))
                this_round[cc] = total_ns / max(flow.acks, 1)
                per_ack[cc].append(this_round[cc])
            for f in FLOORS:
                for cc in ccs:
                    ratio[f][cc].append(this_round[cc] / this_round[f])
    return {"floor": FLOOR, "rtt_floor": RTT_FLOOR, "rounds": rounds, "seconds": seconds,
            "per_call_ns": {cc: {op: summary(v) for op, v in ops.items()}
                            for cc, ops in per_call.items()},
            "per_ack_ns": {cc: summary(v) for cc, v in per_ack.items()},
            "per_ack_ratio_to_floor": {cc: summary(v) for cc, v in ratio[FLOOR].items()},
            "per_ack_ratio_to_rtt_floor": {cc: summary(v)
                                           for cc, v in ratio[RTT_FLOOR].items()}}
