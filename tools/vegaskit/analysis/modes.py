"""vegas_plus's mode changes in a traced run (docs/DESIGN.md §3.11): each entry to
competitive mode, what the window did until the next probe, what the loss at the
bottleneck cost each flow, and how the probes ended.

    python -m vegaskit.analysis.modes results/vegas_plus/<case>/full/vegas_plus [--after S]
                                      [--every S]

One row per entry (to_compete, to_compete_delay, to_compete_rise or recall) of each vegas_plus flow:
- its window at the entry and the largest window before its first probe (the slow
  start a detection starts, or none for a recall);
- the retransmissions of the vegas_plus flow and of the other flows in the --after
  seconds from the entry (default 2), from flows.csv's half-second intervals that start
  in them;
- the other flows' windows at the entry (packets of 1,448 bytes, flows.csv);
- the probes until the flow was back in delay mode: how many failed, when it passed,
  and the window it kept.
Then each repetition's seconds in each mode, and its mode changes that their rule does
not make (none is expected: each change is a decision record of its own, §3.11).

With --every S, what delay mode read in each S seconds of each flow's run: its band's
decisions (inc, dec, hold) and how many were dec, the window from the first to the
last, and the medians of the round's queueing delay (its RTT less baseRTT), of diff
(our own backlog) and of the foreign queue the detector read (and its largest), the
reading that sends the flow to competitive mode at foreign_max.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from vegaskit.testbed.runner import BASE_PORT, ports_of
from vegaskit.vegasplus.cases import ABLATIONS

from ..cliargs import OneLineParser, parse
from .decisions import reps_of
from .model_inputs import MSS
from .records import read_csv

ENTRIES = {"to_compete", "to_compete_delay", "to_compete_rise", "recall"}
BAND = {"inc", "dec", "hold"}      # delay mode's own rules
# The rules that change the mode, each with the (before, after) modes it may join
# (§3.11); every other rule keeps the mode it finds.
TRANSITIONS = {**{rule: {("delay", "compete")} for rule in ENTRIES},
               "probe": {("compete", "probe"), ("probe", "probe")},     # its start, its hold
               "probe_fail": {("probe", "compete")}, "to_delay": {("probe", "delay")}}
CHANGES = frozenset(TRANSITIONS)
PLUS_INSTANCES = {"bpf_vegas_plus", *ABLATIONS}     # make vegas-plus's, traced one at a time


def intervals(flows_csv: list[dict]) -> list[dict]:
    return [{"flow": int(r["flow"]), "t0": float(r["t0_s"]), "t1": float(r["t1_s"]),
             "retx": int(r["retransmits"] or 0), "cwnd": int(r["cwnd_bytes"] or 0)}
            for r in flows_csv]  # a flow's last, partial interval has no sample


def episodes(decisions: list[dict], t0: float, flow: int, ivals: list[dict],
             after: float) -> list[dict]:
    """One vegas_plus flow's decisions (in order) -> one dict per entry to compete."""
    out: list[dict] = []
    cur = None
    for r in decisions:
        t, rule = float(r["time_s"]) - t0, r["rule"]
        if rule in ENTRIES:
            near = [i for i in ivals if t <= i["t0"] < t + after]
            others = [i for i in ivals if i["flow"] != flow and i["t0"] <= t < i["t1"]]
            cur = {"t": t, "rule": rule, "cwnd": int(r["cwnd"]), "peak": int(r["cwnd_after"]),
                   "retx_own": sum(i["retx"] for i in near if i["flow"] == flow),
                   "retx_others": sum(i["retx"] for i in near if i["flow"] != flow),
                   "others_cwnd": [round(i["cwnd"] / MSS) for i in others],
                   "fails": 0, "probed": False, "back_s": None, "kept": None}
            out.append(cur)
        elif cur is None:
            continue
        elif rule == "probe":
            cur["probed"] = True
        elif rule == "probe_fail":
            cur["fails"] += 1
        elif rule == "to_delay":
            cur["back_s"], cur["kept"] = t, int(r["cwnd_after"])
            cur = None
        elif not cur["probed"]:
            cur["peak"] = max(cur["peak"], int(r["cwnd_after"]))
    return out


def mode_seconds(decisions: list[dict], t0: float, t_end: float) -> dict[str, float]:
    secs: dict[str, float] = {}
    for r, nxt in zip(decisions, decisions[1:] + [None]):
        t = float(r["time_s"]) - t0
        t_next = float(nxt["time_s"]) - t0 if nxt else t_end
        secs[r["mode"]] = secs.get(r["mode"], 0.0) + max(t_next - t, 0.0)
    return secs


def misplaced(decisions: list[dict]) -> list[dict]:
    """The records whose mode change is not one their rule makes: a change at a rule
    outside CHANGES (a state reset outside a decision), or a rule of CHANGES joining
    other modes than TRANSITIONS gives it."""
    prev, out = "delay", []
    for r in decisions:
        rule, step = r["rule"], (prev, r["mode"])
        if step not in TRANSITIONS.get(rule, {(prev, prev)}):
            out.append(r)
        prev = r["mode"]
    return out


def delay_windows(decisions: list[dict], t0: float, every: float) -> list[dict]:
    """One flow's band decisions (in order) -> one dict per `every`-second window
    that holds any: its start, counts, window and the medians of what delay mode read."""
    wins: dict[int, list[dict]] = {}
    for r in decisions:
        if r["rule"] in BAND and r["mode"] == "delay":
            wins.setdefault(int((float(r["time_s"]) - t0) // every), []).append(r)
    out = []
    for k, rs in sorted(wins.items()):
        foreign = [float(r["foreign"] or 0) for r in rs]
        out.append({"t": k * every, "n": len(rs), "dec": sum(r["rule"] == "dec" for r in rs),
                    "cwnd": int(rs[0]["cwnd"]), "cwnd_after": int(rs[-1]["cwnd_after"]),
                    "qdelay_ms": statistics.median(
                        (int(r["rtt_us"]) - int(r["base_rtt_us"])) / 1000 for r in rs),
                    "diff": statistics.median(int(r["diff"]) for r in rs),
                    "foreign": statistics.median(foreign), "foreign_max": max(foreign)})
    return out


def plus_decisions(trace_rows: list[dict], base: int = BASE_PORT) -> dict[int, list[dict]]:
    """A trace's vegas_plus decision records (an ablation's too), in order, by flow."""
    by_flow: dict[int, list[dict]] = {}
    for r in trace_rows:
        if r["type"] == "decision" and r["ca"] in PLUS_INSTANCES:
            # flow N is the connection to port base + N (the runner's port_base)
            by_flow.setdefault(int(r["dport"]) - base, []).append(r)
    return by_flow


def read_rep(rep: Path, after: float, every: float | None = None) -> list[dict] | None:
    """Each vegas_plus flow of one repetition: its label, episodes, mode seconds and,
    with `every`, its delay-mode windows."""
    trace, summary, flows = rep / "trace.csv", rep / "summary.json", rep / "flows.csv"
    if not (trace.exists() and summary.exists() and flows.exists()):
        return None
    s = json.loads(summary.read_text())
    t0, t_end = s["t0_monotonic"], s["duration_s"]
    ivals = intervals(read_csv(flows))
    by_flow = plus_decisions(read_csv(trace), ports_of(s))
    out = []
    for f in s["flows"]:
        if decisions := by_flow.get(f["flow"]):
            out.append({"label": f["label"], "flow": f["flow"],
                        "episodes": episodes(decisions, t0, f["flow"], ivals, after),
                        "seconds": mode_seconds(decisions, t0, t_end),
                        "misplaced": len(misplaced(decisions)),
                        "windows": delay_windows(decisions, t0, every) if every else []})
    return out


def render(run_dir: Path, per_rep: dict[str, list[dict]], after: float,
           every: float | None = None) -> str:
    lines = [f"{run_dir}: vegas_plus's entries to competitive mode in {len(per_rep)} "
             "traced repetitions", "",
             f"| repetition | flow | t (s) | entry | window at entry | largest before the "
             f"first probe | its retransmissions, next {after:g} s | the others' | the "
             "others' windows at entry | probes failed | back in delay at (s) | "
             "window kept |", "|---" * 12 + "|"]
    for name, flows in per_rep.items():
        for f in flows:
            for e in f["episodes"]:
                back = f"{e['back_s']:.2f}" if e["back_s"] is not None else "never"
                kept = e["kept"] if e["kept"] is not None else "-"
                others = ", ".join(map(str, e["others_cwnd"])) or "-"
                lines.append(f"| {name} | {f['flow']} | {e['t']:.2f} | {e['rule']} | "
                             f"{e['cwnd']} | {e['peak']} | {e['retx_own']} | "
                             f"{e['retx_others']} | {others} | {e['fails']} | {back} | "
                             f"{kept} |")
    lines += ["", "| repetition | flow | seconds in delay | in compete | in probe | "
              "mode changes their rule does not make |", "|---|---|---|---|---|---|"]
    for name, flows in per_rep.items():
        for f in flows:
            s = f["seconds"]
            lines.append(f"| {name} | {f['flow']} | {s.get('delay', 0):.1f} | "
                         f"{s.get('compete', 0):.1f} | {s.get('probe', 0):.1f} | "
                         f"{f['misplaced']} |")
    if every:
        lines += ["", f"Delay mode's band, each {every:g} s:", "",
                  "| repetition | flow | from (s) | decisions | dec | window | queueing delay "
                  "(ms, median) | diff (median) | foreign queue (median) | largest |",
                  "|---" * 10 + "|"]
        for name, flows in per_rep.items():
            for f in flows:
                lines += [f"| {name} | {f['flow']} | {w['t']:g} | {w['n']} | {w['dec']} | "
                          f"{w['cwnd']} -> {w['cwnd_after']} | {w['qdelay_ms']:.2f} | "
                          f"{w['diff']:g} | {w['foreign']:.2f} | {w['foreign_max']:.2f} |"
                          for w in f["windows"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.analysis.modes",
                       description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path, help="results/vegas_plus/<case>/full/<run>")
    ap.add_argument("--after", type=float, default=2.0, metavar="S",
                    help="seconds after each entry whose retransmissions count (default 2)")
    ap.add_argument("--every", type=float, metavar="S",
                    help="also tabulate delay mode's band in windows of S seconds")
    if (a := parse(ap, argv)) is None:
        return 2
    if not a.run_dir.is_dir():
        print(f"modes: {a.run_dir}: no such run directory", file=sys.stderr)
        return 2
    if not a.after > 0:
        print(f"modes: --after {a.after:g}: must be more than 0 seconds", file=sys.stderr)
        return 2
    if a.every is not None and not 0.1 <= a.every <= 3600:
        print(f"modes: --every {a.every:g}: must be 0.1 to 3600 seconds", file=sys.stderr)
        return 2
    per_rep = {}
    for rep in reps_of(a.run_dir):
        try:
            flows = read_rep(rep, a.after, a.every)
        except (OSError, ValueError, KeyError) as e:
            print(f"modes: {rep}: unreadable ({e})", file=sys.stderr)
            return 1
        if flows:
            per_rep[rep.name] = flows
    if not per_rep:
        print(f"modes: {a.run_dir}: no traced repetition of vegas_plus "
              "(trace.csv, flows.csv and summary.json)", file=sys.stderr)
        return 1
    sys.stdout.write(render(a.run_dir, per_rep, a.after, a.every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
