"""vegas_plus's mode changes read from a traced run (vegaskit.analysis.modes): each
entry to competitive mode, the slow start after it, the retransmissions near it and
the probes that ended it."""
from __future__ import annotations

import csv
import json

from vegaskit.analysis import modes
from vegaskit.testbed.runner import BASE_PORT

T0 = 500.0
TRACE_COLS = ["time_s", "type", "ca", "dport", "rule", "mode", "cwnd", "cwnd_after"]


def _rep(tmp_path, decisions, intervals, ca="bpf_vegas_plus"):
    rep = tmp_path / "vegas_plus" / "rep0"
    rep.mkdir(parents=True)
    with open(rep / "trace.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(TRACE_COLS)
        for t, flow, rule, mode, cwnd, after in decisions:
            w.writerow([T0 + t, "decision", ca, BASE_PORT + flow, rule, mode,
                        cwnd, after])
    with open(rep / "flows.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["flow", "cc", "t0_s", "t1_s", "bytes", "bps", "cwnd_bytes", "rtt_us",
                    "retransmits"])
        w.writerows(intervals)
    (rep / "summary.json").write_text(json.dumps({
        "t0_monotonic": T0, "duration_s": 20.0,
        "flows": [{"flow": 1, "label": "S1 bpf_vegas_plus"}, {"flow": 2, "label": "S2 cubic"}]}))
    return rep.parent


DECISIONS = [
    (1.0, 1, "inc", "delay", 100, 101),
    (10.0, 1, "to_compete", "compete", 500, 500),
    (10.1, 1, "compete", "compete", 1000, 1002),
    (10.2, 1, "compete", "compete", 2000, 2002),
    (12.0, 1, "probe", "probe", 1100, 600),     # the probe's cut is not the slow start's
    (12.2, 1, "probe_fail", "compete", 600, 1100),
    (14.0, 1, "probe", "probe", 1100, 610),
    (14.2, 1, "to_delay", "delay", 610, 610),
    (15.0, 1, "dec", "delay", 610, 609),
]
INTERVALS = [
    (1, "bpf_vegas_plus", 9.5, 10.0, 0, 0, 700_000, 80000, 5),     # before the entry
    (2, "cubic", 9.5, 10.5, 0, 0, 144_800, 80000, 0),              # holds t = 10: 100 pkts
    (1, "bpf_vegas_plus", 10.5, 11.0, 0, 0, 0, 80000, 900),
    (2, "cubic", 10.5, 11.0, 0, 0, 0, 80000, 40),
    (1, "bpf_vegas_plus", 11.5, 12.0, 0, 0, 0, 80000, 100),
    (1, "bpf_vegas_plus", 12.0, 12.5, 0, 0, 0, 80000, 7),          # outside the 2 s
    (1, "bpf_vegas_plus", 19.9, 20.0, 0, 0, "", "", ""),           # the last, partial one
]


def test_an_entry_its_slow_start_its_losses_and_its_probes(tmp_path):
    run = _rep(tmp_path, DECISIONS, INTERVALS)
    (flow,) = modes.read_rep(run / "rep0", after=2.0)
    (e,) = flow["episodes"]
    assert (e["t"], e["rule"], e["cwnd"], e["peak"]) == (10.0, "to_compete", 500, 2002)
    assert (e["retx_own"], e["retx_others"], e["others_cwnd"]) == (1000, 40, [100])
    assert (e["fails"], round(e["back_s"], 6), e["kept"]) == (1, 14.2, 610)
    s = flow["seconds"]
    assert round(s["delay"], 6) == round(9.0 + 5.8, 6)     # 1-10 s, 14.2 s to the end at 20
    assert round(s["compete"], 6) == 3.8 and round(s["probe"], 6) == 0.4
    assert flow["misplaced"] == 0


def test_a_mode_change_outside_its_rule_is_counted(tmp_path, capsys):
    reset = DECISIONS[:4] + [(10.3, 1, "dec", "delay", 2002, 2001)]   # compete -> delay at dec
    run = _rep(tmp_path, reset, INTERVALS)
    (flow,) = modes.read_rep(run / "rep0", after=2.0)
    assert flow["misplaced"] == 1
    assert modes.main([str(run)]) == 0
    assert "| 1 |\n" in capsys.readouterr().out


def test_a_rule_joining_other_modes_than_its_own_is_misplaced():
    rec = lambda rule, mode: {"rule": rule, "mode": mode}
    assert modes.misplaced([rec("to_compete", "compete"), rec("probe", "probe"),
                            rec("probe", "probe"), rec("probe_fail", "compete"),
                            rec("dec", "compete"), rec("probe", "probe"),
                            rec("to_delay", "delay"), rec("inc", "delay")]) == []
    skipped = [rec("to_compete", "compete"), rec("to_delay", "delay")]   # no probe between
    stayed = [rec("recall", "delay")]                                       # a change that did not happen
    assert modes.misplaced(skipped) == [skipped[1]]
    assert modes.misplaced(stayed) == stayed


def test_an_entry_never_left_and_the_command(tmp_path, capsys):
    run = _rep(tmp_path, DECISIONS[:4], INTERVALS, ca="vp_ss_capped")   # an ablation's instance
    assert modes.main([str(run)]) == 0
    out = capsys.readouterr().out
    assert "| rep0 | 1 | 10.00 | to_compete | 500 | 2002 | 1000 | 40 | 100 | 0 | never | - |" in out


def test_bad_input_is_one_line_and_nonzero(tmp_path, capsys):
    assert modes.main([str(tmp_path / "missing")]) == 2
    assert modes.main([str(tmp_path), "--after", "0"]) == 2
    assert modes.main([str(tmp_path)]) == 1            # a directory with nothing traced
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("modes: ") for line in err)


def test_every_tabulates_what_delay_mode_read_in_each_window(tmp_path, capsys):
    rep = tmp_path / "vegas_plus" / "rep0"
    rep.mkdir(parents=True)
    cols = ["time_s", "type", "ca", "dport", "rule", "mode", "cwnd", "cwnd_after", "rtt_us",
            "base_rtt_us", "diff", "foreign"]
    rows = [(1.0, "dec", "delay", 100, 99, 85_000, 80_000, 6, 1.0),
            (1.5, "dec", "delay", 99, 98, 84_000, 80_000, 5, 2.0),
            (2.0, "inc", "delay", 98, 99, 83_000, 80_000, 4, 9.0),
            (3.0, "compete", "compete", 99, 100, 90_000, 80_000, 11, 0.0),  # not the band
            (6.0, "hold", "delay", 50, 50, 81_000, 80_000, 3, ""),
            (7.0, "dec", "delay", 50, 49, 81_000, 80_000, 3, 0.5)]
    with open(rep / "trace.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for t, rule, mode, cwnd, after, rtt, base, diff, foreign in rows:
            w.writerow([T0 + t, "decision", "bpf_vegas_plus", BASE_PORT + 1, rule, mode, cwnd,
                        after, rtt, base, diff, foreign])
    (rep / "flows.csv").write_text("flow,cc,t0_s,t1_s,bytes,bps,cwnd_bytes,rtt_us,retransmits\n")
    (rep / "summary.json").write_text(json.dumps({
        "t0_monotonic": T0, "duration_s": 10.0, "flows": [{"flow": 1, "label": "S1"}]}))
    assert modes.main([str(rep.parent), "--every", "5"]) == 0
    out = capsys.readouterr().out
    assert "| rep0 | 1 | 0 | 3 | 2 | 100 -> 99 | 4.00 | 5 | 2.00 | 9.00 |" in out
    assert "| rep0 | 1 | 5 | 2 | 1 | 50 -> 49 | 1.00 | 3 | 0.25 | 0.50 |" in out
    assert modes.main([str(rep.parent)]) == 0
    assert "Delay mode's band" not in capsys.readouterr().out      # only when asked


def test_a_usage_error_is_one_line(tmp_path, capsys):
    assert modes.main([str(tmp_path), "--every", "0"]) == 2
    assert modes.main([str(tmp_path), "--every", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("modes: ") for line in err)
