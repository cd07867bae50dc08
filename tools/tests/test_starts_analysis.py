"""Which flow's data started first, beside flow 1's share (vegaskit.analysis.starts)."""
from __future__ import annotations

import csv
import json

import pytest

from vegaskit.analysis import starts


def _rep(root, name, first_s: dict[int, float], share: float | None):
    rep = root / name
    rep.mkdir(parents=True)
    with open(rep / "flows.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["flow", "cc", "t0_s", "t1_s", "bytes", "bps", "cwnd_bytes", "rtt_us",
                    "retransmits"])
        for flow, t in first_s.items():     # two intervals each, the first one first;
            # windows of 10 then 20 packets for flow 1, 30 then 40 for flow 2, ...
            w.writerow([flow, "x", f"{t:.3f}", f"{t + 0.5:.3f}", 1000, 16000,
                        (20 * flow - 10) * 1448, 1, 0])
            w.writerow([flow, "x", f"{t + 0.5:.3f}", f"{t + 1:.3f}", 1000, 16000,
                        20 * flow * 1448, 1, 0])
    figs = {"queue_pkts": 1.0} if share is None else {"queue_pkts": 1.0, "share": share}
    (rep / "figures.json").write_text(json.dumps(figs))


def test_a_flows_data_start_is_its_first_interval():
    rows = [{"flow": "2", "t0_s": "1.5"}, {"flow": "1", "t0_s": "0.9"},
            {"flow": "2", "t0_s": "1.2"}, {"flow": "1", "t0_s": "1.4"}]
    assert starts.data_starts(rows) == {1: 0.9, 2: 1.2}


def test_ranges_apart_only_when_both_orders_are_seen_and_do_not_overlap():
    rows = [{"lead": 0.3, "share": 1.4}, {"lead": -0.2, "share": 0.5},
            {"lead": 0.0, "share": 0.7}]        # a tie counts as not first
    assert starts.split(rows) == ([1.4], [0.5, 0.7], True)
    assert starts.split(rows + [{"lead": 0.1, "share": 0.6}])[2] is False
    assert starts.split(rows[:1])[2] is None


def test_the_command_tabulates_each_repetition_and_groups_them(tmp_path, capsys):
    run = "vp_cubic_100M80/full/vegas_plus"
    _rep(tmp_path, f"{run}/rep0", {1: 0.6, 2: 1.0, 3: 0.8}, 1.5)   # ours first by 0.2
    _rep(tmp_path, f"{run}/rep1", {1: 1.4, 2: 0.6}, 0.4)
    _rep(tmp_path, "vp_alone_100M80/full/vegas_plus/rep0", {1: 0.6}, None)  # one flow
    assert starts.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"| {run}/rep0 | 0.600 | 0.800 | +0.200 | 1.500 |" in out
    assert f"| {run}/rep1 | 1.400 | 0.600 | -0.800 | 0.400 |" in out
    assert f"| {run} | 1.5-1.5 (1) | 0.4-0.4 (1) | yes |" in out
    assert "vp_alone" not in out


def test_at_shows_both_flows_windows_in_the_interval_holding_each_time(tmp_path, capsys):
    _rep(tmp_path, "r/rep0", {1: 0.6, 2: 1.0, 3: 0.8}, 1.5)    # flow 3 is the first other
    assert starts.main([str(tmp_path), "--at", "0.7,1.2,9"]) == 0
    out = capsys.readouterr().out
    # at 0.7 s: flow 1's first interval (10), flow 3 not started; 1.2 s: 20 and 50; 9 s: over
    assert "| r/rep0 | 0.600 | 0.800 | +0.200 | 1.500 | 10 / - | 20 / 50 | - / - |" in out


@pytest.mark.parametrize("at", ["5,x", "-1", ",".join(["1"] * 13)])
def test_bad_times_are_refused(tmp_path, at, capsys):
    _rep(tmp_path, "r/rep0", {1: 0.6, 2: 1.0}, 1.5)
    assert starts.main([str(tmp_path), "--at", at]) == 2
    err = capsys.readouterr().err
    assert "--at" in err and err.count("\n") == 1


def _broken(rep):
    rep.mkdir()
    (rep / "flows.csv").write_text("flow\n1\n")      # no t0_s column
    (rep / "figures.json").write_text("{}")


@pytest.mark.parametrize("make, rc, msg", [
    (lambda p: None, 1, "no repetition"),
    (lambda p: _rep(p, "r/rep0", {1: 0.5}, 1.0), 1, "no repetition"),
    (lambda p: _broken(p / "bad"), 1, "unreadable"),
])
def test_bad_input_is_one_line_and_an_exit_code(tmp_path, make, rc, msg, capsys):
    make(tmp_path)
    assert starts.main([str(tmp_path)]) == rc
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


def test_a_missing_directory_is_refused(tmp_path, capsys):
    assert starts.main([str(tmp_path / "nope")]) == 2
    assert "no such directory" in capsys.readouterr().err
