"""Where vegaskit's programs and data are, for every part of the package.

The package runs from a checkout (`make deps` installs it editable), so the
repository is two levels above this file: vegasctl and linkemu are built into
build/, scenarios live in netns-tests/scenarios/, reports go to results/.
VEGASKIT_BUILD points elsewhere for the built programs; failing both, they
are looked up on PATH (an installed vegasctl).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("VEGASKIT_BUILD", REPO / "build"))
SCENARIOS = REPO / "netns-tests" / "scenarios"
RESULTS = REPO / "results"


def program(name: str) -> Path:
    """A built program: BUILD/name if it is there, else the one on PATH."""
    built = BUILD / name
    if built.exists():
        return built
    found = shutil.which(name)
    return Path(found) if found else built


VEGASCTL = program("vegasctl")
LINKEMU = program("linkemu")
