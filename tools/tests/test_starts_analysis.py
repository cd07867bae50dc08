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
    (rep / "summary.json").write_text(json.dumps(
        {"flows": [{"flow": f, "start_s": t} for f, t in first_s.items()]}))
    figs = {"queue_pkts": 1.0} if share is None else {"queue_pkts": 1.0, "share": share}
    (rep / "figures.json").write_text(json.dumps(figs))


def test_a_flows_data_start_is_the_runners():
    summary = {"flows": [{"flow": 1, "start_s": 0.9}, {"flow": 2, "start_s": 1.2}]}
    assert starts.data_starts(summary) == {1: 0.9, 2: 1.2}


def test_ranges_apart_only_when_both_orders_are_seen_and_do_not_overlap():
    rows = [{"lead": 0.3, "share": 1.4}, {"lead": -0.2, "share": 0.5},
            {"lead": -0.06, "share": 0.7},
            {"lead": 0.05, "share": 0.1}, {"lead": -0.01, "share": 2.0}]  # no order: apart
    assert starts.split(rows) == ([1.4], [0.5, 0.7], [0.1, 2.0], True)
    assert starts.split(rows + [{"lead": 0.1, "share": 0.6}])[3] is False
    assert starts.split(rows[:1])[3] is None
    assert starts.split(rows[3:])[3] is None        # ties only: no order seen


def test_the_command_tabulates_each_repetition_and_groups_them(tmp_path, capsys):
    run = "vp_cubic_100M80/full/vegas_plus"
    _rep(tmp_path, f"{run}/rep0", {1: 0.6, 2: 1.0, 3: 0.8}, 1.5)   # ours first by 0.2
    _rep(tmp_path, f"{run}/rep1", {1: 1.4, 2: 0.6}, 0.4)
    _rep(tmp_path, "vp_alone_100M80/full/vegas_plus/rep0", {1: 0.6}, None)  # one flow
    assert starts.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"| {run}/rep0 | 0.600 | 0.800 | +0.200 | 1.500 | 1.0 |" in out
    assert f"| {run}/rep1 | 1.400 | 0.600 | -0.800 | 0.400 | 1.0 |" in out
    assert f"| {run} | 1.5-1.5 (1) | 0.4-0.4 (1) | none | yes |" in out
    assert "vp_alone" not in out


def test_a_run_without_a_share_or_without_another_flow_is_left_out(tmp_path, capsys):
    _rep(tmp_path, "run/rep0", {1: 0.6, 2: 1.0}, 1.5)
    _rep(tmp_path, "noshare/rep0", {1: 0.6, 2: 1.0}, None)
    _rep(tmp_path, "alone/rep0", {1: 0.6}, 1.0)
    assert starts.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| run/rep0 |" in out and "noshare" not in out and "alone" not in out


def test_a_repetition_given_as_the_root_is_its_own_group(tmp_path, capsys):
    _rep(tmp_path, "run/rep3", {1: 0.6, 2: 1.0}, 1.5)
    assert starts.main([str(tmp_path / "run" / "rep3")]) == 0
    out = capsys.readouterr().out
    assert "| . | 0.600 | 1.000 | +0.400 | 1.500 | 1.0 |" in out
    assert "| . | 1.5-1.5 (1) | none | none | not both orders |" in out


def test_at_shows_both_flows_windows_in_the_interval_holding_each_time(tmp_path, capsys):
    _rep(tmp_path, "r/rep0", {1: 0.6, 2: 1.0, 3: 0.8}, 1.5)    # flow 3 is the first other
    assert starts.main([str(tmp_path), "--at", "0.7,1.2,9"]) == 0
    out = capsys.readouterr().out
    # at 0.7 s: flow 1's first interval (10), flow 3 not started; 1.2 s: 20 and 50; 9 s: over
    assert "| r/rep0 | 0.600 | 0.800 | +0.200 | 1.500 | 1.0 | 10 / - | 20 / 50 | - / - |" in out


def test_a_window_the_sender_did_not_sample_is_not_a_flow_not_running(tmp_path, capsys):
    _rep(tmp_path, "r/rep0", {1: 0.6, 2: 1.0}, 1.5)
    flows = tmp_path / "r" / "rep0" / "flows.csv"
    lines = flows.read_text().splitlines()
    cells = lines[2].split(",")             # flow 1's last interval: no sender sample
    cells[6] = ""
    lines[2] = ",".join(cells)
    flows.write_text("\n".join(lines) + "\n")
    assert starts.main([str(tmp_path), "--at", "1.3"]) == 0
    assert "| 1.500 | 1.0 | ? / 30 |" in capsys.readouterr().out


@pytest.mark.parametrize("at", ["5,x", "-1", ",".join(["1"] * 13)])
def test_bad_times_are_refused(tmp_path, at, capsys):
    _rep(tmp_path, "r/rep0", {1: 0.6, 2: 1.0}, 1.5)
    assert starts.main([str(tmp_path), "--at", at]) == 2
    err = capsys.readouterr().err
    assert "--at" in err and err.count("\n") == 1


def _nan_share(rep):
    _rep(rep.parent, rep.name, {1: 0.6, 2: 1.0}, 1.0)
    (rep / "figures.json").write_text('{"share": NaN}')


def _broken(rep):
    rep.mkdir()
    (rep / "flows.csv").write_text("flow\n1\n")
    (rep / "summary.json").write_text('{"flows": [{"flow": 1}]}')     # no start_s
    (rep / "figures.json").write_text("{}")


@pytest.mark.parametrize("make, rc, msg", [
    (lambda p: None, 1, "no repetition"),
    (lambda p: _rep(p, "r/rep0", {1: 0.5}, 1.0), 1, "no repetition"),
    (lambda p: _broken(p / "bad"), 1, "unreadable"),
    (lambda p: _nan_share(p / "nan"), 1, "is not a share"),
])
def test_bad_input_is_one_line_and_an_exit_code(tmp_path, make, rc, msg, capsys):
    make(tmp_path)
    assert starts.main([str(tmp_path)]) == rc
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1


@pytest.mark.parametrize("args, msg", [
    (["{root}/nope"], "no such directory"),
    (["{root}", "--at", "-1,5"], "--at"),
    (["{root}", "--bogus"], "unrecognized arguments"),
    ([], "required: root"),
])
def test_usage_errors_are_one_line(tmp_path, args, msg, capsys):
    assert starts.main([a.format(root=tmp_path) for a in args]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1 and err.startswith("starts: ")
