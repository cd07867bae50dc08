"""Every vegaskit command takes a usage error as all bad input: one line on stderr,
exit 2, nothing on stdout, no traceback (docs/DESIGN.md: bad input). argparse's own
error() prints the usage block above that line; vegaskit.cliargs.OneLineParser does
not, and each command is built on it."""
import re
import subprocess
import sys

import pytest

from vegaskit import paths

PKG = paths.REPO / "tools" / "vegaskit"


def commands() -> list[str]:
    """The package's modules that parse a command line with OneLineParser."""
    return sorted(".".join(("vegaskit", *p.relative_to(PKG).with_suffix("").parts))
                  for p in PKG.rglob("*.py")
                  if "OneLineParser(" in p.read_text() and p.name != "cliargs.py")


def test_no_command_builds_argparse_s_own_parser():
    plain = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
             if re.search(r"argparse\.ArgumentParser\(", p.read_text())]
    assert not plain, f"use vegaskit.cliargs.OneLineParser in {plain}"


def test_the_commands_are_found():
    assert {"vegaskit.cli.results", "vegaskit.cli.bench", "vegaskit.analysis.model",
            "vegaskit.testbed.transfer"} <= set(commands())


# cli.reliability hands arguments it does not know to pytest, whose usage error is its own
@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("module", [m for m in commands() if m != "vegaskit.cli.reliability"])
def test_an_unknown_option_is_one_line_and_exit_2(module):
    r = subprocess.run([sys.executable, "-m", module, "--no-such-option"],
                       capture_output=True, text=True, timeout=120)
    tag = module.rsplit(".", 1)[-1]
    assert r.returncode == 2, r
    assert r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"{tag}: error: "), r.stderr
