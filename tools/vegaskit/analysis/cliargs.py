"""argparse for the analysis commands: a usage error is one line on stderr, as every
bad input is (docs/DESIGN.md: bad input), not argparse's usage block."""
from __future__ import annotations

import argparse
import sys


class UsageError(Exception):
    pass


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors raise UsageError, for the command to print as one line."""

    def error(self, message: str) -> None:
        raise UsageError(message)


def parse(ap: OneLineParser, argv: list[str] | None, tag: str) -> argparse.Namespace | None:
    """ap's arguments, or None after printing the usage error as one line, `tag: ...`
    (the command then exits 2)."""
    try:
        return ap.parse_args(argv)
    except UsageError as e:
        print(f"{tag}: {e}", file=sys.stderr)
        return None
