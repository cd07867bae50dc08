"""The machine a measurement ran on: kernel release and CPU model. Machines of one
kind differ, and what they measure with them (docs/DESIGN.md §3.10, §9.1), so bench
stages and testbed runs both record it."""
from __future__ import annotations

import os
from pathlib import Path


def host() -> str:
    model = next((line.split(":", 1)[1].strip() for line in
                  Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return f"{os.uname().release}, {model}"
