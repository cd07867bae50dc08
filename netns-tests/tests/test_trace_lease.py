"""A `vegasctl trace` killed with SIGKILL cannot switch tracing off: its lease
(VK_TRACE_LEASE_NS, 1 s) runs out instead, `show` says so, and the next trace
prints nothing the dead reader left in the ring as live."""
from __future__ import annotations

import signal
import subprocess
import time

import pytest

from conftest import VEGASCTL, vegasctl_json
from test_controller_trace import one_flow
from vegaskit.testbed import runner
from vegaskit.testbed.vtrace import parse_csv

pytestmark = [pytest.mark.kernel, pytest.mark.needs_kernel("ringbuf")]


def tracing(name: str) -> str:
    return vegasctl_json("show", name)["tracing"]


@pytest.mark.reliability("kill_point")
def test_a_killed_reader_stops_tracing_and_leaves_nothing_live(tmp_path):
    seen = {}

    def kill_reader(db):
        p = subprocess.Popen([str(VEGASCTL), "trace", "--acks"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        seen["alive"] = tracing("bpf_vegas")
        p.send_signal(signal.SIGKILL)
        p.wait()
        seen["killed_at"] = time.monotonic()
        time.sleep(2.0)             # the lease is 1 s: within 2 s tracing must be off
        seen["after"] = tracing("bpf_vegas")
        seen["after_text"] = subprocess.run([str(VEGASCTL), "show", "bpf_vegas"],
                                            capture_output=True, text=True).stdout

    def next_reader(db):
        seen["next_start"] = time.monotonic()
        r = subprocess.run([str(VEGASCTL), "trace", "--acks", "--csv", "--duration", "1"],
                           capture_output=True, text=True, timeout=30)
        seen["next"] = parse_csv(r.stdout)

    runner.execute(one_flow("bpf_vegas", 9, trace="off").run("r", "p"), tmp_path,
                   at=[(1.0, kill_reader), (5.5, next_reader)], plots=False)
    assert seen["alive"] == "acks"
    assert seen["after"] == "off (reader gone)"
    assert "[tracing: off (reader gone)]" in seen["after_text"]
    recs = seen["next"]
    assert len(recs) > 50, "the next reader saw no ACKs: the flow or the trace is broken"
    oldest = min(r["time_s"] for r in recs)
    assert oldest >= seen["next_start"] - 0.05, \
        f"a record from {seen['next_start'] - oldest:.1f} s before the reader started was printed"
