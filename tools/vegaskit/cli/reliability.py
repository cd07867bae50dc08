"""`make reliability`: the hardening figures (issue 12), counted by running them.

    python -m vegaskit.cli.reliability [--out DIR] [PYTEST_ARGS...]

Runs every test marked `reliability` (vegaskit/testing/reliability.py): bad
and generated inputs for vegasctl, the testbed, linkemu and the trace tools;
races between vegasctl commands; kill points (SIGKILL or SIGINT mid-command,
mid-run, mid-trace). Each case asserts one line on stderr and a non-zero exit
for a refusal (no traceback), a refusal for every bad value (no wrong
acceptance), and the kernel's or the file system's state unchanged or as asked
(no unexplained change); so a passing case counts toward all three zeros.
Writes DIR/report.md and DIR/cases.json (default results/reliability/). Exits
non-zero if any case failed or nothing ran. Needs root (the kernel tests).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from vegaskit import paths
from vegaskit.cli.results import source_commit
from vegaskit.testing.reliability import KINDS
from vegaskit.cliargs import OneLineParser

OUT = paths.RESULTS / "reliability"
ASSERTS = {
    "bad_input": "refused with one line on stderr and a non-zero exit, nothing changed "
                 "(generated command lines: success doing exactly what was asked, or that)",
    "race": "concurrent commands: no update lost, no shared pin removed under a load, "
            "no trace undoing a set",
    "kill_point": "the process killed there; afterwards nothing left behind, or the next "
                  "command completes what it began",
}


def render(rows: list[dict], seconds: float, pytest_rc: int) -> str:
    by = defaultdict(lambda: {"tests": 0, "cases": 0, "passed": 0, "failed": 0, "skipped": 0})
    for r in rows:
        k = by[r["kind"]]
        k["tests"] += 1
        k[r["outcome"]] += 1
        if r["outcome"] != "skipped":
            k["cases"] += r["cases"]
    failed = [r for r in rows if r["outcome"] == "failed"]
    out = ["# Reliability: what the hardening tests tried", "",
           "Regenerate: `sudo make reliability` (or `python -m vegaskit.cli.reliability`). "
           f"Source commit {source_commit()}, kernel {platform.release()}, "
           f"{time.strftime('%Y-%m-%d')}, {seconds:.0f} s; pytest exit {pytest_rc}.", "",
           "| kind | tests | cases tried | cases in failed tests | skipped tests | each case asserts |",
           "|---|---|---|---|---|---|"]
    for kind, label in KINDS.items():
        k = by[kind]
        bad = sum(r["cases"] for r in failed if r["kind"] == kind)
        out.append(f"| {label} | {k['tests']} | {k['cases']} | {bad} | {k['skipped']} | "
                   f"{ASSERTS[kind]} |")
    total = sum(by[k]["cases"] for k in KINDS)
    if failed or pytest_rc != 0:
        out += ["", f"**{len(failed)} test(s) failed, pytest exit {pytest_rc}**: the run is "
                "not clean, so no zeros are claimed.", ""]
        out += [f"- `{r['test']}`" for r in failed]
    else:
        out += ["", f"All {total} cases passed: 0 tracebacks, 0 wrong acceptances and 0 "
                "unexplained state changes among them (each case asserts all three; a "
                "failure of any is a failed test above)."]
    skipped = [r for r in rows if r["outcome"] == "skipped"]
    if skipped:
        out += ["", "Skipped (not counted), each with the reason its test gave:", ""]
        out += [f"- `{r['test']}`: {r.get('reason') or 'no reason recorded'}" for r in skipped]
    out += ["", "## Per test", "", "| test | kind | cases | outcome |", "|---|---|---|---|"]
    out += [f"| `{r['test']}` | {r['kind']} | {r['cases']} | {r['outcome']} |"
            for r in sorted(rows, key=lambda r: (r["kind"], r["test"]))]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.reliability",
                       description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    a, extra = ap.parse_known_args(argv)
    if os.geteuid() != 0:
        print("reliability: must be run as root (the kernel tests): try sudo", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        cases = Path(tmp) / "cases.json"
        t0 = time.monotonic()
        rc = subprocess.run([sys.executable, "-m", "pytest", "-m", "reliability", "-q",
                             "-p", "no:cacheprovider", *extra], cwd=paths.REPO,
                            env={**os.environ, "VK_RELIABILITY_OUT": str(cases)}).returncode
        seconds = time.monotonic() - t0
        if not cases.exists():
            print(f"reliability: pytest wrote no cases (exit {rc})", file=sys.stderr)
            return 1
        rows = json.loads(cases.read_text())
    if not rows:
        print("reliability: no reliability test ran", file=sys.stderr)
        return 1
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "cases.json").write_text(json.dumps(rows, indent=1) + "\n")
    (a.out / "report.md").write_text(render(rows, seconds, rc))
    print(f"reliability: {a.out / 'report.md'}")
    return 0 if rc == 0 and not any(r["outcome"] == "failed" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
