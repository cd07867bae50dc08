"""Boot a kernel under qemu with virtme-ng and run one command inside it.

`vng --run <vmlinuz>` boots the image with the host's root file system, TCG only
(`--disable-kvm`: nested KVM fails on this machine kind, docs/DESIGN.md §11). The
checkout is an overlay in the guest (writable there, untouched on the host);
build/vm/<release>/out is shared read-write for what the guest writes. Inside,
tools/vm/guest.sh mounts bpffs and tracefs, loads the modules the tests use,
records `vegasctl features --json` and runs the command between two marker lines.

Every guest has a time limit; on expiry, failure or Ctrl-C the whole process group
(vng, qemu, virtiofsd) is killed.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from vegaskit import paths

from .kernels import CACHE, Kernel, unpacked, vmlinuz

REPO = paths.REPO
VENV_BIN = Path(sys.prefix) / "bin"
GUEST_SH = REPO / "tools" / "vm" / "guest.sh"
VM_MEMORY = "2G"
VM_CPUS = "2"


def kill_group(p: subprocess.Popen) -> None:
    """SIGTERM the process group (vng, qemu, virtiofsd), SIGKILL what is left."""
    if p.poll() is None:
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                p.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue
    # qemu may outlive vng in the same group: sweep the group regardless.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_streaming(argv: list[str], log: Path, timeout: float, label: str,
                  cwd: Path = REPO, env: dict | None = None):
    """Run argv in its own process group; echo and log its output with times.
    Returns (exit code or None on timeout, [(seconds since start, line)])."""
    t0 = time.monotonic()
    seen: list[tuple[float, str]] = []
    with open(log, "w") as logf:
        p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True, text=True, errors="replace")

        def reader():
            for line in p.stdout:
                t = time.monotonic() - t0
                line = line.rstrip("\r\n")
                seen.append((t, line))
                logf.write(f"{t:8.2f} {line}\n")
                logf.flush()
                print(f"[{label} {t:6.1f}s] {line}", flush=True)

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            kill_group(p)       # also on KeyboardInterrupt: nothing outlives us
            th.join(5)
    return rc, seen


def out_dir(k: Kernel) -> Path:
    """What the guest writes (shared read-write): features.json, modprobe.txt, rc, and
    whatever the command writes there."""
    return CACHE / k.release / "out"


@dataclass
class Boot:
    rc: int | None                    # vng's exit status; None: killed at the time limit
    lines: list[str]
    wall_s: float                     # vng start to exit (download and unpack before it)
    up_s: float | None = None         # vng start to the guest script's first line
    run_s: float | None = None        # the command inside the guest
    command_rc: int | None = None     # the command's exit status, as the guest wrote it

    @property
    def booted(self) -> bool:
        return self.up_s is not None


def vng_argv(k: Kernel) -> list[str]:
    """virtme-ng booting k under TCG with this project's guest size."""
    return [str(VENV_BIN / "vng"), "--run", str(vmlinuz(k)), "--disable-kvm",
            "--memory", VM_MEMORY, "--cpus", VM_CPUS, "--name", "vegaskit-vm"]


def vng_env() -> dict:
    """vng runs virtme-run, which it finds on PATH: the venv's bin first."""
    return {**os.environ, "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}


def boot(k: Kernel, command: list[str], timeout: float, label: str) -> Boot:
    """Unpack k if needed, boot it and run `command` (cwd: the checkout) inside.
    Raises subprocess.SubprocessError, OSError or ValueError if the fetch fails."""
    unpacked(k)
    out = out_dir(k)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    inner = shlex.join(["sh", str(GUEST_SH), str(out), *command])
    argv = vng_argv(k) + ["--overlay-rwdir", str(REPO), "--rwdir", str(out),
                          "--cwd", str(REPO), "--exec", inner]
    print(f"{label}: {k.release}: booting ({shlex.join(argv)})", flush=True)
    t0 = time.monotonic()
    rc, seen = run_streaming(argv, CACHE / k.release / "console.log", timeout, k.release,
                             env=vng_env())
    b = Boot(rc, [line for _, line in seen], time.monotonic() - t0)
    b.up_s = next((t for t, line in seen if line.startswith("VK-GUEST-UP")), None)
    start = next((t for t, line in seen if line.startswith("VK-RUN-START")), None)
    end = next((t for t, line in seen if line.startswith("VK-RUN-END")), None)
    if start is not None and end is not None:
        b.run_s = end - start
    try:
        b.command_rc = int((out / "rc").read_text())
    except (OSError, ValueError):
        pass
    return b
