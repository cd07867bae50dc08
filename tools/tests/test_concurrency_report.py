"""make concurrency's report says the condition its runs were made in (machine, the
emulators' policy, labs at once, late releases), and rerenders from its JSON."""
import json

import pytest

from vegaskit.cli import concurrency


def summary(fifo: int, late: int, labs: int) -> dict:
    return {"machine": "6.1.0, Test CPU", "emulator_fifo": fifo, "emulator_late_1ms": late,
            "labs_alive_max": labs}


def test_conditions_name_the_policy_and_the_late_releases_per_arm():
    alone = [summary(10, n, 1) for n in (0, 1, 35)]
    beside = [summary(10, n, 4) for n in (4, 19, 2)]
    text = concurrency.conditions(alone, beside)
    assert "6.1.0, Test CPU" in text
    assert "The emulators ran under SCHED_FIFO (decision 42)." in text
    assert "At most 4 labs" in text
    assert "alone 1 [0, 35], beside 4 [2, 19]" in text


def test_conditions_say_when_the_policies_differ_or_are_ordinary():
    assert "under the ordinary policy" in \
        concurrency.conditions([summary(0, 0, 1)], [summary(0, 0, 4)])
    mixed = concurrency.conditions([summary(0, 0, 1)], [summary(10, 0, 4)])
    assert "under SCHED_FIFO in 1 of the 2 repetitions" in mixed
    old = {"machine": "6.1.0, Test CPU"}          # runs from before decision 42 record none
    assert "under the ordinary policy" in concurrency.conditions([old], [old])
    other = dict(summary(10, 0, 4), machine="6.12.0, Other CPU")
    assert "machines the summaries do not agree on" in \
        concurrency.conditions([summary(10, 0, 1)], [other])


def test_rerender_writes_the_report_from_the_json(tmp_path):
    setup = {"scenario": "s", "run": "r", "profile": "full", "reps": 2, "beside": 3,
             "others": ["a", "b", "c"], "cpus": 2, "duration_s": 59.0,
             "wall_alone_s": 100.0, "wall_beside_s": 110.0}
    rows = [{"metric": "utilisation", "alone": 0.99, "beside": 0.98,
             "alone_range": [0.98, 0.99], "beside_range": [0.97, 0.99],
             "p": 0.5, "p_holm": 1.0, "ks": 0.5}]
    (tmp_path / "concurrency.json").write_text(json.dumps(
        {"setup": setup, "rows": rows, "alone": [summary(10, 1, 1)] * 2,
         "beside": [summary(10, 3, 4)] * 2}))
    assert concurrency.main(["--rerender", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "no metric differs" in report and "SCHED_FIFO (decision 42)" in report


@pytest.mark.parametrize("content", [None, "{", "[]", '{"setup": {}, "rows": [], '
                                     '"alone": [1], "beside": []}'])
def test_rerender_from_a_missing_or_malformed_json_is_one_line_and_exit_2(tmp_path, capsys,
                                                                         content):
    if content is not None:
        (tmp_path / "concurrency.json").write_text(content)
    assert concurrency.main(["--rerender", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("concurrency: cannot rerender")
    assert not (tmp_path / "report.md").exists()
