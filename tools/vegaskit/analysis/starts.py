"""Which flow's data started first in each repetition, beside the share the report
gives it (docs/DESIGN.md §3.11, "start order").

    python -m vegaskit.analysis.starts results/vegas_plus/vp_cubic_100M80 [--at 5,30,58]

Each flow's iperf3 starts at its scenario time (with 50 ms of jitter), but its data
connection only after iperf3's control exchange, which at long RTTs spreads the data
starts by up to a second, in either order. A flow's data start here is the runner's
(summary.json's start_s: when its data connection began, on the run's clock, which is
also where its first interval in flows.csv starts).

Every repetition under the directory given with flows.csv, summary.json and figures.json (the
report's figures, written by `make vegas-plus`) and more than one flow: flow 1 (the
controller under test) against the earliest of the others, its lead (positive: ours
first), its share of the fair share and the bottleneck's mean queue over the second
half (packets) as the report computes them, and with --at
each of the two flows' windows at those seconds (packets of 1,448 bytes, from
the sender's sample of the flows.csv interval holding that time). Then, per
directory of repetitions, the shares split by which started first (by more than
TIE_S, the iperf3 start jitter; leads within it are counted apart), as ranges, and
whether the two ranges lie apart. Ranges apart over a few
repetitions are a hint, not a test; an experiment that fixes the order is (the cases
`cubic_ahead`, `cubic_behind`, `reno_ahead` and `reno_behind`).
"""
from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

from ..cliargs import OneLineParser, parse
from .model_inputs import MSS
from .records import read_csv

OURS = 1    # the runner numbers the controller under test's flow 1 (vegasplus.cases)
# Leads within each iperf3's start jitter (vegasplus.cases.START_JITTER_S) say no order.
TIE_S = 0.05


def data_starts(summary: dict) -> dict[int, float]:
    """flow -> its data start (s), from a run's summary.json."""
    return {int(fl["flow"]): float(fl["start_s"]) for fl in summary["flows"]}


def window_at(flows_csv: list[dict], flow: int, t: float) -> int | str | None:
    """The flow's window (packets) in its interval that holds t; "?" where the sender
    had no sample (its last interval); None outside its intervals."""
    for r in flows_csv:
        if int(r["flow"]) == flow and float(r["t0_s"]) <= t < float(r["t1_s"]):
            return int(r["cwnd_bytes"]) // MSS if r["cwnd_bytes"] else "?"
    return None


def read_rep(rep: Path, at: list[float] = ()) -> dict | None:
    """One repetition's starts, share and windows at the times `at`; None when it has
    no other flow or no share."""
    flows = read_csv(rep / "flows.csv")
    starts = data_starts(json.loads((rep / "summary.json").read_text()))
    figs = json.loads((rep / "figures.json").read_text())
    others = {f: t for f, t in starts.items() if f != OURS}
    if OURS not in starts or not others or "share" not in figs:
        return None
    share = float(figs["share"])
    if not math.isfinite(share) or share < 0:
        raise ValueError(f"figures.json's share {figs['share']!r} is not a share")
    first = min(others, key=others.get)
    return {"ours": starts[OURS], "other": others[first],
            "lead": others[first] - starts[OURS], "share": share,
            "queue": figs.get("queue_pkts"),
            "windows": [(window_at(flows, OURS, t), window_at(flows, first, t)) for t in at]}


def _range(xs: list[float]) -> str:
    return f"{min(xs):.3g}-{max(xs):.3g} ({len(xs)})" if xs else "none"


def split(rows: list[dict]) -> tuple[list[float], list[float], list[float], bool | None]:
    """Shares with ours first, with another first, and with no order (|lead| within
    TIE_S), and whether the first two ranges lie apart; None unless both were seen."""
    first = [r["share"] for r in rows if r["lead"] > TIE_S]
    behind = [r["share"] for r in rows if r["lead"] < -TIE_S]
    tied = [r["share"] for r in rows if abs(r["lead"]) <= TIE_S]
    if not first or not behind:
        return first, behind, tied, None
    return first, behind, tied, min(first) > max(behind) or max(first) < min(behind)


def _queue(q) -> str:
    return f"{q:.1f}" if isinstance(q, (int, float)) else "-"


def _win(w: tuple) -> str:
    return " / ".join("-" if x is None else str(x) for x in w)


def render(root: Path, groups: dict[str, list[tuple[str, dict]]], at: list[float]) -> str:
    lines = [f"{root}: data start of flow 1 against the earliest other flow, and flow 1's "
             "share of the fair share (the report's, figures.json)" +
             ("; windows in packets, flow 1 / that other flow" if at else ""), "",
             "| repetition | ours starts (s) | first other (s) | lead (s) | share | "
             "queue (pkts) |" + "".join(f" window at {t:g} s |" for t in at),
             "|---|---|---|---|---|---|" + "---|" * len(at)]
    for reps in groups.values():
        lines += [f"| {p} | {r['ours']:.3f} | {r['other']:.3f} | {r['lead']:+.3f} | "
                  f"{r['share']:.3f} | {_queue(r['queue'])} |" +
                  "".join(f" {_win(w)} |" for w in r["windows"]) for p, r in reps]
    lines += ["", f"| runs | share, ours first (n) | share, another first (n) | "
              f"share, within {TIE_S:g} s (n) | first two ranges apart |", "|---|---|---|---|---|"]
    for group, reps in groups.items():
        first, behind, tied, apart = split([r for _, r in reps])
        verdict = "not both orders" if apart is None else ("yes" if apart else "no")
        lines.append(f"| {group} | {_range(first)} | {_range(behind)} | {_range(tied)} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.starts",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a directory of runs (results/vegas_plus, "
                    "or one case's)")
    ap.add_argument("--at", default="", help="seconds, comma-separated, at which to show "
                    "both flows' windows (e.g. 5,30,58)")
    if (a := parse(ap, argv)) is None:
        return 2
    if not a.root.is_dir():
        print(f"starts: {a.root}: no such directory", file=sys.stderr)
        return 2
    try:
        at = [float(x) for x in a.at.split(",")] if a.at else []
    except ValueError:
        print(f"starts: --at {a.at!r}: not comma-separated seconds", file=sys.stderr)
        return 2
    if any(not 0 <= t <= 3600 for t in at) or len(at) > 12:
        print(f"starts: --at {a.at!r}: at most 12 times, each 0 to 3600 s", file=sys.stderr)
        return 2
    groups: dict[str, list[tuple[str, dict]]] = {}
    for flows in sorted(a.root.rglob("flows.csv")):
        rep = flows.parent
        if not ((rep / "figures.json").exists() and (rep / "summary.json").exists()):
            continue
        try:
            row = read_rep(rep, at)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"starts: {rep}: unreadable ({type(e).__name__}: {e})", file=sys.stderr)
            return 1
        if row is None:
            continue
        # A run's repetitions sit in rep<N> directories; a lone run, or the repetition
        # given as the root, is its own group.
        group = rep.parent if re.fullmatch(r"rep\d+", rep.name) and rep != a.root else rep
        groups.setdefault(str(group.relative_to(a.root)) or ".", []).append(
            (str(rep.relative_to(a.root)) or ".", row))
    if not groups:
        print(f"starts: {a.root}: no repetition with flows.csv, summary.json, figures.json and "
              "another flow", file=sys.stderr)
        return 1
    sys.stdout.write(render(a.root, groups, at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
