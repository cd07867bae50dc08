"""The rise replayed on traced runs (vegaskit.analysis.riseruns): the controller's
third sign, alone, on each flow's delay-mode rounds. bpf/tests/test_plus_core.py checks
the replay against the core itself."""
from __future__ import annotations

import json

import pytest

from vegaskit.analysis import riseruns
from vegaskit.testing.traced import write_rep


def _round(i, rtt_us, rule="hold", mode="delay", cwnd=33):
    return {"time_s": 1.0 + 0.1 * i, "rule": rule, "mode": mode, "cwnd": cwnd,
            "rtt_us": rtt_us}


def test_three_rounds_25_percent_over_the_low_fire_once():
    rounds = [_round(i, 20_000) for i in range(8)] + [_round(8 + i, 25_000) for i in range(6)]
    n, stretches, (f,) = riseruns.replay(rounds, 25, 8)
    assert (n, stretches) == (14, 1)
    assert (f.t, f.rtt_us, f.low_us, f.own_exit) == (pytest.approx(2.0), 25_000, 20_000, None)


def test_the_first_epoch_is_unarmed():
    """Another flow's slow start raises the RTT as much early on: no sign until a whole
    epoch lies behind the low."""
    rounds = [_round(i, 20_000) for i in range(5)] + [_round(5 + i, 25_000) for i in range(6)]
    assert riseruns.replay(rounds, 25, 64)[2] == []
    (f,) = riseruns.replay(rounds, 25, 8)[2]       # armed at the 8th round, its third sign
    assert f.t == pytest.approx(1.9)


def test_under_the_threshold_or_a_fall_does_not_fire():
    under = [_round(i, 20_000) for i in range(8)] + [_round(8 + i, 24_999) for i in range(9)]
    assert riseruns.replay(under, 25, 8)[2] == []
    fall = [_round(i, 30_000) for i in range(8)] + [_round(8 + i, 20_000) for i in range(9)]
    assert riseruns.replay(fall, 25, 8)[2] == []


def test_two_epochs_forget_the_low():
    """rate_epoch 8: 16 rounds at 22.5 ms after the 20 ms low make 22.5 the low; 27 ms
    is then 20% over it, no rise (it would be 35% over 20 ms)."""
    rounds = ([_round(i, 20_000) for i in range(3)] + [_round(3 + i, 22_500) for i in range(16)]
              + [_round(19 + i, 27_000) for i in range(5)])
    assert riseruns.replay(rounds, 25, 8)[2] == []
    assert len(riseruns.replay(rounds, 25, 16)[2]) == 1     # 20 ms still within two


def test_a_sign_held_longer_fires_later_or_not_at_all():
    """--rounds: 6 rising rounds at 25 ms fire at the controller's 3 and at 6, not at 7."""
    rounds = [_round(i, 20_000) for i in range(8)] + [_round(8 + i, 25_000) for i in range(6)]
    assert [f.t for f in riseruns.replay(rounds, 25, 8)[2]] == [pytest.approx(1.0 + 0.1 * 10)]
    assert [f.t for f in riseruns.replay(rounds, 25, 8, 6)[2]] == [pytest.approx(1.0 + 0.1 * 13)]
    assert riseruns.replay(rounds, 25, 8, 7)[2] == []


def test_slow_start_compete_and_thin_rounds_are_not_replayed():
    rounds = ([_round(0, 20_000, rule="ss_grow")] + [_round(1, 20_000)]
              + [_round(2 + i, 40_000, rule="reno") for i in range(3)]
              + [_round(5 + i, 40_000, rule="compete", mode="compete") for i in range(3)])
    assert riseruns.replay(rounds, 25, 64) == (1, 1, [])


def test_the_runs_own_exit_ends_the_stretch_and_a_passed_probe_starts_a_fresh_low():
    rounds = ([_round(i, 20_000) for i in range(8)] + [_round(8 + i, 30_000) for i in range(2)]
              + [_round(10, 30_000, rule="to_compete_delay", mode="compete")]
              + [_round(11, 30_000, rule="compete", mode="compete")]
              + [_round(12, 24_000, rule="to_delay")]
              + [_round(13 + i, 24_000) for i in range(7)]       # an epoch at the fresh low
              + [_round(20 + i, 30_000) for i in range(5)])
    n, stretches, firings = riseruns.replay(rounds, 25, 8)
    assert (n, stretches) == (23, 2)
    assert [(round(f.t, 1), f.low_us) for f in firings] == [(2.0, 20_000), (3.2, 24_000)]
    assert firings[0].own_exit == pytest.approx(2.0) and firings[1].own_exit is None
    # the probe's epoch unfinished (7 rounds at 30 ms, the 8th turns it): no sign, as
    # the probe restarted the count; without that restart the old count would have armed it
    assert len(riseruns.replay(rounds[:13] + [_round(13 + i, 30_000) for i in range(7)],
                               25, 8)[2]) == 1


def _traced(tmp_path, rounds):
    return write_rep(tmp_path, "vp_cubic_100M20", rounds)


def test_the_command_tabulates_each_traced_flow(tmp_path, capsys):
    rounds = [_round(i, 20_000) for i in range(8)] + [_round(8 + i, 25_000) for i in range(6)]
    assert riseruns.main([str(_traced(tmp_path, rounds)), "--rate-epoch", "8"]) == 0
    row = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| vp_cubic")]
    assert row == ["| vp_cubic_100M20/full/vegas_plus/rep0 | 1 | 14 | 1 | 1 | 2.00 | 33 | "
                   "25.0 / 20.0 | never |"]


@pytest.mark.parametrize("args, rc, msg", [
    (["/nonexistent"], 2, "no such directory"),
    (["--rise", "0", "."], 2, "must be 1 to 1000 percent"),
    (["--rate-epoch", "7", "."], 2, "must be 8 to 4096 rounds"),
    (["--rise", "x", "."], 2, "invalid int value"),
    (["--rounds", "0", "."], 2, "must be 1 to 255"),
])
def test_bad_input_is_one_line_and_an_exit_code(args, rc, msg, capsys):
    assert riseruns.main(args) == rc
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_a_directory_without_a_traced_run_or_a_column_is_one_line(tmp_path, capsys):
    assert riseruns.main([str(tmp_path)]) == 1
    assert "no traced repetition" in capsys.readouterr().err
    root = _traced(tmp_path, [{k: v for k, v in _round(i, 20_000).items() if k != "rtt_us"}
                              for i in range(4)])
    assert riseruns.main([str(root)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert "left out: trace.csv has no column 'rtt_us'" in err[0]
    assert "no traced repetition" in err[1] and len(err) == 2


def test_a_trace_that_lost_records_is_left_out(tmp_path, capsys):
    root = _traced(tmp_path, [_round(i, 20_000) for i in range(4)])
    summary = root / "vp_cubic_100M20" / "full" / "vegas_plus" / "rep0" / "summary.json"
    summary.write_text(json.dumps({"t0_monotonic": 500.0, "trace_lost": 7}))
    assert riseruns.main([str(root)]) == 1
    assert "left out: its trace lost 7 records" in capsys.readouterr().err


def test_an_unreadable_trace_is_one_line_not_a_traceback(tmp_path, capsys):
    root = _traced(tmp_path, [_round(i, 20_000) for i in range(4)])
    trace = root / "vp_cubic_100M20" / "full" / "vegas_plus" / "rep0" / "trace.csv"
    trace.write_text(trace.read_text() + '"' + "x" * 200_000 + '"\n')
    assert riseruns.main([str(root)]) == 1
    err = capsys.readouterr().err
    assert "unreadable" in err and err.count("\n") == 1
