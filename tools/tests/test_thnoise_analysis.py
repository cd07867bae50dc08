"""The measurement of the RTT's noise in Th (analysis/thnoise.py, docs/DESIGN.md §3.10)
on hand-made decisions: which pairs it reads, how it sets apart those the emulator
was late in, and what it says of a directory that is not a traced repetition."""
import json

import pytest

from vegaskit.analysis import thnoise


def rec(t, rule="hold", sent=30, th=0.0, th_prev=0.0, rtt_us=40_000):
    return {"time_s": t, "rule": rule, "sent": sent, "th": th, "th_prev": th_prev,
            "rtt_us": rtt_us}


def settled(th_gap_per_s: float, t0: float = 0.0) -> list[dict]:
    """Three holds at one count, then a fourth decision whose Th moved by th_gap_per_s."""
    return [rec(t0), rec(t0 + .04), rec(t0 + .08),
            rec(t0 + .12, th=750.0 + th_gap_per_s, th_prev=750.0)]


def test_a_pair_after_three_holds_at_one_count_is_read_in_packets_per_round():
    clean, late = thnoise.noise_pairs(settled(25.0), [])
    assert clean == [pytest.approx(1.0)] and late == []     # 25 packets/s over 40 ms


@pytest.mark.parametrize("recs", [
    [rec(0), rec(.04, rule="inc"), rec(.08), rec(.12, th=800, th_prev=750)],    # not 3 holds
    [rec(0), rec(.04), rec(.08, sent=31), rec(.12, th=800, th_prev=750)],      # count moved
    [rec(0), rec(.04), rec(.08), rec(.12, th=800, th_prev=0)],                 # no Th'
])
def test_unsettled_rounds_are_not_read(recs):
    assert thnoise.noise_pairs(recs, []) == ([], [])


def test_a_late_release_in_the_pairs_rounds_sets_it_apart():
    recs = settled(25.0) + settled(2.5, t0=1.0)
    clean, late = thnoise.noise_pairs(recs, [0.05])        # inside the first pair's rounds
    assert clean == [pytest.approx(0.1)] and late == [pytest.approx(1.0)]
    assert thnoise.noise_pairs(recs, [0.02]) == thnoise.noise_pairs(recs, [])  # before them


def test_the_summary_counts_pairs_that_reach_the_band():
    m = thnoise.summarise([0.1, 0.49, 0.5, 2.0])
    assert (m["pairs"], m["crossed"], m["max"]) == (4, 2, 2.0)
    assert thnoise.line("x", thnoise.summarise([])) == "x: no pairs"


def test_a_directory_that_is_not_a_traced_repetition_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "summary.json").write_text(json.dumps({"t0_monotonic": 0}))
    assert thnoise.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a traced repetition" in err


def test_an_unreadable_trace_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "summary.json").write_text(json.dumps({"t0_monotonic": 0}))
    (tmp_path / "trace.csv").write_text("time_s,type\nnot-a-number,decision\n")
    assert thnoise.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unreadable" in err
