"""Which flow's data started first in each repetition, beside the share the report
gives it (docs/DESIGN.md §3.11, "start order").

    python -m vegaskit.analysis.starts results/vegas_plus/vp_cubic_100M80

Each flow's iperf3 starts at its scenario time (with 50 ms of jitter), but its data
connection only after iperf3's control exchange, which at long RTTs spreads the data
starts by up to a second, in either order. A flow's data start here is its first
interval in flows.csv (the receiver's first report, on the run's clock).

Every repetition under the directory given with flows.csv and figures.json (the
report's figures, written by `make vegas-plus`) and more than one flow: flow 1 (the
controller under test) against the earliest of the others, its lead (positive: ours
first), and its share of the fair share as the report computes it. Then, per
directory of repetitions, the shares split by which started first (ours first: a lead
above 0), as ranges, and whether the two ranges lie apart. Ranges apart over a few
repetitions are a hint, not a test; an experiment that fixes the order is (the cases
`cubic_ahead`, `cubic_behind`, `reno_ahead` and `reno_behind`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .records import read_csv

OURS = 1    # the runner numbers the controller under test's flow 1 (vegasplus.cases)


def data_starts(flows_csv: list[dict]) -> dict[int, float]:
    """flow -> the start of its first interval (s)."""
    out: dict[int, float] = {}
    for r in flows_csv:
        f, t = int(r["flow"]), float(r["t0_s"])
        out[f] = min(t, out.get(f, t))
    return out


def read_rep(rep: Path) -> dict | None:
    """One repetition's starts and share; None when it has no other flow or no share."""
    starts = data_starts(read_csv(rep / "flows.csv"))
    figs = json.loads((rep / "figures.json").read_text())
    others = [t for f, t in starts.items() if f != OURS]
    if OURS not in starts or not others or "share" not in figs:
        return None
    return {"ours": starts[OURS], "other": min(others),
            "lead": min(others) - starts[OURS], "share": float(figs["share"])}


def _range(xs: list[float]) -> str:
    return f"{min(xs):.3g}-{max(xs):.3g} ({len(xs)})" if xs else "none"


def split(rows: list[dict]) -> tuple[list[float], list[float], bool | None]:
    """Shares with ours first, with another first, and whether the two ranges lie
    apart; None when only one order was seen."""
    first = [r["share"] for r in rows if r["lead"] > 0]
    behind = [r["share"] for r in rows if r["lead"] <= 0]
    if not first or not behind:
        return first, behind, None
    return first, behind, min(first) > max(behind) or max(first) < min(behind)


def render(root: Path, groups: dict[str, list[tuple[str, dict]]]) -> str:
    lines = [f"{root}: data start of flow 1 against the earliest other flow, and flow 1's "
             "share of the fair share (the report's, figures.json)", "",
             "| repetition | ours starts (s) | first other (s) | lead (s) | share |",
             "|---|---|---|---|---|"]
    for reps in groups.values():
        lines += [f"| {p} | {r['ours']:.3f} | {r['other']:.3f} | {r['lead']:+.3f} | "
                  f"{r['share']:.3f} |" for p, r in reps]
    lines += ["", "| runs | share, ours first (n) | share, another first (n) | "
              "ranges apart |", "|---|---|---|---|"]
    for group, reps in groups.items():
        first, behind, apart = split([r for _, r in reps])
        verdict = "one order only" if apart is None else ("yes" if apart else "no")
        lines.append(f"| {group} | {_range(first)} | {_range(behind)} | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vegaskit.analysis.starts",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a directory of runs (results/vegas_plus, "
                    "or one case's)")
    a = ap.parse_args(argv)
    if not a.root.is_dir():
        print(f"starts: {a.root}: no such directory", file=sys.stderr)
        return 2
    groups: dict[str, list[tuple[str, dict]]] = {}
    for flows in sorted(a.root.rglob("flows.csv")):
        rep = flows.parent
        if not (rep / "figures.json").exists():
            continue
        try:
            row = read_rep(rep)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"starts: {rep}: unreadable ({type(e).__name__}: {e})", file=sys.stderr)
            return 1
        if row is None:
            continue
        # A run's repetitions sit in rep<N> directories; a lone run is its own group.
        group = rep.parent if rep.name.startswith("rep") else rep
        groups.setdefault(str(group.relative_to(a.root)) or ".", []).append(
            (str(rep.relative_to(a.root)) or ".", row))
    if not groups:
        print(f"starts: {a.root}: no repetition with flows.csv, figures.json and "
              "another flow", file=sys.stderr)
        return 1
    sys.stdout.write(render(a.root, groups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
