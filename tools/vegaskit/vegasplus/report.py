"""results/vegas_plus/report.md and its throughput-delay plot: every case's
figures for every controller, per network, with issue 17's goals beside
vegas_plus's (docs/DESIGN.md §7.3)."""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from vegaskit import paths
from vegaskit.analysis import plots, stats
from vegaskit.testbed.report import num

from . import measure
from .cases import ABLATIONS, CASES, CCS, DEFAULT_CASES, NETS, scenario_name

PROFILE = "full"
ANY_CASE = "*"          # a row over every case's repetitions


@dataclass(frozen=True)
class Row:
    case: str
    key: str               # the figure in measure.figures()
    what: str
    unit: str
    goal: str              # as issue 17 states it; "" for "report"
    meets: Callable[[float], bool] | None = None
    missing: str = "never"  # what a repetition without the figure (None) means


ROWS = (
    Row("alone", "utilisation", "alone: bottleneck utilisation", "", "≥ 0.97", lambda x: x >= 0.97),
    Row("alone", "queue_pkts", "alone: mean queue, second half", "pkts", f"≤ beta + 1 = "
        f"{measure.BAND_PKTS}", lambda x: x <= measure.BAND_PKTS),
    Row("alone", "retx_second_half", "alone: retransmissions, second half", "", "0",
        lambda x: x == 0),
    Row("alone", "retx", "alone: retransmissions, whole run (slow start included)", "", ""),
    # why the mean can sit above the band (docs/DESIGN.md §7.3): what a round's minimum RTT
    # reads, and how many packets arrive together
    Row("alone", "queue_trough_pkts", "alone: the queue's minimum in each RTT, mean, second half",
        "pkts", ""),
    Row("alone", "arrival_burst_pkts", "alone: packets the bottleneck read together "
        "(< 30 us apart), packet-weighted mean", "", ""),
    Row("reno", "share", "against 1 reno: share of the fair share", "", "0.8 - 1.25",
        lambda x: 0.8 <= x <= 1.25),
    Row("cubic", "share", "against 1 cubic: share of the fair share", "", "0.8 - 1.25",
        lambda x: 0.8 <= x <= 1.25),
    Row("cubic4", "share", "against 4 cubic: share of the fair share", "", "≥ 0.7",
        lambda x: x >= 0.7),
    Row("leave", "share", "cubic present: share of the fair share (its second half)", "", ""),
    Row("leave", "recovery_s", "cubic left: until the queue stays ≤ beta + 1 (1 s means)", "s",
        "≤ 5", lambda x: x <= 5),
    Row("leave", "queue_after_pkts", "cubic left: mean queue from 5 s after to the end", "pkts",
        f"≤ {measure.BAND_PKTS}", lambda x: x <= measure.BAND_PKTS),
    Row("pair", "jain", "2 flows of the controller: Jain's index, second half", "", "≥ 0.98",
        lambda x: x >= 0.98, missing="no flow sent"),
    Row("bbr", "share", "against 1 bbr: share of the fair share", "", "report"),
    # every case's repetitions together: a host too loaded for its runs shows here
    Row(ANY_CASE, "late_1ms", "link emulator: releases 1 ms or more late, per repetition "
        "(every case)", "", "report", missing="not counted"),
    # the start order fixed (cases.py: run only when named)
    Row("cubic_ahead", "share", "against 1 cubic that starts 2 s before it: share of the "
        "fair share", "", "0.8 - 1.25", lambda x: 0.8 <= x <= 1.25),
    Row("cubic_behind", "share", "against 1 cubic that starts 2 s after it: share of the "
        "fair share", "", "0.8 - 1.25", lambda x: 0.8 <= x <= 1.25),
    Row("reno_ahead", "share", "against 1 reno that starts 2 s before it: share of the "
        "fair share", "", "0.8 - 1.25", lambda x: 0.8 <= x <= 1.25),
    Row("reno_behind", "share", "against 1 reno that starts 2 s after it: share of the "
        "fair share", "", "0.8 - 1.25", lambda x: 0.8 <= x <= 1.25),
)


def figures_of(rundir: Path, net, case_key: str, keep: list) -> dict:
    """A run's figures, from its logs when they are there (and kept beside them in
    figures.json: the per-packet queue log is not committed), else from figures.json
    with summary.json's figures read afresh. keep takes (figures.json, the figures),
    for the caller to write once everything has rendered."""
    kept = rundir / "figures.json"
    if (rundir / "queue.csv").exists():
        figs = measure.figures(rundir, net, case_key)
    else:
        figs = json.loads(kept.read_text()) | measure.from_summary(rundir, case_key)
    keep.append((kept, figs))
    return figs


def collect(base: Path, keep: list) -> dict[tuple[str, str, str], list[dict]]:
    """(case, net, cc) -> each repetition's figures, for every run found under base
    (keep: as figures_of's)."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for case in CASES.values():
        for net in NETS.values():
            d = base / scenario_name(case, net) / PROFILE
            if not (d / "summaries.json").exists():
                continue
            try:
                sms = json.loads((d / "summaries.json").read_text())
            except ValueError as e:
                raise ValueError(f"{d / 'summaries.json'}: {e}") from None
            reps: dict[str, int] = {}
            for sm in sms:
                reps[sm["run"]] = reps.get(sm["run"], 0) + 1
            for sm in sms:
                n = reps[sm["run"]]
                rd = d / sm["run"] / f"rep{sm['rep']}" if n > 1 else d / sm["run"]
                try:
                    figs = figures_of(rd, net, case.key, keep)
                except ValueError as e:             # a JSON file of the run that does not parse
                    raise ValueError(f"{rd}: {e}") from None
                out.setdefault((case.key, net.key, sm["run"]), []).append(figs)
    return out


def _cell(xs: list[float | None], missing: str = "never") -> str:
    if not xs:
        return "not run"
    if any(x is None for x in xs):
        return f"{missing} in {sum(x is None for x in xs)}/{len(xs)}"
    med = statistics.median(xs)
    if len(xs) < 2:
        return f"{num(med)} (1)"
    lo, hi, _ = stats.median_interval(xs)
    return f"{num(med)} [{num(lo)}, {num(hi)}] ({len(xs)})"


def _verdict(row: Row, xs: list[float | None]) -> str:
    if row.meets is None or not xs:
        return ""
    ok = sum(x is not None and row.meets(x) for x in xs)
    return f"{'met' if ok == len(xs) else 'not met'} ({ok}/{len(xs)})"


def table(figs: dict, net: str) -> list[str]:
    # an ablation gets a column on a network where it ran, and its count beside the default's
    ablations = [k for k in ABLATIONS if any(f[1:] == (net, k) for f in figs)]
    ccs = list(CCS) + ablations
    out = ["| figure | goal (vegas_plus) | " + " | ".join(ccs) + " | vegas_plus: goal |",
           "|---|---|" + "---|" * len(ccs) + "---|"]
    for row in ROWS:
        cases = CASES if row.case == ANY_CASE else (row.case,)
        vals = {cc: [f.get(row.key) for case in cases for f in figs.get((case, net, cc), [])
                     if row.key in f] for cc in ccs}
        if not any(vals.values()):
            continue
        unit = f" ({row.unit})" if row.unit else ""
        verdict = "; ".join([_verdict(row, vals["vegas_plus"])] + [
            f"{k}: {v}" for k in ablations if (v := _verdict(row, vals[k]))])
        out.append(f"| {row.what}{unit} | {row.goal or 'report'} | "
                   + " | ".join(_cell(vals[cc], row.missing) for cc in ccs) + f" | {verdict} |")
    return out


# the plot's cases and their markers: alone, and against each loss-based competitor of one
PLOT_CASES = (("alone", "o"), ("reno", "s"), ("cubic", "^"))
PLOT_COLUMNS = 2


# the networks issue 17 sets its goals on; the others (tsq, frames) test what sizes the
# bursts at 100 Mbit/s (docs/DESIGN.md §7.3)
GOAL_NETS = [k for k, n in NETS.items() if not n.sysctl]
# README.md shows the summary between these lines; report.write keeps it the report's own
README_BEGIN = "<!-- vegas_plus summary: written by make vegas-plus from results/vegas_plus -->"
README_END = "<!-- end of vegas_plus summary -->"


def summary(figs: dict) -> list[str]:
    """vegas_plus's figure for each goal of issue 17 (and its share against bbr) on the
    goals' four networks, with in how many repetitions the goal held: the table a reader
    needs first, and the one README.md shows."""
    out = ["| figure | " + " | ".join(GOAL_NETS) + " | goal |",
           "|---|" + "---|" * len(GOAL_NETS) + "---|"]
    for row in ROWS:
        if row.case not in DEFAULT_CASES or (row.meets is None and row.goal != "report"):
            continue
        cells = []
        for net in GOAL_NETS:
            xs = [f.get(row.key) for f in figs.get((row.case, net, "vegas_plus"), [])
                  if row.key in f]
            cell = _cell(xs, row.missing)
            if row.meets is not None and xs:
                ok = sum(x is not None and row.meets(x) for x in xs)
                cell = f"{cell.removesuffix(f' ({len(xs)})')}: {ok}/{len(xs)}"
            cells.append(cell)
        unit = f" ({row.unit})" if row.unit else ""
        out.append(f"| {row.what}{unit} | " + " | ".join(cells) + f" | {row.goal} |")
    return out


def readme_with(block: list[str], text: str) -> str | None:
    """README's text with its summary (between README_BEGIN and README_END) replaced by
    block; None if it has no such place, one pair of markers in that order."""
    if text.count(README_BEGIN) != 1 or text.count(README_END) != 1:
        return None
    head, rest = text.split(README_BEGIN)
    if README_END not in rest:
        return None
    _, tail = rest.split(README_END)
    return head + "\n".join([README_BEGIN, *block, README_END]) + tail


def plot(figs: dict, out: Path) -> bool:
    """Pantheon's throughput-delay plane per network: each controller's
    throughput against the queue's p95 delay, alone and against 1 reno or 1
    cubic, one dot per repetition and the median larger, outlined; delay grows
    to the left. The networks of issue 17 first; the others (tsq, frames),
    which ran vegas_plus alone, after them. One legend for the figure."""
    nets = [n for n in NETS if any(k[1] == n for k in figs)]
    if not nets:
        return False
    rows = -(-len(nets) // PLOT_COLUMNS)
    fig, axes = plots.plt.subplots(rows, PLOT_COLUMNS, figsize=(6.5 * PLOT_COLUMNS, 4.6 * rows),
                                   squeeze=False)
    handles = {}
    for ax, net in zip(axes.flat, nets):
        for i, cc in enumerate(CCS):
            color = f"C{i}"
            for j, (case, marker) in enumerate(PLOT_CASES):
                fs = figs.get((case, net, cc), [])
                if not fs:
                    continue
                xs, ys = [f["delay_p95_ms"] for f in fs], [f["mbps"] for f in fs]
                ax.scatter(xs, ys, color=color, marker=marker, alpha=0.35, s=14)
                handles[(i, j, f"{cc} {CASES[case].title}")] = ax.scatter(
                    [statistics.median(xs)], [statistics.median(ys)], color=color,
                    marker=marker, s=70, edgecolors="black")
        ax.invert_xaxis()
        ax.set_title(f"{net} ({NETS[net].rate}bit/s, {NETS[net].rtt_ms} ms)")
        ax.set_xlabel("bottleneck queueing delay, p95, second half (ms)")
        ax.set_ylabel("the controller's flow (Mbit/s)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(nets):]:
        ax.axis("off")
    keys = sorted(handles)          # by controller, then case, whichever panel drew it
    fig.legend([handles[k] for k in keys], [k[2] for k in keys], loc="upper center",
               ncol=min(len(handles), 5), fontsize=8, frameon=False)
    plots.save(fig, out, rect=(0, 0, 1, 1 - 0.9 / (4.6 * rows)))
    return True


def render(figs: dict, command: str, commits: list[str]) -> str:
    out = ["# vegas_plus against its goals (issue 17)", "",
           f"Produced by `{command}`; do not edit by hand. Source commit(s): "
           f"{', '.join(commits) or 'unknown'}.", "",
           "Each case runs on one dumbbell bottleneck with a drop-tail buffer of one BDP (at "
           "least 20 packets; docs/DESIGN.md §7.3). Every flow's iperf3 starts at 0 (up to 50 ms "
           "of jitter), and its data connection after iperf3's control exchange, up to about "
           "1 s later at 80 ms and in either order; the `_ahead` and `_behind` cases fix the "
           "order with a 2 s lead. The competitor of `leave` stops at half time. Figures over a run's second "
           "half, when every flow has long left slow start (`leave`: the competition's second "
           "half and the time after it). A cell is the median over the repetitions, "
           "[the distribution-free 95% interval] (repetitions): 6 repetitions give [min, max] "
           "at 96.9%. vegas_plus's goal column says in how many repetitions the goal held; "
           "a goal is *met* only when it held in every one. Shares are the flow's rate over "
           "the mean rate of all flows (1 = its fair share).", "",
           "## Summary: vegas_plus against each goal", "",
           "The median [95% interval] over the repetitions, then in how many of them the "
           "goal held (the tables below have every controller, case and figure).", "",
           *summary(figs), ""]
    for net in NETS.values():
        if not any(k[1] == net.key for k in figs):
            out += [f"## {net.key}: not run", ""]
            continue
        tsq = "".join(f", senders' {k} {v}" for k, v in net.sysctl)
        out += [f"## {net.key}: {net.rate}bit/s, {net.rtt_ms} ms, buffer {net.buffer} packets, "
                f"{net.duration} s{tsq}", ""] + table(figs, net.key) + [""]
    out += ["## Throughput against delay", "", "![throughput-delay](throughput_delay.png)", ""]
    return "\n".join(out)


def write(base: Path, command: str) -> Path:
    """The report, its plot and every run's figures.json; into the repository's results,
    README's summary too. All is made before anything is written, so a run's file that
    does not parse (ValueError) or has another shape changes nothing."""
    kept: list[tuple[Path, dict]] = []
    figs = collect(base, kept)
    commits = sorted({json.loads(p.read_text()).get("commit", "?")
                      for p in base.glob(f"vp_*/{PROFILE}/**/summary.json")})
    text = render(figs, command, commits)
    readme = None
    if base.resolve() == (paths.RESULTS / "vegas_plus").resolve():
        readme = readme_with(summary(figs), (paths.REPO / "README.md").read_text())
        if readme is None:
            raise ValueError(f"{paths.REPO / 'README.md'} has no one pair of vegas_plus summary "
                             "markers in order: its copy of the summary cannot be written")
    with plots.made_aside(base) as tmp:
        plot(figs, tmp / "throughput_delay.png")
        for f, fs in kept:
            f.write_text(json.dumps(fs, indent=1) + "\n")
    path = base / "report.md"
    path.write_text(text)
    if readme is not None:
        (paths.REPO / "README.md").write_text(readme)
    return path
