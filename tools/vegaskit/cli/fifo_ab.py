"""`make fifo-ab`: does SCHED_FIFO for the link emulators change the testbed's results?

    python -m vegaskit.cli.fifo_ab [SCENARIO.toml] [--run R] [--profile P]
                                   [--rounds N] [--jobs J] [--prio P] [--out DIR]

Decision 42 (docs/DESIGN.md §7.1) rests on this. Arm *ordinary*: every emulator
under the ordinary policy. Arm *fifo*: every emulator asleep under SCHED_FIFO at
priority P (VK_LINKEMU_FIFO=P). A round is a batch of J runs of the same run at
once (job 1..J, untraced, each in its own lab), which is how `make results
JOBS=J` loads the host; rounds alternate the arms (ordinary, fifo, ordinary, ...)
so drift in the machine falls on both.

The unit is the round, not the run: the J runs of a batch share the host's busy
moments (analysis/stalls.py), so they are not independent. Each round gives the
median of its runs per metric; the arms are compared by the exact permutation test
of the difference of means over rounds, Holm-adjusted across the metrics
(analysis/stats.py), and each arm's figure is the median of its runs with a
distribution-free 95% interval. Writes DIR/{report.md, fifo_ab.json}; the runs'
own files go to build/fifo_ab/.

The default is the case the decision was taken on: Vegas-A alone at 10 Mbit/s
(single_vegas, ci profile, 15 s), which reads the emulator's stalls as queue.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path

from vegaskit import cpustat, paths
from vegaskit.analysis import stats
from vegaskit.cli import concurrency, guarded, testbed_ready
from vegaskit.cli.results import source_commit
from vegaskit.testbed.linkemu import FIFO_PRIORITY
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.cliargs import OneLineParser

DEFAULT = paths.SCENARIOS / "single_vegas.toml"
OUT = paths.RESULTS / "fifo"
ARMS = ("ordinary", "fifo")


def numbers(sm: dict) -> dict[str, float]:
    """One run's figures: the emulator's timing and what the flows made of it."""
    out = {"releases 1 ms late": sm["emulator_late_1ms"],
           "latest release (ms)": sm["emulator_late_max_ms"],
           "latest release, first 5 s of a flow (ms)": sm["emulator_late_early_max_ms"],
           "bottleneck queue mean (pkts)": sm["queue_mean_pkts"],
           "utilisation": sm["utilisation"],
           "retransmits": sm["retransmits"]}
    for fl in sm["flows"]:
        out[f"{fl['label'].split(' ')[0]} RTT p95 (ms)"] = fl["rtt_p95_ms"]
    return out


def _one(path: str, run: str, profile: str, rep: int, outdir: str, job: int, prio: int) -> dict:
    # A forked worker: the policy travels in its own environment (linkemu.fifo_priority).
    os.environ["VK_LINKEMU_FIFO"] = str(prio)
    return concurrency._one(path, run, profile, rep, outdir, job)


def batch(pool, s: Scenario, run: str, profile: str, rnd: int, jobs: int, prio: int,
          raw: Path) -> list[dict]:
    """One round: `jobs` repetitions at once, each with its own seed."""
    arm = ARMS[bool(prio)]
    futs = [pool.submit(_one, str(s.path), run, profile, rnd * jobs + j,
                        str(raw / arm / f"round{rnd}-{j}"), j + 1, prio) for j in range(jobs)]
    runs = [f.result() for f in futs]
    for sm in runs:     # the policy each emulator actually ran under, not the one asked for
        if bool(sm.get("emulator_fifo")) != bool(prio):
            raise RuntimeError(f"a run of the {arm} arm recorded emulator_fifo="
                               f"{sm.get('emulator_fifo')}")
    return runs


def analyse(rounds: dict[str, list[list[dict]]]) -> list[dict]:
    rows = []
    per_run = {arm: [[numbers(sm) for sm in rnd] for rnd in rounds[arm]] for arm in ARMS}
    for k in per_run["ordinary"][0][0]:
        row = {"metric": k}
        for arm in ARMS:    # a figure a run lacks (no flow in its first 5 s) is left out
            row[f"{arm}_rounds"] = [statistics.median(v) for rnd in per_run[arm]
                                    if (v := [r[k] for r in rnd if r.get(k) is not None])]
        if min(len(row["ordinary_rounds"]), len(row["fifo_rounds"])) < 2:
            continue
        for arm in ARMS:
            row[arm] = stats.median_summary([r[k] for rnd in per_run[arm] for r in rnd
                                             if r.get(k) is not None])
        row["p"] = stats.permutation_p(row["ordinary_rounds"], row["fifo_rounds"])
        rows.append(row)
    stats.add_holm(rows)
    return rows


def _fmt(iv: dict) -> str:
    return f"{iv['median']:.4g} [{iv['low']:.4g}, {iv['high']:.4g}]"


def render(setup: dict, rows: list[dict], command: str) -> str:
    differ = [r["metric"] for r in rows if r["p_holm"] < 0.05]
    n, j = setup["rounds"], setup["jobs"]
    out = ["# SCHED_FIFO for the link emulators: the testbed with and without it", "",
           f"Produced by `{command}`; do not edit by hand. {setup['scenario']} / "
           f"{setup['run']}, profile `{setup['profile']}` ({setup['duration_s']:.0f} s), on "
           f"this {setup['cpus']}-CPU machine (kernel {setup['kernel']}), source commit "
           f"{setup['commit']}. Arm *ordinary*: the emulators under the ordinary policy; arm "
           f"*fifo*: asleep under SCHED_FIFO at priority {setup['prio']} (VK_LINKEMU_FIFO; "
           "the busy-poll before a release stays ordinary). A round is "
           f"{j} runs at once, as `make results JOBS={j}` loads the host; {n} rounds an arm, "
           "alternated.", "",
           "Each arm's figure is the median of its runs with a distribution-free 95% "
           f"interval ({n * j} runs). The test takes the round as its unit, since the runs of "
           "a round share the host's busy moments: p is the exact permutation test of the "
           "difference of the means of the rounds' medians, Holm-adjusted over the metrics "
           f"(the smallest p it can give with {n} + {n} rounds is "
           f"{stats.min_p(n, n):.4f}).", "",
           f"**Verdict: {'the arms differ in ' + ', '.join(differ) if differ else 'no metric differs'}** "
           f"(Holm-adjusted p < 0.05 for {len(differ)} of {len(rows)} metrics).", "",
           "| metric | ordinary: median [95% interval] | fifo: median [95% interval] | p | "
           "p (Holm) |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['metric']} | {_fmt(r['ordinary'])} | {_fmt(r['fifo'])} | "
                   f"{r['p']:.3g} | {r['p_holm']:.3g} |")
    out += ["", f"Host: steal time {setup['steal_pct']:.2f}% of the CPU over the "
            f"{setup['wall_s'] / 60:.0f} minutes of the study (/proc/stat); labs alive at once "
            f"{setup['labs_max']} at most.", "",
            "What it decides (decision 42): whether the testbed's emulators should sleep "
            "under SCHED_FIFO by default. This study says what the policy does to the "
            "runs; the test suite under each policy says what it does to the rest of the "
            "host.", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.fifo_ab",
                       description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--run", default="vegas_a")
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--prio", type=int, default=FIFO_PRIORITY)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    try:
        s = Scenario.load(a.scenario)
        s.run(a.run, a.profile)
    except ScenarioError as e:
        print(f"fifo_ab: {e}", file=sys.stderr)
        return 2
    if not 2 <= a.rounds <= 12 or not 1 <= a.jobs <= 8 or not 1 <= a.prio <= 99:
        print("fifo_ab: --rounds must be 2 to 12, --jobs 1 to 8 and --prio 1 to 99",
              file=sys.stderr)
        return 2
    if rc := testbed_ready("fifo_ab"):
        return rc
    raw = paths.BUILD / "fifo_ab"      # per-run files: tens of MB, not for git
    rounds: dict[str, list[list[dict]]] = {arm: [] for arm in ARMS}
    cpu0, t0, commit = cpustat.now(), time.monotonic(), source_commit()

    def study() -> None:
        with cf.ProcessPoolExecutor(a.jobs, mp_context=mp.get_context("fork")) as pool:
            for rnd in range(a.rounds):
                for prio in (0, a.prio):
                    runs = batch(pool, s, a.run, a.profile, rnd, a.jobs, prio, raw)
                    rounds[ARMS[bool(prio)]].append(runs)
                    print(f"round {rnd} {ARMS[bool(prio)]}: queue "
                          f"{[sm['queue_mean_pkts'] for sm in runs]}, late releases "
                          f"{[sm['emulator_late_1ms'] for sm in runs]}", flush=True)

    if (rc := guarded("fifo_ab", study)[1]):
        return rc
    cpu1 = cpustat.now()
    rows = analyse(rounds)
    every = [sm for arm in ARMS for rnd in rounds[arm] for sm in rnd]
    setup = {"scenario": s.name, "run": a.run, "profile": a.profile, "rounds": a.rounds,
             "jobs": a.jobs, "prio": a.prio, "cpus": os.cpu_count(),
             "kernel": os.uname().release, "commit": commit,
             "duration_s": every[0]["duration_s"], "wall_s": time.monotonic() - t0,
             "steal_pct": 100 * (cpu1.steal - cpu0.steal) / max(1, cpu1.total - cpu0.total),
             "labs_max": max(sm.get("labs_alive_max") or 0 for sm in every)}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "fifo_ab.json").write_text(json.dumps(
        {"setup": setup, "rows": rows, "rounds": rounds}, indent=1) + "\n")
    (a.out / "report.md").write_text(render(setup, rows, "sudo make fifo-ab"))
    print(f"report: {a.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
