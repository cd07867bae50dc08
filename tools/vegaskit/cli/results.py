"""`make results`: run scenarios, repeated, and write their reports and the index.

    python -m vegaskit.cli.results SCENARIO.toml... [--profile ci|full] [--run NAME]...
                                   [--reps N] [--jobs N] [--out DIR]
    python -m vegaskit.cli.results SCENARIO.toml... --rerender   (runs nothing)

Runs each scenario's runs (all, or those named) `reps` times (the profile's,
or --reps) on namespace dumbbells and writes DIR/<scenario>/<profile>/<run>/
(rep<k>/ when repeated), DIR/<scenario>/<profile>/report.md and, for the full
profile, the index DIR/README.md. Runs named with --run replace those runs'
earlier repetitions in summaries.json and the report, the rest kept; with a
--reps other than the profile's they are written but not merged. Each
summary records the commit it ran from. --jobs N runs up to N at once (each with
its own controller instances, traced like a run alone: docs/DESIGN.md §7.1 says
when that leaves results unchanged). Needs root and a build (make). Ctrl-C stops
cleanly: nothing is left behind.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.cli import guarded, testbed_ready
from vegaskit.proc import sigterm_unwinds
from vegaskit.testbed import index, iperf, leftovers, report, runner
from vegaskit.testbed.scenario import SLOT_LABELS, Scenario, ScenarioError, job_suffix
from vegaskit.cliargs import NOT_OURS, OneLineParser, env_number

INDEX_PROFILE = "full"


def source_commit() -> str:
    """The checkout's commit, "+" when its tracked files differ from it: the
    code a run came from, recorded in its summary (reports merge reruns)."""
    try:
        head = subprocess.run(["git", "-C", str(paths.REPO), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(paths.REPO), "diff", "--quiet", "HEAD", "--",
                                "bpf", "loader", "tools", "netns-tests/scenarios"]).returncode
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + {0: "", 1: "+"}.get(dirty, "?")


def merged(base: Path, names: list[str], new: list[dict], scenario: Scenario | None = None,
           profile: str = "") -> list[dict]:
    """A partial rerun's summaries in place of those runs' old ones."""
    old = base / "summaries.json"
    # the replaced runs are left out before the backfill: their directories now hold
    # the rerun's repetitions, which an old summary (another t0) would misread
    kept = backfill(base, [sm for sm in json.loads(old.read_text()) if sm["run"] not in names],
                    scenario, profile) if old.exists() else []
    return sorted(kept + new, key=lambda x: (x["run"], x["rep"]))


def backfill(base: Path, summaries: list[dict], scenario: Scenario | None = None,
             profile: str = "") -> list[dict]:
    """backfilled(), each repetition's summary.json rewritten with its figures."""
    summaries, files = backfilled(base, summaries, scenario, profile)
    for path, text in files:
        path.write_text(text)
    return summaries


def backfilled(base: Path, summaries: list[dict], scenario: Scenario | None = None,
               profile: str = "") -> tuple[list[dict], list[tuple[Path, str]]]:
    """Figures added to the summaries since a run was made, from its own files
    (runner.fill_rtt_min from flows.csv, runner.fill_decisions from trace.csv, and
    with the scenario runner.fill_window_check from flows.csv and the run's path),
    and the repetitions' summary.json files that must change to hold them, as
    (path, text), written by the caller: a rerender writes nothing before every
    report has rendered."""
    reps = max(reps_of(summaries), default=1)
    files = []
    for sm in summaries:
        d = rundir(base, sm["run"], sm.get("rep", 0), reps)     # pre-§7.1 runs: one, no rep
        run = None
        if scenario is not None and sm["run"] in scenario.run_names:
            try:
                run = scenario.run(sm["run"], profile, sm.get("rep", 0))
            except ScenarioError:       # the profile or run changed since: left unchecked
                pass
        added = [k for k, fill in (("rtt_min_ms", runner.fill_rtt_min),
                                   ("decisions", runner.fill_decisions)) if fill(sm, d)]
        checked = runner.fill_window_check(sm, d, run)
        if checked:
            added += runner.WINDOW_KEYS
        if (d / "summary.json").exists():
            # also when only the file differs: the figures the report shows are the ones
            # the repetition's own file keeps (merged() once backfilled a replaced run's
            # old summaries into the rerun's directories, writing decisions read with
            # the old t0 into the new files)
            keys = set(added) | {"decisions"}
            one = json.loads((d / "summary.json").read_text())
            flows = [{**fl, **{k: sm["flows"][i][k] for k in keys if k in sm["flows"][i]}}
                     for i, fl in enumerate(one["flows"])]
            if added or flows != one["flows"]:
                one["flows"] = flows
                if checked:
                    one["impossible_windows"] = sm["impossible_windows"]
                files.append((d / "summary.json", json.dumps(one, indent=1) + "\n"))
    return summaries, files


def reps_of(summaries: list[dict]) -> set[int]:
    """How many repetitions each run has: one value when the series agree."""
    runs: dict[str, int] = {}
    for sm in summaries:
        runs[sm["run"]] = runs.get(sm["run"], 0) + 1
    return set(runs.values())


def rundir(base: Path, run: str, rep: int, reps: int) -> Path:
    return base / run / f"rep{rep}" if reps > 1 else base / run


# The batch's stop flag, in a worker (set by _worker_init).
_STOP = None


def claim_slot() -> tuple[int, int]:
    """A job slot no other run on this host holds, this batch's or another's, and
    whose instance names nothing has registered (a batch that predates slots)."""
    def in_use(n: int) -> bool:
        return any(name.endswith(job_suffix(n)) for name in runner.registered())
    return leftovers.claim_slot(len(SLOT_LABELS), in_use)


def run_one(path: Path, run: str, profile: str, rep: int, outdir: Path,
            commit: str, trace_all: bool = False, edit=None) -> dict | None:
    """One repetition of one run, in a worker process when jobs > 1; None if
    the batch was stopped before it began. edit(run) -> run, if given, changes
    the run first (a picklable callable: model_validation's families)."""
    if _STOP is not None:
        # armed before the flag is read: the parent sets the flag, then signals
        _arm(_interrupt_once)
        if _STOP.is_set():
            return None
    job, held = claim_slot() if _STOP is not None else (0, -1)
    try:
        r = Scenario.load(path).run(run, profile, rep)
        if edit:
            r = edit(r)
        if rep and not trace_all:   # the first repetition's trace illustrates the run
            r.trace = "off"
        try:
            sm = runner.execute(r, outdir, job=job, plots=rep == 0)
        except iperf.FlowFailed as e:
            # A flow's iperf3 can die when the kernel defect of docs/DESIGN.md §10.2
            # floods its path: the repetition is made once more, and its report says so.
            print(f"   {run} rep {rep}: {e}; made once more", flush=True)
            shutil.rmtree(outdir, ignore_errors=True)      # runner.execute makes it again
            sm = runner.execute(r, outdir, job=job, plots=rep == 0)
            sm["made_again_after"] = str(e)
        sm["commit"] = commit
        (outdir / "summary.json").write_text(json.dumps(sm, indent=1) + "\n")
        return sm
    finally:
        if held >= 0:
            os.close(held)
        if _STOP is not None:
            _arm(signal.SIG_IGN)


def _line(sm: dict) -> str:
    flows = ", ".join(f"{f['label']} {f['avg_bps'] / 1e6:.3f} Mbit/s retx {f['retransmits']}"
                      for f in sm["flows"])
    return (f"   {sm['run']} rep {sm['rep']}: {flows}; Jain {sm['jain_lifetime']}; deepest queue "
            f"{sm['deepest_queue_link']} {sm['links'][sm['deepest_queue_link']]['queue_mean_pkts']} pkts")


def command(profile: str, scenario: Path | None = None) -> str:
    what = f" SCENARIOS={scenario.name}" if scenario else ""
    return f"sudo make results PROFILE={profile}{what}"


def _arm(handler) -> None:
    """A worker's SIGINT and SIGTERM (from the parent, or a terminal's or a
    CI runner's to the whole group)."""
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def _interrupt_once(signum, frame):
    """The first signal ends the run under way; further ones (the parent
    passes Ctrl-C on) are ignored, so they cannot cut its cleanup short."""
    _arm(signal.SIG_IGN)
    raise KeyboardInterrupt


def _worker_init(stop):
    """A worker takes a signal only while a run is under way (run_one): one
    waiting for its next run has nothing to remove, and the flag stops it."""
    global _STOP
    _STOP = stop
    _arm(signal.SIG_IGN)


def _parent_only(parent: int):
    """The batch's SIGINT handler: KeyboardInterrupt in the parent; nothing in a
    worker that has forked with it and not yet run _worker_init."""
    def handler(signum, frame):
        if os.getpid() == parent:
            raise KeyboardInterrupt
    return handler


def execute(plans, profile: str, out: Path, reps_override: int | None, jobs: int,
            whole: bool, trace_all: bool = False) -> None:
    """Every repetition of every run; a scenario's report is written as soon as
    its last run is in, so a long batch keeps what it finished if it stops. One
    command at a time writes under `out` (RuntimeError for a second)."""
    lock = leftovers.claim_outdir(out)
    try:
        _execute(plans, profile, out, reps_override, jobs, whole, trace_all)
    finally:
        os.close(lock)


def _execute(plans, profile: str, out: Path, reps_override: int | None, jobs: int,
             whole: bool, trace_all: bool) -> None:
    tasks, commit = [], source_commit()
    for s, names in plans:
        reps = reps_override or s.reps(profile)
        base = out / s.name / profile
        # what is rerun goes first: no repetition of an earlier, longer series stays behind
        for old in ([base] if whole else [base / n for n in names]):
            shutil.rmtree(old, ignore_errors=True)
        tasks += [(s, n, rep, rundir(base, n, rep, reps)) for rep in range(reps) for n in names]
    done: dict[str, list[dict]] = {s.name: [] for s, _ in plans}
    left = {s.name: sum(t[0] is s for t in tasks) for s, _ in plans}
    names_of = {s.name: names for s, names in plans}

    def finished(s: Scenario, sm: dict) -> None:
        done[s.name].append(sm)
        left[s.name] -= 1
        if left[s.name]:
            return
        base = out / s.name / profile
        if whole:
            sms = sorted(done[s.name], key=lambda x: (x["run"], x["rep"]))
        elif (reps_override or s.reps(profile)) == s.reps(profile) and \
                len(reps_of(sms := merged(base, names_of[s.name], done[s.name], s, profile))) == 1:
            pass                                    # a rerun of some runs, merged
        else:
            print(f"   {s.name}: summaries.json and report left as they were: the rerun's "
                  f"repetitions ({reps_override or s.reps(profile)}) are not those of the "
                  "other runs there; rerun the whole scenario", flush=True)
            return
        (base / "summaries.json").write_text(json.dumps(sms, indent=1) + "\n")
        print(f"   report: {report.write(s, profile, sms, base, command(profile, s.path))}",
              flush=True)

    run_tasks([(s, f"{s.name} / {n} rep {rep} ({profile})",
                (s.path, n, profile, rep, d, commit, trace_all)) for s, n, rep, d in tasks],
              jobs, finished)


def run_tasks(tasks: list[tuple], jobs: int, done) -> None:
    """Each (key, title, run_one's arguments) of tasks, up to `jobs` at once, each in a worker
    process with a job slot (its own controller instances and ports) when jobs > 1;
    done(key, summary) as each finishes, in the order they finish. On Ctrl-C,
    SIGTERM or a failed run it starts nothing more and stops the runs under way,
    each removing its lab, then raises."""
    if jobs <= 1:
        for key, title, args in tasks:
            print(f"== {title}", flush=True)
            sm = run_one(*args)
            print(_line(sm), flush=True)
            done(key, sm)
        return
    ctx = mp.get_context("fork")
    stop = ctx.Event()
    before = {sig: signal.signal(sig, _parent_only(os.getpid()))
              for sig in (signal.SIGINT, signal.SIGTERM)}
    pool = cf.ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init,
                                  initargs=(stop,))
    try:
        futs = {pool.submit(run_one, *args): key for key, _, args in tasks}
        for f in cf.as_completed(futs):
            sm = f.result()
            print(f"== {sm['scenario']}\n{_line(sm)}", flush=True)
            done(futs[f], sm)
    except BaseException:
        # Ctrl-C, SIGTERM or a failed run: start nothing more (runs already
        # queued to a worker see the flag), and interrupt the runs under way so
        # each removes its lab; a signal to the parent alone would otherwise
        # leave them running to their end. Again each second until the workers
        # are gone: one that arrives just before a run blocks in a system call
        # is taken only when the call returns (CPython runs handlers between
        # bytecodes), and a worker that has taken one ignores the rest.
        stop.set()
        workers = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        while alive := [p for p in workers if p.is_alive()]:
            for p in alive:
                try:
                    os.kill(p.pid, signal.SIGINT)
                except ProcessLookupError:      # it ended since is_alive()
                    pass
            alive[0].join(1)
        pool.shutdown(wait=True)
        raise
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    pool.shutdown(wait=True)


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.results",
                       description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="*", type=Path)
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--run", action="append", dest="runs", help="only this run (repeatable)")
    ap.add_argument("--reps", type=int, help="repetitions of each run (default: the profile's)")
    ap.add_argument("--jobs", type=int, default=env_number("JOBS", 1, tag="results"),
                    help="runs at once (default 1)")
    ap.add_argument("--out", type=Path, default=paths.RESULTS)
    ap.add_argument("--trace-all", action="store_true",
                    help="trace every repetition, not only the first: each "
                         "flow's decisions by rule and its alpha go into the report")
    ap.add_argument("--rerender", action="store_true",
                    help="rewrite the reports and the index from summaries.json, running nothing")
    ap.add_argument("--index", action="store_true",
                    help="rewrite only the index, DIR/README.md, from every scenario's results")
    a = ap.parse_args(argv)
    if a.reps is not None and not 1 <= a.reps <= 100:
        print("testbed: --reps must be 1 to 100", file=sys.stderr)
        return 2
    if not 1 <= a.jobs <= 16:
        print("testbed: --jobs must be 1 to 16", file=sys.stderr)
        return 2
    try:
        every = [Scenario.load(p) for p in sorted(paths.SCENARIOS.glob("*.toml"))]
        scenarios = [Scenario.load(p) for p in a.scenarios]
        plans = []
        for s in scenarios:
            if a.profile not in s.profiles:
                raise ScenarioError(f"{s.name}: no profile '{a.profile}' ({', '.join(s.profiles)})")
            names = a.runs or s.profile_runs(a.profile)
            for n in names:
                s.run(n, a.profile)             # every run checked before any starts
            plans.append((s, names))
    except ScenarioError as e:
        print(f"testbed: {e}", file=sys.stderr)
        return 2
    index_cmd = ("sudo make results (every scenario, PROFILE=full); after a partial run, "
                 "python -m vegaskit.cli.results --index --profile full")
    if a.index and a.profile != INDEX_PROFILE:
        print(f"testbed: --index: the index is of the {INDEX_PROFILE} profile's runs; "
              f"give --profile {INDEX_PROFILE}", file=sys.stderr)
        return 2
    if a.index or a.rerender:
        if not a.out.is_dir():
            print(f"testbed: {a.out}: no such results directory", file=sys.stderr)
            return 2

        where = a.out
        writes = []                     # every report rendered before any file is written
        try:
            for s, _ in plans if a.rerender else []:
                base = a.out / s.name / a.profile
                where = base / "summaries.json"
                summaries, files = backfilled(base, json.loads(where.read_text()), s, a.profile)
                writes += files + [
                    (where, json.dumps(summaries, indent=1) + "\n"),
                    (base / "report.md", report.render(s, a.profile, summaries,
                                                        command(a.profile, s.path)))]
        except (OSError, ValueError) as e:
            print(f"testbed: --rerender needs each scenario's summaries.json: {e}",
                  file=sys.stderr)
            return 2
        except NOT_OURS as e:
            print(f"testbed: --rerender: {where} is not the runner's "
                  f"(a field missing or of the wrong kind: {e!r})", file=sys.stderr)
            return 2
        for path, text in writes:
            path.write_text(text)
            if path.name == "report.md":
                print(path)
        if a.profile == INDEX_PROFILE:
            print(index.write(every, a.out, a.profile, index_cmd))
        return 0
    if not plans:
        print("testbed: name at least one scenario file", file=sys.stderr)
        return 2
    if (a.runs and a.reps and a.out.resolve() == paths.RESULTS.resolve()
            and any(a.reps != s.reps(a.profile) for s, _ in plans)):
        print(f"testbed: --run with --reps {a.reps} would replace those runs' repetitions in "
              f"{a.out} without a report to match: give --out DIR", file=sys.stderr)
        return 2
    if rc := testbed_ready("testbed"):
        return rc
    try:                                # every controller spec, before any run starts
        for s, names in plans:
            for n in names:
                runner.check_controllers(s.run(n, a.profile), job=1 if a.jobs > 1 else 0)
    except RuntimeError as e:
        print(f"testbed: {e}", file=sys.stderr)
        return 2
    if (warn := leftovers.budget_warning(a.jobs)):
        print(f"testbed: {warn}", file=sys.stderr)
    sigterm_unwinds()
    _, rc = guarded("testbed", lambda: execute(plans, a.profile, a.out, a.reps, a.jobs,
                                               whole=not a.runs, trace_all=a.trace_all))
    if rc == 0 and a.profile == INDEX_PROFILE:
        print(f"   index: {index.write(every, a.out, a.profile, index_cmd)}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
