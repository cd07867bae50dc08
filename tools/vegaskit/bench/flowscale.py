"""Stage: what a controller costs as the number of its flows grows: 1, 10, 100
and 1,000 flows at once over one veth, bpf_vegas against the kernel's reno
(docs/DESIGN.md §9.1).

Each round runs every (controller, count) once, the order reversed every other
round; the flows are iperf3 streams (-P, up to 128 per process, one process and
port per 128). Per run: the host's CPU per GB delivered, and for our controller
the BPF run time per ACK from the kernel's statistics. The figure is how these
grow with the count: a cost per GB that stays flat means no super-linear term
(a per-flow walk, a shared map line, a lock), and the ratio to 1 flow says by
how much it grows if it does, taken within each round. BPF statistics are on
only around bpf_vegas's runs, so reno's CPU is measured without their cost.
Medians with intervals over the rounds.
"""
from __future__ import annotations

import time

from vegaskit import cpustat
from vegaskit.analysis.stats import median_summary as summary
from vegaskit.testbed import iperf
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair

from . import bpfstats
from .flows import in_segs

OURS, KERNEL = "bpf_vegas", "reno"
PER_PROCESS = 128



def flows_at_once(lab, p, cc: str, n: int, seconds: float, port: int) -> tuple[float, int]:
    """n streams of cc for `seconds`: (CPU seconds per GB, ACKs the senders received)."""
    sizes = [min(PER_PROCESS, n - k) for k in range(0, n, PER_PROCESS)]
    for i in range(len(sizes)):
        iperf.server(lab, p.b, port + i)
    segs0, j0 = in_segs(p.a), cpustat.busy_s()
    clients = [iperf.client(lab, p.a, p.addr_b, port + i, cc, seconds, streams=k)
               for i, k in enumerate(sizes)]
    got = sum(iperf.wait(c, cc, seconds + 60).bytes_received for c in clients)
    cpu_s = cpustat.busy_s() - j0
    return cpu_s / (got / 1e9), in_segs(p.a) - segs0


def run(rounds: int, seconds: float, counts: tuple[int, ...] = (1, 10, 100, 1000)) -> dict:
    cpu: dict[str, dict[int, list[float]]] = {cc: {n: [] for n in counts} for cc in (OURS, KERNEL)}
    growth: dict[str, dict[int, list[float]]] = {cc: {n: [] for n in counts} for cc in cpu}
    per_ack: dict[int, list[float]] = {n: [] for n in counts}
    runs = [(cc, n) for n in counts for cc in (OURS, KERNEL)]
    with Lab() as lab:
        p = veth_pair(lab)
        progs = bpfstats.ops_programs(OURS)
        port = 8000
        for rnd in range(rounds):
            this: dict[tuple[str, int], float] = {}
            for cc, n in (runs if rnd % 2 == 0 else list(reversed(runs))):
                if cc == OURS:
                    # statistics only around our runs: they cost every BPF call a
                    # little, and reno has none to pay it
                    with bpfstats.enabled():
                        before = bpfstats.run_stats(progs)
                        cpu_per_gb, acks = flows_at_once(lab, p, cc, n, seconds, port)
                        ns = bpfstats.run_ns(progs, before)
                    per_ack[n].append(ns / max(acks, 1))
                else:
                    cpu_per_gb, _ = flows_at_once(lab, p, cc, n, seconds, port)
                port += -(-n // PER_PROCESS)
                cpu[cc][n].append(cpu_per_gb)
                this[(cc, n)] = cpu_per_gb
                time.sleep(0.5)         # the last run's sockets close before the next starts
            for cc, n in runs:          # growth within the round: same host state
                growth[cc][n].append(this[(cc, n)] / this[(cc, counts[0])])
    return {"rounds": rounds, "seconds": seconds, "counts": list(counts),
            "cpu_s_per_gb": {cc: {n: summary(v) for n, v in per.items()} for cc, per in cpu.items()},
            "bpf_ns_per_ack": {n: summary(v) for n, v in per_ack.items()},
            "cpu_growth_vs_1_flow": {cc: {n: summary(v) for n, v in per.items()}
                                     for cc, per in growth.items()}}
