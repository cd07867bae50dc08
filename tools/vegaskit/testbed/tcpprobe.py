"""The kernel's tcp tracepoints, through tracefs: per-ACK records of tcp:tcp_probe
(TcpProbe), and congestion-state changes and retransmissions (CaStates).

The kernel calls tcp_probe for every segment an established socket receives,
before processing it, with the socket's snd_cwnd, ssthresh and srtt. It fires
the same way whatever controller the socket runs, the kernel's own or a BPF
one, which is why the native A/B comparison (cli/native_ab.py) measures both
with it and with nothing else.

Capture uses a tracefs instance of its own (instances/vegaskit-probe-<pid>),
so it neither reads nor changes the global trace buffer, with the `mono`
clock (CLOCK_MONOTONIC, Python's time.monotonic()) and a filter on the
destination port: a sender's sockets are the ones whose peer port is a
testbed server port. Leaving the context disables the event and removes the
instance, also on an exception; an instance left by a process that was
SIGKILLed is removed by the next capture (sweep()).
"""
from __future__ import annotations

import errno
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
FILESYSTEMS = Path("/proc/filesystems")     # the kernel's: tracefs listed if it has one
PREFIX = "vegaskit-probe-"
LINE = re.compile(r"\s(\d+\.\d+): tcp_probe: (.*)$")
ANY = re.compile(r"\s(\d+\.\d+): (tcp_\w+): (.*)$")
# every tcp event a capture here may switch on (and a sweep switches off)
EVENTS = ("tcp_probe", "tcp_cong_state_set", "tcp_retransmit_skb")
FIELD = re.compile(r"(\w+)=(\S+)")
INFINITE_SSTHRESH = 0x7FFFFFFF   # the kernel's TCP_INFINITE_SSTHRESH: none set yet


@dataclass
class Record:
    t: float            # CLOCK_MONOTONIC seconds
    sport: int
    dport: int
    cookie: str         # the socket (sock_cookie): a flow's data and control connections differ
    snd_cwnd: int       # packets
    ssthresh: int
    srtt_us: int
    data_len: int


def parse(line: str) -> Record | None:
    """One trace_pipe line, or None if it is not a tcp_probe record."""
    m = LINE.search(line)
    if not m:
        return None
    f = dict(FIELD.findall(m.group(2)))
    try:
        src, dst = f["src"], f["dest"]
        return Record(float(m.group(1)), int(src.rsplit(":", 1)[1]), int(dst.rsplit(":", 1)[1]),
                      f.get("sock_cookie", ""), int(f["snd_cwnd"]), int(f["ssthresh"]),
                      int(f["srtt"]), int(f.get("data_len", "0")))
    except (KeyError, ValueError, IndexError):
        return None


def largest_window(records: list[Record]) -> int:
    """The largest snd_cwnd or set ssthresh among records, in packets (0 if none):
    what shows the kernel defect of docs/DESIGN.md §10.2, an ssthresh (and the
    window after it) no path can make."""
    return max((max(r.snd_cwnd, 0 if r.ssthresh == INFINITE_SSTHRESH else r.ssthresh)
                for r in records), default=0)


def available() -> bool:
    """Whether this kernel has tcp:tcp_probe. tracefs not mounted is the host's setup, not
    the kernel's lack (make deps mounts it), so that is a RuntimeError, never a False
    that a test would take as a reason to skip."""
    if not (TRACEFS / "events").is_dir():
        if "tracefs" not in FILESYSTEMS.read_text().split():
            return False                # a kernel without tracefs has no tracepoints to read
        raise RuntimeError(f"tracefs is not mounted at {TRACEFS} (make deps mounts it)")
    return (TRACEFS / "events" / "tcp" / "tcp_probe").is_dir()


def _remove(d: Path) -> bool:
    for ev in EVENTS:
        try:
            (d / "events" / "tcp" / ev / "enable").write_text("0")
        except OSError:
            pass
    try:
        d.rmdir()
        return True
    except OSError:
        return False


def sweep() -> list[str]:
    """Remove instances whose owning process is gone; return their names."""
    inst = TRACEFS / "instances"
    gone = []
    for d in inst.glob(PREFIX + "*") if inst.is_dir() else []:
        pid = d.name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        if _remove(d):
            gone.append(d.name)
    return gone


def own_instances() -> list[Path]:
    """This process's instances: TcpProbe's, and CaStates' (with a -states suffix)."""
    inst = TRACEFS / "instances"
    me = f"{PREFIX}{os.getpid()}"
    return [d for d in inst.glob(me + "*") if d.name == me or d.name.startswith(me + "-")] \
        if inst.is_dir() else []


def sweep_own() -> bool:
    """Remove this process's instances (captures that were never closed)."""
    return any([_remove(d) for d in own_instances()])


class _Capture:
    """A tracefs instance of its own with some tcp events on, each with a filter,
    read by a thread into self.records through self.parse (None: not ours)."""

    suffix = ""

    def __init__(self, events: dict[str, str], buffer_kb: int = 8192):
        self.events, self.buffer_kb = events, buffer_kb
        self.dir = TRACEFS / "instances" / f"{PREFIX}{os.getpid()}{self.suffix}"
        self.records: list = []
        self.lost_lines = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._fd = -1

    def parse(self, line: str):
        raise NotImplementedError

    def __enter__(self):
        missing = [e for e in self.events if not (TRACEFS / "events" / "tcp" / e).is_dir()]
        if missing:
            raise RuntimeError(f"no tcp:{missing[0]} tracepoint under {TRACEFS} (tracefs mounted?)")
        sweep()
        try:
            self.dir.mkdir()
        except FileExistsError:
            pass
        try:
            (self.dir / "trace_clock").write_text("mono")
            (self.dir / "buffer_size_kb").write_text(str(self.buffer_kb))
            for name, flt in self.events.items():
                (self.dir / "events" / "tcp" / name / "filter").write_text(flt)
            self._fd = os.open(self.dir / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            for name in self.events:
                (self.dir / "events" / "tcp" / name / "enable").write_text("1")
        except BaseException:
            self._teardown()
            raise
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                chunk = None
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                break
            if chunk:
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for raw in lines:
                    r = self.parse(raw.decode(errors="replace"))
                    if r:
                        self.records.append(r)
                    elif b"LOST" in raw:
                        self.lost_lines += 1
                continue
            if self._stop.is_set():
                return          # drained after the events were switched off
            time.sleep(0.05)

    def _teardown(self) -> None:
        for name in self.events:
            try:
                (self.dir / "events" / "tcp" / name / "enable").write_text("0")
            except OSError:
                pass
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        _remove(self.dir)

    def __exit__(self, *exc) -> None:
        self._teardown()


class TcpProbe(_Capture):
    """with TcpProbe(5201, 5299) as p: ...; p.records: every record whose peer port
    (dport) is in [lo, hi]."""

    def __init__(self, lo: int, hi: int, buffer_kb: int = 8192):
        super().__init__({"tcp_probe": f"dport >= {lo} && dport <= {hi}"}, buffer_kb)
        self.lo, self.hi = lo, hi

    def parse(self, line: str) -> Record | None:
        return parse(line)


@dataclass
class StateEvent:
    t: float            # CLOCK_MONOTONIC seconds
    sport: int
    dport: int
    kind: str           # "state": the socket entered `state`; "retx": it retransmitted
    state: int = 0      # enum tcp_ca_state: 0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss


class CaStates(_Capture):
    """with CaStates(5201, 5299) as c: ...; c.records: every congestion-state change
    (tcp:tcp_cong_state_set) and every retransmitted segment (tcp:tcp_retransmit_skb)
    of the sockets whose peer port is in [lo, hi]: what a run's senders went
    through, whatever their controller (docs/DESIGN.md §6.6)."""

    suffix = "-states"

    def __init__(self, lo: int, hi: int, buffer_kb: int = 4096):
        flt = f"dport >= {lo} && dport <= {hi}"
        super().__init__({"tcp_cong_state_set": flt, "tcp_retransmit_skb": flt}, buffer_kb)

    def parse(self, line: str) -> StateEvent | None:
        m = ANY.search(line)
        if not m or m.group(2) not in ("tcp_cong_state_set", "tcp_retransmit_skb"):
            return None
        f = dict(FIELD.findall(m.group(3)))
        try:
            if m.group(2) == "tcp_cong_state_set":
                return StateEvent(float(m.group(1)), int(f["sport"]), int(f["dport"]), "state",
                                  int(f["cong_state"]))
            return StateEvent(float(m.group(1)), int(f["sport"]), int(f["dport"]), "retx")
        except (KeyError, ValueError):
            return None


def states_available() -> bool:
    return all((TRACEFS / "events" / "tcp" / e).is_dir()
               for e in ("tcp_cong_state_set", "tcp_retransmit_skb"))
