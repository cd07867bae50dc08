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

On a veth the RTT is tens of microseconds, so our controllers decide every few
ACKs: the worst case. The same is measured again over an emulated 2 ms path,
where a decision comes once in a hundred ACKs or more, as on a live host's
paths. ACKs per decision come from each instance's own counters; from the two
paths, round by round, per ACK = a + b x (decisions per ACK) gives an ACK's
cost without a decision (a) and a decision's (b).
"""
from __future__ import annotations

import contextlib
import os
import subprocess

from vegaskit import intf, paths
from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import leftovers
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.linkemu import LinkParams
from vegaskit.testbed.topology import two_hosts, veth_pair

from . import bpfstats
from .flows import one_flow

FLOOR = "vk_reno_min"
RTT_FLOOR = "vk_reno_rtt"
FLOORS = (FLOOR, RTT_FLOOR)
PATH = LinkParams(rate_bps=0, delay_us=2000, limit_pkts=10_000)


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



def decisions(cc: str) -> int:
    """The instance's per-RTT decisions so far (its vk_stats, via vegasctl metrics)."""
    out = subprocess.run([str(paths.VEGASCTL), "metrics"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return sum(int(line.rsplit(" ", 1)[1]) for line in out.splitlines()
               if line.startswith(f'vegaskit_decisions_total{{controller="{cc}",'))


def measure(lab, p, ccs: list[str], rounds: int, seconds: float, port: int) -> dict:
    """Per call, per ACK, ACKs per decision and ratios to the floors, on path p, rounds
    interleaved; every list holds one value per round."""
    per_call: dict[str, dict[str, list[float]]] = {cc: {} for cc in ccs}
    per_ack: dict[str, list[float]] = {cc: [] for cc in ccs}
    dec_per_ack: dict[str, list[float]] = {cc: [] for cc in ccs if cc not in FLOORS}
    ratio: dict[str, dict[str, list[float]]] = {f: {cc: [] for cc in ccs} for f in FLOORS}
    progs = {cc: bpfstats.ops_programs(cc) for cc in ccs}
    for rnd in range(rounds):
        this_round = {}
        for cc in (ccs if rnd % 2 == 0 else list(reversed(ccs))):
            port += 1
            before = bpfstats.run_stats(progs[cc])
            d0 = decisions(cc) if cc in dec_per_ack else 0
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
            if cc in dec_per_ack:
                dec_per_ack[cc].append((decisions(cc) - d0) / max(flow.acks, 1))
        for f in FLOORS:
            for cc in ccs:
                ratio[f][cc].append(this_round[cc] / this_round[f])
    return {"per_call": per_call, "per_ack": per_ack, "dec_per_ack": dec_per_ack,
            "ratio": ratio}


def summarised(m: dict) -> dict:
    return {"per_call_ns": {cc: {op: summary(v) for op, v in ops.items()}
                            for cc, ops in m["per_call"].items()},
            "per_ack_ns": {cc: summary(v) for cc, v in m["per_ack"].items()},
            "decisions_per_ack": {cc: summary(v) for cc, v in m["dec_per_ack"].items()},
            "per_ack_ratio_to_floor": {cc: summary(v) for cc, v in m["ratio"][FLOOR].items()},
            "per_ack_ratio_to_rtt_floor": {cc: summary(v)
                                           for cc, v in m["ratio"][RTT_FLOOR].items()}}


def split(veth: dict, path: dict) -> dict:
    """Per ACK = a + b x decisions per ACK, solved round by round from the two paths,
    whose decisions per ACK differ many times over: a, an ACK's cost without a
    decision; b, a decision's."""
    ack, dec = {}, {}
    for cc in veth["dec_per_ack"]:
        a_s, b_s = [], []
        for y1, x1, y2, x2 in zip(veth["per_ack"][cc], veth["dec_per_ack"][cc],
                                  path["per_ack"][cc], path["dec_per_ack"][cc]):
            if abs(x1 - x2) < 1e-9:
                continue
            b = (y1 - y2) / (x1 - x2)
            a_s.append(y1 - b * x1)
            b_s.append(b)
        if a_s:
            ack[cc], dec[cc] = summary(a_s), summary(b_s)
    return {"ack_ns_without_decision": ack, "decision_ns": dec}


def run(rounds: int, seconds: float, controllers: list[str] | None = None) -> dict:
    ccs = list(FLOORS) + (controllers or list(intf.CONTROLLERS))
    with floor_registered(leftovers.new_owner()), bpfstats.enabled():
        with Lab() as lab:
            veth = measure(lab, veth_pair(lab), ccs, rounds, seconds, 6400)
        with Lab() as lab:
            # an emulated 2 ms path, unlimited rate: one decision per RTT is then one in
            # a hundred or more ACKs, as on a live host's paths
            path = measure(lab, two_hosts(lab, PATH), ccs, rounds, seconds, 6600)
    return {"floor": FLOOR, "rtt_floor": RTT_FLOOR, "rounds": rounds, "seconds": seconds,
            **summarised(veth),
            "path": {"delay_ms": PATH.delay_us / 1000, **summarised(path)},
            **split(veth, path)}
