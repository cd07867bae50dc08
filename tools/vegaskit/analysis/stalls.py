"""Where the link emulator's stalls come from, read from a batch's runs (docs/DESIGN.md
§7.1): each run's late releases (late.csv) on the host's one clock (t0_monotonic), set
against the other runs that were live at the same moment.

Two questions, each against the same count at random instants of the runs' lives:
- shared: does another live run's emulator release late within WINDOW_S of a stall?
  If so, the stall is the host's (every emulator held up at once), not the run's own.
- near a neighbour's start or end (its setup or teardown: namespaces, BPF loads)?

    python -m vegaskit.analysis.stalls results/<scenario>/<profile> [--ms 5]
"""
from __future__ import annotations

import bisect
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

from ..cliargs import OneLineParser
from .records import read_csv

WINDOW_S = 0.03         # a stall and a release this close count as the same moment
NEAR_S = 2.0            # a neighbour's start or end this close counts as near
SAMPLES = 5000          # random instants for the chance figures


@dataclass
class RunTimes:
    t0: float                           # CLOCK_MONOTONIC, seconds
    duration: float
    late: list[tuple[float, float]]     # (seconds since t0, ms late)

    def live(self, t: float) -> bool:
        return self.t0 <= t <= self.t0 + self.duration


def load(base: Path) -> list[RunTimes]:
    """The runs under base that logged their late releases."""
    runs = []
    for f in sorted(base.glob("*/rep*/summary.json")):
        sm = json.loads(f.read_text())
        late = f.parent / "late.csv"
        if "t0_monotonic" in sm and late.exists():
            runs.append(RunTimes(sm["t0_monotonic"], sm["duration_s"],
                                 [(float(r["t_s"]), float(r["late_ms"])) for r in read_csv(late)]))
    return runs


def _shared(runs: list[RunTimes], i: int, t: float, times: list[float], owner: list[int]) -> bool | None:
    """Whether another run released late within WINDOW_S of t; None if none was live."""
    if not any(j != i and r.live(t) for j, r in enumerate(runs)):
        return None
    lo, hi = bisect.bisect_left(times, t - WINDOW_S), bisect.bisect_right(times, t + WINDOW_S)
    return any(owner[k] != i for k in range(lo, hi))


def _near(runs: list[RunTimes], i: int, t: float) -> bool:
    return any(abs(t - e) <= NEAR_S for j, r in enumerate(runs) if j != i
               for e in (r.t0, r.t0 + r.duration))


def analyse(runs: list[RunTimes], ms: float, seed: int = 1) -> dict:
    every = sorted((r.t0 + t, i) for i, r in enumerate(runs) for t, _ in r.late)
    times, owner = [t for t, _ in every], [i for _, i in every]
    stalls = [(i, r.t0 + t) for i, r in enumerate(runs) for t, late in r.late if late >= ms]
    rng = random.Random(seed)
    chance = []
    for _ in range(SAMPLES if runs else 0):
        i = rng.randrange(len(runs))
        chance.append((i, runs[i].t0 + rng.uniform(0, runs[i].duration)))

    def shares(points):
        got = [s for s in (_shared(runs, i, t, times, owner) for i, t in points) if s is not None]
        return sum(got), len(got)

    def near(points):
        return sum(_near(runs, i, t) for i, t in points), len(points)

    return {"runs": len(runs), "stalls": len(stalls), "ms": ms,
            "shared": shares(stalls), "shared_chance": shares(chance),
            "near": near(stalls), "near_chance": near(chance)}


def _frac(pair: tuple[int, int]) -> str:
    n, of = pair
    return f"{n}/{of} ({n / of:.0%})" if of else "-"


def lines(a: dict) -> list[str]:
    return [f"{a['runs']} runs, {a['stalls']} releases {a['ms']:g} ms or more late",
            f"shared with another live run's late release within {WINDOW_S * 1000:g} ms: "
            f"{_frac(a['shared'])}; at random instants {_frac(a['shared_chance'])}",
            f"within {NEAR_S:g} s of another run's start or end: {_frac(a['near'])}; "
            f"at random instants {_frac(a['near_chance'])}"]


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.stalls",
                       description="A batch's emulator stalls against its runs.")
    ap.add_argument("base", type=Path, help="results/<scenario>/<profile>")
    ap.add_argument("--ms", type=float, default=5.0, help="a stall: a release this late (ms)")
    a = ap.parse_args(argv)
    runs = load(a.base)
    if not runs:
        print(f"stalls: no run under {a.base} logged its late releases (late.csv)", file=sys.stderr)
        return 1
    print("\n".join(lines(analyse(runs, a.ms))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
