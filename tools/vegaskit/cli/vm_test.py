"""`make vm-test`: the kernel tests on other kernels, each booted under qemu.

For every kernel asked for (a Debian package name, or an alias):

1. resolve it with apt-cache to one package and version (`bookworm`: the newest
   linux-image-6.1.0-N-amd64 of bookworm; `backports`: the newest
   linux-image-6.12*-amd64 that bookworm-backports carries);
2. `apt-get download` it and `dpkg -x` it into build/vm/<uname -r>/root (once;
   a stamp file names the version unpacked);
3. boot its vmlinuz with virtme-ng (`vng --run`) under TCG (`--disable-kvm`:
   nested KVM does not work on this machine kind) with the host's root file
   system. virtme-ng finds the modules itself: the image's path is inside the
   unpacked tree, so it links <tree>/lib/modules/<ver> as the guest's
   /lib/modules/<ver>. Nothing is copied into the host's /lib/modules. The
   checkout is an overlay in the guest (writable there, untouched on the host);
   build/vm/<ver>/out is shared read-write for what the guest reports;
4. inside, tools/vm/guest.sh mounts bpffs and tracefs, records
   `vegasctl features --json` and runs pytest on the selected tests;
5. print a summary per kernel and write results/kernels/report.md.

The running kernel is listed too: its features, and its tests only with
`--host-tests` (or KERNEL=host), since that is what `make test` runs.

Every guest has a time limit; on expiry, failure or Ctrl-C the whole process
group (vng, qemu, virtiofsd) is killed. Exit status 1 if any kernel had a
failing or erroring test, did not boot, or timed out.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from vegaskit import paths
from vegaskit.proc import sigterm_unwinds
from vegaskit.vm import guest
from vegaskit.vm.guest import VENV_BIN, VM_CPUS, VM_MEMORY, run_streaming
from vegaskit.vm.kernels import CACHE, Kernel, resolve
from vegaskit.cliargs import OneLineParser, env_number, positive_seconds

REPO = paths.REPO
REPORT = paths.RESULTS / "kernels" / "report.md"

# What fits TCG and depends on the kernel: the core's tests beside the feature probes,
# vegasctl's own tests, its crash points, flows on live connections, and registration
# without links. The guest runs the host's root file system, so tools/tests (pure Python,
# 800 tests, most of an hour under TCG) would rerun make test's own, on the same Python.
SMOKE = ["bpf/tests", "netns-tests/tests/test_flows.py",
         "netns-tests/tests/test_vegasctl.py", "netns-tests/tests/test_crash.py",
         "netns-tests/tests/test_map_registration.py"]
MATRIX = ["bookworm", "backports", "host"]


# -------------------------------------------------------------------- results

@dataclass
class Result:
    kernel: Kernel
    status: str = "not run"          # ok, failed, timeout, no boot, error, not run
    boot_s: float | None = None      # vng start to the guest script's first line
    tests_s: float | None = None     # pytest inside the guest
    wall_s: float | None = None      # the whole kernel: vng start to exit
    features: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)   # passed, failed, errors, skipped
    pytest_line: str = ""
    note: str = ""

    @property
    def bad(self) -> bool:
        return self.status not in ("ok", "not run")


# A failure with this in its message is the kernel lacking struct_ops links
# (Linux < 6.4), which vegasctl needs today: expected on 6.1, reported as such.
NO_LINKS = "this kernel has no struct_ops links"


def failure_texts(path: Path) -> list[str]:
    """The message and text of every failed or erroring test case."""
    texts = []
    for case in ET.parse(path).getroot().iter("testcase"):
        for bad in list(case.findall("failure")) + list(case.findall("error")):
            texts.append((bad.get("message") or "") + "\n" + (bad.text or ""))
    return texts


def junit_counts(path: Path) -> dict:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tot = {k: sum(int(s.get(k, 0)) for s in suites)
           for k in ("tests", "failures", "errors", "skipped")}
    return {"passed": tot["tests"] - tot["failures"] - tot["errors"] - tot["skipped"],
            "failed": tot["failures"], "errors": tot["errors"], "skipped": tot["skipped"]}


PYTEST_LINE = re.compile(r"^=+ (.*\d+ (passed|failed|skipped|error|errors|deselected).*) =+$")


def last_pytest_line(lines: list[str]) -> str:
    for line in reversed(lines):
        m = PYTEST_LINE.match(line.strip())
        if m:
            return m.group(1)
    return ""


def features_of(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


# ------------------------------------------------------------------- running

def run_guest(k: Kernel, tests: list[str], timeout: float) -> Result:
    res = Result(k)
    out = guest.out_dir(k)
    command = [str(VENV_BIN / "python"), "-m", "pytest", "-p", "no:cacheprovider",
               f"--junitxml={out / 'junit.xml'}", *tests]
    try:
        b = guest.boot(k, command, timeout, "vm-test")
    except (subprocess.SubprocessError, OSError, ValueError) as e:
        res.status, res.note = "error", f"fetch failed: {e}"
        return res
    res.wall_s, res.boot_s, res.tests_s = b.wall_s, b.up_s, b.run_s
    res.features = features_of(out / "features.json")
    res.pytest_line = last_pytest_line(b.lines)
    if (out / "junit.xml").exists():
        res.counts = junit_counts(out / "junit.xml")
    modprobe = (out / "modprobe.txt").read_text().strip() if (out / "modprobe.txt").exists() else ""
    notes = []
    if modprobe:
        notes.append(" ".join(line for line in modprobe.splitlines() if line.startswith("modprobe")))
    if b.rc is None:
        res.status = "timeout"
        notes.append(f"killed after {timeout:.0f} s"
                     + ("" if b.booted else " (never reached the guest script)"))
    elif not b.booted:
        res.status = "no boot"
        notes.append(f"vng exited {b.rc} before the guest script ran; see "
                     f"{(CACHE / k.release / 'console.log').relative_to(REPO)}")
    elif not res.counts:
        res.status = "error"
        notes.append("pytest wrote no report")
    elif res.counts["failed"] or res.counts["errors"]:
        res.status = "failed"
        texts = failure_texts(out / "junit.xml")
        known = sum(NO_LINKS in t for t in texts)
        if known:
            notes.append(f"{known} of {len(texts)} failures are vegasctl refusing: "
                         f"'{NO_LINKS}' (Linux < 6.4; expected)")
    else:
        res.status = "ok"
    res.note = "; ".join(notes)
    return res


def run_host(k: Kernel, tests: list[str], run_tests: bool, timeout: float) -> Result:
    """The running kernel: its features always, its tests only when asked."""
    res = Result(k)
    t0 = time.monotonic()
    r = subprocess.run([str(paths.VEGASCTL), "features", "--json"], capture_output=True,
                       text=True, timeout=60)
    res.features = json.loads(r.stdout) if r.returncode == 0 and r.stdout else {}
    # a probe of ours that could not run: its own line, not a bare "?" in the table
    broken = "" if res.features else \
        f"features failed: {(r.stderr.strip().splitlines() or ['no output'])[0]}; "
    if not run_tests:
        res.note = broken + "tests not run here: `make test` runs the whole suite on this kernel"
        res.wall_s = time.monotonic() - t0
        return res
    out = CACHE / "host"
    out.mkdir(parents=True, exist_ok=True)
    junit = out / "junit.xml"
    junit.unlink(missing_ok=True)
    argv = [str(VENV_BIN / "python"), "-m", "pytest", "-p", "no:cacheprovider",
            f"--junitxml={junit}", *tests]
    t1 = time.monotonic()
    rc, seen = run_streaming(argv, out / "console.log", timeout, "host")
    res.tests_s = res.wall_s = time.monotonic() - t1
    res.pytest_line = last_pytest_line([line for _, line in seen])
    res.counts = junit_counts(junit) if junit.exists() else {}
    if rc is None:
        res.status, res.note = "timeout", f"killed after {timeout:.0f} s"
    elif not res.counts:
        res.status, res.note = "error", "pytest wrote no report"
    else:
        res.status = "failed" if res.counts["failed"] or res.counts["errors"] else "ok"
        res.note = "run on the host: other users of this kernel can disturb it"
    res.note = broken + res.note
    return res


# ------------------------------------------------------------------- summary

FEATURE_ORDER = ["btf", "struct_ops", "struct_ops_link", "link_update", "sk_storage",
                 "ringbuf", "iter_tcp", "iter_setsockopt", "iter_sk_storage_map",
                 "iter_tcp_sk_storage"]


def missing_features(f: dict) -> str:
    have = f.get("features")
    if not have:
        return "?"
    lacking = [n for n in FEATURE_ORDER if n in have and not have[n]]
    lacking += [n for n, v in have.items() if n not in FEATURE_ORDER and not v]
    return "all" if not lacking else "lacks " + ",".join(lacking)


def fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def table(results: list[Result]) -> list[list[str]]:
    rows = [["kernel", "package", "status", "boot s", "tests s", "wall s",
             "passed", "failed", "errors", "skipped", "features"]]
    for r in results:
        c = r.counts
        rows.append([r.kernel.release or r.kernel.spec,
                     r.kernel.package + (f" ({r.kernel.origin})" if r.kernel.origin not in
                                         ("", "host") else ""),
                     r.status, fmt_s(r.boot_s), fmt_s(r.tests_s), fmt_s(r.wall_s),
                     *(str(c[k]) if c else "-" for k in ("passed", "failed", "errors", "skipped")),
                     missing_features(r.features)])
    return rows


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())


def write_report(results: list[Result], tests: list[str], path: Path) -> None:
    rows = table(results)
    md = ["# Kernel matrix", "",
          "Written by `sudo make vm-test` (`python -m vegaskit.cli.vm_test`); run it again to",
          "regenerate this file. Each Debian kernel is booted under qemu with TCG (no KVM) by",
          f"virtme-ng, {VM_CPUS} vCPUs and {VM_MEMORY}, with the host's root file system; "
          "the running",
          "kernel's row is measured on the host.", "",
          f"Tests run: `pytest {shlex.join(tests)}`", "",
          f"Date: {time.strftime('%Y-%m-%d %H:%M %Z')}; host kernel {os.uname().release}, "
          f"{os.cpu_count()} cores.", "",
          "boot s: from `vng` starting to the guest's first command; tests s: pytest inside;",
          "wall s: the whole kernel, including download and unpack the first time.", "",
          "| " + " | ".join(rows[0]) + " |",
          "|" + "---|" * len(rows[0])]
    md += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    md += ["", "## Per kernel", ""]
    for r in results:
        md.append(f"### {r.kernel.release or r.kernel.spec}")
        md.append("")
        if r.kernel.version:
            md.append(f"- package: `{r.kernel.package}` {r.kernel.version} from {r.kernel.origin}")
        md.append(f"- status: {r.status}" + (f" ({r.note})" if r.note else ""))
        if r.pytest_line:
            md.append(f"- pytest: {r.pytest_line}")
        feats = r.features.get("features", {})
        if feats:
            md.append("- features: " + ", ".join(
                f"{n} {'yes' if v else 'NO'}" for n, v in feats.items()))
            # what the kernel refused or lacked, in vegasctl's words (not in older guests' files)
            md += [f"  - {n}: {why}" for n, why in r.features.get("why", {}).items()]
        md.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(md).rstrip() + "\n")


# ---------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="vm_test", description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*",
                    help="bookworm, backports, host or linux-image-... (default: "
                         + " ".join(MATRIX) + ")")
    ap.add_argument("--tests", default=os.environ.get("VM_TESTS") or None,
                    help="pytest arguments, one shell-quoted string (default: $VM_TESTS, "
                         "else the smoke set)")
    ap.add_argument("--timeout", type=positive_seconds, default=env_number("VM_TIMEOUT", 1800.0, positive_seconds, tag="vm-test"),
                    help="seconds per kernel before the guest is killed (default 1800)")
    ap.add_argument("--host-tests", action="store_true",
                    help="also run the tests on the running kernel (KERNEL=host implies it)")
    ap.add_argument("--report", type=Path, default=REPORT,
                    help="where to write the report (default results/kernels/report.md)")
    ap.add_argument("--no-report", action="store_true", help="print the summary only")
    a = ap.parse_args(argv)

    if os.geteuid() != 0:
        print("vm-test: must run as root (apt-get, bpffs and qemu's guest as root)",
              file=sys.stderr)
        return 2
    if not (paths.VEGASCTL.exists() and (VENV_BIN / "vng").exists()):
        print("vm-test: needs build/vegasctl and virtme-ng (run via make vm-test)",
              file=sys.stderr)
        return 2
    specs = a.kernels or MATRIX
    try:
        tests = shlex.split(a.tests) if a.tests else SMOKE
    except ValueError as e:             # an unbalanced quote in VM_TESTS
        print(f"vm-test: --tests {a.tests!r}: {e}", file=sys.stderr)
        return 2
    explicit_host = bool(a.kernels) and "host" in a.kernels

    # SIGTERM (make killed, CI timeout) unwinds like Ctrl-C, so guests are killed.
    sigterm_unwinds()
    results: list[Result] = []
    t0 = time.monotonic()
    try:
        for spec in specs:
            try:
                k = resolve(spec)
            except (ValueError, LookupError, RuntimeError, subprocess.SubprocessError) as e:
                r = Result(Kernel(spec), status="error", note=str(e))
                results.append(r)
                print(f"vm-test: {spec}: {e}", file=sys.stderr, flush=True)
                continue
            print(f"vm-test: {spec} -> {k.package} {k.version} {k.origin}".rstrip(), flush=True)
            if k.host:
                results.append(run_host(k, tests, a.host_tests or explicit_host, a.timeout))
            else:
                results.append(run_guest(k, tests, a.timeout))
    except KeyboardInterrupt:
        print("vm-test: interrupted; guests killed", file=sys.stderr)
        return 130

    print(f"\nvm-test summary ({time.monotonic() - t0:.0f} s; tests: {shlex.join(tests)})")
    print_table(table(results))
    for r in results:
        if r.note or r.pytest_line:
            print(f"  {r.kernel.release or r.kernel.spec}: "
                  + "; ".join(x for x in (r.pytest_line, r.note) if x))
    if not a.no_report:
        write_report(results, tests, a.report)
        print(f"report: {a.report.relative_to(REPO) if a.report.is_relative_to(REPO) else a.report}")
    return 1 if any(r.bad for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
