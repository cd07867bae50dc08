"""What the live-host tests share: byte-checked connections (checkstream),
the controllers of a namespace's sockets as ss reads them, and cubic allowed
as a namespace default for a test's duration."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from vegaskit.testbed.netns import Lab, Netns

ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


@pytest.fixture
def allow_cubic():
    before = ALLOWED.read_text().split()
    if "cubic" not in before:
        ALLOWED.write_text(" ".join(before + ["cubic"]))
    try:
        yield
    finally:
        ALLOWED.write_text(" ".join(before))


def socket_ccs(ns: Netns, port: int) -> list[str]:
    """The controller of every established socket to `port`, read by ss from the kernel."""
    out = ns.run(["ss", "-tinH", "state", "established", f"( dport = :{port} )"])
    return [line.split()[0] for line in out.splitlines() if line.startswith(("\t", " "))]


def spawn_checkstream(lab: Lab, ns: Netns, *args: str):
    return lab.spawn(ns, [sys.executable, "-m", "vegaskit.testbed.checkstream", *args])


def wait_for(pred, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def check_complete(server_report: Path, client_report: Path, conns: int) -> None:
    """Every connection: same byte count at both ends, no corruption, no reset, clean close."""
    srv = json.loads(server_report.read_text())
    cli = json.loads(client_report.read_text())
    assert len(srv) == conns and len(cli) == conns
    for cid, c in cli.items():
        s = srv[cid]
        assert not c["reset"] and not c["error"], (cid, c)
        assert c["closed_cleanly"], (cid, c)
        assert not s["reset"] and not s["corrupt"] and s["eof"], (cid, s)
        assert s["bytes"] == c["bytes"] > 0, (cid, s, c)
