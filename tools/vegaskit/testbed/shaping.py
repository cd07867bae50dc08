"""Kernel-side rate limiting and its drop-tail queue: HTB + pfifo limit N packets.

The queue is watched by polling `tc -s -j qdisc` (QueueMonitor), which yields
(t, backlog packets, drops) samples for the metrics.
"""
from __future__ import annotations

import json
import time

from .netns import Netns
from .sampler import Sampler

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


class QueueMonitor(Sampler):
    """Samples the bottleneck queue every `interval` seconds: (t, backlog, drops)."""

    def __init__(self, ns: Netns, dev: str, interval: float = 0.02):
        super().__init__(interval)
        self.ns, self.dev = ns, dev
        self.samples: list[tuple[float, int, int]] = []
        self._t0: float | None = None

    def sample(self) -> bool:
        if self._t0 is None:
            self._t0 = time.monotonic()
        try:
            qlen, drops = qdisc_stats(self.ns, self.dev)
        except Exception:       # namespace torn down under us
            return False
        self.samples.append((time.monotonic() - self._t0, qlen, drops))
        return True

    def between(self, t0: float, t1: float) -> list[tuple[float, int]]:
        return [(t, q) for t, q, _ in self.samples if t0 <= t <= t1]
