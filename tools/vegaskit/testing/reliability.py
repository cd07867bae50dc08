"""Counts what the hardening tests tried (issue 12, docs/DESIGN.md §9).

A pytest plugin (pytest.ini loads it). A test marked
`@pytest.mark.reliability("bad_input" | "race" | "kill_point")` is one case
unless it calls `case()` itself: once per fuzz example or race round. With
VK_RELIABILITY_OUT set, the session writes every marked test's kind, case count
and outcome there as JSON; `python -m vegaskit.cli.reliability` runs the marked
tests and turns that file into results/reliability/report.md.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

KINDS = {
    "bad_input": "bad inputs tried",
    "race": "races run (rounds)",
    "kill_point": "kill points",
}

_cases: Counter = Counter()
_rows: list[dict] = []


def _current() -> str:
    """The running test's node id ("path::name[params] (call)" without the phase)."""
    return os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]


def case(n: int = 1) -> None:
    """Count n cases for the running test (a fuzz example, a race round)."""
    _cases[_current()] += n


def pytest_configure(config):
    config.addinivalue_line("markers", "reliability(kind): a hardening test, counted by "
                            "`make reliability` (kinds: " + ", ".join(KINDS) + ")")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    rep = (yield).get_result()
    mark = item.get_closest_marker("reliability")
    if mark is None:
        return
    kind = mark.args[0]
    if kind not in KINDS:
        raise pytest.UsageError(f"{item.nodeid}: reliability kind {kind!r} is not one of {list(KINDS)}")
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        row = {"test": item.nodeid, "kind": kind, "outcome": rep.outcome,
               "cases": _cases.get(item.nodeid, 0) or 1}
        if rep.skipped:                 # (path, line, "Skipped: why"): the report says why
            why = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
            row["reason"] = why.removeprefix("Skipped: ")
        _rows.append(row)
    elif rep.when == "teardown" and rep.failed:
        # the leak checks run in teardown: a test that left state behind failed
        for row in _rows:
            if row["test"] == item.nodeid:
                row["outcome"] = "failed"


def pytest_sessionfinish(session):
    out = os.environ.get("VK_RELIABILITY_OUT")
    if out:
        Path(out).write_text(json.dumps(_rows, indent=1) + "\n")
