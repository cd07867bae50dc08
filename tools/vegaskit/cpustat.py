"""The host's CPU time so far, from the first line of /proc/stat: the one
reader of it, for the bench's CPU-per-GB figures and the studies' steal time."""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Jiffies(NamedTuple):
    """All CPUs' time so far, in clock ticks (proc(5), /proc/stat "cpu" line)."""
    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def busy(self) -> int:
        """Ticks spent running something (the guest's own work, not steal)."""
        return self.user + self.nice + self.system + self.irq + self.softirq

    @property
    def total(self) -> int:
        return sum(self)


def parse(text: str) -> Jiffies:
    fields = text.split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu":
        raise ValueError(f"not a /proc/stat: first line {fields[:1]}")
    # Kernels before 2.6.11 had no steal column; guest time (later columns) is
    # already counted in user and nice, so it is left out of the total.
    vals = [int(x) for x in fields[1:9]] + [0] * max(0, 8 - len(fields[1:9]))
    return Jiffies(*vals)


def now() -> Jiffies:
    return parse(Path("/proc/stat").read_text())


def busy_s() -> float:
    """Seconds every CPU has spent busy so far: the difference of two is a span's CPU."""
    return now().busy / os.sysconf("SC_CLK_TCK")
