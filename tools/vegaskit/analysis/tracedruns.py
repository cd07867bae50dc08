"""What the replays of vegas_plus's traced runs share (decruns, riseruns; docs/DESIGN.md
§3.11): finding every traced repetition under a directory, reading each flow's decision
records from it, and saying in one line on stderr what was left out or unreadable.

A repetition is a directory holding trace.csv and the summary.json beside it (the clock's
origin, t0_monotonic). One that lost trace records (summary.json's trace_lost) is left
out: a replay reads consecutive rounds, and a lost round would join two runs of them.
"""
from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from vegaskit.testbed.runner import ports_of

from .modes import plus_decisions
from .records import read_csv


class Unfit(Exception):
    """A repetition the replay cannot read: left out, with its reason."""


def plus_flows(rep: Path, columns: Sequence[str]) -> dict[int, list[dict]]:
    """Each vegas_plus flow's decision records of one traced repetition, in order, with
    time_s from the run's start. Raises Unfit for a trace that lost records or lacks one
    of the columns the replay reads."""
    sm = json.loads((rep / "summary.json").read_text())
    t0 = float(sm["t0_monotonic"])
    if sm.get("trace_lost"):
        raise Unfit(f"its trace lost {sm['trace_lost']} records")
    rows = read_csv(rep / "trace.csv")
    if rows and (missing := [c for c in columns if c not in rows[0]]):
        raise Unfit(f"trace.csv has no column {missing[0]!r}")
    flows = plus_decisions(rows, ports_of(sm))
    for decisions in flows.values():
        for r in decisions:
            r["time_s"] = float(r["time_s"]) - t0
    return dict(sorted(flows.items()))


def each_rep(root: Path, tag: str, read: Callable[[Path], list[dict]]
             ) -> list[tuple[str, dict]] | None:
    """read(rep) on every traced repetition under root -> (its path under root, one of
    the rows read gave) for each row; None, after one line on stderr, where a
    repetition was unreadable or none was found (the command then exits 1). A
    repetition for which read raises Unfit is left out, with a line on stderr."""
    rows = []
    for trace in sorted(root.rglob("trace.csv")):
        rep = trace.parent
        if not (rep / "summary.json").exists():
            continue
        try:
            got = read(rep)
        except Unfit as e:
            print(f"{tag}: {rep}: left out: {e}", file=sys.stderr)
            continue
        except (OSError, ValueError, KeyError, TypeError, csv.Error) as e:
            print(f"{tag}: {rep}: unreadable ({type(e).__name__}: {e})", file=sys.stderr)
            return None
        rows += [(str(rep.relative_to(root)), f) for f in got]
    if not rows:
        print(f"{tag}: {root}: no traced repetition of vegas_plus "
              "(trace.csv with its summary.json)", file=sys.stderr)
        return None
    return rows
