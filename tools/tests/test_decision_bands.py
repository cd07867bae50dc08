"""vegaskit.analysis.decisions: each adaptive decision counted by rule, by where diff
stood against the thresholds it saw, and by Th against Th'."""
import json

import pytest

from vegaskit.analysis import decisions

HEADER = ("time_s,type,saddr,sport,rule,cwnd,diff,alpha,beta,th_cmp\n")


def write_rep(d, rows, t0=100.0):
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"t0_monotonic": t0}))
    (d / "trace.csv").write_text(HEADER + "".join(",".join(map(str, r)) + "\n" for r in rows))


@pytest.mark.parametrize("diff,band", [(0, "<alpha"), (2, "=alpha"), (3, "between"),
                                       (4, "between"), (5, "=beta"), (9, ">beta")])
def test_band_against_alpha_2_beta_5(diff, band):
    assert decisions.band(diff, 2, 5) == band


def test_a_decision_is_placed_against_the_thresholds_its_flow_held_before_it(tmp_path):
    rows = [
        (100.5, "decision", "a", 1, "ss_exit", 10, 1, 1, 3, 0),      # first: no "before"
        (101.0, "decision", "a", 1, "inc_adapt", 11, 2, 2, 4, 1),    # saw 1,3: between
        (101.2, "decision", "b", 2, "inc", 4, 0, 1, 3, 1),           # b's first: left out
        (101.5, "decision", "a", 1, "dec_adapt", 12, 4, 1, 3, -1),   # saw 2,4: =beta
        (101.6, "sample", "a", 1, "", 12, 0, 1, 3, 0),               # not a decision
        (130.0, "decision", "a", 1, "hold", 11, 2, 1, 3, -1),        # past --to
    ]
    write_rep(tmp_path / "run" / "rep0", rows)
    t = decisions.read_rep(tmp_path / "run" / "rep0", 0, 20)
    assert t["counts"] == {("inc_adapt", "between", "Th>Th'"): 1,
                           ("dec_adapt", "=beta", "Th<Th'"): 1}
    assert t["cwnd"] == [11, 12] and t["alpha"] == [1, 2]
    # --from after the reroute leaves the early ones out
    assert sum(decisions.read_rep(tmp_path / "run" / "rep0", 1.2, 60)["counts"].values()) == 2


def test_cli_prints_the_tally_and_refuses_what_it_cannot_read(tmp_path, capsys):
    write_rep(tmp_path / "run" / "rep0", [(100.5, "decision", "a", 1, "inc", 5, 0, 1, 3, 1),
                                          (101.0, "decision", "a", 1, "inc", 6, 0, 1, 3, 1)])
    (tmp_path / "run" / "rep1").mkdir()                  # untraced: skipped
    assert decisions.main([str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "1 congestion-avoidance decisions in 1 traced repetitions" in out
    assert "| inc | <alpha | Th>Th' | 1 | 100.0% |" in out
    assert decisions.main([str(tmp_path / "nope")]) == 2
    assert decisions.main([str(tmp_path / "run" / "rep1")]) == 1
    assert decisions.main([str(tmp_path / "run"), "--from", "5", "--to", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("decisions: ") for e in err)


def test_by_window_counts_the_diff_each_window_read(tmp_path, capsys):
    write_rep(tmp_path / "run" / "rep0", [(100.5, "decision", "a", 1, "inc", 5, 0, 1, 3, 1),
                                          (101.0, "decision", "a", 1, "hold", 6, 3, 1, 3, 0),
                                          (101.5, "decision", "a", 1, "hold", 6, 3, 1, 3, 0),
                                          (102.0, "decision", "a", 1, "dec", 6, 4, 1, 3, 0)])
    t = decisions.read_rep(tmp_path / "run" / "rep0", 0, 60)
    assert t["by_window"] == {(6, 3): 2, (6, 4): 1}      # the first decision has no "before"
    assert decisions.main([str(tmp_path / "run")]) == 0
    assert "diff it read" not in capsys.readouterr().out  # only when asked
    assert decisions.main([str(tmp_path / "run"), "--by-window"]) == 0
    assert "| 6 | 3 | 3: 2, 4: 1 |" in capsys.readouterr().out
