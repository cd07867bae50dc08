"""A `vegasctl trace` killed with SIGKILL cannot switch tracing off: alone, its
lease (VK_TRACE_LEASE_NS, 1 s) runs out instead, `show` says so, and the next
trace prints nothing the dead reader left in the ring as live; beside a live
reader, that reader's sweep of the registry (/run/vegaskit-trace) switches the
dead one's instances off, and leaves its own on."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import VEGASCTL, loaded, vegasctl_json
from test_controller_trace import one_flow
from vegaskit.bench.opcost import decisions
from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario
from vegaskit.testbed.vtrace import parse_csv
from vegaskit.testing import reliability

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


def two_flows(seconds: float) -> Scenario:
    """One flow on each of two instances already loaded (the run reuses them)."""
    flows = "".join(f'[[flows]]\ncc = "{cc}"\n' for cc in ("bpf_vegas", "bpf_vegas_a"))
    return Scenario.parse(f"""
name = "t_two_readers"
duration = {seconds}
trace = "off"
[links]
bottleneck = {{ rate = "10M", rtt_ms = 40, buffer = 50 }}
{flows}
[runs]
r = {{}}
[profiles.p]
time_scale = 1.0
""")


@pytest.mark.reliability("kill_point")
def test_a_killed_reader_beside_a_live_one_stops_its_own_tracing_only(tmp_path):
    """Reader B traces Y (bpf_vegas) only: it started before X (bpf_vegas_a) was
    loaded, so it has no --controller filter and claims Y alone. Reader A traces
    X and is killed with SIGKILL while B lives and renews the shared lease.
    Within 2 s X's tracing must be off (its bits cleared by B's sweep), while Y
    stays on and B keeps receiving Y's records. B reads Y's own ring, so it
    prints none of X's, before A's death or after (DESIGN §5.1). Then B stops:
    all off."""
    reliability.case()
    seen = {}
    out = tmp_path / "b.csv"
    with loaded("vegas") as y, out.open("w") as f:
        assert y == "bpf_vegas"
        b = subprocess.Popen([str(VEGASCTL), "trace", "--csv"], stdout=f,
                             stderr=subprocess.PIPE, text=True)
        a = None
        try:
            time.sleep(0.5)
            with loaded("vegas_a") as x:
                assert x == "bpf_vegas_a"

                def kill_a(db):
                    nonlocal a
                    a = subprocess.Popen([str(VEGASCTL), "trace", "--acks", "--controller", x],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(1.5)
                    seen["x_alive"], seen["y_alive"] = tracing(x), tracing(y)
                    a.send_signal(signal.SIGKILL)
                    a.wait()
                    seen["killed_at"] = killed = time.monotonic()
                    # "off (reader gone)" comes at once (bits set, no claim):
                    # wait for "off", the bits actually cleared by B's sweep
                    while (st := tracing(x)) != "off" and time.monotonic() < killed + 2.0:
                        time.sleep(0.05)
                    seen["x_off_after"] = time.monotonic() - killed if st == "off" else None
                    time.sleep(max(0.0, killed + 2.0 - time.monotonic()))
                    seen["x_after"], seen["y_after"] = tracing(x), tracing(y)

                runner.execute(two_flows(9).run("r", "p"), tmp_path / "run", at=[(1.0, kill_a)],
                               plots=False)
                assert b.poll() is None, f"reader B died: {b.stderr.read()}"
                seen["y_before_stop"] = tracing(y)
                b.send_signal(signal.SIGTERM)
                seen["b_err"] = b.communicate(timeout=30)[1]
                seen["x_end"], seen["y_end"] = tracing(x), tracing(y)
        finally:
            for p in (a, b):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()
    assert b.returncode == 0, seen["b_err"]
    assert seen["x_alive"] == "acks" and seen["y_alive"] == "decisions+acks", seen
    assert seen["x_off_after"] is not None and seen["x_after"] == "off", \
        f"X's bits not cleared within 2 s of its reader's death beside a live one: {seen}"
    assert seen["y_after"] == "decisions+acks", f"the live reader's instance went off: {seen}"
    recs = parse_csv(out.read_text())
    late = seen["killed_at"] + 2.0
    x_any = [r for r in recs if r["ca"] == "bpf_vegas_a"]
    assert not x_any, f"B, a reader of Y alone, printed {len(x_any)} records of X"
    y_late = [r for r in recs if r["ca"] == "bpf_vegas" and r["time_s"] >= late]
    assert len(y_late) > 50, f"B saw {len(y_late)} records of Y after A died: the trace broke"
    assert seen["y_before_stop"] == "decisions+acks"
    assert seen["x_end"] == "off" and seen["y_end"] == "off", seen
    left = list(Path("/run/vegaskit-trace").glob("*"))
    assert not left, f"reader files left behind: {left}"


def test_a_reader_started_beside_a_live_one_drops_none_of_its_unread_records(tmp_path):
    """Readers split one ring (DESIGN §5.1). Reader B is live but stalled
    (SIGSTOP): the records emitted meanwhile wait in the ring, unread. Reader C
    starting then must not drain them as a dead reader's leftovers: it prints
    records from before its own start, which only a skipped drain leaves."""
    seen = {}

    def stall_b_start_c(db):
        b = subprocess.Popen([str(VEGASCTL), "trace", "--acks", "--controller", "bpf_vegas"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1.0)
            b.send_signal(signal.SIGSTOP)
            seen["stopped"] = time.monotonic()
            time.sleep(0.5)             # within B's 1 s lease: records keep coming
            seen["c_start"] = time.monotonic()
            r = subprocess.run([str(VEGASCTL), "trace", "--acks", "--csv", "--controller",
                                "bpf_vegas", "--duration", "0.5"],
                               capture_output=True, text=True, timeout=30)
            seen["c_rc"], seen["c"] = r.returncode, parse_csv(r.stdout)
        finally:
            b.send_signal(signal.SIGCONT)
            b.send_signal(signal.SIGTERM)
            seen["b_rc"] = b.wait(timeout=30)

    runner.execute(one_flow("bpf_vegas", 5, trace="off").run("r", "p"), tmp_path,
                   at=[(1.0, stall_b_start_c)], plots=False)
    assert seen["c_rc"] == 0 and seen["b_rc"] == 0, seen.get("c_rc")
    unread = [r for r in seen["c"]
              if seen["stopped"] + 0.05 <= r["time_s"] < seen["c_start"] - 0.05]
    assert len(unread) > 10, \
        f"C printed {len(unread)} of the records stalled B left unread: its start drained them"
    assert not list(Path("/run/vegaskit-trace").glob("*"))


def test_readers_of_two_instances_each_print_every_decision_of_their_own(tmp_path):
    """Each instance writes its own ring (DESIGN §5.1), so two readers, one an
    instance, running at once, each print every decision its instance took while
    both traced, and none of the other's. With one ring for all, each would
    print only the share it happened to consume first."""
    with loaded("vegas") as y, loaded("vegas_a") as x:
        before = {n: decisions(n) for n in (x, y)}
        readers = {n: subprocess.Popen([str(VEGASCTL), "trace", "--decisions", "--csv",
                                        "--controller", n], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True) for n in (x, y)}
        try:
            time.sleep(0.5)
            runner.execute(two_flows(6).run("r", "p"), tmp_path / "run", plots=False)
            took = {n: decisions(n) - before[n] for n in (x, y)}
            for p in readers.values():
                p.send_signal(signal.SIGTERM)
            out = {n: p.communicate(timeout=30) for n, p in readers.items()}
        finally:
            for p in readers.values():
                if p.poll() is None:
                    p.kill()
                    p.wait()
    for n, other in ((x, y), (y, x)):
        assert readers[n].returncode == 0, out[n][1]
        assert out[n][1].strip().endswith(" 0 lost"), out[n][1]
        recs = parse_csv(out[n][0])
        assert took[n] > 20, f"{n} took {took[n]} decisions: the flow or the counter is broken"
        assert sum(r["ca"] == n for r in recs) == took[n], (n, took, out[n][1])
        assert not [r for r in recs if r["ca"] == other], f"{n}'s reader printed {other}'s"
