"""The candidate detector of a competing queue replayed on traced runs
(vegaskit.analysis.decruns): a run of `dec` rounds whose queue does not fall as our
own shedding would drain it."""
from __future__ import annotations


import pytest

from vegaskit.analysis import decruns
from vegaskit.testing.traced import write_rep

BASE_US, PKT_US, K = 80_000, 100, 16     # a packet's time at the flow's rate: rtt/cwnd


def _round(i, queue_pkts, rule="dec", mode="delay", sent=None):
    rtt = BASE_US + queue_pkts * PKT_US
    # cwnd follows from rtt/cwnd = PKT_US so the rule's own estimate of a packet's time
    # is the one the rounds were built with
    return {"time_s": 1.0 + 0.1 * i, "rule": rule, "mode": mode, "cwnd": rtt // PKT_US,
            "sent": sent if sent is not None else rtt // PKT_US, "rtt_us": rtt,
            "base_rtt_us": BASE_US, "beta": 3}


def test_our_own_queue_draining_one_packet_a_round_does_not_fire():
    rounds = [_round(i, 40 - i) for i in range(30)]
    assert decruns.replay(rounds, K) == (1, [])


def test_a_queue_that_holds_while_we_shed_fires_once_per_run_of_dec():
    held = [_round(i, 40) for i in range(20)]
    again = [_round(30 + i, 40) for i in range(K)]
    runs, firings = decruns.replay(held + [_round(20, 40, rule="inc")] + again, K)
    assert runs == 2 and len(firings) == 2
    assert firings[0].t == pytest.approx(1.0 + 0.1 * (K - 1))
    assert firings[0].q_first_ms == firings[0].q_last_ms == pytest.approx(4.0)
    assert firings[0].drain_ms == pytest.approx((K - K // 4) * PKT_US / 1000, rel=0.01)


def test_a_run_shorter_than_k_or_outside_delay_mode_does_not_count():
    short = [_round(i, 40) for i in range(K - 1)]
    compete = [_round(i, 40, mode="compete") for i in range(K + 5)]
    assert decruns.replay(short + [_round(99, 40, rule="hold")] + compete, K) == (0, [])


def test_a_queue_at_the_floor_a_pair_keeps_does_not_fire():
    # 2(beta+1) = 8 packets cannot fall much: at or under it, no sign
    assert decruns.replay([_round(i, 8) for i in range(K)], K) == (1, [])
    assert len(decruns.replay([_round(i, 9) for i in range(K)], K)[1]) == 1


def test_rounds_that_do_not_send_their_window_do_not_fire():
    # pacing or the application limits the flow: a dec takes nothing out of the queue
    paced = [_round(i, 40, sent=50) for i in range(K)]
    assert decruns.replay(paced, K) == (1, [])


def _traced(tmp_path, rounds):
    return write_rep(tmp_path, "vp_reno_100M80", rounds)


def test_the_command_tabulates_each_traced_flow(tmp_path, capsys):
    root = _traced(tmp_path, [_round(i, 40) for i in range(20)])
    assert decruns.main([str(root)]) == 0
    row = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| vp_reno")]
    assert row == ["| vp_reno_100M80/full/vegas_plus/rep0 | 1 | 20 | 1 | 1 | 2.50 | 840 | "
                   "4.00 -> 4.00 | 1.20 |"]


@pytest.mark.parametrize("args, rc, msg", [
    (["/nonexistent"], 2, "no such directory"),
    (["--k", "3", "."], 2, "must be 4 to 1024"),
    (["--beta", "0", "."], 2, "must be 1 to 1000"),
])
def test_bad_input_is_one_line_and_an_exit_code(args, rc, msg, capsys):
    assert decruns.main(args) == rc
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_a_directory_without_a_traced_run_is_an_error(tmp_path, capsys):
    assert decruns.main([str(tmp_path)]) == 1
    assert "no traced repetition" in capsys.readouterr().err


def test_records_without_beta_take_the_one_given_or_are_left_out(tmp_path, capsys):
    # vegas_plus's records carry beta since 78e0af3; before, 0
    old = [{**_round(i, 6), "beta": 0} for i in range(K)]
    with pytest.raises(decruns.NoBeta):
        decruns.replay(old, K)
    assert decruns.replay(old, K, beta=3) == (1, [])           # 6 <= 2(3+1): the floor
    assert len(decruns.replay(old, K, beta=1)[1]) == 1         # 6 > 2(1+1)
    root = _traced(tmp_path, old)
    assert decruns.main([str(root)]) == 1                      # nothing else to show
    err = capsys.readouterr().err.splitlines()
    assert "left out: its records carry no beta" in err[0] and "no traced repetition" in err[1]
    assert decruns.main([str(root), "--beta", "1"]) == 0


def test_a_trace_without_a_column_the_rule_reads_is_left_out(tmp_path, capsys):
    root = _traced(tmp_path, [{k: v for k, v in _round(i, 40).items() if k != "sent"}
                              for i in range(K)])
    assert decruns.main([str(root)]) == 1
    assert "trace.csv has no column 'sent'" in capsys.readouterr().err


def test_a_summary_that_is_not_a_run_s_is_one_line(tmp_path, capsys):
    root = _traced(tmp_path, [_round(i, 40) for i in range(K)])
    (root / "vp_reno_100M80" / "full" / "vegas_plus" / "rep0" / "summary.json").write_text("[1]")
    assert decruns.main([str(root)]) == 1
    err = capsys.readouterr().err
    assert "unreadable (TypeError" in err and err.count("\n") == 1


def test_a_usage_error_is_one_line(capsys):
    assert decruns.main(["--k", "x", "."]) == 2
    err = capsys.readouterr().err
    assert err.startswith("decruns: ") and "invalid int value" in err and err.count("\n") == 1


def test_a_trace_that_lost_records_is_left_out(tmp_path, capsys):
    # a lost round would join two runs of dec into one
    root = _traced(tmp_path, [_round(i, 40) for i in range(K)])
    summary = root / "vp_reno_100M80" / "full" / "vegas_plus" / "rep0" / "summary.json"
    summary.write_text('{"t0_monotonic": 500.0, "trace_lost": 3}')
    assert decruns.main([str(root)]) == 1
    assert "left out: its trace lost 3 records" in capsys.readouterr().err
