"""How far the RTT's noise alone moves Th, the throughput per round that Vegas-A and
PIPE compare with the previous round's, against the half packet per round within which
semantics=paper reads the two as equal (th_tie, docs/DESIGN.md §3.10).

    python -m vegaskit.analysis.thnoise REP_DIR [REP_DIR ...]

A REP_DIR is one traced repetition of bpf_vegas_a or bpf_pipe (trace.csv with its
decisions, summary.json, late.csv). The pairs read are rounds that sent the same count
after three decisions that held the window, so that the queue had settled before
either round (two holds leave the first round's average with samples from before the
change): there only the RTT's noise can move Th. Pairs whose rounds saw the link
emulator release a packet 1 ms or more late are counted apart, as the testbed's noise.
How much of this noise there is belongs to the host (the emulator's wake-ups, a
hypervisor's steal), so it is a measurement per machine, not a pass/fail bar.
"""
from __future__ import annotations

import bisect
import json
import sys
from pathlib import Path

from vegaskit import intf
from vegaskit.analysis.decisions import CA_RULES
from vegaskit.analysis.records import data_flow, read_csv
from vegaskit.testbed.vtrace import parse_csv
from vegaskit.cliargs import OneLineParser

BAND = intf.TH_TIE_MILLI_DEFAULT / 1000     # packets per round: th_tie's default


def late_releases(rep: Path) -> list[float]:
    """When the link emulator released a packet 1 ms or more late (late.csv, any link),
    on the trace's clock (summary.json's t0_monotonic)."""
    t0 = json.loads((rep / "summary.json").read_text())["t0_monotonic"]
    path = rep / "late.csv"
    return sorted(t0 + float(r["t_s"]) for r in read_csv(path)) if path.exists() else []


def noise_pairs(recs: list[dict], late: list[float]) -> tuple[list[float], list[float]]:
    """|Th - Th'| in packets per round over the settled pairs of one connection's
    decisions: (those whose rounds saw no late release, those whose rounds did)."""
    ca = [r for r in recs if r["rule"] in CA_RULES]
    clean, emulator = [], []
    for i in range(3, len(ca)):
        before, c = ca[i - 3:i], ca[i]
        if all(r["rule"] == "hold" for r in before) and before[-1]["sent"] == c["sent"] \
                and c["th_prev"]:
            k = bisect.bisect_left(late, before[-2]["time_s"])
            into = emulator if k < len(late) and late[k] <= c["time_s"] else clean
            into.append(abs(c["th"] - c["th_prev"]) * c["rtt_us"] / 1e6)
    return clean, emulator


def summarise(noise: list[float]) -> dict:
    """Pairs, quantiles and how many reach the band (and read as a change)."""
    s = sorted(noise)
    q = {p: s[min(len(s) - 1, int(len(s) * p / 100))] if s else None for p in (50, 95, 99)}
    return {"pairs": len(s), "median": q[50], "p95": q[95], "p99": q[99],
            "max": s[-1] if s else None, "crossed": sum(x >= BAND for x in s)}


def line(name: str, m: dict) -> str:
    if not m["pairs"]:
        return f"{name}: no pairs"
    return (f"{name}: {m['pairs']} pairs, median {m['median']:.3f}, p95 {m['p95']:.3f}, "
            f"p99 {m['p99']:.3f}, max {m['max']:.3f} packet per round; {m['crossed']} "
            f"({100 * m['crossed'] / m['pairs']:.1f}%) at or above {BAND}")


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.thnoise",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("reps", nargs="+", type=Path, help="traced repetition directories")
    a = ap.parse_args(argv)
    clean, late = [], []
    for rep in a.reps:
        if not (rep / "trace.csv").is_file() or not (rep / "summary.json").is_file():
            print(f"thnoise: {rep}: not a traced repetition (no trace.csv or summary.json)",
                  file=sys.stderr)
            return 2
        try:
            c, e = noise_pairs(data_flow(parse_csv((rep / "trace.csv").read_text())),
                               late_releases(rep))
        except (ValueError, KeyError, TypeError) as err:
            print(f"thnoise: {rep}: unreadable trace, summary or late.csv ({err!r})",
                  file=sys.stderr)
            return 2
        print(line(f"{rep} (emulator on time)", summarise(c)))
        clean += c
        late += e
    if len(a.reps) > 1:
        print(line("all (emulator on time)", summarise(clean)))
    print(line("all (a release 1 ms or more late in the pair's rounds)", summarise(late)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
