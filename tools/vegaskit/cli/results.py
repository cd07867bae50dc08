"""`make results`: run scenarios and write their reports.

    python -m vegaskit.cli.results SCENARIO.toml... [--profile ci|full] [--run NAME]... [--out DIR]

Runs each scenario's runs (all, or those named) on a namespace dumbbell and
writes DIR/<scenario>/<profile>/<run>/ plus DIR/<scenario>/<profile>/report.md.
Needs root and a build (make). Ctrl-C stops cleanly: nothing is left behind.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.testbed import report, runner
from vegaskit.testbed.scenario import Scenario, ScenarioError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vegaskit.cli.results", description=__doc__.split("\n")[1])
    ap.add_argument("scenarios", nargs="+", type=Path)
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--run", action="append", dest="runs", help="only this run (repeatable)")
    ap.add_argument("--out", type=Path, default=paths.RESULTS)
    ap.add_argument("--rerender", action="store_true",
                    help="rewrite report.md from the runs' summaries.json, running nothing")
    a = ap.parse_args(argv)
    try:
        scenarios = [Scenario.load(p) for p in a.scenarios]
        plans = []
        for s in scenarios:
            if a.profile not in s.profiles:
                raise ScenarioError(f"{s.name}: no profile '{a.profile}' ({', '.join(s.profiles)})")
            names = a.runs or s.profile_runs(a.profile)
            plans.append((s, [s.run(n, a.profile) for n in names]))
    except ScenarioError as e:
        print(f"testbed: {e}", file=sys.stderr)
        return 2
    if a.rerender:
        for s, _ in plans:
            base = a.out / s.name / a.profile
            summaries = json.loads((base / "summaries.json").read_text())
            cmd = f"sudo make results PROFILE={a.profile} SCENARIOS={s.path.name}"
            print(report.write(s, a.profile, summaries, base, cmd))
        return 0
    if os.geteuid() != 0:
        print("testbed: must be run as root (namespaces, BPF): try sudo", file=sys.stderr)
        return 1
    try:
        for s, runs in plans:
            base = a.out / s.name / a.profile
            summaries = []
            for run in runs:
                print(f"== {s.name} / {run.name} ({a.profile}, {run.duration:.0f} s)", flush=True)
                sm = runner.execute(run, base / run.name)
                summaries.append(sm)
                flows = ", ".join(f"{f['label']} {f['second_half_bps'] / 1e6:.3f} Mbit/s "
                                  f"retx {f['retransmits']}" for f in sm["flows"])
                print(f"   {flows}; Jain {sm['jain']}; queue mean {sm['queue_mean_pkts']} "
                      f"p95 {sm['queue_p95_pkts']} pkts", flush=True)
            if not a.runs:
                cmd = f"sudo make results PROFILE={a.profile} SCENARIOS={s.path.name}"
                path = report.write(s, a.profile, summaries, base, cmd)
                (base / "summaries.json").write_text(json.dumps(summaries, indent=1) + "\n")
                print(f"   report: {path}", flush=True)
    except KeyboardInterrupt:
        print("testbed: interrupted; everything it started was removed", file=sys.stderr)
        return 130
    except RuntimeError as e:           # a controller or tool refused: its reason, one line
        print(f"testbed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
