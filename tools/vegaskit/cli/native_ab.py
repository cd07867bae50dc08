"""`make native-ab`: bpf_vegas against the kernel's own tcp_vegas, in a VM.

    python -m vegaskit.cli.native_ab [KERNEL] [--reps N] [--timeout S]
    python -m vegaskit.cli.native_ab --analyse RAW_DIR   (re-render, runs nothing)

The running kernel of this machine kind has no tcp_vegas, so the experiment runs
in a Debian kernel that ships tcp_vegas.ko (default: bookworm-backports' 6.12, which
also has struct_ops links), booted under qemu like `make vm-test` (vegaskit.vm).
Inside, vegaskit.nativeab.guest runs the scenarios of
netns-tests/scenarios/native_ab/ with both controllers, interleaved; on the host,
vegaskit.nativeab.analyse compares them and writes results/native-ab/.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from vegaskit import paths
from vegaskit.proc import sigterm_unwinds
from vegaskit.nativeab import analyse
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.vm import guest
from vegaskit.vm.kernels import resolve
from vegaskit.cliargs import OneLineParser, env_number, positive_seconds

SCENARIOS = sorted((paths.SCENARIOS / "native_ab").glob("*.toml"))
OUT = paths.RESULTS / "native-ab"
DEFAULT_KERNEL = "backports"



def command(kernel: str, reps: int) -> str:
    return f"sudo make native-ab KERNEL={kernel} AB_REPS={reps}"


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.cli.native_ab",
                       description=__doc__.split("\n")[0])
    ap.add_argument("kernel", nargs="?", default=DEFAULT_KERNEL,
                    help=f"bookworm, backports or linux-image-... (default {DEFAULT_KERNEL})")
    ap.add_argument("--reps", type=int, default=env_number("AB_REPS", 8, tag="native-ab"),
                    help="runs per arm and scenario (default 8: with 5 the exact test cannot "
                         "reach p < 0.05 after the Holm adjustment)")
    ap.add_argument("--timeout", type=positive_seconds, default=env_number("VM_TIMEOUT", 5400.0, positive_seconds, tag="native-ab"),
                    help="seconds before the guest is killed (default 5400)")
    ap.add_argument("--analyse", type=Path, metavar="RAW_DIR",
                    help="only re-render results/native-ab/ from a guest's raw runs")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    try:
        scenarios = [Scenario.load(p) for p in SCENARIOS]
    except ScenarioError as e:
        print(f"native-ab: {e}", file=sys.stderr)
        return 2
    if a.reps < 5:
        print("native-ab: --reps must be at least 5", file=sys.stderr)
        return 2
    if a.analyse:
        try:
            print(analyse.write(a.analyse, a.out, scenarios, command(a.kernel, a.reps)))
        except (OSError, ValueError) as e:
            print(f"native-ab: {e}", file=sys.stderr)
            return 1
        return 0
    if os.geteuid() != 0:
        print("native-ab: must run as root (apt-get, qemu's guest as root)", file=sys.stderr)
        return 2
    if a.kernel == "host":
        print("native-ab: the running kernel cannot be one arm's host here: give a Debian "
              "kernel that ships tcp_vegas.ko", file=sys.stderr)
        return 2
    sigterm_unwinds()
    try:
        k = resolve(a.kernel)
        raw = guest.out_dir(k) / "ab"
        cmd = [str(guest.VENV_BIN / "python"), "-m", "vegaskit.nativeab.guest",
               "--out", str(raw), "--reps", str(a.reps), *map(str, SCENARIOS)]
        b = guest.boot(k, cmd, a.timeout, "native-ab")
    except KeyboardInterrupt:
        print("native-ab: interrupted; the guest was killed", file=sys.stderr)
        return 130
    except (ValueError, LookupError, RuntimeError, OSError, subprocess.SubprocessError) as e:
        print(f"native-ab: {e}", file=sys.stderr)
        return 1
    if b.rc is None:
        print(f"native-ab: the guest was killed after {a.timeout:.0f} s", file=sys.stderr)
        return 1
    if b.command_rc != 0:
        print(f"native-ab: the runs in the guest failed (exit {b.command_rc}); see "
              f"{guest.CACHE / k.release / 'console.log'}", file=sys.stderr)
        return 1
    try:
        print(analyse.write(raw, a.out, scenarios, command(a.kernel, a.reps)))
    except (OSError, ValueError) as e:
        print(f"native-ab: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
