"""`vegasctl trace --cost`: what a decision costs, timed inside the controller while a
flow runs, with no record written; the timing stops when the reader does
(docs/DESIGN.md §5.1)."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from conftest import VEGASCTL, loaded, vegasctl, vegasctl_json
from test_controller_trace import one_flow
from vegaskit.testbed import runner

pytestmark = [pytest.mark.kernel, pytest.mark.needs_kernel("ringbuf")]


def timed(name: str) -> int:
    """The instance's decisions timed so far, from `vegasctl metrics`."""
    for line in vegasctl("metrics").stdout.splitlines():
        if line.startswith(f'vegaskit_decisions_timed_total{{controller="{name}"}}'):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no vegaskit_decisions_timed_total for {name}")


def test_cost_times_the_decisions_of_a_flow_and_stops_with_the_reader(tmp_path):
    seen = {}

    def cost(db):
        seen["before"] = timed("bpf_vegas")
        p = subprocess.Popen([str(VEGASCTL), "trace", "--cost", "--controller", "bpf_vegas",
                              "--duration", "2", "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        seen["during"] = vegasctl_json("show", "bpf_vegas")["tracing"]
        seen["out"], seen["err"] = p.communicate(timeout=30)
        seen["rc"] = p.returncode
        seen["after"] = vegasctl_json("show", "bpf_vegas")["tracing"]
        time.sleep(0.5)             # a socket sees the bit gone at its next decision
        seen["stopped"] = timed("bpf_vegas")

    def later(db):
        seen["later"] = timed("bpf_vegas")

    # 10 Mbit/s, 40 ms: a decision every RTT or so, about 50 in the 2 s timed
    runner.execute(one_flow("bpf_vegas", 8, trace="off").run("r", "p"), tmp_path,
                   at=[(1.0, cost), (6.5, later)], plots=False)
    assert (seen["rc"], seen["err"]) == (0, ""), seen
    assert seen["during"] == "cost" and seen["after"] == "off"
    (line,) = [json.loads(x) for x in seen["out"].splitlines()]
    assert line["controller"] == "bpf_vegas"
    assert line["decisions_timed"] >= 10, line
    # the counters the reader read agree with what metrics exports
    assert seen["before"] + line["decisions_timed"] <= seen["stopped"]
    # a decision is hundreds of ns to a few us on this machine kind; a clock read tens
    assert 0 < line["ns_per_decision"] < 100_000, line
    # the flows record is a part of the decision (a clock read's error either way)
    assert -line["clock_read_ns"] < line["record_ns_per_decision"] \
        < line["ns_per_decision"] + line["clock_read_ns"], line
    assert 0 < line["clock_read_ns"] < 10_000, line
    # nothing is timed once the reader is gone
    assert seen["later"] == seen["stopped"], seen


def test_cost_with_no_decision_says_so_in_one_line():
    with loaded("vegas", "--name", "vk_cost") as name:
        r = vegasctl("trace", "--cost", "--controller", name, "--duration", "0.2", "--json")
        assert json.loads(r.stdout) == {"controller": name, "decisions_timed": 0,
                                        "ns_per_decision": None,
                                        "record_ns_per_decision": None, "clock_read_ns": None}
        r = vegasctl("trace", "--cost", "--controller", name, "--duration", "0.2")
        assert (r.stdout, r.stderr) == (f"{name}: no decision timed (none of its sockets "
                                        "decided)\n", "")
