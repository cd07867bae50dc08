"""What a traced run's Vegas-family controller decided, and where its backlog stood when
it did: each congestion-avoidance decision of bpf_vegas, bpf_vegas_a or bpf_pipe
(docs/DESIGN.md §3.6), counted by rule, by where diff stood against the thresholds the decision saw
(below alpha, at alpha, between, at beta, above beta) and by how Th compared with Th'.
PIPE and Vegas-A differ only at the ties (diff at alpha or at beta, Th equal to Th'),
so these counts show how often a run's course went through them.

    python -m vegaskit.analysis.decisions results/<scenario>/<profile>/<run> [--from S] [--to S]
                                          [--by-window]

--from and --to are seconds since the run's start (its t0_monotonic): --from 20 in
rerouting reads what came after the reroute. --by-window adds the diff each window
read: on one path that is the path's map from window to backlog, the same whichever
rule steers the window, so two runs' tables show where each rule stops on it.
"""
from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

from ..cliargs import OneLineParser
from .records import read_csv, thresholds_seen

BANDS = ("<alpha", "=alpha", "between", "=beta", ">beta")
CA_RULES = {"inc", "hold", "dec", "inc_adapt", "dec_adapt"}  # Vegas's and the adaptive variants'
TH = {"1": "Th>Th'", "0": "Th=Th'", "-1": "Th<Th'"}


def band(diff: int, alpha: int, beta: int) -> str:
    if diff < alpha:
        return BANDS[0]
    if diff == alpha:
        return BANDS[1]
    if diff < beta:
        return BANDS[2]
    return BANDS[3] if diff == beta else BANDS[4]


def tally(rows: list[dict], t0: float, t_from: float, t_to: float) -> dict:
    """rows: one trace.csv's. The thresholds a decision saw are those in force when it
    was taken (records.thresholds_seen); a flow's decisions before any had them are left
    out. Returns the counts and the window and alpha seen."""
    flows: dict[tuple, list[dict]] = {}
    for r in rows:
        if r["type"] == "decision":
            flows.setdefault((r["saddr"], r["sport"]), []).append(r)
    counts: Counter = Counter()
    by_window: Counter = Counter()  # (cwnd, diff): decisions
    cwnd, alpha = [], []
    for decisions in flows.values():
        for r, before in thresholds_seen(decisions):
            t = float(r["time_s"]) - t0
            if before is None or r["rule"] not in CA_RULES or not t_from <= t <= t_to:
                continue
            th = TH.get(r["th_cmp"], r["th_cmp"])
            counts[(r["rule"], band(int(r["diff"]), *before), th)] += 1
            cwnd.append(int(r["cwnd"]))
            alpha.append(before[0])
            by_window[(int(r["cwnd"]), int(r["diff"]))] += 1
    return {"counts": counts, "cwnd": cwnd, "alpha": alpha, "by_window": by_window}


def read_rep(rep: Path, t_from: float, t_to: float) -> dict | None:
    trace, summary = rep / "trace.csv", rep / "summary.json"
    if not trace.exists() or not summary.exists():
        return None
    t0 = json.loads(summary.read_text())["t0_monotonic"]
    return tally(read_csv(trace), t0, t_from, t_to)


def reps_of(run_dir: Path) -> list[Path]:
    reps = sorted(run_dir.glob("rep*"), key=lambda p: int(p.name[3:]))
    return reps or [run_dir]


def render_by_window(per_rep: dict[str, dict]) -> list[str]:
    total: Counter = Counter()
    for t in per_rep.values():
        total.update(t["by_window"])
    lines = ["", "| window (packets) | decisions | diff it read: decisions |", "|---|---|---|"]
    for w in sorted({w for w, _ in total}):
        diffs = sorted((d, k) for (w2, d), k in total.items() if w2 == w)
        lines.append(f"| {w} | {sum(k for _, k in diffs)} | "
                     + ", ".join(f"{d}: {k}" for d, k in diffs) + " |")
    return lines


def render(run_dir: Path, per_rep: dict[str, dict], by_window: bool = False) -> str:
    total: Counter = Counter()
    for t in per_rep.values():
        total.update(t["counts"])
    n = sum(total.values())
    lines = [f"{run_dir}: {n} congestion-avoidance decisions in {len(per_rep)} traced "
             "repetitions",
             "", "| repetition | decisions | window, median (packets) | alpha seen, median |",
             "|---|---|---|---|"]
    for name, t in per_rep.items():
        k = sum(t["counts"].values())
        med = (lambda xs: f"{statistics.median(xs):g}" if xs else "-")
        lines.append(f"| {name} | {k} | {med(t['cwnd'])} | {med(t['alpha'])} |")
    lines += ["", "| rule | diff against the thresholds it saw | Th against Th' | decisions "
              "| share |", "|---|---|---|---|---|"]
    order = {b: i for i, b in enumerate(BANDS)}
    for (rule, b, th), k in sorted(total.items(), key=lambda x: (order[x[0][1]], -x[1])):
        lines.append(f"| {rule} | {b} | {th} | {k} | {k / n:.1%} |")
    if by_window:
        lines += render_by_window(per_rep)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.decisions",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="results/<scenario>/<profile>/<run>")
    ap.add_argument("--from", dest="t_from", type=float, default=0.0, metavar="S")
    ap.add_argument("--to", dest="t_to", type=float, default=float("inf"), metavar="S")
    ap.add_argument("--by-window", action="store_true",
                    help="also the diff each window read (decisions by window and diff)")
    a = ap.parse_args(argv)
    if not a.run_dir.is_dir():
        print(f"decisions: {a.run_dir}: no such run directory", file=sys.stderr)
        return 2
    if a.t_from > a.t_to:
        print(f"decisions: --from {a.t_from:g} is after --to {a.t_to:g}", file=sys.stderr)
        return 2
    per_rep = {}
    for rep in reps_of(a.run_dir):
        try:
            t = read_rep(rep, a.t_from, a.t_to)
        except (OSError, ValueError, KeyError) as e:
            print(f"decisions: {rep}: unreadable ({e})", file=sys.stderr)
            return 1
        if t is not None:
            per_rep[rep.name] = t
    if not per_rep:
        print(f"decisions: {a.run_dir}: no traced repetition (trace.csv and summary.json)",
              file=sys.stderr)
        return 1
    sys.stdout.write(render(a.run_dir, per_rep, a.by_window))
    return 0


if __name__ == "__main__":
    sys.exit(main())
