"""argparse for every vegaskit command: a usage error is one line on stderr and exit
status 2, as every bad input is (docs/DESIGN.md: bad input), not argparse's usage
block above it."""
from __future__ import annotations

import argparse
import math
import os
import sys


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

# What reading a JSON document of another shape than ours raises (a field missing, a list
# where an object was, a string where a number was): a rerender's input error, one line.
NOT_OURS = (KeyError, TypeError, IndexError, AttributeError)


def positive_seconds(text: str) -> float:
    """argparse type of a duration: a finite number of seconds above 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not a number of seconds") from None
    if not (x > 0 and math.isfinite(x)):
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0")
    return x


def env_number(name: str, default: float, kind: type = int, tag: str = "vegaskit"):
    """A number from the environment (JOBS, AB_REPS, VM_TIMEOUT: make passes its
    command-line variables there), read once as a parser's default. A value that is not
    a number is one line on stderr and exit status 2, not a traceback; unset or empty is
    the default."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    why = f"not {'an integer' if kind is int else 'a number'}"
    try:
        x = kind(raw)                   # kind may be an argparse type such as positive_seconds
    except argparse.ArgumentTypeError as e:
        x, why = None, str(e).removeprefix(f"{raw!r}: ")
    except ValueError:
        x = None
    if x is None or not math.isfinite(x):
        print(f"{tag}: {name}={raw!r}: {why}", file=sys.stderr)
        sys.exit(2)
    return x
