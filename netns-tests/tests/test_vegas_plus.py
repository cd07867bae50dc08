"""bpf_vegas_plus in the kernel (docs/DESIGN.md §3.11): a reno flow that joins
and leaves, seen from inside the controller. Its mode changes are decision
records with their reason, the foreign queue they acted on, and they follow
the competitor: competitive while reno holds the buffer, delay mode again once
it has gone. The figures against issue 17's goals are `make vegas-plus`'s."""
from __future__ import annotations

import pytest

from vegaskit.analysis import modes
from vegaskit.analysis.records import data_flow, read_csv
from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario
from vegaskit.testbed.vtrace import parse_csv
from vegaskit.vegasplus import measure

pytestmark = [pytest.mark.kernel, pytest.mark.needs_kernel("ringbuf")]

RENO_FROM, RENO_FOR, END = 3.0, 10.0, 19.0


def traced(out, schedule: str = ""):
    """10 Mbit/s, 20 ms, 30 packets: vegas_plus from 0 to 19 s, reno from 3 to 13 s;
    its summary and the decisions of vegas_plus's data connection."""
    s = Scenario.parse(f"""
name = "t_vegas_plus"
duration = {END}
trace = "decisions"
[links]
bottleneck = {{ rate = "10M", rtt_ms = 20, buffer = 30 }}
[[flows]]
cc = "bpf_vegas_plus"
[[flows]]
cc = "reno"
start = {RENO_FROM}
duration = {RENO_FOR}
{schedule}
[runs]
r = {{}}
[profiles.p]
time_scale = 1.0
""")
    sm = runner.execute(s.run("r", "p"), out)
    assert sm["trace_lost"] == 0, "a lost record would hide a mode change"
    return sm, data_flow(parse_csv((out / "trace.csv").read_text()))


def assert_modes_change_at_their_rules(decisions):
    """The mode a record reports changes only at the rules that change it, and
    each of those rules moves between the modes its name says (modes.TRANSITIONS)."""
    assert modes.misplaced(decisions) == []


@pytest.fixture(scope="module")
def joined(tmp_path_factory):
    out = tmp_path_factory.mktemp("vegas_plus")
    sm, decisions = traced(out)
    return sm, out, decisions


def test_every_mode_change_is_a_decision_record_with_its_reason(joined):
    _, _, decisions = joined
    assert_modes_change_at_their_rules(decisions)
    switched = [r for r in decisions if r["rule"] == "to_compete"]
    assert switched and all(r["foreign"] >= 8 for r in switched)    # foreign_max's default


def test_a_timeout_while_competing_keeps_the_mode_and_the_base_rtt(tmp_path):
    """vegas_plus's access link drops 999 packets in 1000 for 0.4 s while reno holds the
    buffer: its timeout's first retransmission is sent from nothing in flight,
    which the kernel reports as CA_EVENT_TX_START. tcp_vegas.c relearns baseRTT
    there; away from delay mode vegas_plus must not: behind reno's queue the new
    base would be the queued RTT, and the mode would change without a record
    (docs/DESIGN.md §3.11)."""
    at = RENO_FROM + 3
    sm, decisions = traced(tmp_path, f"""
[[schedule]]
at = {at}
link = "s1"
loss = 0.999
[[schedule]]
at = {at + 0.4}
link = "s1"
loss = 0.0
""")
    port = decisions[0]["sport"]
    timeouts = [r for r in read_csv(tmp_path / "castates.csv")
                if int(r["sport"]) == port and r["event"] == "state" and r["state"] == "4"]
    assert timeouts, "no timeout: the blackout did not test the event"
    t0 = decisions[0]["time_s"]
    before = [r for r in decisions if r["time_s"] - t0 < at]
    assert before[-1]["mode"] != "delay", "not competing when the blackout began"
    base = min(r["base_rtt_us"] for r in before)
    after = [r for r in decisions if at <= r["time_s"] - t0 < RENO_FROM + RENO_FOR]
    worst = max(r["base_rtt_us"] for r in after)
    assert worst <= 1.2 * base, f"baseRTT {base} us before the timeout, {worst} us after"
    assert_modes_change_at_their_rules(decisions)


def test_the_mode_follows_the_competitor(joined):
    """Delay mode alone, competitive while reno holds the buffer (probing every
    2.048 s; at most a fifth of its rounds back in delay mode), delay mode within two probe periods after reno has gone (issue
    17's goal is 5 s); the queue then goes back to vegas_plus's own beta + 1."""
    sm, out, decisions = joined
    t0 = decisions[0]["time_s"]
    reno = sm["flows"][1]
    at = [(r["time_s"] - t0, r) for r in decisions]
    assert all(r["mode"] == "delay" for t, r in at if t < reno["start_s"] - 0.5)
    first = next(t for t, r in at if r["rule"] == "to_compete")
    assert reno["start_s"] < first < reno["start_s"] + 3
    held = [r["mode"] for t, r in at if first < t < reno["end_s"] - 0.5]
    # a probe right after reno halves can find the path briefly its own and pass; the
    # detector takes it back within rounds (a CI run: 14 delay rounds of about 400)
    assert held.count("delay") <= 0.2 * len(held) and "probe" in held
    # the return is the last to_delay. A probe while reno's last window drains can
    # pass and be recalled rounds later (a run: to_delay 0.56 s before reno's
    # recorded end, recall 0.12 s after it), or already find the path empty
    back = max(t for t, r in at if r["rule"] == "to_delay")
    # a probe that falls while reno's last window is still queued fails; the next one,
    # 2.048 s on, sees the path empty: two probe periods and their rounds (CI saw 3.14 s)
    assert back - reno["end_s"] < 2 * 2.048 + 0.5
    assert all(r["mode"] == "delay" for t, r in at if t >= back), "left delay mode again"
    steps = measure.queue_steps(out)
    assert measure.queue_mean(steps, back + 2, sm["duration_s"]) <= measure.BAND_PKTS


def test_it_holds_a_share_where_vegas_starves(joined):
    """While reno runs, vegas_plus's rate is at least half of reno's (classic
    Vegas gets about a tenth beside reno: results/vegas_plus/report.md)."""
    _, out, _ = joined
    rates: dict[str, list[float]] = {"1": [], "2": []}
    for r in read_csv(out / "flows.csv"):
        if RENO_FROM + 4 <= float(r["t0_s"]) and float(r["t1_s"]) <= RENO_FROM + RENO_FOR:
            rates[r["flow"]].append(float(r["bps"]))
    ours, reno = (sum(v) / len(v) for v in (rates["1"], rates["2"]))
    assert ours >= 0.5 * reno, (ours, reno)
