"""Emulated links: build/linkemu (a userspace delay line, rate and drop-tail queue).

One linkemu process is one link, both directions, between a TUN device in one
namespace and a TUN device in another (tools/linkemu/, `linkemu --help`).
Per direction: drop-tail queue (packets) -> serializer at `rate_bps` -> delay
line of `delay_us`; random loss hits packets on the wire, and with
`spare_retx` never a TCP retransmission (docs/DESIGN.md §6.2). `rate_bps` counts IP
packet bytes (what a TUN carries: IP header included, no link-layer framing),
so a TCP flow with MSS 1448 (timestamps on, MTU 1500) has goodput
rate * 1448 / 1500.

The process belongs to a Lab (Lab.spawn), so it dies with the run; its TUN
devices vanish with it. Link.stop() ends it early and returns its counters.

It sleeps under SCHED_FIFO at priority FIFO_PRIORITY (its busy-poll before a release
stays ordinary): an emulator waking to release a packet then waits for no ordinary task,
and a Vegas-A reads less of the host's busy moments as queue (`make fifo-ab`,
results/fifo/). VK_LINKEMU_FIFO=N sets the priority, 0 the ordinary policy; a host
that refuses SCHED_FIFO gets the ordinary one. VK_LINKEMU_FIFO_POLL=PCT keeps the
busy-poll under SCHED_FIFO too, for up to PCT percent of a core (linkemu
--fifo-poll); the bench measured it no better, so it is off by default. Each run
records which (docs/DESIGN.md §7.1, decision 42).
"""
from __future__ import annotations

import functools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field

from vegaskit import paths

from . import leftovers
from .netns import Lab, Netns, sh

FIFO_PRIORITY = 10      # above every ordinary task, below the kernel's own RT threads (50)
FIFO_POLL_PCT = 0       # share of a core its busy-poll may spend under SCHED_FIFO (linkemu --fifo-poll)

LINKEMU = paths.LINKEMU
PARAM_KEYS = ("rate_bps", "delay_us", "limit_pkts", "loss", "spare_retx")
DIRS = ("ab", "ba", "both")


@dataclass(frozen=True)
class LinkParams:
    """One direction of a link."""
    rate_bps: int = 0           # IP-packet bits per second; 0 = unlimited
    delay_us: int = 0           # one-way propagation delay
    limit_pkts: int = 1000      # drop-tail: packets waiting for the serializer; 0 = unlimited
    loss: float = 0.0           # probability that a packet is lost on the wire
    spare_retx: bool = False    # the random loss never hits a TCP retransmission

    def spec(self) -> str:
        return param_spec(**asdict(self))


def param_spec(**params) -> str:
    """key=value,... as linkemu reads it; unknown keys fail here, not in C."""
    bad = set(params) - set(PARAM_KEYS)
    if bad or not params:
        raise ValueError(f"link parameters: {sorted(bad) or 'none given'}; known: {PARAM_KEYS}")
    if "spare_retx" in params and params["spare_retx"] not in (0, 1):    # True, False too
        raise ValueError(f"link parameters: spare_retx={params['spare_retx']!r}: 0 or 1")
    return ",".join(f"{k}={float(params[k])!r}" if k == "loss" else f"{k}={int(params[k])}"
                    for k in PARAM_KEYS if k in params)


@dataclass(frozen=True)
class Change:
    """A scheduled change: at t seconds after the link is ready, in dir (ab|ba|both)."""
    t: float
    dir: str
    params: dict

    def arg(self) -> str:
        if self.dir not in DIRS:
            raise ValueError(f"direction {self.dir!r}: one of {DIRS}")
        return f"{self.t:.6f}:{self.dir}:{param_spec(**self.params)}"


@dataclass(frozen=True)
class QEvent:
    """One line of a queue log: qlen excludes the packet being serialized."""
    t_us: int           # CLOCK_MONOTONIC
    dir: str            # ab | ba
    qlen: int
    event: str          # enq | deq | drop | loss | late (a release 1 ms or more late)
    late_us: int = 0    # how late, for a late event


def read_qlog(path: str | os.PathLike) -> list[QEvent]:
    with open(path) as f:
        next(f, None)                       # header
        return [QEvent(int(t), d, int(q), e, int(late or 0)) for t, d, q, e, late in
                (line.rstrip("\n").split(",") for line in f if line.strip())]


@functools.cache
def fifo_allowed() -> bool:
    """Whether this host lets a process of ours take SCHED_FIFO (a container or a cgroup
    without a real-time budget refuses it): asked of a throwaway child, once."""
    r = subprocess.run([sys.executable, "-c", "import os; os.sched_setscheduler(0, "
                        f"os.SCHED_FIFO, os.sched_param({FIFO_PRIORITY}))"], capture_output=True)
    return r.returncode == 0


def fifo_priority() -> int:
    """The emulators' SCHED_FIFO priority: VK_LINKEMU_FIFO's (0: the ordinary policy),
    FIFO_PRIORITY if unset (decision 42)."""
    v = os.environ.get("VK_LINKEMU_FIFO", "")
    if not v:
        return FIFO_PRIORITY if fifo_allowed() else 0
    if not v.isdigit() or int(v) > 99:
        raise ValueError(f"VK_LINKEMU_FIFO={v!r}: expected a priority 0..99 (0: ordinary)")
    return int(v)


def fifo_poll_pct() -> int:
    """How much of a core the emulators' busy-poll may spend under SCHED_FIFO
    (linkemu --fifo-poll): VK_LINKEMU_FIFO_POLL's, FIFO_POLL_PCT if unset."""
    v = os.environ.get("VK_LINKEMU_FIFO_POLL", "")
    if not v:
        return FIFO_POLL_PCT
    if not v.isdigit() or int(v) > 50:
        raise ValueError(f"VK_LINKEMU_FIFO_POLL={v!r}: expected a percentage 0..50")
    return int(v)


def _ns_name(ns: Netns | str) -> str:
    return ns.name if isinstance(ns, Netns) else ns


@dataclass
class Link:
    proc: subprocess.Popen
    ctl_path: str
    t0_us: int                      # CLOCK_MONOTONIC when the link became ready
    sides: tuple[tuple[str, str], tuple[str, str]]     # (namespace, device) of a and b
    fifo: int = 0                   # its SCHED_FIFO priority, 0: the ordinary policy
    fifo_poll: int = 0              # share of a core (%) its poll may spend under SCHED_FIFO
    final: dict | None = None
    _sock: socket.socket | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def start(cls, lab: Lab, ns_a: Netns | str, dev_a: str, ns_b: Netns | str, dev_b: str,
              ab: LinkParams, ba: LinkParams | None = None, schedule: list[Change] = (),
              qlog: str | os.PathLike | None = None, seed: int = 1, mtu: int = 1500,
              stats_file: str | os.PathLike | None = None, max_spin_us: int | None = None,
              fifo: int | None = None, fifo_poll: int | None = None,
              timeout: float = 5.0) -> "Link":
        """Start the emulator and wait until both TUN devices are up (no addresses yet).

        `ba` defaults to `ab`. Scheduled times count from readiness (t0_us). `fifo`: its
        SCHED_FIFO priority, 0 the ordinary policy; None: fifo_priority(). `fifo_poll`:
        the share of a core (percent) its busy-poll may spend under SCHED_FIFO; None:
        fifo_poll_pct().
        """
        if fifo is None:
            fifo = fifo_priority()
        if fifo_poll is None:
            fifo_poll = fifo_poll_pct()
        if not LINKEMU.exists():
            raise RuntimeError(f"{LINKEMU} missing: run `make build/linkemu`")
        ba = ab if ba is None else ba
        ctl = leftovers.ctl_path(lab.prefix)
        argv = [str(LINKEMU), "-a", f"{_ns_name(ns_a)}:{dev_a}", "-b", f"{_ns_name(ns_b)}:{dev_b}",
                "--ab", ab.spec(), "--ba", ba.spec(), "--seed", str(seed), "--mtu", str(mtu),
                "--ctl", ctl]
        for c in schedule:
            argv += ["--at", c.arg()]
        if qlog is not None:
            argv += ["--qlog", str(qlog)]
        if stats_file is not None:
            argv += ["--stats", str(stats_file)]
        if max_spin_us is not None:
            argv += ["--max-spin-us", str(max_spin_us)]
        if fifo:
            argv += ["--fifo", str(fifo)]
            if fifo_poll:
                argv += ["--fifo-poll", str(fifo_poll)]
        # linkemu does its own setns(); it runs in the root namespace.
        proc = lab.spawn(None, argv)
        line = _read_line(proc, timeout)
        if not line.startswith("ready"):
            proc.kill()
            _, err = proc.communicate(timeout=5)
            raise RuntimeError(f"linkemu did not start: {err.decode().strip() or line!r}")
        t0 = int(line.split("t0_us=")[1])
        return cls(proc=proc, ctl_path=ctl, t0_us=t0,
                   sides=((_ns_name(ns_a), dev_a), (_ns_name(ns_b), dev_b)), fifo=fifo,
                   fifo_poll=fifo_poll if fifo else 0)

    def _ask(self, cmd: str, timeout: float = 2.0) -> str:
        with self._lock:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
                self._sock.bind("")         # autobind: linkemu can reply
            self._sock.setblocking(False)
            try:                            # a late reply to an earlier, timed-out ask
                while self._sock.recv(65536):
                    pass
            except BlockingIOError:
                pass
            self._sock.settimeout(timeout)
            self._sock.sendto(cmd.encode(), self.ctl_path)
            return self._sock.recv(65536).decode()

    def set(self, dir: str, **params) -> None:
        """Change parameters now (e.g. set("both", delay_us=100000)); applied when this returns."""
        if dir not in DIRS:
            raise ValueError(f"direction {dir!r}: one of {DIRS}")
        reply = self._ask(f"{dir} {param_spec(**params)}")
        if reply != "ok":
            raise RuntimeError(f"linkemu: {reply}")

    def stats(self) -> dict:
        """Live counters and parameters: {"t0_us", "t_us", "ab": {...}, "ba": {...}}."""
        if self.final is not None:
            return self.final
        return json.loads(self._ask("stats"))

    def kernel_drops(self) -> dict:
        """Packets the TUN devices dropped before linkemu read them: {"ab": n, "ba": n}.

        A TUN's ring holds txqueuelen (500) packets; if linkemu falls behind,
        the kernel drops there, in front of the emulated queue and outside its
        counters. Zero means the emulated queue was the only one.
        """
        out = {}
        for d, (ns, dev) in zip(("ab", "ba"), self.sides):
            link = json.loads(sh(["ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev]))[0]
            out[d] = link["stats64"]["tx"]["dropped"]
        return out

    def stop(self, timeout: float = 5.0) -> dict:
        """SIGTERM; the devices go, and the final counters are returned."""
        if self.final is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            out, err = self.proc.communicate(timeout=timeout)
            lines = [ln for ln in out.decode().splitlines() if ln.startswith("{")]
            if not lines:
                raise RuntimeError(f"linkemu exited {self.proc.returncode}: {err.decode().strip()}")
            self.final = json.loads(lines[-1])
            if self._sock is not None:
                self._sock.close()
        return self.final


def _read_line(proc: subprocess.Popen, timeout: float) -> str:
    """The first stdout line, read from the fd itself so communicate() later loses nothing."""
    fd, buf = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while b"\n" not in buf:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return buf.decode()
        chunk = os.read(fd, 1)      # byte by byte: nothing past the line is consumed
        if not chunk:
            break
        buf += chunk
    return buf.decode().strip()
