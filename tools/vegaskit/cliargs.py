"""argparse for every vegaskit command: a usage error is one line on stderr and exit
status 2, as every bad input is (docs/DESIGN.md: bad input), not argparse's usage
block above it."""
from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors (parse_args's and the command's own ap.error())
    print `NAME: error: MESSAGE` alone and exit 2. NAME is the command's short name,
    the one its other errors start with: `python -m vegaskit.cli.bench` -> bench, and
    a subcommand's (`python -m vegaskit.analysis.plots trace`) -> plots."""

    @property
    def tag(self) -> str:
        words = self.prog.split()
        if words[:2] == ["python", "-m"]:
            words = words[2:]
        return words[0].removesuffix(".py").rsplit(".", 1)[-1]

    def error(self, message: str) -> None:
        self.exit(2, f"{self.tag}: error: {message}\n")


def parse(ap: OneLineParser, argv: list[str] | None) -> argparse.Namespace | None:
    """ap's arguments, or None after a usage error's line, for a main() that returns
    its exit status (2) rather than exiting; --help still exits 0."""
    try:
        return ap.parse_args(argv)
    except SystemExit as e:
        if e.code == 2:
            return None
        raise
