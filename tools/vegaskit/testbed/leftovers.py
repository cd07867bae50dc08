"""What a run killed with SIGKILL leaves behind, and the sweep that removes it.

A run cleans up after itself on exceptions, SIGINT and SIGTERM (netns.Lab,
runner.controllers). SIGKILL gives it no chance, so everything it creates is
marked with an owner, vk<pid>x<rand>, that names the process responsible:
- namespaces: the name's prefix (vk<pid>x<rand>-<role>);
- processes: OWNER_ENV in their environment, inherited by their children, so
  those outside any namespace (linkemu, the tracer) are found too;
- linkemu's control sockets: tempdir/<owner>-<rand>.ctl;
- controllers a run loaded: a ledger file, LEDGER_DIR/<owner>.controllers;
- controllers the bench registers with bpftool (its floors, vk_reno_*): their
  links pinned in BENCH_PIN_DIR/<owner>, whose removal unregisters them.
sweep(), run by every new Lab, removes whatever carries a dead owner's mark.
A live owner's marks are never touched, so concurrent runs are safe.

Runs at once on one host (make results --jobs, in one batch or several) each
hold a job slot, claim_slot(): a flock on LEDGER_DIR/slot-N.lock, which the
kernel releases when its holder dies, however it dies. A command that writes
reports holds its results directory the same way, claim_outdir(), so a second
command on the same directory is refused instead of running beside it.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from vegaskit import paths
from vegaskit.proc import sh

from .sampler import Sampler

NETNS_DIR = "/var/run/netns"
LEDGER_DIR = Path("/run/vegaskit-labs")
BENCH_PIN_DIR = Path("/sys/fs/bpf/vegaskit-bench")
OWNER_ENV = "VEGASKIT_LAB"
_OWNER = rb"vk(\d+)x[0-9a-f]+"
NAME_RE = re.compile(r"^vk(\d+)x[0-9a-f]+-")
_ENV_RE = re.compile(rb"(?:^|\0)" + OWNER_ENV.encode() + b"=" + _OWNER + rb"(?:\0|$)")
_CTL_RE = re.compile(r"^vk(\d+)x[0-9a-f]+-[0-9a-f]+\.ctl$")
_LEDGER_RE = re.compile(r"^vk(\d+)x[0-9a-f]+\.controllers$")
_BENCH_RE = re.compile(r"^vk(\d+)x[0-9a-f]+$")


def new_owner() -> str:
    """A fresh owner mark for this process: vk<pid>x<rand>."""
    return f"vk{os.getpid()}x{secrets.token_hex(2)}"


def owner_env(owner: str) -> dict[str, str]:
    """The environment for a process the owner starts: the caller's, plus the mark."""
    return {**os.environ, OWNER_ENV: owner}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _dead(m: re.Match | None) -> bool:
    return bool(m) and not _alive(int(m.group(1)))


def claim_slot(slots: int, in_use=lambda n: False) -> tuple[int, int]:
    """The lowest job slot (1..slots) no live process holds on this host and
    in_use(n) does not call taken, and the descriptor whose lock holds it: close
    it to give the slot back."""
    LEDGER_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    for n in range(1, slots + 1):
        if in_use(n):
            continue
        fd = os.open(LEDGER_DIR / f"slot-{n}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        return n, fd
    raise RuntimeError(f"all {slots} job slots of this host are taken by other runs")


def claim_outdir(out: Path) -> int:
    """The descriptor whose lock makes this process the one writing results under `out`
    (close it, or exit, to give it back): two commands writing the same reports at once
    would read each other's half-written logs and run side by side unasked. Raises
    RuntimeError, with one line for the user, when a live process holds it."""
    LEDGER_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = hashlib.sha1(str(out.resolve()).encode()).hexdigest()[:16]
    fd = os.open(LEDGER_DIR / f"out-{key}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RuntimeError(f"another run is writing {out}; wait for it to end, or give "
                           "another --out") from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def record_loaded(owner: str, instance: str) -> None:
    """Note, before loading it, that `owner` loads controller `instance`."""
    LEDGER_DIR.mkdir(mode=0o700, exist_ok=True)
    with open(LEDGER_DIR / f"{owner}.controllers", "a") as f:
        f.write(instance + "\n")


def loaded_by_others(pid: int) -> set[str]:
    """Controllers that live owners other than process `pid` have noted they load: a
    concurrent run's, which a check for leaks must neither blame nor unload."""
    out: set[str] = set()
    if LEDGER_DIR.is_dir():
        for path in LEDGER_DIR.iterdir():
            m = _LEDGER_RE.match(path.name)
            if m and int(m.group(1)) != pid and _alive(int(m.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    out.update(path.read_text().split())
    return out


def forget_loaded(owner: str) -> None:
    """The owner unloaded what it loaded: its ledger goes."""
    with contextlib.suppress(FileNotFoundError):
        (LEDGER_DIR / f"{owner}.controllers").unlink()


def _orphan_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                m = _ENV_RE.search(f.read())
        except OSError:                 # gone meanwhile, or a kernel thread
            continue
        if _dead(m):
            pids.append(int(entry))
    return pids


def kill_netns_procs(name: str) -> None:
    for pid in sh(["ip", "netns", "pids", name], check=False).split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def delete_netns(name: str) -> None:
    """Kill what runs in namespace `name`, destroy its sockets, delete it."""
    kill_netns_procs(name)
    # Destroy its TCP sockets first: an orphaned socket (FIN sent, peer gone
    # with its namespace) outlives `ip netns del` for minutes and keeps its
    # congestion controller, ours included, alive meanwhile.
    sh(["ip", "netns", "exec", name, "ss", "-K", "-tan"], check=False)
    sh(["ip", "netns", "del", name], check=False)


def owned_namespaces(pid: int | None = None) -> list[str]:
    """vegaskit namespaces, or only those made by process `pid`."""
    names = os.listdir(NETNS_DIR) if os.path.isdir(NETNS_DIR) else []
    return sorted(n for n in names if (m := NAME_RE.match(n))
                  and (pid is None or int(m.group(1)) == pid))


def labs_alive(live_owners: bool = False) -> int:
    """How many labs (ours or another process's) hold namespaces now: one owner mark
    each; with live_owners, only those whose owner still runs (the next lab sweeps
    the others before it starts)."""
    return len({m.group(0) for n in owned_namespaces() if (m := NAME_RE.match(n))
                and not (live_owners and _dead(m))})


VALIDATED_AT_ONCE = 4     # runs at once `make concurrency` found changing nothing


def budget_warning(jobs: int) -> str | None:
    """A line for stderr when this batch's runs and the labs already alive pass the
    runs at once that were validated (docs/DESIGN.md §7.1, decision 41); None within it."""
    alive = labs_alive(live_owners=True)
    if alive + jobs <= VALIDATED_AT_ONCE:
        return None
    return (f"warning: {jobs} run{'s' * (jobs > 1)} at once beside {alive} lab"
            f"{'s' * (alive != 1)} already alive passes the {VALIDATED_AT_ONCE} runs at once "
            "make concurrency validated (docs/DESIGN.md decision 41); each report says how "
            "many shared the host")


class LabsAlive(Sampler):
    """The most labs alive at once over a with-block, sampled every `every` seconds and at
    its end: what a run shared the host with (docs/DESIGN.md §7.1). Any lab counts (a
    run's, a test's, a bench's, a dead process's not yet swept). A sample that cannot list
    the namespaces is skipped: the count is a record, never a reason for a run to fail."""

    final = True

    def __init__(self, every: float = 2.0):
        super().__init__(every)
        self.most = 0

    def sample(self) -> None:
        try:
            self.most = max(self.most, labs_alive())
        except OSError:
            pass


def registered() -> set[str]:
    """The congestion controls the kernel lists now."""
    return set(Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split())


def ctl_path(owner: str) -> str:
    """A fresh path for one of linkemu's control sockets, marked with its owner."""
    return os.path.join(tempfile.gettempdir(), f"{owner}-{secrets.token_hex(3)}.ctl")


def _unload_ledger(path: Path) -> None:
    """Unload what a dead owner loaded; a ledger whose unload fails stays for the next
    sweep, and says why once."""
    failed = []
    for inst in path.read_text().split():
        if inst in registered():
            r = subprocess.run([str(paths.VEGASCTL), "unload", inst], capture_output=True,
                               text=True)
            if r.returncode != 0:
                failed.append(f"{inst}: {r.stderr.strip()}")
    if failed:
        print(f"vegaskit: a dead run's controller stays loaded ({'; '.join(failed)})",
              file=sys.stderr)
        return
    path.unlink(missing_ok=True)


def unpin_bench(path: Path) -> None:
    """Remove a bench owner's pinned links (each unregisters its controller), then
    the owner's directory, and the parent when it is empty."""
    for link in path.iterdir():
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
    with contextlib.suppress(OSError):
        path.rmdir()
        BENCH_PIN_DIR.rmdir()


def sweep() -> list[str]:
    """Remove what dead owners left: processes first (linkemu holds TUN devices
    and the tracer holds the ring), then namespaces with their sockets, then the
    controllers nothing uses any more, then control sockets. Returns the
    namespaces removed."""
    for pid in _orphan_processes():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    removed = [n for n in owned_namespaces() if _dead(NAME_RE.match(n))]
    for name in removed:
        delete_netns(name)
    if LEDGER_DIR.is_dir():
        for path in LEDGER_DIR.iterdir():
            if _dead(_LEDGER_RE.match(path.name)):
                _unload_ledger(path)
    if BENCH_PIN_DIR.is_dir():
        for path in BENCH_PIN_DIR.iterdir():
            if _dead(_BENCH_RE.match(path.name)):
                unpin_bench(path)
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if _dead(_CTL_RE.match(name)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(tmp, name))
    return removed
