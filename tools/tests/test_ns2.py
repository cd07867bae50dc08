"""The ns-2 cross-check (docs/DESIGN.md §7.2): which runs map to which agents, the
script's topology, real ns-2 runs whose knobs visibly reach the agents, and the
command's handling of bad input. ns-2 comes from `make deps`; without it these fail.
Our Vegas-A and PIPE agents run only in the ns `make ns2` builds (3 minutes of
compiling, kept out of this suite): ns2/check.py checks them there, before any replay;
here, their mapping, their script and the refusal when that ns is missing."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vegaskit import paths
from vegaskit.ns2 import agents, report, script, sim
from vegaskit.ns2.agents import Unmapped
from vegaskit.testbed.scenario import Scenario

SCEN = paths.SCENARIOS

# One file of 1 MB over 1 Mbit/s, 40 ms, 50 packets: NewReno's window, if open,
# overruns the buffer; ns-2's default window_ of 20 packets cannot.
SMALL = """
name = "ns2_small"
duration = 60
[links]
access = { rate = "10M", rtt_ms = 0 }
bottleneck = { rate = "1M", rtt_ms = 40 }
egress = { rate = "10M", rtt_ms = 0 }
[[flows]]
cc = "{cc}"
bytes = 1_000_000
[controllers]
vk_ns2 = "vegas --preset ns2"
[runs]
reno = { cc = "reno" }
vegas = { cc = "vk_ns2" }
vegas_linux = { cc = "bpf_vegas" }
[profiles.full]
reps = 2
start_jitter_s = 0.5
[paper]
[[paper.figures]]
id = "Vegas retransmits nothing"
run = "vegas"
metric = "retransmits"
value = 0
"""


def small(tmp_path) -> Scenario:
    p = tmp_path / "ns2_small.toml"
    p.write_text(SMALL)
    return Scenario.load(p)


def test_agents_map_the_papers_arithmetic_only():
    ns2 = agents.agent_for("vk", {"vk": "vegas --preset ns2"})
    assert ns2.tcl_class == "Agent/TCP/Vegas" and not ns2.ours
    assert dict(ns2.settings) == {"v_alpha_": "1", "v_beta_": "3", "v_gamma_": "1"}
    # explicit values after the preset win, as in vegasctl
    eq = agents.agent_for("vk", {"vk": "vegas --preset eq20 semantics=paper alpha=7"})
    assert dict(eq.settings)["v_alpha_"] == "7" and dict(eq.settings)["v_beta_"] == "20"
    assert agents.agent_for("reno", {}) is agents.NEWRENO
    # Vegas-A and PIPE are ours, on their defaults (the papers') or an instance's values
    va = agents.agent_for("bpf_vegas_a", {})
    assert va.tcl_class == "Agent/TCP/Vegas/A" and va.ours
    assert dict(va.settings) == {"v_alpha_": "1", "v_beta_": "3", "v_gamma_": "1",
                                 "alpha_max_": "64", "th_tie_": "0.5"}
    pipe = agents.agent_for("vk", {"vk": "pipe th_tie=0 alpha_max=8"})
    assert pipe.tcl_class == "Agent/TCP/Vegas/Pipe" and pipe.ours
    assert dict(pipe.settings)["th_tie_"] == "0" and dict(pipe.settings)["alpha_max_"] == "8"
    for cc, ctl in (("bpf_vegas", {}), ("bpf_vegas_fr", {}), ("cubic", {}),
                    ("vk", {"vk": "vegas --preset linux"}),        # exact arithmetic
                    ("vk", {"vk": "vegas_a semantics=exact"}),
                    ("vk", {"vk": "vegas_fr"})):
        with pytest.raises(Unmapped):
            agents.agent_for(cc, ctl)


def test_our_agents_script_sets_their_class_and_reads_their_decisions():
    s = Scenario.load(SCEN / "mixed_3v3.toml")
    text = script.build(s.run("vegas_a_tie0", "full", 0), script.VARIANTS["text"])
    # a class default for each of our variables before the first `new`, then each flow's own
    first_new = text.index("[new Agent/TCP/Vegas/A]")
    assert text.index("Agent/TCP/Vegas/A set alpha_max_ 0; Agent/TCP/Vegas/A set th_tie_ 0\n") \
        < first_new
    assert text.count("Agent/TCP/Vegas/A set") == 2       # one class default each, once
    assert "$tcp1 set alpha_max_ 64; $tcp1 set th_tie_ 0;" in text
    assert "[$tcp1 vk-stats]" in text            # Vegas-A's decisions per rule
    assert "[$tcp4 vk-stats]" not in text         # NewReno has none
    assert "Agent/TCP/Vegas/A set" not in script.build(s.run("vegas", "full", 0),
                                                     script.VARIANTS["text"])


def test_script_has_the_scenarios_links_split_evenly():
    s = Scenario.load(SCEN / "rerouting.toml")
    text = script.build(s.run("vegas", "full", 0), script.VARIANTS["text"])
    # access 1 Mbit/s with RTT 20 ms: 10 ms each way; R1-R2 10 ms RTT: 5 ms each way
    assert "$ns duplex-link $s1 $r1 1000000 0.010000 DropTail" in text
    assert "$ns duplex-link $r1 $r2 1000000 0.005000 DropTail" in text
    assert "$ns queue-limit $r1 $r2 50" in text
    # the reroute at 20 s (plus no jitter in rep 0's schedule): 200 ms RTT, 100 ms each way
    assert "$ns at 20.000000 {[[$ns link $s1 $r1] link] set delay_ 0.100000}" in text
    assert "v_alpha_ 1; $tcp1 set v_beta_ 3" in text
    doubled = script.build(s.run("vegas", "full", 0), script.VARIANTS["delay_as_written"])
    assert "$ns duplex-link $s1 $r1 1000000 0.020000 DropTail" in doubled


def test_vegas_run_in_ns2_is_the_agents(tmp_path):
    run = small(tmp_path).run("vegas", "full", 0)
    sm = sim.simulate(run, script.VARIANTS["text"])
    fl = sm["flows"][0]
    assert fl["bytes"] == 1_000_000 and sm["retransmits"] == 0
    # 1,000 packets of 1,000 bytes (ns-2's Vegas adds no header) at 1 Mbit/s: 8 s on the wire
    assert 8.0 < fl["completion_s"] < 8.0 + 2.0
    # the backlog it holds is Vegas's band (alpha 1 to beta 3), not a full buffer
    assert 0.3 < sm["queue_mean_pkts"] < 4
    assert sm["deepest_queue_link"] == "bottleneck"


def test_window_knob_reaches_newreno(tmp_path):
    run = small(tmp_path).run("reno", "full", 0)
    closed = sim.simulate(run, script.VARIANTS["text"])
    opened = sim.simulate(run, script.VARIANTS["open_window"])
    # window_ 20 < buffer 50 + BDP 3.3: never a drop; an open window overruns the buffer
    assert closed["bottleneck_drops"] == 0 and closed["retransmits"] == 0
    assert opened["bottleneck_drops"] > 0
    assert opened["queue_mean_pkts"] > closed["queue_mean_pkts"]
    assert opened["retransmits"] > 0


def test_window_outside_fast_recovery_leaves_out_the_inflated_samples(tmp_path):
    """cwnd_ grows by a packet per duplicate ACK in the agents' fast recovery, where
    Linux's PRR lowers the window: cwnd_open_median_kb counts only samples with no
    duplicate ACK outstanding; cwnd_median_kb counts them all."""
    run = small(tmp_path).run("reno", "full", 0)
    start = run.flows[0].start
    # second half of a 10 s life: 10 samples at 8 packets, 12 inflated to 20 (dupacks 3..14)
    cwnd = [[start + 5 + i * 0.3, 8, 0, 7] for i in range(10)] + \
           [[start + 8 + i * 0.15, 20, 3 + i, 7] for i in range(12)]
    res = {"t_end": start + 10, "meta": {"flows": [{"size": 1000, "stop": None}]},
           "flows": [{"done": start + 10, "ack": 999, "cwnd": cwnd, "retx": 1, "data": 1001}],
           "links": {"bottleneck": {"samples": [0], "sum": 0.0, "drops": 1,
                                    "dep_bytes": 1_000_000}}}
    fl = sim.summarise(run, script.VARIANTS["text"], res)["flows"][0]
    assert fl["cwnd_open_median_kb"] == 8.0
    assert fl["cwnd_median_kb"] > fl["cwnd_open_median_kb"]
    assert fl["outstanding_median_pkts"] == 7


def test_report_tabulates_the_windows_only_where_summaries_carry_them():
    def sm(run, variant, **fl):
        flows = [{"flow": 1, "avg_bps": 1, "cwnd_median_kb": 20.0, **fl},
                 {"flow": 2, "avg_bps": 1}]
        return {"run": run, "variant": variant, "flows": flows,
                "links": {"d1": {"queue_mean_pkts": 5.0}, "d2": {"queue_mean_pkts": 2.0}}}
    new = dict(cwnd_open_median_kb=18.0, outstanding_median_pkts=12)
    lines = report._windows([sm("eq20", "text", **new)] * 6 + [sm("reno", "text")], ["text"])
    rows = [ln for ln in lines if ln.startswith("| eq20 ") or ln.startswith("| reno ")]
    # the egress column: the flows' egress queues (5 and 2 packets) averaged
    assert rows == ["| eq20 | text | 20 [20, 20] (6) | 18 [18, 18] (6) | 12 [12, 12] (6) "
                    "| 3.5 [3.5, 3.5] (6) |"]
    assert report._windows([sm("reno", "text")], ["text"]) == []


def test_unmapped_run_refused_in_one_line(tmp_path):
    with pytest.raises(Unmapped, match="Linux's Vegas .exact arithmetic"):
        script.build(small(tmp_path).run("vegas_linux", "full", 0), script.VARIANTS["text"])


def test_a_run_of_our_agents_needs_the_built_ns(tmp_path, monkeypatch, capsys):
    """Without the ns make ns2 builds, a Vegas-A run is refused in one line, before any
    simulation, and nothing is written."""
    from vegaskit.cli import ns2 as cli
    monkeypatch.setattr(sim, "BUILT", tmp_path / "absent" / "ns")
    sc = tmp_path / "ns2_small.toml"
    sc.write_text(SMALL.replace('vegas_linux = { cc = "bpf_vegas" }',
                                'vegas_a = { cc = "bpf_vegas_a" }'))
    with pytest.raises(RuntimeError, match="is not built: make ns2 builds it"):
        sim.simulate(Scenario.load(sc).run("vegas_a", "full", 0), script.VARIANTS["text"])
    assert cli.main([str(sc), "--out", str(tmp_path / "res"), "--variant", "text"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "absent/ns is not built: make ns2 builds it" in err[0]
    assert not (tmp_path / "res" / "ns2").exists()


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vegaskit.cli.ns2", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_writes_a_report_and_keeps_other_variants(tmp_path):
    sc = tmp_path / "ns2_small.toml"
    sc.write_text(SMALL)
    out = tmp_path / "res"
    r = _cli(str(sc), "--out", str(out), "--variant", "text", "--variant", "open_window")
    assert r.returncode == 0, r.stderr
    sms = json.loads((out / "ns2" / "ns2_small" / "summaries.json").read_text())
    assert {(sm["run"], sm["variant"]) for sm in sms} == \
        {(r_, v) for r_ in ("reno", "vegas") for v in ("text", "open_window")}
    assert len(sms) == 8                                  # 2 runs x 2 variants x 2 reps
    rep = (out / "ns2" / "report.md").read_text()
    assert "## ns2_small" in rep and "| Vegas retransmits nothing | 0 | 0 [0, 0] (2, 50%) |" in rep
    assert "`vegas_linux`: Linux's Vegas (exact arithmetic, alpha 2, beta 4): no ns-2 agent" in rep
    # a rerun of one variant replaces only its summaries
    r = _cli(str(sc), "--out", str(out), "--variant", "linux_like", "--reps", "1")
    assert r.returncode == 0, r.stderr
    sms = json.loads((out / "ns2" / "ns2_small" / "summaries.json").read_text())
    assert sorted({sm["variant"] for sm in sms}) == ["linux_like", "open_window", "text"]
    # a run that gained an agent since (here: a new run) is named as not replayed yet
    sc.write_text(SMALL.replace('vegas = { cc = "vk_ns2" }',
                                'vegas = { cc = "vk_ns2" }\nvegas2 = { cc = "vk_ns2" }'))
    r = _cli(str(sc), "--out", str(out), "--rerender")
    assert r.returncode == 0, r.stderr
    rep = (out / "ns2" / "report.md").read_text()
    assert "**Not replayed yet**, though their agents exist: `vegas2` " \
           "(`make ns2 SCENARIOS=ns2_small.toml` replays them)" in rep
    # --run replays that run alone and keeps every other run's summaries
    before = {(sm["run"], sm["variant"], sm["rep"]) for sm in sms}
    r = _cli(str(sc), "--out", str(out), "--variant", "text", "--run", "vegas2")
    assert r.returncode == 0, r.stderr
    after = {(sm["run"], sm["variant"], sm["rep"])
             for sm in json.loads((out / "ns2" / "ns2_small" / "summaries.json").read_text())}
    assert after == before | {("vegas2", "text", 0), ("vegas2", "text", 1)}
    # a rerun of a stored run replaces its summaries, it does not add to them
    r = _cli(str(sc), "--out", str(out), "--variant", "text", "--run", "vegas")
    assert r.returncode == 0, r.stderr
    again = json.loads((out / "ns2" / "ns2_small" / "summaries.json").read_text())
    assert len(again) == len(after)


@pytest.mark.parametrize("args, says", [
    (["--variant", "bogus"], "no variant 'bogus'"),
    (["--reps", "0"], "--reps must be 1 to 100"),
    (["--profile", "nope"], "no profile 'nope'"),
    (["--run", "nope"], "no run 'nope'"),
    (["--run", "vegas_linux"], "run 'vegas_linux' cannot be replayed"),
    (["/nonexistent.toml"], "No such file"),
])
def test_cli_bad_input_is_one_line(args, says, tmp_path):
    r = _cli(*args, "--out", str(tmp_path))
    assert r.returncode == 2
    assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "ns2").exists()


def test_sigkill_of_the_command_leaves_no_ns(tmp_path):
    """A killed command takes its simulations with it (pdeathsig on each ns)."""
    import os
    import signal
    import time
    sc = tmp_path / "ns2_small.toml"
    # a transfer ns needs minutes for, under a run name no other simulation has
    sc.write_text(SMALL.replace("bytes = 1_000_000", "bytes = 900_000_000")
                  .replace("duration = 60", "duration = 20000")
                  .replace('reno = { cc = "reno" }', 'killme = { cc = "reno" }'))
    p = subprocess.Popen([sys.executable, "-m", "vegaskit.cli.ns2", str(sc), "--out",
                          str(tmp_path / "res"), "--variant", "text", "--reps", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    deadline = time.monotonic() + 30
    while not _ns_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ns_pids(), "no ns process started"
    os.kill(p.pid, signal.SIGKILL)          # the parent only: its workers and ns must follow
    p.wait()
    deadline = time.monotonic() + 15
    while _ns_pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _ns_pids()


def _ns_pids() -> list[str]:
    r = subprocess.run(["pgrep", "-f", "vegaskit-ns2-.*/killme[.]tcl"],
                       capture_output=True, text=True)
    return r.stdout.split()


def test_random_loss_reaches_the_link(tmp_path):
    """A scenario's loss becomes an ns-2 ErrorModel: a Vegas flow that loses nothing on a
    clean link retransmits under 2% loss."""
    p = tmp_path / "lossy.toml"
    p.write_text(SMALL.replace('bottleneck = { rate = "1M", rtt_ms = 40 }',
                               'bottleneck = { rate = "1M", rtt_ms = 40, loss = 0.02 }'))
    sm = sim.simulate(Scenario.load(p).run("vegas", "full", 0), script.VARIANTS["text"])
    assert sm["retransmits"] > 0 and sm["flows"][0]["bytes"] == 1_000_000


def test_a_diagnostic_variant_runs_only_when_named_and_only_where_it_changes_something(tmp_path):
    quarter = script.VARIANTS["newreno_quarter"]
    assert {"newreno_quarter", "newreno_abc", "linux_like_ack_every",
            "vegas_halve"}.isdisjoint(script.DEFAULT)
    assert "linux_like" in script.DEFAULT
    s = small(tmp_path)
    reno, vegas = (script.agents(s.run(r, "full", 0)) for r in ("reno", "vegas"))
    assert quarter.changes(reno) and not quarter.changes(vegas)
    assert script.VARIANTS["text"].changes(vegas)
    assert script.VARIANTS["linux_like_ack_every"].changes(vegas)     # every agent's ACKs
    halve = script.VARIANTS["vegas_halve"]
    assert halve.changes(vegas) and not halve.changes(reno)


def test_newreno_quarter_reaches_newreno_in_ns2(tmp_path):
    """NewReno's cut (decrease_num_) set by the variant: after its first loss, which
    halves (tcp.cc slowdown), a loss leaves 3/4 of the window, so its window over the
    second half is larger than under linux_like, whose every cut halves."""
    # 5 MB through a 10-packet buffer: losses in congestion avoidance, not only the
    # first (which halves under either) and timeouts (which halve too)
    p = tmp_path / "ns2_small.toml"
    p.write_text(SMALL.replace("bytes = 1_000_000", "bytes = 5_000_000")
                 .replace('rtt_ms = 40 }', 'rtt_ms = 40, buffer = 10 }'))
    run = Scenario.load(p).run("reno", "full", 0)
    text = script.build(run, script.VARIANTS["newreno_quarter"])
    assert "Agent/TCP/Newreno set decrease_num_ 0.75" in text
    half, quarter = (sim.simulate(run, script.VARIANTS[v]) for v in ("linux_like", "newreno_quarter"))
    assert half["flows"][0]["retransmits"] > 0          # it met losses
    assert quarter["flows"][0]["cwnd_median_kb"] > half["flows"][0]["cwnd_median_kb"]


def test_report_lists_the_per_rep_runs_repetition_by_repetition():
    def sm(run, rep, bps, alpha=None):
        fl = {"label": "S1 vk", "avg_bps": bps}
        if alpha is not None:
            fl["decisions"] = {"alpha_mean": alpha}
        return {"run": run, "variant": "text", "rep": rep, "flows": [fl]}
    sms = [sm("vegas_a", 1, 2000, 1.5), sm("vegas_a", 0, 1000, 1.0), sm("reno", 0, 5)]
    lines = report._per_rep(sms, ["text"], ["vegas_a"])
    rows = [ln for ln in lines if ln.startswith("| vegas_a ")]
    assert rows == ["| vegas_a | text | 0 | S1 1,000 | S1 1 |",
                    "| vegas_a | text | 1 | S1 2,000 | S1 1.5 |"]
    assert not any(ln.startswith("| reno ") for ln in lines)    # not listed
    assert report._per_rep(sms, ["text"], []) == []


def test_newreno_abc_reaches_newreno_in_ns2(tmp_path):
    """NewReno's growth (increase_num_) set by the variant: with two packets a round
    where linux_like adds one, the same file meets its buffer's limit more often."""
    p = tmp_path / "ns2_small.toml"
    p.write_text(SMALL.replace("bytes = 1_000_000", "bytes = 5_000_000")
                 .replace('rtt_ms = 40 }', 'rtt_ms = 40, buffer = 10 }'))
    run = Scenario.load(p).run("reno", "full", 0)
    assert "Agent/TCP/Newreno set increase_num_ 2.0" in \
        script.build(run, script.VARIANTS["newreno_abc"])
    one, two = (sim.simulate(run, script.VARIANTS[v]) for v in ("linux_like", "newreno_abc"))
    assert two["bottleneck_drops"] > one["bottleneck_drops"] > 0
    # the loss rate counts the queue's arrivals, the dropped packets among them
    arrived = one["links"]["bottleneck"]["arrivals"]
    assert arrived > one["bottleneck_drops"]
    assert one["bottleneck_loss_rate"] == round(one["bottleneck_drops"] / arrived, 6)


def test_vegas_halve_sets_our_knob_and_needs_our_ns(tmp_path, monkeypatch):
    """vk_halve_ is bound only in the ns make ns2 builds (tools/ns2agent/build.sh; ns2/check.py
    checks there that it reaches the agent): the variant sets it, no other does, and a run
    under it asks for our ns even when its agents are Debian's."""
    run = small(tmp_path).run("vegas", "full", 0)
    assert "Agent/TCP/Vegas set vk_halve_ 1" in script.build(run, script.VARIANTS["vegas_halve"])
    assert "vk_halve_" not in script.build(run, script.VARIANTS["linux_like"])
    monkeypatch.setattr(sim, "BUILT", tmp_path / "no-ns")
    with pytest.raises(RuntimeError, match="make ns2 builds it"):
        sim.simulate(run, script.VARIANTS["vegas_halve"])
    assert sim.simulate(run, script.VARIANTS["linux_like"])["flows"][0]["retransmits"] >= 0
