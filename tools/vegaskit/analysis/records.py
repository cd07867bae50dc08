"""Reading what a run wrote: its CSV files (flows.csv, queue.csv, trace.csv, ...)."""
from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path


def thresholds_seen(decisions: list[dict]) -> Iterator[tuple[dict, tuple[int, int] | None]]:
    """One flow's decision records, each with the (alpha, beta) in force when it was
    taken: those the last earlier record that had any left (a record carries them after
    its own update, 0 where the controller had none yet); None before the first."""
    held = None
    for r in decisions:
        yield r, held
        alpha, beta = int(r.get("alpha") or 0), int(r.get("beta") or 0)
        if beta:
            held = (alpha, beta)


def data_flow(records: list[dict]) -> list[dict]:
    """Decisions of the iperf3 data connection: of parsed trace records (vtrace.parse_csv),
    the decisions of the connection with the most of them; [] where there are none."""
    by_port: dict[int, list[dict]] = {}
    for r in records:
        if r["type"] == "decision":
            by_port.setdefault(r["sport"], []).append(r)
    return max(by_port.values(), key=len) if by_port else []


def read_csv(path: str | Path) -> list[dict]:
    """Every row as a dict of strings, keyed by the header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
