"""make vegas-plus: bpf_vegas_plus and the controllers it is compared with, in
every case of issue 17 on every network (docs/DESIGN.md §7.3), repeated, then
results/vegas_plus/report.md.

    python -m vegaskit.cli.vegas_plus [--case K] [--net K] [--cc K] [--reps N]
                                      [--jobs N] [--trace-all] [--out DIR] [--rerender]

--cc also takes vegas_plus's ablations (cases.ABLATIONS), and --case the cases that fix
the start order (cubic_ahead, cubic_behind, reno_ahead, reno_behind); each runs only
when named.
"""
from __future__ import annotations

import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.cli import guarded, testbed_ready
from vegaskit.proc import sigterm_unwinds
from vegaskit.testbed import leftovers, runner
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.vegasplus import cases, report

from . import results
from vegaskit.cliargs import NOT_OURS, OneLineParser, env_number

COMMAND = ("sudo make vegas-plus (CASES=... NETS=... CCS=... rerun only those; "
           "python -m vegaskit.cli.vegas_plus --rerender rewrites the report)")


def _pick(given: list[str] | None, known: dict, what: str) -> list[str]:
    bad = [k for k in given or [] if k not in known]
    if bad:
        raise ScenarioError(f"no {what} {bad[0]!r} ({what}s: {', '.join(known)})")
    return given or list(known)


def pick_ccs(given: list[str] | None) -> list[str]:
    """The controllers to run: those named (an ablation too), or every one of CCS."""
    return _pick(given, {**cases.CCS, **cases.ABLATIONS}, "controller") if given \
        else list(cases.CCS)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.vegas_plus",
                       description=__doc__.split("\n")[0])
    ap.add_argument("--case", action="append", dest="cases", help="only this case (repeatable)")
    ap.add_argument("--net", action="append", dest="nets", help="only this network (repeatable)")
    ap.add_argument("--cc", action="append", dest="ccs", help="only this controller (repeatable)")
    ap.add_argument("--reps", type=int, default=cases.REPS)
    ap.add_argument("--jobs", type=int, default=env_number("JOBS", 1, tag="vegas-plus"),
                    help="runs at once (default 1); each run's first repetition is traced")
    ap.add_argument("--trace-all", action="store_true",
                    help="trace every repetition, not only the first")
    ap.add_argument("--out", type=Path, default=paths.RESULTS)
    ap.add_argument("--rerender", action="store_true", help="rewrite the report, running nothing")
    a = ap.parse_args(argv)
    base = a.out / "vegas_plus"
    try:
        sel_cases = _pick(a.cases, cases.CASES, "case") if a.cases else cases.DEFAULT_CASES
        sel_nets = _pick(a.nets, cases.NETS, "network")
        sel_ccs = pick_ccs(a.ccs)
    except ScenarioError as e:
        print(f"vegas-plus: {e}", file=sys.stderr)
        return 2
    if not 1 <= a.reps <= 100 or not 1 <= a.jobs <= 16:
        print("vegas-plus: --reps must be 1 to 100 and --jobs 1 to 16", file=sys.stderr)
        return 2
    if a.rerender:
        if not any(base.glob(f"vp_*/{report.PROFILE}/summaries.json")):
            print(f"vegas-plus: {base}: no runs to render", file=sys.stderr)
            return 2
        try:
            print(report.write(base, COMMAND))
        except (OSError, ValueError) as e:      # ValueError: JSON that does not parse
            print(f"vegas-plus: --rerender: {e}", file=sys.stderr)
            return 2
        except NOT_OURS as e:
            print(f"vegas-plus: --rerender: a run's JSON under {base} is not the runner's "
                  f"(a field missing or of the wrong kind: {e!r})", file=sys.stderr)
            return 2
        return 0
    if a.reps != cases.REPS and a.out.resolve() == paths.RESULTS.resolve():
        print(f"vegas-plus: --reps {a.reps} would mix with the report's {cases.REPS}: "
              "give --out DIR", file=sys.stderr)
        return 2
    if rc := testbed_ready("vegas-plus"):
        return rc
    files = cases.write_scenarios(base / "scenarios", sel_cases, sel_nets)
    plans = [(Scenario.load(p), sel_ccs) for p in files]
    try:
        for s, names in plans:
            for n in names:
                runner.check_controllers(s.run(n, report.PROFILE), job=1 if a.jobs > 1 else 0)
    except (RuntimeError, ScenarioError) as e:
        print(f"vegas-plus: {e}", file=sys.stderr)
        return 2
    if (warn := leftovers.budget_warning(a.jobs)):
        print(f"vegas-plus: {warn}", file=sys.stderr)
    sigterm_unwinds()
    _, rc = guarded("vegas-plus", lambda: results.execute(
        plans, report.PROFILE, base, a.reps, a.jobs, whole=sel_ccs == list(cases.CCS),
        trace_all=a.trace_all))
    if rc:
        return rc
    try:
        print(f"   report: {report.write(base, COMMAND)}", flush=True)
    except (OSError, ValueError) as e:      # the runs are kept: --rerender after the fix
        print(f"vegas-plus: the report: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
