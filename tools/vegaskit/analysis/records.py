"""Reading what a run wrote: its CSV files (flows.csv, queue.csv, trace.csv, ...)."""
from __future__ import annotations

import csv
from pathlib import Path


def read_csv(path: str | Path) -> list[dict]:
    """Every row as a dict of strings, keyed by the header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
