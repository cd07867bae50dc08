"""argparse for the analysis commands: a usage error is one line on stderr, as every
bad input is (docs/DESIGN.md: bad input), not argparse's usage block."""
from __future__ import annotations

import argparse


class UsageError(Exception):
    pass


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors raise UsageError, for the command to print as one line."""

    def error(self, message: str) -> None:
        raise UsageError(message)
