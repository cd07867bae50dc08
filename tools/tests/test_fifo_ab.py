"""The SCHED_FIFO study's arithmetic (cli/fifo_ab.py): the round as the unit,
the runs' medians with intervals, the verdict; and its refusals."""
from __future__ import annotations

import pytest

from vegaskit.cli import fifo_ab


def run(queue: float, late: int, early: float | None = 1.0) -> dict:
    return {"emulator_late_1ms": late, "emulator_late_max_ms": 4.0,
            "emulator_late_early_max_ms": early, "queue_mean_pkts": queue,
            "utilisation": 0.97, "retransmits": 0,
            "flows": [{"label": "S1 bpf_vegas_a", "rtt_p95_ms": 40 + queue}]}


def rounds(n: int, jobs: int = 3) -> dict:
    return {"ordinary": [[run(7 + r + j, 80 + j) for j in range(jobs)] for r in range(n)],
            "fifo": [[run(2 + 0.1 * r, 10 + j, None) for j in range(jobs)] for r in range(n)]}


def test_the_round_is_the_unit_and_each_arm_gives_its_runs_median():
    rows = {r["metric"]: r for r in fifo_ab.analyse(rounds(6))}
    q = rows["bottleneck queue mean (pkts)"]
    # 6 rounds of 3: the test sees 6 medians an arm, the figure 18 runs
    assert len(q["ordinary_rounds"]) == 6 and q["ordinary"]["n"] == 18
    assert q["ordinary_rounds"][0] == 8 and q["fifo"]["median"] == pytest.approx(2.25)
    # every ordinary round above every fifo round: the smallest p of 6 + 6
    assert q["p"] == pytest.approx(2 / 924)
    # a metric equal in both arms is not a difference
    assert rows["utilisation"]["p"] == 1.0
    # a figure missing from every run of one arm is left out, not counted as 0
    assert "latest release, first 5 s of a flow (ms)" not in rows


def test_two_rounds_cannot_show_a_difference_and_the_report_says_so():
    rows = fifo_ab.analyse(rounds(2))
    setup = {"scenario": "s", "run": "r", "profile": "ci", "rounds": 2, "jobs": 3, "prio": 10,
             "cpus": 2, "kernel": "k", "commit": "c", "duration_s": 15, "wall_s": 120,
             "steal_pct": 0.1, "labs_max": 3}
    text = fifo_ab.render(setup, rows, "sudo make fifo-ab")
    assert "**Verdict: no metric differs**" in text
    assert "(the smallest p it can give with 2 + 2 rounds is 0.3333)" in text
    six = fifo_ab.render({**setup, "rounds": 6}, fifo_ab.analyse(rounds(6)), "x")
    assert "**Verdict: the arms differ in releases 1 ms late, bottleneck queue mean" in six


@pytest.mark.parametrize("args, msg", [
    (["--rounds", "1"], "fifo_ab: --rounds must be 2 to 12"),
    (["--jobs", "0"], "fifo_ab: --rounds must be 2 to 12, --jobs 1 to 8"),
    (["--run", "nosuch"], "fifo_ab: "),
    (["/nonexistent.toml"], "fifo_ab: /nonexistent.toml"),
])
def test_bad_arguments_get_one_line_and_exit_2(args, msg, capsys):
    assert fifo_ab.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(msg) and err.count("\n") == 1


@pytest.mark.parametrize("value", ["abc", "-1", "100"])
def test_a_bad_vk_linkemu_fifo_is_refused_before_any_run(value, monkeypatch, capsys):
    """Every testbed command reads the emulators' policy from VK_LINKEMU_FIFO (decision
    42); a bad one is one line and exit 2 before a lab exists, not a traceback mid-run."""
    from vegaskit.cli import results, testbed_ready
    monkeypatch.setattr("os.geteuid", lambda: 0)
    monkeypatch.setenv("VK_LINKEMU_FIFO", value)
    assert testbed_ready("testbed") == 2
    err = capsys.readouterr().err
    assert err == f"testbed: VK_LINKEMU_FIFO='{value}': expected a priority 0..99 (0: ordinary)\n"
    scenario = str(fifo_ab.DEFAULT)
    assert results.main([scenario, "--profile", "ci", "--run", "vegas", "--out", "/nonexistent"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("value", ["x", "-5", "51"])
def test_a_bad_vk_linkemu_fifo_poll_is_refused_before_any_run(value, monkeypatch, capsys):
    from vegaskit.cli import testbed_ready
    monkeypatch.setattr("os.geteuid", lambda: 0)
    monkeypatch.delenv("VK_LINKEMU_FIFO", raising=False)
    monkeypatch.setenv("VK_LINKEMU_FIFO_POLL", value)
    assert testbed_ready("testbed") == 2
    assert capsys.readouterr().err == \
        f"testbed: VK_LINKEMU_FIFO_POLL='{value}': expected a percentage 0..50\n"
