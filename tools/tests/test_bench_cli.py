"""`make bench`'s command line: bad input is one line and exit 2, before anything
is loaded or measured (the stages themselves: netns-tests/tests/test_bench_stages.py)."""
import json

import pytest

from vegaskit import paths
from vegaskit.cli import bench


@pytest.mark.parametrize("argv", [["--rounds", "1"], ["--rounds", "x"], ["--seconds", "0"],
                                  ["--stage", "nope"]])
def test_bad_arguments_exit_2_with_one_line(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m vegaskit.cli.bench: error:")


def test_a_stage_alone_needs_the_others_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "bench.json").write_text(json.dumps({"swap": {}, "flows": {}}))
    assert bench.main(["--stage", "swap"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run every stage first" in err[0]
    assert not (tmp_path / "bench" / "report.md").exists()


def test_the_report_says_when_each_stage_was_measured():
    r = {"opcost": {"measured": {"date": "2026-11-24 18:00", "commit": "abc"}},
         "swap": {"measured": {"date": "2026-11-24 19:00", "commit": "def+"}}, "flows": None}
    assert bench.measured_line(r) == ("Measured: opcost 2026-11-24 18:00 (abc); "
                                      "swap 2026-11-24 19:00 (def+).")
    assert bench.measured_line({"swap": {}}) == "Measured: before stages recorded it."
