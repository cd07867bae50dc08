"""A model's inputs and the throughput to compare it with, measured from one finished run.

Seed 001, section 4, takes p, R and baseRTT from the measured flow. Every figure here
covers the same interval, the second half of flow 1 (docs/DESIGN.md §8): slow start's
overflow stays out of p, and p, R and throughput describe the same packets.

  p         loss episodes per packet sent. A single flow: bottleneck losses (drop-tail
            drops and the emulator's random losses, queue.csv) closer together than one
            R are one episode (section 3.2). Beside cross traffic the bottleneck's losses
            are shared, so flow 1's own retransmissions per packet it sent stand in (an
            upper bound on its episode rate).
  R         the time-weighted mean of the sender's srtt (flows.csv).
  baseRTT   the smallest baseRTT the controller held (trace.csv); for a controller that
            is not ours (reno), the smallest srtt sample.
  sent_pps  packets sent per second: the model's throughput counts packets sent, lost
            ones included (its P terms, e.g. P_LFP = 1/p + W0 - 1).
  goodput   packets delivered per second, from the receiver's byte counts.
  stalled   the fraction of the half in gaps longer than 2R between the controller's
            decisions: Recovery and Loss, where Vegas does not decide (ours only).
  cwnd      the mean window at the controller's decisions (ours only).
  kernel    what the kernel's tracepoints saw flow 1's sender go through in its second
            half (runs that record castates.csv, docs/DESIGN.md §6.6): its
            retransmission time-outs, and the fraction of the half outside Open
            (Recovery, Loss, CWR, Disorder), whatever the controller. Empty for runs
            made before the runner recorded it.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

from .records import read_csv

MSS = 1448
FRAME = MSS + 66            # bytes on the wire per full segment (Ethernet, IP, TCP + options)


def loss_episodes(times: list[float], rtt: float) -> int:
    """Losses within one RTT of the previous belong to its episode."""
    episodes, last = 0, None
    for t in times:
        if last is None or t - last > rtt:
            episodes += 1
        last = t
    return episodes


def _half(flows: list[dict]) -> tuple[float, float]:
    t0, t1 = float(flows[0]["t0_s"]), float(flows[-1]["t1_s"])
    return (t0 + t1) / 2, t1


def measure(rundir: Path) -> dict:
    """The inputs and the measured throughput of flow 1 of the run in `rundir`."""
    sm = json.loads((rundir / "summary.json").read_text())
    flows = [r for r in read_csv(rundir / "flows.csv") if r["flow"] == "1"]
    half, end = _half(flows)
    late = [r for r in flows if float(r["t0_s"]) >= half and r["rtt_us"]]
    span = float(late[-1]["t1_s"]) - float(late[0]["t0_s"])
    weights = [float(r["t1_s"]) - float(r["t0_s"]) for r in late]
    R = sum(w * int(r["rtt_us"]) / 1e6 for w, r in zip(weights, late)) / sum(weights)
    delivered = sum(int(r["bytes"]) for r in late) / MSS
    trace_path = rundir / "trace.csv"
    decisions = [r for r in read_csv(trace_path) if r["type"] == "decision"] \
        if trace_path.exists() else []
    if decisions:
        base = min(int(r["base_rtt_us"]) for r in decisions) / 1e6
    else:
        base = min(int(r["rtt_us"]) for r in flows if r["rtt_us"]) / 1e6
    if len(sm["flows"]) == 1:
        if not (rundir / "queue.csv").exists():     # its size keeps it out of git
            raise RuntimeError(f"{rundir}: neither queue.csv, which p is counted from, nor "
                               f"{KEPT}: analyse the tree the runs were made in, or rerun")
        queue = [r for r in read_csv(rundir / "queue.csv") if half <= float(r["t_s"]) <= end]
        losses = [float(r["t_s"]) for r in queue if r["event"] in ("drop", "loss")]
        sent = sum(1 for r in queue if r["event"] in ("enq", "drop", "loss"))
        episodes = loss_episodes(losses, R)
    else:
        retx = sum(int(r["retransmits"] or 0) for r in late)
        sent, episodes, losses = delivered + retx, retx, [None] * retx
    return {"run": f'{sm["scenario"]}/{sm["run"]}', "rep": sm.get("rep", 0),
            "cc": sm["flows"][0]["cc"], "p": episodes / sent if sent else 0.0,
            "loss_rate": len(losses) / sent if sent else 0.0, "R_s": R,
            "base_rtt_s": min(base, R), "packets": sent, "span_s": span,
            "sent_pps": sent / span, "goodput_pps": delivered / span,
            "capacity_pps": sm["bottleneck"]["rate_bps"] / 8 / FRAME,
            # trace times are CLOCK_MONOTONIC, the run's files count from t0_monotonic
            **_controller_view(decisions, sm["t0_monotonic"], half, R),
            **_kernel_view(sm["flows"][0])}


KEPT = "inputs.json"


def keep(rundir: Path) -> dict:
    """Measure a run and keep the result beside it (KEPT): queue.csv, which p is counted
    from, is too large for git, so a clean checkout re-analyses from what is kept."""
    m = measure(rundir)
    (rundir / KEPT).write_text(json.dumps(m, indent=1) + "\n")
    return m


def measured(rundir: Path) -> dict:
    """The run's inputs: measured afresh where its queue.csv is, else as kept when it ran."""
    kept = rundir / KEPT
    if kept.exists() and not (rundir / "queue.csv").exists():
        return json.loads(kept.read_text())
    return measure(rundir)


def _kernel_view(flow: dict) -> dict:
    """Flow 1's second half as the tracepoints saw it (summary.json), if recorded."""
    secs = flow.get("ca_seconds_second_half")
    if not secs or not sum(secs.values()):
        return {"kernel_timeouts": None, "kernel_not_open": None}
    return {"kernel_timeouts": flow["timeouts_second_half"],
            "kernel_not_open": 1 - secs["open"] / sum(secs.values())}


def _controller_view(decisions: list[dict], t0: float, half: float, R: float) -> dict:
    """What the controller's own decisions say about the second half (ours only)."""
    late = [(float(r["time_s"]) - t0, int(r["cwnd"])) for r in decisions]
    late = [(t, c) for t, c in late if t >= half]
    if len(late) < 2:
        return {"stalled": None, "cwnd_mean": None}
    gaps = [b - a for (a, _), (b, _) in zip(late, late[1:])]
    stalled = sum(g for g in gaps if g > 2 * R) / (late[-1][0] - late[0][0])
    return {"stalled": stalled, "cwnd_mean": statistics.mean(c for _, c in late)}
