"""A batch's emulator stalls set against its other runs (analysis/stalls.py)."""
import json

from vegaskit.analysis import stalls
from vegaskit.analysis.stalls import RunTimes


def test_a_stall_every_live_emulator_shares_is_the_hosts():
    # two runs side by side, 100 s each; both late at 50 s and 80 s (the host's stalls),
    # the first also alone at 20 s
    a = RunTimes(1000.0, 100.0, [(20.0, 9.0), (50.0, 7.0), (80.0, 12.0)])
    b = RunTimes(1000.0, 100.0, [(50.01, 2.0), (80.02, 6.0)])
    got = stalls.analyse([a, b], ms=5.0)
    assert got["stalls"] == 4
    assert got["shared"] == (3, 4)              # 20 s was the first run's own
    shared, of = got["shared_chance"]
    assert of == stalls.SAMPLES and shared / of < 0.01   # 4 moments in 200 run-seconds


def test_a_run_alone_on_the_host_shares_nothing_it_could_be_compared_with():
    alone = RunTimes(0.0, 60.0, [(5.0, 8.0)])
    got = stalls.analyse([alone], ms=5.0)
    assert got["shared"] == (0, 0) and got["near"] == (0, 1)


def test_stalls_near_a_neighbours_start_or_end_are_counted():
    a = RunTimes(0.0, 100.0, [(30.5, 6.0), (70.0, 6.0)])
    b = RunTimes(30.0, 20.0, [])                # starts at 30 s, ends at 50 s
    got = stalls.analyse([a, b], ms=5.0)
    assert got["near"] == (1, 2)
    assert "1/2 (50%)" in stalls.lines(got)[2]


def test_runs_are_read_from_their_summaries_and_late_logs(tmp_path, capsys):
    d = tmp_path / "vegas" / "rep0"
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps({"t0_monotonic": 12.5, "duration_s": 40.0}))
    (d / "late.csv").write_text("t_s,link,dir,late_ms\n1.25,bottleneck,ab,7.5\n")
    old = tmp_path / "reno" / "rep0"            # made before late.csv existed: left out
    old.mkdir(parents=True)
    (old / "summary.json").write_text(json.dumps({"t0_monotonic": 1.0, "duration_s": 4.0}))
    assert stalls.load(tmp_path) == [RunTimes(12.5, 40.0, [(1.25, 7.5)])]
    assert stalls.main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("1 runs, 1 releases 5 ms or more late")
    assert stalls.main([str(tmp_path / "reno")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("stalls: no run under") and len(err.strip().splitlines()) == 1
