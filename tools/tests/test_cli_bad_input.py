"""Bad input to the results commands, beyond usage errors (test_usage_errors.py): a
number in the environment that is not one, a scenario file that is not text, and a
rerender of JSON that is not the runner's. Each is one line on stderr, exit 2, no
traceback, and nothing rewritten."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vegaskit.cli import ns2 as ns2_cli
from vegaskit.cli import results as results_cli
from vegaskit.cli import vegas_plus as vegas_plus_cli
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.testing.summaries import SCENARIO

pytestmark = pytest.mark.reliability("bad_input")


def _one_line(capsys, *words: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    return err


@pytest.mark.parametrize("module,env", [
    ("vegaskit.cli.results", {"JOBS": "x"}),
    ("vegaskit.cli.vegas_plus", {"JOBS": "2.5"}),
    ("vegaskit.cli.model_validation", {"JOBS": "four"}),
    ("vegaskit.cli.native_ab", {"AB_REPS": "x"}),
    ("vegaskit.cli.native_ab", {"VM_TIMEOUT": "-1"}),
    ("vegaskit.cli.vm_test", {"VM_TIMEOUT": "nan"}),
])
def test_a_number_from_the_environment_that_is_not_one(module, env):
    """make passes its command-line variables (make results JOBS=x) in the environment;
    they were once read with int() as the parser was built, a traceback even on --help."""
    import os
    r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                       text=True, timeout=120, env={**os.environ, **env})
    (name, value), = env.items()
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and f"{name}={value!r}" in r.stderr, r.stderr


def test_a_scenario_file_that_is_not_text(tmp_path):
    p = tmp_path / "s.toml"
    p.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ScenarioError, match="not a text file"):
        Scenario.load(p)


def test_results_index_of_another_profile_is_refused(tmp_path, capsys):
    """--index writes only the full profile's index: with ci it once did nothing, exit 0."""
    assert results_cli.main(["--index", "--profile", "ci", "--out", str(tmp_path)]) == 2
    _one_line(capsys, "--profile full")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", ["[{}]", '{"a": 1}', "[1, 2]",
                                     '[{"run": "reno", "rep": 0, "flows": []}]'])
def test_results_rerender_of_summaries_that_are_not_the_runners(tmp_path, capsys, content):
    scen = tmp_path / "s.toml"
    scen.write_text(SCENARIO)
    name = Scenario.load(scen).name
    base = tmp_path / "out" / name / "full"
    base.mkdir(parents=True)
    (base / "summaries.json").write_text(content)
    assert results_cli.main([str(scen), "--rerender", "--profile", "full",
                             "--out", str(tmp_path / "out")]) == 2
    _one_line(capsys, "summaries.json")
    assert (base / "summaries.json").read_text() == content
    assert not (base / "report.md").exists()


def test_ns2_rerender_of_summaries_that_are_not_ns2s(tmp_path, capsys):
    scen = tmp_path / "s.toml"
    scen.write_text(SCENARIO)
    s = Scenario.load(scen)
    profile = next(iter(s.profiles))
    store = tmp_path / "ns2" / s.name / "summaries.json"
    store.parent.mkdir(parents=True)
    store.write_text("[{}]")
    rc = ns2_cli.main([str(scen), "--rerender", "--profile", profile, "--out", str(tmp_path)])
    assert rc == 2
    _one_line(capsys, "ns2")
    assert store.read_text() == "[{}]"


def test_vegas_plus_rerender_of_nothing_or_of_json_that_does_not_parse(tmp_path, capsys):
    (tmp_path / "vegas_plus").mkdir()
    assert vegas_plus_cli.main(["--rerender", "--out", str(tmp_path)]) == 2
    _one_line(capsys, "no runs to render")
    d = tmp_path / "vegas_plus" / "vp_alone_10M20" / "full"
    d.mkdir(parents=True)
    (d / "summaries.json").write_text("{not json")
    assert vegas_plus_cli.main(["--rerender", "--out", str(tmp_path)]) == 2
    _one_line(capsys, "summaries.json")
    assert not (tmp_path / "vegas_plus" / "report.md").exists()


def test_results_rerender_of_the_runners_summaries_writes_the_report(tmp_path):
    """The two passes (render everything, then write) still write what one did."""
    from vegaskit.testing.summaries import minimal_summary
    scen = tmp_path / "s.toml"
    scen.write_text(SCENARIO)
    base = tmp_path / "out" / "t" / "full"
    base.mkdir(parents=True)
    (base / "summaries.json").write_text(json.dumps([minimal_summary()]))
    assert results_cli.main([str(scen), "--rerender", "--profile", "full",
                             "--out", str(tmp_path / "out")]) == 0
    assert "# " in (base / "report.md").read_text()
    assert json.loads((base / "summaries.json").read_text())[0]["run"] == "reno"


def test_ns2_rerender_without_vegasctl_built(tmp_path, capsys, monkeypatch):
    """The ns-2 replay maps controller specs through `vegasctl list`: unbuilt, it once
    ended in a FileNotFoundError traceback."""
    from vegaskit import paths
    from vegaskit.ns2 import agents
    monkeypatch.setattr(paths, "BUILD", tmp_path)
    monkeypatch.setattr(paths, "VEGASCTL", tmp_path / "vegasctl")
    agents._variants.cache_clear()
    try:
        assert ns2_cli.main(["--rerender", "--out", str(tmp_path)]) == 2
    finally:
        agents._variants.cache_clear()
    _one_line(capsys, "make all")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_program_not_ours_gets_no_build_hint():
    from vegaskit.proc import sh
    with pytest.raises(RuntimeError, match=r"^/nonexistent/ip: cannot run: No such file or directory$"):
        sh(["/nonexistent/ip"])
