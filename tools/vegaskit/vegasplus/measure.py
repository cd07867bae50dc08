"""The figures a vegas_plus case is judged by, from one run's own files
(flows.csv, queue.csv, summary.json; docs/DESIGN.md §6.6). Steady-state
figures cover the run's second half, when every flow has long left slow start;
the queue is the bottleneck's, as its emulator logged every packet."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from vegaskit.analysis import metrics

from .cases import MSS_WIRE, Net

BAND_PKTS = 4              # beta + 1 with vegas_plus's alpha = beta = 3 (issue 17's goals)
WINDOW_S = 1.0             # the queue must stay low in every window this long


def flow_rates(rundir: Path, a: float, b: float) -> dict[int, float]:
    """Each flow's mean rate (bit/s) over the intervals inside [a, b]."""
    got: dict[int, list[float]] = {}
    with open(rundir / "flows.csv") as f:
        for r in csv.DictReader(f):
            t0, t1 = float(r["t0_s"]), float(r["t1_s"])
            if t0 >= a and t1 <= b:
                acc = got.setdefault(int(r["flow"]), [0.0, 0.0])
                acc[0] += float(r["bytes"]) * 8
                acc[1] += t1 - t0
    return {k: v[0] / v[1] for k, v in got.items() if v[1] > 0}


def retransmits(rundir: Path, flow: int, a: float) -> int:
    """The flow's retransmissions in the intervals that start at or after a."""
    with open(rundir / "flows.csv") as f:
        return sum(int(r["retransmits"] or 0) for r in csv.DictReader(f)
                   if int(r["flow"]) == flow and float(r["t0_s"]) >= a)


def queue_steps(rundir: Path) -> list[tuple[float, int]]:
    with open(rundir / "queue.csv") as f:
        return [(float(r["t_s"]), int(r["qlen_pkts"])) for r in csv.DictReader(f)]


def queue_windows(steps: list[tuple[float, int]], a: float, b: float, width: float
                  ) -> list[float]:
    """The time-weighted mean queue of each window [a + k*width, a + (k+1)*width) up to b."""
    out, k, acc, q, t_prev = [], 0, 0.0, 0, a
    edges = [a + i * width for i in range(1, int((b - a) / width) + 1)]
    for t, qlen in steps + [(b, 0)]:
        t = min(t, b)
        while k < len(edges) and t >= edges[k]:
            if t_prev < edges[k]:
                acc += q * (edges[k] - t_prev)
                t_prev = edges[k]
            out.append(acc / width)
            acc, k = 0.0, k + 1
        if t > t_prev:
            acc += q * (t - t_prev)
            t_prev = t
        q = qlen
        if t >= b:
            break
    return out


def queue_mean(steps: list[tuple[float, int]], a: float, b: float) -> float:
    w = queue_windows(steps, a, b, b - a)
    return w[0] if w else 0.0


def queue_delay_p95_ms(steps: list[tuple[float, int]], a: float, b: float, net: Net) -> float:
    """The 95th percentile over time of the queue's delay, a packet time per packet."""
    vals, wts, prev = [], [], None
    for t, qlen in steps + [(b, 0)]:
        if prev is not None and t > a:
            lo, hi = max(prev[0], a), min(t, b)
            if hi > lo:
                vals.append(prev[1])
                wts.append(hi - lo)
        prev = (t, qlen)
        if t >= b:
            break
    if not vals:
        return 0.0
    return metrics.weighted_percentile(vals, wts, 95) * MSS_WIRE * 8 / net.rate_bps * 1000


def queue_trough(steps: list[tuple[float, int]], a: float, b: float, width: float) -> float:
    """The mean over windows [a + k*width, a + (k+1)*width) up to b of the smallest queue each
    held for any time: with width one RTT, the queue a round's minimum RTT reads, below the
    mean by what bursts add."""
    n = int((b - a) / width + 1e-9)
    if n < 1:
        return 0.0
    end = a + n * width
    lows = [math.inf] * n
    q, t_prev = 0, a
    for t, qlen in steps + [(end, 0)]:
        if t <= a:
            q = qlen
            continue
        t = min(t, end)
        if t > t_prev:          # q held over [t_prev, t): every window that span touches
            first = min(n - 1, int((t_prev - a) / width + 1e-9))   # on an edge: the next
            last = min(n - 1, math.ceil((t - a) / width - 1e-9) - 1)
            for k in range(first, last + 1):
                lows[k] = min(lows[k], q)
            t_prev = t
        if t >= end:
            break
        q = qlen
    return sum(lows) / n


def arrival_burst(path: Path, a: float, b: float, gap_s: float = 30e-6) -> float:
    """Packet-weighted mean size of the groups of packets that the bottleneck's emulator read
    less than gap_s apart (a packet at 100 Mbit/s takes 120 us to serialize), queued or
    dropped: how bursty the arrivals are, as far as its reads can tell (packets that waited
    in its TUN while it slept are read together, whatever their spacing there)."""
    sizes, n, last = [], 0, None
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["event"] not in ("enq", "drop"):
                continue
            t = float(r["t_s"])
            if not a <= t < b:
                continue
            if last is not None and t - last < gap_s:
                n += 1
            else:
                if n:
                    sizes.append(n)
                n = 1
            last = t
    if n:
        sizes.append(n)
    total = sum(sizes)
    return sum(x * x for x in sizes) / total if total else 0.0


def recovery_s(steps: list[tuple[float, int]], left_at: float, end: float) -> float | None:
    """Seconds after `left_at` until the queue's mean stays at most BAND_PKTS in every
    window of WINDOW_S to the end of the run; None if it never does."""
    wins = queue_windows(steps, left_at, end, WINDOW_S)
    k = len(wins)
    while k > 0 and wins[k - 1] <= BAND_PKTS:
        k -= 1
    return None if k == len(wins) else k * WINDOW_S


def from_summary(rundir: Path, case_key: str) -> dict:
    """The figures the testbed's runner already wrote to summary.json, taken as they are
    so that this report and the case's own report.md show one number: Jain's index over
    each flow's own second half (docs/DESIGN.md §6; None where no flow sent then; not for
    `leave`, whose figures are the competition's second half: figures() has its own), and
    the emulator's releases 1 ms or more late (None: a run from before they were counted)."""
    return summary_figures(json.loads((rundir / "summary.json").read_text()), case_key)


def summary_figures(sm: dict, case_key: str) -> dict:
    """from_summary's figures from a summary.json already read."""
    # how far the link emulator fell behind (§7.1): a loaded host delays releases, and a
    # delay-based rule reads that as queue
    out = {"late_1ms": sm.get("emulator_late_1ms")}
    if len(sm["flows"]) > 1 and case_key != "leave":
        out["jain"] = sm["jain"]
    return out


def figures(rundir: Path, net: Net, case_key: str) -> dict:
    """The case's figures for one repetition."""
    sm = json.loads((rundir / "summary.json").read_text())
    d = float(sm["duration_s"])
    half = (d / 2, d)
    steps = queue_steps(rundir)
    out = {"queue_pkts": queue_mean(steps, *half),
           "delay_p95_ms": queue_delay_p95_ms(steps, *half, net)}
    if case_key == "leave":
        left = float(sm["flows"][1]["end_s"])
        out["recovery_s"] = recovery_s(steps, left, d)
        out["queue_after_pkts"] = queue_mean(steps, min(left + 5, d), d)
        rates = flow_rates(rundir, left / 2, left)      # the competition's second half
    else:
        rates = flow_rates(rundir, *half)
    ours = rates.get(1, 0.0)
    out["mbps"] = ours / 1e6
    if len(rates) > 1:
        fair = sum(rates.values()) / len(rates)
        out["share"] = ours / fair if fair else 0.0
        if case_key == "leave":
            out["jain"] = metrics.jain_index(list(rates.values())) if fair else None
    out.update(summary_figures(sm, case_key))
    if case_key == "alone":
        out["utilisation"] = float(sm["utilisation"])
        out["retx_second_half"] = retransmits(rundir, 1, d / 2)
        out["retx"] = int(sm["flows"][0]["retransmits"])
        out["queue_trough_pkts"] = queue_trough(steps, *half, net.rtt_ms / 1000)
        out["arrival_burst_pkts"] = arrival_burst(rundir / "queue.csv", *half)
    return out
