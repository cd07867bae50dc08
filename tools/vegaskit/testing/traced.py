"""A traced repetition of a vegas_plus run, written for the replay commands' tests
(analysis.decruns, analysis.riseruns): trace.csv with one decision record per round
given, and the summary.json beside it that gives the clock's origin."""
from __future__ import annotations

import csv
import json
from pathlib import Path

from vegaskit.testbed.runner import BASE_PORT

T0 = 500.0      # the run's clock origin (t0_monotonic); rounds' time_s count from it


def write_rep(root: Path, case: str, rounds: list[dict]) -> Path:
    """rounds (dicts with time_s from the run's start and the columns a replay reads)
    as flow 1's decisions under root/case/full/vegas_plus/rep0 -> root."""
    rep = root / case / "full" / "vegas_plus" / "rep0"
    rep.mkdir(parents=True)
    cols = ["time_s", "type", "ca", "dport", *rounds[0].keys() - {"time_s"}]
    with open(rep / "trace.csv", "w", newline="") as f:
        w = csv.DictWriter(f, cols)
        w.writeheader()
        for r in rounds:
            w.writerow({**r, "time_s": T0 + r["time_s"], "type": "decision",
                        "ca": "bpf_vegas_plus", "dport": BASE_PORT + 1})
    (rep / "summary.json").write_text(json.dumps({"t0_monotonic": T0}))
    return root
