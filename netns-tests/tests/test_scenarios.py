"""Every scenario's CI profile runs end to end, with the robust properties asserted.

Each run is the full topology and rates played faster (time_scale), so only
properties that hold from the first seconds are checked; the papers' numbers
are for `make results` and its reports, never asserted here.
"""
from __future__ import annotations

import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import available_cc
from runchecks import assert_run_outputs
from vegaskit import paths
from vegaskit.cli import results as cli_results
from vegaskit.testbed import runner
from vegaskit.testbed.leftovers import owned_namespaces
from vegaskit.testbed.scenario import Scenario
from vegaskit.analysis import metrics
from vegaskit.analysis.records import read_csv
from vegaskit.testing import reliability

pytestmark = pytest.mark.kernel

# model_validation* are run, and their runs checked the same way, by
# test_model_validation.py's pipeline: running them here too cost two minutes.
SCENARIOS = sorted(p for p in paths.SCENARIOS.glob("*.toml")
                   if not p.stem.startswith("model_validation"))


def interruptible(argv: list[str], **kw) -> subprocess.Popen:
    """Popen with SIGINT at its default in the child: a suite started in the
    background (`cmd &` in a script) hands its children SIGINT ignored, and
    Python keeps an ignored SIGINT ignored, so Ctrl-C could not be tested."""
    return subprocess.Popen(argv, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kw)


# Scenario runs at once in the module's fixture: `make results JOBS=N`'s own path,
# traced like runs alone (docs/DESIGN.md §5.1); 3 on this 2-CPU machine kind, where
# `make concurrency` found 4 at once changing no metric (results/concurrency).
JOBS = 3


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """All scenarios' CI runs, once for this module, JOBS at a time:
    {scenario: ({run: summary}, its directory of runs)}."""
    base = tmp_path_factory.mktemp("scenarios")
    plans = [(s, s.profile_runs("ci")) for s in map(Scenario.load, SCENARIOS)]
    assert all(s.reps("ci") == 1 for s, _ in plans), "a run's directory is base/scenario/ci/run"
    cli_results.execute(plans, "ci", base, None, JOBS, whole=True)
    out = {}
    for s, _ in plans:
        d = base / s.name / "ci"
        out[s.name] = ({sm["run"]: sm for sm in json.loads((d / "summaries.json").read_text())}, d)
    return out


@pytest.mark.parametrize("name", [p.stem for p in SCENARIOS])
def test_scenario_runs_and_writes_its_results(results, name):
    summaries, base = results[name]
    assert summaries
    for run_name, sm in summaries.items():
        assert_run_outputs(name, run_name, sm, base / run_name)


def jain_of_two(ratio: float) -> float:
    """Jain's index of two shares in the ratio `ratio`:1."""
    return (1 + ratio) ** 2 / (2 * (1 + ratio ** 2))


def vegas_split_bound(trace_csv: Path, sm: dict) -> float:
    """The largest throughput ratio two Vegas flows on one path can hold, from
    the rule and what the run's trace shows the flows measured.

    Linux computes diff = floor(cwnd * (rtt - base) / base) once per round and
    holds while alpha <= diff <= beta, so a holding flow has
    alpha <= cwnd_i * (rtt_i - base_i) / base_i < beta + 1, with rtt_i its
    round's minimum and base_i its baseRTT. Both windows span the same mean
    RTT, so x_i is proportional to diff_i * base_i / (rtt_i - base_i): a
    split up to (beta + 1) / alpha from the band alone holds for good (seed
    000, VI.E), times the flows' different views of the queue. Those differ
    even for flows started together: each one's first RTT samples can queue
    behind the other's slow-start burst, and with a standing queue baseRTT is
    never corrected (seen: 41.6 against 43.5 ms, a factor 1.3 at a 9 ms
    queue). Medians of the second half's rounds stand for rtt_i, and 10%
    covers their spread (one packet of the ~8 queued).

    So that a wrong baseRTT cannot widen the bound, each must lie between
    the path's propagation RTT and that plus 12 packets' serialization, plus
    1 ms for the stacks and the emulator (calibrated at +0.11-0.14 ms). The
    12: the other flow's initial window of 10 can be queued ahead, and the
    RTT Linux hands pkts_acked is that of the last packet an ACK covers
    (tcp_clean_rtx_queue's ca_rtt_us), the second of a delayed ACK's two.
    Seen in CI: 54.54 ms on a 40 ms path at 1.2 ms a packet, 12 packets.
    That is while the flows start less than one RTT apart; a flow that starts
    k RTTs after the other can find its slow start's flight, 10 * 2^k
    packets, ahead instead (the starts are staggered by the processes that
    start them, milliseconds on a quiet host)."""
    prop_us = sm["bottleneck"]["rtt_ms"] * 1000
    pkt_us = 1500 * 8 / sm["bottleneck"]["rate_bps"] * 1e6
    t_half = sm["t0_monotonic"] + sm["duration_s"] / 2
    starts = [fl["start_s"] for fl in sm["flows"]]
    ahead = 10 * 2 ** math.ceil(max(0.0, max(starts) - min(starts)) / (prop_us / 1e6))
    by_flow: dict[str, list[dict]] = {}
    for r in read_csv(trace_csv):
        if r["type"] == "decision" and float(r["time_s"]) >= t_half:
            by_flow.setdefault(r["sport"], []).append(r)
    assert len(by_flow) == 2, sorted(by_flow)
    views = []
    for rows in by_flow.values():
        base = min(int(r["base_rtt_us"]) for r in rows)
        assert prop_us <= base <= prop_us + (ahead + 2) * pkt_us + 1000, (base, prop_us, ahead)
        rtt = statistics.median(int(r["rtt_us"]) for r in rows)
        assert rtt > base, "no queue in the second half: the flows never left the Reno fallback"
        views.append(base / (rtt - base))
    alpha, beta = int(rows[-1]["alpha"]), int(rows[-1]["beta"])
    return (beta + 1) / alpha * max(views) / min(views) * 1.1


def test_two_vegas_flows_share_fairly(results):
    """Two flows, same path, started together: Jain's index must be what the
    Vegas rule allows for the baseRTTs the flows measured (vegas_split_bound).
    For Linux's alpha..beta = 2..4 that is up to 2.5:1 from the band, Jain
    0.83 with equal baseRTTs; CI has seen 2.1:1 (0.887). With alpha = beta a
    flow holds at one value of diff only: (3 + 1) / 3 for 3, so the bound is
    0.96 with equal baseRTTs (the "Jain >= 0.9" we require of Vegas), 0.91 with the 1.3
    of different ones; seed 001 (2.2 and 4) cites alpha = beta as the fair
    setting."""
    summaries, base = results["vegas_pair"]
    for run_name, sm in summaries.items():
        ratio = vegas_split_bound(base / run_name / "trace.csv", sm)
        bound = jain_of_two(ratio)
        print(f"vegas_pair/{run_name}: Jain {sm['jain']}, bound {bound:.3f} ({ratio:.2f}:1)")
        assert sm["jain"] >= bound, (run_name, round(bound, 3), sm["flows"])


def measured_alone_if_stalled(results, tmp_path_factory, scenario: str, run: str,
                              short) -> tuple[dict, Path, list]:
    """The fixture's run, unless short(summary) holds while its link emulators released
    packets 1 ms or more late: JOBS runs share 2 CPUs, and on a host that stalls (this
    machine kind's, docs/DESIGN.md §7.1) a delay-based controller reads the stalls as
    queueing and backs off, a figure of the host. Then the run is measured again by
    itself, up to twice, and the first that is not short stands (or the last).
    Returns (summary, its directory, every attempt's (utilisation, late releases))."""
    summaries, base = results[scenario]
    sm, d = summaries[run], base / run
    seen = [(sm["utilisation"], sm["emulator_late_1ms"])]
    scen = Scenario.load(paths.SCENARIOS / f"{scenario}.toml")
    for _ in range(2):
        if not (short(sm) and sm["emulator_late_1ms"]):
            break
        out = tmp_path_factory.mktemp(f"{scenario}-alone")
        cli_results.execute([(scen, [run])], "ci", out, None, 1, whole=True)
        d = out / scenario / "ci" / run
        sm = json.loads((d / "summary.json").read_text())
        seen.append((sm["utilisation"], sm["emulator_late_1ms"]))
    return sm, d, seen


def test_single_vegas_flow_no_loss_small_queue(results, tmp_path_factory):
    """10 Mbit/s, 40 ms, 50 packets: the BDP is 33 packets, so the buffer only
    overflows if the window exceeds 83. In congestion avoidance Vegas holds its
    backlog <= beta (4) plus the one-packet-per-RTT step: no retransmission
    there, and a mean queue <= beta + 2, over the run's second half: the whole
    run's mean carries slow start's overshoot, whose drain at a packet per RTT
    depends on the window slow start left at (4.3 packets in one CI run, 8.0 in
    another on the same machine, exit at 74 packets; 3.8 and 3.7 over their
    second halves).

    Weaker than "zero retransmissions" from the start: Linux's Vegas slow
    start (ours follows it) tests gamma on the minimum RTT of a round in which
    the window doubles, and the first packets of a round find the queue empty,
    so it leaves slow start one RTT late (cwnd ~88, a few packets lost) or not
    at all before the loss ends it (a CI run: no ss_exit, 88 retransmissions,
    the first decision after recovery at 0.9 s with ssthresh 85). So the
    no-loss claim is asserted from the end of slow start on, whichever ended
    it: the ss_exit decision, or the first decision with a finite ssthresh
    (decisions are only taken in Open, so that one follows the recovery),
    plus 2 RTTs. Slow start must not come back (no ss_grow after that).

    Utilisation >= 0.9 is the path's claim, so a run short of it while the host
    stalled is measured again alone (measured_alone_if_stalled): a CI run beside
    two others fell to 0.825 with 4,874 releases late by 1 ms or more (up to 31
    ms), where two runs alone on the same host minutes later gave 0.951 and 0.943."""
    sm, d, seen = measured_alone_if_stalled(results, tmp_path_factory, "single_vegas", "vegas",
                                            lambda s: s["utilisation"] < 0.9)
    q = [(float(r["t_s"]), int(r["qlen_pkts"])) for r in read_csv(d / "queue.csv")]
    half = metrics.queue_stats([x for x in q if x[0] >= sm["duration_s"] / 2],
                               sm["duration_s"]).mean
    assert half <= 4 + 2, (half, sm["queue_mean_pkts"])
    assert sm["utilisation"] >= 0.9, f"(utilisation, late releases) of each attempt: {seen}"
    trace = [r for r in read_csv(d / "trace.csv") if r["type"] == "decision"]
    ends = [i for i, r in enumerate(trace)
            if r["rule"] == "ss_exit" or int(r["ssthresh"]) < 2**31 - 1]
    assert ends, "never left slow start"
    end = ends[0]
    ca_from = float(trace[end]["time_s"]) - sm["t0_monotonic"] + 2 * 0.045
    rows = read_csv(d / "flows.csv")
    late = [r for r in rows if float(r["t0_s"]) >= ca_from and r["retransmits"]]
    assert late and sum(int(r["retransmits"]) for r in late) == 0, late
    again = [r["time_s"] for r in trace[end + 1:] if r["rule"] in ("ss_grow", "ss_exit")]
    assert not again, f"slow start again after its end: a loss or an idle restart ({again[:3]})"


def test_rerouting_shows_in_the_rtt_series(results):
    """The access link's RTT grows by 180 ms at the change. Queueing only adds
    to propagation delay, so every round's RTT after the change (the trace's:
    the round's minimum, or with semantics=paper its average) must exceed the
    baseRTT the controller had measured before it, its smallest sample, by at
    least 150 ms (30 ms for timing slack). Not the rounds' RTTs before: CI's
    short run changes the route while slow start's queue (hundreds of ms at
    1 Mbit/s) still stands, and an average carries that queue."""
    summaries, base = results["rerouting"]
    s = Scenario.load(paths.SCENARIOS / "rerouting.toml")
    t_change = s.run("vegas", "ci").schedule[0].at
    for run_name, sm in summaries.items():
        rounds = [(float(r["time_s"]) - sm["t0_monotonic"], int(r["rtt_us"]),
                   int(r["base_rtt_us"]))
                  for r in read_csv(base / run_name / "trace.csv")
                  if r["type"] == "decision" and r["rule"] != "reno"]
        before = [b for t, _, b in rounds if t < t_change]
        after = [rtt for t, rtt, _ in rounds if t >= t_change + 1]
        assert before and after, run_name
        assert min(after) >= before[-1] + 150_000, (run_name, before[-1], min(after))


def test_vegas_loses_to_newreno(results):
    """A loss-based flow fills the 50-packet buffer that Vegas tries to keep
    near-empty, so it takes the larger share (seed 000, VI.B)."""
    sm = results["newreno_1v1"][0]["vegas"]
    ours = sm["flows"][0]["cc"]                  # the papers' Vegas: vk_ns2
    assert sm["inter_protocol_ratio_lifetime"][f"{ours}/reno"] < 1.0
    assert sm["inter_protocol_ratio"][f"{ours}/reno"] < 1.0


def test_file_transfers_complete(results):
    """Completion times are reported and no transfer beats the link: 250 kB over
    250 kbit/s (single_flow) and 500 kB over 500 kbit/s (buffer_sweep) take at
    least 8 s of serialization. With 50 packets of buffer Vegas loses nothing
    (Linux's initial window of 10 fits); with 10 (buffer_sweep) that initial
    burst alone can overflow it, so no claim is made there."""
    for name in ("single_flow", "buffer_sweep"):
        for run_name, sm in results[name][0].items():
            fl = sm["flows"][0]
            assert fl["completion_s"] and fl["completion_s"] >= 8.0, (name, run_name)
            # the label gives the size this profile sends, not the paper's
            assert fl["label"].endswith(f" {fl['bytes'] / 1e6:g} MB"), fl["label"]
            if name == "single_flow" and fl["cc"] in ("bpf_vegas", "vk_ns2"):
                assert fl["retransmits"] == 0, (name, run_name)


@pytest.mark.reliability("kill_point")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_sigint_mid_run_leaves_nothing(tmp_path, sig):
    """Ctrl-C, or a SIGTERM (make killed, a CI timeout), mid-run: one line, exit 130, and
    nothing left (a SIGTERM inside a lab once ended in a traceback)."""
    before = set(available_cc())
    p = interruptible([sys.executable, "-m", "vegaskit.cli.results",
                          str(paths.SCENARIOS / "vegas_pair.toml"),
                          "--profile", "ci", "--out", str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not owned_namespaces(p.pid):
            time.sleep(0.1)
        assert owned_namespaces(p.pid), "the run never started"
        time.sleep(3)                                   # flows running
        p.send_signal(sig)
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:                            # failed: stop it, leave no run behind
            p.kill()
            p.wait()
    assert p.returncode == 130, err.decode()
    assert "Traceback" not in err.decode(), err.decode()
    assert err.decode().strip().splitlines()[-1].startswith("testbed: interrupted"), err.decode()
    assert owned_namespaces(p.pid) == []
    left = subprocess.run(["pgrep", "-f", f"vk{p.pid}x"], capture_output=True, text=True).stdout
    assert left == "", f"processes left: {left}"
    assert set(available_cc()) == before


@pytest.mark.reliability("kill_point")
@pytest.mark.parametrize("target", ["group", "parent", "group-SIGTERM"])
def test_sigint_mid_batch_of_parallel_runs_stops_everything(tmp_path, target):
    """`--jobs 2` with runs under way: Ctrl-C (SIGINT to the process group), a
    SIGINT to the parent alone, or a SIGTERM to the group (`kill -- -PGID`, `pkill
    -f`, a service stopped) stops the batch at once (no further run starts), and
    every worker's lab, process and controller instance is gone. The SIGTERM case
    once left three of four labs behind: a lab's own SIGTERM handler replaced the
    worker's, so the parent's SIGINTs, sent each second until the workers end,
    interrupted the labs' cleanup."""
    before = set(available_cc())
    known = set(owned_namespaces())
    p = interruptible([sys.executable, "-m", "vegaskit.cli.results",
                          str(paths.SCENARIOS / "vegas_pair.toml"), "--profile", "full",
                          "--jobs", "2", "--out", str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(set(owned_namespaces()) - known) < 2:
            time.sleep(0.2)
        assert len(set(owned_namespaces()) - known) >= 2, "the runs never started"
        time.sleep(3)                                   # flows running in both labs
        t0 = time.monotonic()
        if target == "parent":
            p.send_signal(signal.SIGINT)
        else:
            os.killpg(p.pid, signal.SIGTERM if target == "group-SIGTERM" else signal.SIGINT)
        _, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:                            # failed: stop it, leave no run behind
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode == 130, err.decode()
    assert time.monotonic() - t0 < 60, "it ran on after the interrupt"
    assert err.decode().strip().splitlines()[-1].startswith("testbed: interrupted"), err.decode()
    assert set(owned_namespaces()) - known == set()
    left = subprocess.run(["pgrep", "-f", "vegaskit.cli.results"], capture_output=True, text=True)
    assert left.stdout == "", f"processes left: {left.stdout}"
    assert set(available_cc()) == before
    assert not list(tmp_path.glob("vegas_pair/full/*/rep*/summary.json")), \
        "a run finished: the interrupt came too late to test anything"


TWO_RUNS = '''
name = "merge"
duration = 2
[links]
bottleneck = { rate = "5M", rtt_ms = 20, buffer = 50 }
[[flows]]
cc = "{cc}"
[runs]
reno = { cc = "reno" }
cubic = { cc = "cubic" }
[profiles.full]
time_scale = 1.0
reps = 2
'''


def test_a_rerun_of_one_run_replaces_only_its_repetitions(tmp_path):
    """`--run NAME` reruns that run's repetitions and merges them into
    summaries.json and the report; the other runs' repetitions stay as they were.
    Every summary records the commit it ran from."""
    sc = tmp_path / "merge.toml"
    sc.write_text(TWO_RUNS)
    cmd = [sys.executable, "-m", "vegaskit.cli.results", str(sc), "--profile", "full",
           "--out", str(tmp_path / "out")]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    path = tmp_path / "out" / "merge" / "full" / "summaries.json"
    first = {(s["run"], s["rep"]): s for s in json.loads(path.read_text())}
    assert sorted(first) == [("cubic", 0), ("cubic", 1), ("reno", 0), ("reno", 1)]
    subprocess.run(cmd + ["--run", "reno"], check=True, capture_output=True, timeout=120)
    second = {(s["run"], s["rep"]): s for s in json.loads(path.read_text())}
    assert sorted(second) == sorted(first)
    for key in second:
        same = second[key]["t0_monotonic"] == first[key]["t0_monotonic"]
        assert same == (key[0] == "cubic"), key
        assert second[key]["commit"] not in ("", "unknown")
    report = (tmp_path / "out" / "merge" / "full" / "report.md").read_text()
    assert f"Source commit of the runs: {second[('reno', 0)]['commit']} (4 repetitions)" in report


BAD_SPEC = '''
name = "badspec"
duration = 10
[links]
bottleneck = { rate = "1M", rtt_ms = 40, buffer = 50 }
[[flows]]
cc = "{cc}"
[controllers]
vk_badspec = "vegas alpha=9 beta=1"
[runs]
vegas = { cc = "vk_badspec" }
[profiles.ci]
time_scale = 0.5
'''


@pytest.mark.reliability("bad_input")
def test_a_controller_spec_vegasctl_refuses_stops_the_batch_before_it_starts(tmp_path):
    """vegasctl checks every spec (load --dry-run) before any run: its own reason, one
    line, and nothing started, loaded or removed (an earlier result stays)."""
    reliability.case()
    f = tmp_path / "badspec.toml"
    f.write_text(BAD_SPEC)
    kept = tmp_path / "out" / "badspec" / "ci" / "earlier.txt"
    kept.parent.mkdir(parents=True)
    kept.write_text("an earlier result")
    before_cc, before_ns = available_cc(), owned_namespaces()
    r = subprocess.run([sys.executable, "-m", "vegaskit.cli.results", str(f), "--profile", "ci",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "controller 'vk_badspec': vegasctl: alpha (9) must not exceed beta (1)" in r.stderr
    assert kept.exists(), "the refused batch removed an earlier result"
    assert available_cc() == before_cc and owned_namespaces() == before_ns


def test_a_flows_sysctl_is_set_in_its_senders_namespace_only(tmp_path):
    """sysctl = {...} in a flow sets those net.ipv4 knobs in that flow's sender
    namespace (each is per namespace), before the flow starts; other senders
    keep the kernel's defaults."""
    s = Scenario.parse("""
name = "sysctl"
duration = 3
[links]
bottleneck = { rate = "10M", rtt_ms = 20 }
[[flows]]
cc = "reno"
sysctl = { tcp_limit_output_bytes = 3000, tcp_frto = 0 }
[[flows]]
cc = "reno"
[runs]
r = {}
[profiles.p]
time_scale = 1.0
""")
    seen = {}

    def read(db):
        for i, ns in enumerate(db.senders, 1):
            seen[i] = [int(ns.run(["sysctl", "-n", f"net.ipv4.{k}"]))
                       for k in ("tcp_limit_output_bytes", "tcp_frto")]
    runner.execute(s.run("r", "p"), tmp_path, at=[(1.0, read)])
    assert seen[1] == [3000, 0]
    assert seen[2][0] != 3000 and seen[2][1] != 0, seen
