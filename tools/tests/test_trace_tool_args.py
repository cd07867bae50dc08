"""The bcc tools (tools/trace/*.py) refuse bad numbers and a missing root in one
line, before any BPF is compiled: nan and inf parse as floats, and bcc's
compile failure without root is 190 lines of clang errors."""
import os
import shutil
import subprocess
import sys

import pytest

from vegaskit import paths

TOOLS = ["tcpcwnd.py", "tcpccstate.py", "tcpccretrans.py"]
TRACE = paths.REPO / "tools" / "trace"


def tool(name: str, *args: str, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, str(TRACE / name), *args],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.reliability("bad_input")
@pytest.mark.parametrize("name", TOOLS)
@pytest.mark.parametrize("args", [["-d", "nan"], ["-d", "inf"], ["-d", "-1"], ["-d", "1e400"],
                                  ["-d", "x"], ["nan"], ["1", "inf"], ["1", "0"], ["-L", "0"],
                                  ["-R", "70000"], ["-L", "a,b"]])
def test_a_bad_number_is_one_line(name, args):
    r = tool(name, *args, "--ebpf")
    assert r.returncode == 2, r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(name[:-3] + ": error: "), r.stderr


@pytest.mark.parametrize("name", TOOLS)
def test_good_numbers_pass(name):
    r = tool(name, "-d", "2.5", "-L", "5201", "0.5", "3", "--ebpf")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.reliability("bad_input")
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root to drop to an unprivileged user (setpriv)")
@pytest.mark.parametrize("name", TOOLS)
def test_without_root_it_says_so(name):
    r = tool(name, "-d", "1", prefix=["setpriv", "--reuid=65534", "--regid=65534",
                                      "--clear-groups"])
    assert r.returncode == 1, r
    assert r.stderr.strip() == f"{name}: must be run as root (it loads BPF programs): try sudo"
