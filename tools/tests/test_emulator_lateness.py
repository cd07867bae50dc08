"""The link emulator's lateness, as a run's summary and its report give it (lateness,
report): the counters linkemu keeps per direction, taken over every link, and the
late releases its queue log times. That linkemu counts and logs a real stall:
netns-tests/tests/test_calibration.py."""
import os
import subprocess
import time

from vegaskit.testbed import lateness, report
from vegaskit.testbed.linkemu import QEvent, read_qlog


def _link(ab_late_us: float, ab_n: int, ba_late_us: float, ba_n: int) -> dict:
    return {"ab": {"pkts_in": 1, "late_max_us": ab_late_us, "late_1ms": ab_n},
            "ba": {"pkts_in": 1, "late_max_us": ba_late_us, "late_1ms": ba_n}}


def test_the_latest_release_and_the_late_ones_over_every_link_and_direction():
    got = lateness.emulator_lateness([_link(120.0, 0, 80.0, 0), _link(900.5, 0, 14_250.0, 3)])
    assert got == {"late_max_ms": 14.25, "late_1ms": 3}


def test_an_emulator_that_did_not_count_gives_none():
    # a run's stats from before linkemu counted lateness (or a link without it)
    assert lateness.emulator_lateness([{"ab": {"pkts_in": 1}, "ba": {"pkts_in": 1}}]) == \
        {"late_max_ms": None, "late_1ms": None}


def test_a_queue_log_line_carries_its_lateness_only_when_late(tmp_path):
    q = tmp_path / "q.csv"
    q.write_text("t_us,dir,qlen_pkts,event,late_us\n"
                 "1000,ab,0,enq,\n" "2000,ba,3,late,14250\n")
    assert read_qlog(q) == [QEvent(1000, "ab", 0, "enq", 0), QEvent(2000, "ba", 3, "late", 14250)]


def test_late_releases_are_timed_from_the_run_start_over_every_link():
    t0_us = 5_000_000
    events = {"bottleneck": [QEvent(t0_us + 7_500_000, "ab", 2, "late", 3_000),
                             QEvent(t0_us + 100, "ab", 2, "enq")],
              "s1": [QEvent(t0_us + 1_250_000, "ba", 0, "late", 21_700)]}
    assert lateness.late_releases(events, t0_us) == [(1.25, "s1", "ba", 21.7),
                                                     (7.5, "bottleneck", "ab", 3.0)]


def test_early_lateness_counts_only_each_flows_first_seconds():
    late = [(1.25, "s1", "ba", 21.7), (7.5, "bottleneck", "ab", 3.0), (40.0, "d2", "ab", 9.0)]
    assert lateness.early_max(late, [0.0]) == 21.7
    assert lateness.early_max(late, [3.0]) == 3.0               # 1.25 s is before it started
    assert lateness.early_max(late, [3.0, 36.0]) == 9.0         # the second flow's start
    assert lateness.early_max(late, [10.0]) == 0.0              # none then: 0, not unknown


def test_the_report_line_gives_median_and_worst_and_how_many_were_hit():
    sms = [{"emulator_late_max_ms": v, "emulator_late_1ms": n}
           for v, n in ((0.3, 0), (0.5, 0), (21.7, 40))] + [{"run": "older"}]
    line = report.emulator_line(sms)[0]
    assert "0.5 ms late in median, 21.7 ms at most, over 3 repetitions" in line
    # none hit: said so, not left out
    calm = report.emulator_line(sms[:2])[0]
    assert "0.4 ms late in median" in calm and "0 had releases 1 ms late or more (0 in all)" in calm
    assert "1 had releases 1 ms late or more (40 in all)" in line
    # a run from before the lateness record: only the policy it ran under
    assert report.emulator_line([{"run": "older"}]) == \
        ["The emulators ran under the ordinary policy (decision 42).", ""]
    assert "first" not in line                                  # runs that logged no times


def test_the_report_line_says_how_late_the_flows_first_seconds_were():
    sms = [{"emulator_late_max_ms": 9.0, "emulator_late_1ms": 4, "emulator_late_early_max_ms": v}
           for v in (0.0, 1.5, 8.25)]
    line = report.emulator_line(sms)[0]
    assert (f"In the first {lateness.EARLY_S:g} s of each flow, where it takes its base RTT, the "
            "latest was 1.5 ms in median, 8.25 ms at most (over 3).") in line


def test_labs_alive_counts_owner_marks_not_namespaces(tmp_path, monkeypatch):
    from vegaskit.testbed import leftovers
    for n in ("vk12x0a1b-r1", "vk12x0a1b-r2", "vk12x0a1b-s1", "vk99xbeef-r1", "other-ns"):
        (tmp_path / n).touch()
    monkeypatch.setattr(leftovers, "NETNS_DIR", str(tmp_path))
    assert leftovers.labs_alive() == 2
    with leftovers.LabsAlive(every=0.01) as labs:
        (tmp_path / "vk7x00ff-r1").touch()          # a third lab comes, and goes
        deadline = time.monotonic() + 10
        while labs.most < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        (tmp_path / "vk7x00ff-r1").unlink()
    assert labs.most == 3


def test_the_report_says_how_many_runs_shared_the_host():
    sms = [{"labs_alive_max": n, "emulator_late_max_ms": 0.2, "emulator_late_1ms": 0}
           for n in (1, 4, 4, 31)]
    lines = report.emulator_line(sms)
    assert any("Labs alive at once (runs, tests and benches, this run's included; the most "
               "during a repetition): 4 in median, 31 at most, over 4 repetitions." in ln
               for ln in lines)


def test_a_batch_past_the_validated_runs_at_once_is_warned(tmp_path, monkeypatch):
    from vegaskit.testbed import leftovers
    monkeypatch.setattr(leftovers, "NETNS_DIR", str(tmp_path))
    assert leftovers.budget_warning(4) is None                  # alone on the host: within
    (tmp_path / f"vk{os.getpid()}x0a1b-r1").touch()             # a live owner's lab
    assert leftovers.budget_warning(3) is None                  # 1 + 3
    warn = leftovers.budget_warning(4)
    assert warn.startswith("warning: 4 runs at once beside 1 lab already alive passes the 4")
    assert "\n" not in warn
    # a dead owner's lab does not count: the batch's first lab sweeps it away
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / f"vk{gone.pid}xdead-r1").touch()
    assert leftovers.labs_alive() == 2 and leftovers.labs_alive(live_owners=True) == 1
    assert "beside 1 lab already alive" in leftovers.budget_warning(4)


def test_the_report_says_under_which_policy_the_emulators_ran():
    sms = [{"emulator_late_max_ms": 5.0, "emulator_late_1ms": 40, "emulator_fifo": f}
           for f in (10, 10, 0)]
    assert ("The emulators ran under SCHED_FIFO in 2 of the 3 repetitions, the ordinary "
            "policy in the others (decision 42).") in report.emulator_line(sms)[0]
    assert "ran under the ordinary policy" in report.emulator_line(sms[2:])[0]
    assert "The emulators ran under SCHED_FIFO (decision 42)." in report.emulator_line(sms[:2])[0]
    # runs older than the lateness record ran under the ordinary policy, and count
    old = [{"run": "cubic"}, {"run": "cubic"}]
    assert ("SCHED_FIFO in 2 of the 4 repetitions, the ordinary policy in the others"
            in report.emulator_line(sms[:2] + old)[0])
    assert report.emulator_line(old)[0] == \
        "The emulators ran under the ordinary policy (decision 42)."
    # and whether their busy-poll stayed under SCHED_FIFO (linkemu --fifo-poll)
    assert "busy-poll" not in report.emulator_line(sms)[0]
    sms[0]["emulator_fifo_poll"] = 10
    assert report.emulator_line(sms)[0].endswith(
        "In 1 of those repetitions their busy-poll stayed under it, up to 10% of a core "
        "(linkemu --fifo-poll).")


def test_the_fifo_priority_comes_from_the_environment(monkeypatch):
    from vegaskit.testbed import linkemu
    monkeypatch.delenv("VK_LINKEMU_FIFO", raising=False)
    monkeypatch.setattr(linkemu, "fifo_allowed", lambda: True)
    assert linkemu.fifo_priority() == linkemu.FIFO_PRIORITY == 10   # the default
    monkeypatch.setattr(linkemu, "fifo_allowed", lambda: False)     # a host that refuses it
    assert linkemu.fifo_priority() == 0
    monkeypatch.setenv("VK_LINKEMU_FIFO", "0")
    assert linkemu.fifo_priority() == 0                             # the ordinary policy
    monkeypatch.setenv("VK_LINKEMU_FIFO", "20")
    assert linkemu.fifo_priority() == 20
    for bad in ("high", "-1", "100"):
        monkeypatch.setenv("VK_LINKEMU_FIFO", bad)
        try:
            linkemu.fifo_priority()
        except ValueError as e:
            assert "VK_LINKEMU_FIFO" in str(e)
        else:
            raise AssertionError(bad)
    # and VK_LINKEMU_FIFO_POLL the budget of their busy-poll under it, 0 unless set
    monkeypatch.delenv("VK_LINKEMU_FIFO_POLL", raising=False)
    assert linkemu.fifo_poll_pct() == linkemu.FIFO_POLL_PCT
    monkeypatch.setenv("VK_LINKEMU_FIFO_POLL", "10")
    assert linkemu.fifo_poll_pct() == 10
