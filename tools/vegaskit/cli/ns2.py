"""Replay the scenarios' runs in ns-2 with its agents and ours; write results/ns2/report.md.

    python -m vegaskit.cli.ns2 [SCENARIO.toml ...] [--profile full] [--variant V ...]
                               [--run R ...] [--reps N] [--jobs N] [--out results]
                               [--rerender]

Every scenario by default (not the demo or the model-validation ones), every
variant (ns2/script.py), every run of the profile (--run: only those, the
others' stored summaries kept, as make results RUNS= does), the profile's
repetitions. Runs with Vegas-A or PIPE
need the ns `make ns2` builds with our agents, checked first (ns2/check.py).
Needs no root: ns-2 is a simulator, nothing touches the host's network.
"""
from __future__ import annotations

import concurrent.futures as cf
import ctypes
import json
import os
import signal
import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.ns2 import check, report, script, sim
from vegaskit.ns2.agents import Unmapped
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.cliargs import NOT_OURS, OneLineParser

COMMAND_ONE = "make ns2 SCENARIOS={}"
COMMAND = "make ns2 (SCENARIOS=... NS2_VARIANTS=... RUNS=... rerun only those; python -m vegaskit.cli.ns2 --rerender rewrites the report)"


def default_scenarios() -> list[Path]:
    return [p for p in sorted(paths.SCENARIOS.glob("*.toml"))
            if p.name != "demo.toml" and not p.name.startswith("model_validation")]


def plan(s: Scenario, profile: str, reps: int | None,
         only: list[str] | None = None) -> tuple[list, dict[str, str], bool]:
    """The (run, rep) pairs ns-2 can replay (of the runs `only` names, if given), why
    each other run cannot, and whether one of the replayable runs has one of our
    agents (tools/ns2agent)."""
    todo, unmapped, ours = [], {}, False
    for name in s.profile_runs(profile):
        if only and name not in only:
            continue
        try:
            agents = script.agents(s.run(name, profile))
        except Unmapped as e:
            unmapped[name] = str(e)
            continue
        ours = ours or any(ag.ours for ag in agents)
        todo += [(name, rep) for rep in range(reps or s.reps(profile))]
    return todo, unmapped, ours


def _die_with_parent(parent: int) -> None:
    """Pool workers end when the command does, even by SIGKILL (prctl PR_SET_PDEATHSIG),
    and each ns ends with its worker (sim.py), so nothing outlives a killed run."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    if os.getppid() != parent:          # the command died before the line above
        os._exit(1)


def _one(path: str, run: str, profile: str, rep: int, variant: str) -> dict:
    s = Scenario.load(path)
    return sim.simulate(s.run(run, profile, rep), script.VARIANTS[variant])


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.ns2",
                       description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="*", type=Path)
    ap.add_argument("--profile", default="full")
    ap.add_argument("--variant", action="append", dest="variants",
                    help=f"one of {', '.join(script.VARIANTS)} (repeatable; default "
                         f"{', '.join(script.DEFAULT)})")
    ap.add_argument("--run", action="append", dest="runs",
                    help="replay only this run (repeatable); the others' summaries stay")
    ap.add_argument("--reps", type=int, help="repetitions (default: the profile's)")
    ap.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 64))
    ap.add_argument("--rerender", action="store_true",
                    help="rewrite the report from the stored summaries, simulating nothing")
    ap.add_argument("--out", dest="out", type=Path, default=paths.RESULTS,
                    help="results directory: ns-2's go to OUT/ns2, Linux's are read from OUT")
    a = ap.parse_args(argv)
    variants = a.variants or script.DEFAULT
    bad = [v for v in variants if v not in script.VARIANTS]
    if bad:
        print(f"ns2: no variant {bad[0]!r} (variants: {', '.join(script.VARIANTS)})",
              file=sys.stderr)
        return 2
    if a.reps is not None and not 1 <= a.reps <= 100:
        print("ns2: --reps must be 1 to 100", file=sys.stderr)
        return 2
    if not 1 <= a.jobs <= 64:
        print("ns2: --jobs must be 1 to 64", file=sys.stderr)
        return 2
    try:
        scenarios = [Scenario.load(p) for p in (a.scenarios or default_scenarios())]
        for s in scenarios:
            if a.profile not in s.profiles:
                raise ScenarioError(f"{s.name}: no profile '{a.profile}' ({', '.join(s.profiles)})")
        if a.runs:
            known = {n for s in scenarios for n in s.profile_runs(a.profile)}
            if missing := [r for r in a.runs if r not in known]:
                raise ScenarioError(f"no run {missing[0]!r} in profile {a.profile!r} of "
                                    f"{', '.join(s.name for s in scenarios)}")
        plans = [(s, *plan(s, a.profile, a.reps, a.runs)) for s in scenarios]
        if a.runs and (bad := [(r, why) for _, _, unmapped, _ in plans
                               for r, why in unmapped.items()]):
            raise ScenarioError(f"run {bad[0][0]!r} cannot be replayed: {bad[0][1]}")
    except (ScenarioError, RuntimeError) as e:
        print(f"ns2: {e}", file=sys.stderr)
        return 2
    if not a.rerender and sim.available() is None:
        print("ns2: ns-2 is not installed (make deps installs Debian's ns2)", file=sys.stderr)
        return 1
    out = a.out / "ns2"
    try:
        # our ns serves our agents and our knobs (Variant.needs_our_ns)
        if not a.rerender and (any(ours for *_, ours in plans)
                               or any(script.VARIANTS[v].needs_our_ns for v in variants)):
            if not sim.BUILT.exists():
                raise RuntimeError(f"{sim.BUILT} is not built: make ns2 builds it")
            check.run()
        for s, todo, _, _ in ([] if a.rerender else plans):
            store = out / s.name / "summaries.json"
            new = simulate_all(s, todo, variants, a.profile, a.jobs)
            # a rerun of some variants (of some runs) replaces only theirs
            kept = [sm for sm in (json.loads(store.read_text()) if store.exists() else [])
                    if sm["variant"] not in variants or (a.runs and sm["run"] not in a.runs)]
            store.parent.mkdir(parents=True, exist_ok=True)
            store.write_text(json.dumps(sorted(kept + new, key=_order), indent=1) + "\n")
    except KeyboardInterrupt:
        print("ns2: interrupted", file=sys.stderr)
        return 130
    except RuntimeError as e:
        print(f"ns2: {e}", file=sys.stderr)
        return 1
    try:
        path = write_report(a.out, a.profile, [s.path for s in scenarios])
    except (ScenarioError, OSError, ValueError) as e:
        print(f"ns2: {e}", file=sys.stderr)
        return 2
    except NOT_OURS as e:
        if not a.rerender:              # after a fresh run the summaries are ours: a bug
            raise
        print(f"ns2: a summaries.json under {a.out} is not ns2's (a field missing or of the "
              f"wrong kind: {e!r})", file=sys.stderr)
        return 2
    print(path)
    return 0


def _order(sm: dict) -> tuple:
    return (sm["run"], list(script.VARIANTS).index(sm["variant"]), sm["rep"])


def write_report(results: Path, profile: str, named: list[Path]) -> Path:
    """OUT/ns2/report.md from the stored ns-2 summaries of every default scenario
    and of those named: a rerun of some scenarios keeps the others' sections."""
    out = results / "ns2"
    sections, seen = [], set()
    paths_ = list(dict.fromkeys(p.resolve() for p in [*default_scenarios(), *named]))
    for s in sorted((Scenario.load(p) for p in paths_), key=lambda s: s.name):
        store = out / s.name / "summaries.json"
        if not store.exists():
            continue
        summaries = json.loads(store.read_text())
        variants = [v for v in script.VARIANTS if any(sm["variant"] == v for sm in summaries)]
        seen.update(variants)
        todo, unmapped, _ = plan(s, profile, 1)
        # runs with an agent that the stored summaries lack (an agent added since they ran)
        pending = sorted({r for r, _ in todo} - {sm["run"] for sm in summaries})
        sections.append(report.section(s, summaries, unmapped, results / s.name / profile,
                                       variants, pending, COMMAND_ONE.format(s.path.name)))
    if not sections:
        raise ValueError(f"no ns-2 summaries under {out}")
    path = out / "report.md"
    path.write_text(report.render(sections, [v for v in script.VARIANTS if v in seen], COMMAND))
    return path


def simulate_all(s: Scenario, todo: list, variants: list[str], profile: str,
                 jobs: int) -> list[dict]:
    jobs_ = [(str(s.path), run, profile, rep, v) for run, rep in todo for v in variants
             if script.VARIANTS[v].changes(script.agents(s.run(run, profile)))]
    with cf.ProcessPoolExecutor(max_workers=jobs, initializer=_die_with_parent,
                                initargs=(os.getpid(),)) as pool:
        done = list(pool.map(_one, *zip(*jobs_))) if jobs_ else []
    print(f"   {s.name}: {len(done)} ns-2 runs", flush=True)
    return sorted(done, key=lambda x: (x["run"], x["variant"], x["rep"]))


if __name__ == "__main__":
    sys.exit(main())
