"""A candidate detector of a competing queue, replayed on traced runs; not in the
controller (docs/DESIGN.md §3.11, "a run of dec rounds").

    python -m vegaskit.analysis.decruns results/vegas_plus [--k 16] [--beta N]

In delay mode a `dec` round takes one packet out of the window. Alone, that packet
leaves the queue, and the queueing delay (the round's RTT less baseRTT) falls by one
packet's time at the flow's rate, rtt/cwnd. Behind a competitor that grows while we
shed, the queue holds. rtt/cwnd is a packet's time at the bottleneck only while the
flow is alone: beside others it is longer by the inverse of our share, so the rule
overstates the drain there, and beside a competitor that merely holds still it fires
once our share is at most a half. The rule: over K consecutive delay-mode decisions that are all
`dec`, take the median queueing delay of the first quarter of them and of the last
quarter; it fires when the queue fell by less than half of what our own shedding
would have drained between the two quarters ((K - K/4) rounds of rtt/cwnd, the
window's median). Two guards: the last quarter's queue is more than 2(beta+1)
packets of rtt/cwnd, more than two flows in delay mode hold between them, so a
queue at the floor of what a lone flow or a pair keeps (which cannot fall) is no
sign; and the rounds sent their window (median sent/cwnd at least 0.9), as a `dec`
takes nothing out of the queue where pacing or the application limits the flow
(make vegas-plus's network 100M20frame2). A run of `dec` fires at most once, at its
first such window.

beta is the decision record's (vegas_plus's records carry it since commit 78e0af3);
records without it (0) take --beta, and a repetition of such records without --beta
is left out, with a line on stderr, as is one whose trace.csv lacks a column the
rule reads or lost records (vegaskit.analysis.tracedruns).

Every trace.csv under the directory given is read (each repetition's summary.json
beside it gives the clock's origin): one row per vegas_plus flow with its delay-mode
decisions, its runs of K or more `dec`, and its firings, the first one's time,
window and queue. A firing where the flow was alone (case `vp_alone_*`) or beside
its own kind (`vp_pair_*`) is a false alarm.
"""
from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from ..cliargs import OneLineParser, parse
from .tracedruns import Unfit, each_rep, plus_flows

DEFAULT_K = 16
# what the rule reads of each decision record
COLUMNS = ("time_s", "type", "ca", "dport", "rule", "mode", "cwnd", "sent", "rtt_us",
           "base_rtt_us", "beta")


class NoBeta(Exception):
    """A record without beta, and none given."""


@dataclass(frozen=True)
class Firing:
    t: float            # s from the run's start: the last `dec` of the window that fired
    cwnd: int           # packets, the window that round read
    q_first_ms: float   # queueing delay, median of the first quarter
    q_last_ms: float    # and of the last quarter
    drain_ms: float     # what our own shedding would have drained between them


def fires(window: list[dict], k: int, beta: int | None = None) -> Firing | None:
    """The rule on K consecutive `dec` decisions (dicts with time_s, cwnd, sent,
    rtt_us, base_rtt_us, beta; time_s already from the run's start). beta stands
    in for a record's beta of 0 (none recorded)."""
    quarter = max(1, k // 4)
    q = [(int(r["rtt_us"]) - int(r["base_rtt_us"])) / 1000 for r in window]
    q_first, q_last = statistics.median(q[:quarter]), statistics.median(q[-quarter:])
    per_packet = statistics.median(int(r["rtt_us"]) / int(r["cwnd"]) for r in window) / 1000
    drain = (k - quarter) * per_packet
    beta_now = int(window[-1]["beta"]) or beta
    if beta_now is None:
        raise NoBeta
    if q_first - q_last >= drain / 2 or q_last <= 2 * (beta_now + 1) * per_packet \
            or statistics.median(int(r["sent"]) / int(r["cwnd"]) for r in window) < 0.9:
        return None
    last = window[-1]
    return Firing(float(last["time_s"]), int(last["cwnd"]), q_first, q_last, drain)


def replay(decisions: list[dict], k: int, beta: int | None = None) -> tuple[int, list[Firing]]:
    """One flow's decisions in order -> (its runs of k or more delay-mode `dec`, the
    firings: at most one per run, at its first window that fires)."""
    runs, out, cur, fired = 0, [], [], False
    for r in decisions + [None]:
        if r is not None and r["mode"] == "delay" and r["rule"] == "dec" \
                and int(r["cwnd"]) > 0:
            cur.append(r)
            if len(cur) == k:
                runs += 1
            if len(cur) >= k and not fired and (f := fires(cur[-k:], k, beta)):
                out.append(f)
                fired = True
            continue
        cur, fired = [], False
    return runs, out


def read_rep(rep: Path, k: int, beta: int | None = None) -> list[dict]:
    """Each vegas_plus flow of one traced repetition (trace.csv, summary.json).
    Raises Unfit for a trace the rule cannot read."""
    out = []
    for flow, decisions in plus_flows(rep, COLUMNS).items():
        try:
            runs, firings = replay(decisions, k, beta)
        except NoBeta:
            raise Unfit("its records carry no beta (traced before 78e0af3): give --beta")
        out.append({"flow": flow, "delay": sum(r["mode"] == "delay" for r in decisions),
                    "runs": runs, "firings": firings})
    return out


def render(root: Path, rows: list[tuple[str, dict]], k: int) -> str:
    lines = [f"{root}: runs of {k} delay-mode `dec` rounds whose queue did not fall by "
             f"half of what our own shedding drains, "
             f"over a queue above 2(beta+1) of our packets, in rounds that sent their "
             f"window: {len({p for p, _ in rows})} traced repetitions", "",
             "| repetition | flow | delay-mode decisions | runs of k `dec` | firings | "
             "first at (s) | window then | queueing delay, first quarter -> last (ms) | "
             "our shedding alone: drain (ms) |", "|---" * 9 + "|"]
    for path, f in rows:
        first = f["firings"][0] if f["firings"] else None
        where = (f"{first.t:.2f} | {first.cwnd} | {first.q_first_ms:.2f} -> "
                 f"{first.q_last_ms:.2f} | {first.drain_ms:.2f}") if first else "- | - | - | -"
        lines.append(f"| {path} | {f['flow']} | {f['delay']} | {f['runs']} | "
                     f"{len(f['firings'])} | {where} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.decruns",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a directory holding traced runs "
                    "(results/vegas_plus, or one case's)")
    ap.add_argument("--k", type=int, default=DEFAULT_K,
                    help=f"consecutive `dec` rounds the rule reads (default {DEFAULT_K})")
    ap.add_argument("--beta", type=int, help="beta for records that carry none (traced "
                    "before 78e0af3; bpf_vegas_plus.bpf.c's default is 3)")
    a = parse(ap, argv)
    if a is None:
        return 2
    if not a.root.is_dir():
        print(f"decruns: {a.root}: no such directory", file=sys.stderr)
        return 2
    if not 4 <= a.k <= 1024:
        print(f"decruns: --k {a.k}: must be 4 to 1024 rounds", file=sys.stderr)
        return 2
    if a.beta is not None and not 1 <= a.beta <= 1000:
        print(f"decruns: --beta {a.beta}: must be 1 to 1000 packets", file=sys.stderr)
        return 2
    rows = each_rep(a.root, "decruns", lambda rep: read_rep(rep, a.k, a.beta))
    if rows is None:
        return 1
    sys.stdout.write(render(a.root, rows, a.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
