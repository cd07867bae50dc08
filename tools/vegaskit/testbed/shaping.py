"""Kernel-side rate limiting and its drop-tail queue: HTB + pfifo limit N packets.

The queue is watched by polling `tc -s -j qdisc` (QueueMonitor), which yields
(t, backlog packets, drops) samples for the metrics.
"""
from __future__ import annotations

import json
import threading
import time

from .netns import Netns

QDISC_HANDLE = "10:"


def shape(ns: Netns, dev: str, rate_bps: int, limit_pkts: int) -> None:
    """Egress of dev limited to rate_bps with a drop-tail buffer of limit_pkts.

    burst/cburst of one MTU-sized frame keep HTB from releasing back-to-back
    bursts above the rate, so the pfifo is where packets wait.
    """
    ns.run(["tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1"])
    ns.run(["tc", "class", "replace", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
            "rate", f"{rate_bps}bit", "ceil", f"{rate_bps}bit", "burst", "1600", "cburst", "1600"])
    ns.run(["tc", "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", QDISC_HANDLE,
            "pfifo", "limit", str(limit_pkts)])


def qdisc_stats(ns: Netns, dev: str) -> tuple[int, int]:
    """(backlog packets, total drops) of the pfifo under the HTB class."""
    for q in json.loads(ns.run(["tc", "-s", "-j", "qdisc", "show", "dev", dev])):
        if q.get("handle") == QDISC_HANDLE:
            return int(q.get("qlen", 0)), int(q.get("drops", 0))
    raise RuntimeError(f"no pfifo {QDISC_HANDLE} on {dev}")


class QueueMonitor:
    """Samples the bottleneck queue every `interval` seconds in a thread."""

    def __init__(self, ns: Netns, dev: str, interval: float = 0.02):
        self.ns, self.dev, self.interval = ns, dev, interval
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        t0 = time.monotonic()
        while not self._stop.is_set():
            try:
                qlen, drops = qdisc_stats(self.ns, self.dev)
            except Exception:       # namespace torn down under us
                return
            self.samples.append((time.monotonic() - t0, qlen, drops))
            self._stop.wait(self.interval)

    def __enter__(self) -> "QueueMonitor":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def between(self, t0: float, t1: float) -> list[tuple[float, int]]:
        return [(t, q) for t, q, _ in self.samples if t0 <= t <= t1]
