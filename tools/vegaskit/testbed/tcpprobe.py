"""Per-ACK records of the kernel's tcp:tcp_probe tracepoint, through tracefs.

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
PREFIX = "vegaskit-probe-"
LINE = re.compile(r"\s(\d+\.\d+): tcp_probe: (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


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


def available() -> bool:
    return (TRACEFS / "events" / "tcp" / "tcp_probe").is_dir()


def _remove(d: Path) -> bool:
    try:
        (d / "events" / "tcp" / "tcp_probe" / "enable").write_text("0")
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
        pid = d.name[len(PREFIX):]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        if _remove(d):
            gone.append(d.name)
    return gone


def sweep_own() -> bool:
    """Remove this process's instance (a capture that was never closed)."""
    d = TRACEFS / "instances" / f"{PREFIX}{os.getpid()}"
    return d.exists() and _remove(d)


class TcpProbe:
    """with TcpProbe(5201, 5299) as p: ...; p.records: every record whose peer port
    (dport) is in [lo, hi]."""

    def __init__(self, lo: int, hi: int, buffer_kb: int = 8192):
        self.lo, self.hi, self.buffer_kb = lo, hi, buffer_kb
        self.dir = TRACEFS / "instances" / f"{PREFIX}{os.getpid()}"
        self.records: list[Record] = []
        self.lost_lines = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._fd = -1

    def __enter__(self) -> "TcpProbe":
        if not available():
            raise RuntimeError(f"no tcp:tcp_probe tracepoint under {TRACEFS} (tracefs mounted?)")
        sweep()
        try:
            self.dir.mkdir()
        except FileExistsError:
            pass
        try:
            (self.dir / "trace_clock").write_text("mono")
            (self.dir / "buffer_size_kb").write_text(str(self.buffer_kb))
            ev = self.dir / "events" / "tcp" / "tcp_probe"
            (ev / "filter").write_text(f"dport >= {self.lo} && dport <= {self.hi}")
            self._fd = os.open(self.dir / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            (ev / "enable").write_text("1")
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
                    r = parse(raw.decode(errors="replace"))
                    if r:
                        self.records.append(r)
                    elif b"LOST" in raw:
                        self.lost_lines += 1
                continue
            if self._stop.is_set():
                return          # drained after the event was switched off
            time.sleep(0.05)

    def _teardown(self) -> None:
        try:
            (self.dir / "events" / "tcp" / "tcp_probe" / "enable").write_text("0")
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
