"""`make concurrency`: do scenarios give the same results when run side by side?

    python -m vegaskit.cli.concurrency [SCENARIO.toml] [--run R] [--profile P]
                                       [--reps N] [--beside K] [--out DIR]
    python -m vegaskit.cli.concurrency --rerender [--out DIR]

Arm *alone*: the run by itself. Arm *beside*: the same run with K other runs
of the same scenario started at the same moment, each in its own lab with its
own controller instances (cli/results.py --jobs). The measured run is job 1
in both arms, so both load the same instances, and no run traces. Rounds
interleave the arms (alone, beside, alone, ...), so drift in the machine
falls on both. Per repetition, one number per metric; the arms are compared
by the exact permutation test, Holm-adjusted, and the KS distance
(analysis/stats.py). Writes DIR/{report.md, concurrency.json}; the runs' own
files go to build/concurrency/.

The default is the hardest case on this machine kind: the 10 Mbit/s
vegas_pair at its full length, beside three more of itself (the papers' other
links are at most 1 Mbit/s).
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

from vegaskit import paths
from vegaskit.cli import guarded, testbed_ready
from vegaskit.analysis import stats
from vegaskit.testbed import report, runner
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.cliargs import NOT_OURS, OneLineParser

DEFAULT = paths.SCENARIOS / "vegas_pair.toml"
OUT = paths.RESULTS / "concurrency"


def numbers(sm: dict) -> dict[str, float]:
    """What a result of the run is made of: per-flow lifetime throughput and
    RTT p95, Jain, the bottleneck queue, retransmissions, utilisation."""
    out = {}
    for fl in sm["flows"]:
        tag = fl["label"].split(" ")[0]
        out[f"{tag} throughput (bit/s)"] = fl["avg_bps"]
        out[f"{tag} RTT p95 (ms)"] = fl["rtt_p95_ms"]
    out["Jain, lifetime"] = sm["jain_lifetime"]
    out["bottleneck queue mean (pkts)"] = sm["queue_mean_pkts"]
    out["retransmits"] = sm["retransmits"]
    out["utilisation"] = sm["utilisation"]
    return out


def _one(path: str, run: str, profile: str, rep: int, outdir: str, job: int) -> dict:
    r = Scenario.load(path).run(run, profile, rep)
    r.trace = "off"         # both arms alike: what they compare is the runs, not a tracer
    return runner.execute(r, Path(outdir), job=job, plots=False)


def round_beside(pool, s: Scenario, run: str, profile: str, rep: int, others: list[str],
                 out: Path) -> dict:
    futs = [pool.submit(_one, str(s.path), run, profile, rep, str(out / "beside" / f"rep{rep}"), 1)]
    futs += [pool.submit(_one, str(s.path), o, profile, rep, str(out / "others" / f"rep{rep}-{j}"),
                         j + 2) for j, o in enumerate(others)]
    return [f.result() for f in futs][0]


def analyse(alone: list[dict], beside: list[dict]) -> list[dict]:
    a, b = [numbers(s) for s in alone], [numbers(s) for s in beside]
    rows = []
    for k in a[0]:
        xa = [r[k] for r in a if r.get(k) is not None]
        xb = [r[k] for r in b if r.get(k) is not None]
        if len(xa) < 2 or len(xb) < 2:
            continue
        rows.append({"metric": k, "alone": stats.median(xa), "beside": stats.median(xb),
                     "alone_range": [min(xa), max(xa)], "beside_range": [min(xb), max(xb)],
                     "p": stats.permutation_p(xa, xb), "ks": stats.ks_distance(xa, xb)})
    stats.add_holm(rows)
    return rows


def conditions(alone: list[dict], beside: list[dict]) -> str:
    """The condition the runs were made in, from their summaries (testbed/runner.py):
    the machine, the emulators' policy (decision 42), the labs alive at once and how
    often an emulator released a packet 1 ms or more late, per arm."""
    runs = alone + beside
    # the testbed reports' sentence: a run that predates the record ran under the ordinary one
    policy = report.policy_sentence(sum(1 for sm in runs if sm.get("emulator_fifo")), len(runs))

    def late(arm: list[dict]) -> str:
        n = [sm["emulator_late_1ms"] for sm in arm if sm.get("emulator_late_1ms") is not None]
        return f"{stats.median(n):.0f} [{min(n)}, {max(n)}]" if n else "not recorded"

    labs = max((sm.get("labs_alive_max") or 0 for sm in beside), default=0)
    machines = {sm.get("machine") for sm in runs}
    machine = (machines.pop() or "a machine the summaries do not name") \
        if len(machines) == 1 else "machines the summaries do not agree on"
    return (f"Measured on {machine}. {policy} At most {labs} labs were alive at once "
            f"beside. Releases 1 ms or more late per run, median [min, max]: alone "
            f"{late(alone)}, beside {late(beside)}.")


def render(setup: dict, rows: list[dict], command: str, cond: str = "") -> str:
    differ = [r for r in rows if r["p_holm"] < 0.05]
    n = setup["reps"]
    out = ["# Running scenarios side by side", "",
           f"Produced by `{command}`; do not edit by hand. {setup['scenario']} / {setup['run']}, "
           f"profile `{setup['profile']}` ({setup['duration_s']:.0f} s), {n} repetitions alone "
           f"and {n} beside {setup['beside']} other runs of the same scenario "
           f"({', '.join(setup['others'])}) on this {setup['cpus']}-CPU machine, rounds "
           "interleaved. Each repetition gives one number per metric; p is the exact "
           "permutation test of the difference of means, Holm-adjusted over the metrics; KS "
           "is the largest distance between the two empirical distributions." +
           (f" {cond}" if cond else ""), "",
           f"**Verdict: {'the arms differ' if differ else 'no metric differs'}** "
           f"(Holm-adjusted p < 0.05 for {len(differ)} of {len(rows)} metrics; the smallest "
           f"p this test can give with {n} + {n} runs is {stats.min_p(n, n):.4f}).", "",
           "| metric | alone: median [min, max] | beside: median [min, max] | p | p (Holm) | KS |",
           "|---|---|---|---|---|---|"]
    def g4(v: float) -> str:            # four digits; whole numbers, not 4.819e+06
        return f"{v:,.0f}" if abs(v) >= 9999.5 else f"{v:.4g}"
    for r in rows:
        out.append(f"| {r['metric']} | {g4(r['alone'])} [{g4(r['alone_range'][0])}, "
                   f"{g4(r['alone_range'][1])}] | {g4(r['beside'])} [{g4(r['beside_range'][0])}, "
                   f"{g4(r['beside_range'][1])}] | {r['p']:.3g} | {r['p_holm']:.3g} | "
                   f"{r['ks']:.2f} |")
    out += ["", "What it decides: `make results JOBS=N` runs N scenario runs at once. It is "
            "offered for N up to 1 + the number of others here only when no metric differs. "
            "These runs were untraced, in both arms.",
            "", f"Wall time: alone {setup['wall_alone_s']:.0f} s, beside "
            f"{setup['wall_beside_s']:.0f} s for the same {n} measured runs.", ""]
    return "\n".join(out)


COMMAND = "sudo make concurrency"


def rerender(out: Path) -> int:
    try:
        d = json.loads((out / "concurrency.json").read_text())
        text = render(d["setup"], d["rows"], COMMAND, conditions(d["alone"], d["beside"]))
        (out / "report.md").write_text(text)
    except (OSError, ValueError, *NOT_OURS) as e:
        print(f"concurrency: cannot rerender from {out / 'concurrency.json'}: {e}",
              file=sys.stderr)
        return 2
    print(f"report: {out / 'report.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.concurrency",
                       description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--run", default="vegas")
    ap.add_argument("--profile", default="full")
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--beside", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--rerender", action="store_true",
                    help="write report.md again from OUT/concurrency.json, running nothing")
    a = ap.parse_args(argv)
    if a.rerender:
        return rerender(a.out)
    try:
        s = Scenario.load(a.scenario)
        s.run(a.run, a.profile)
        others = [n for n in s.profile_runs(a.profile) if n != a.run] or [a.run]
        others = (others * a.beside)[:a.beside]
        for o in others:
            s.run(o, a.profile)
    except ScenarioError as e:
        print(f"concurrency: {e}", file=sys.stderr)
        return 2
    if not 2 <= a.reps <= 50 or not 1 <= a.beside <= 8:
        print("concurrency: --reps must be 2 to 50 and --beside 1 to 8", file=sys.stderr)
        return 2
    if rc := testbed_ready("concurrency"):
        return rc
    raw = paths.BUILD / "concurrency"      # per-run files: tens of MB, not for git
    alone, beside, wall = [], [], {"alone": 0.0, "beside": 0.0}

    def study() -> None:
        with cf.ProcessPoolExecutor(1 + a.beside, mp_context=mp.get_context("fork")) as pool:
            for rep in range(a.reps):
                t = time.monotonic()
                alone.append(pool.submit(_one, str(s.path), a.run, a.profile, rep,
                                         str(raw / "alone" / f"rep{rep}"), 1).result())
                wall["alone"] += time.monotonic() - t
                t = time.monotonic()
                beside.append(round_beside(pool, s, a.run, a.profile, rep, others, raw))
                wall["beside"] += time.monotonic() - t
                print(f"round {rep}: alone Jain {alone[-1]['jain_lifetime']}, beside Jain "
                      f"{beside[-1]['jain_lifetime']}", flush=True)

    if (rc := guarded("concurrency", study)[1]):
        return rc
    rows = analyse(alone, beside)
    setup = {"scenario": s.name, "run": a.run, "profile": a.profile, "reps": a.reps,
             "beside": a.beside, "others": others, "cpus": os.cpu_count(),
             "duration_s": alone[0]["duration_s"], "wall_alone_s": wall["alone"],
             "wall_beside_s": wall["beside"]}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "concurrency.json").write_text(json.dumps(
        {"setup": setup, "rows": rows, "alone": alone, "beside": beside}, indent=1) + "\n")
    (a.out / "report.md").write_text(render(setup, rows, COMMAND, conditions(alone, beside)))
    print(f"report: {a.out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
