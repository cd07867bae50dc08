"""model_validation's command line and the agent family's controller (no runs: these
refuse or build before anything starts)."""
import pytest

from vegaskit.cli import model_validation as mv


def test_agent_family_adds_the_papers_arithmetic_to_the_scenarios_own_spec():
    got = mv.agent_spec({"vk_model": "vegas --preset samios loss_cut=4", "x": "reno"}, mv.AGENT)
    assert got == {"vk_model": "vegas --preset samios loss_cut=4 semantics=paper", "x": "reno"}


def test_a_scenario_without_the_vegas_controller_is_refused():
    with pytest.raises(RuntimeError, match="no controller 'vk_model'"):
        mv.agent_spec({"vk_other": "vegas"}, mv.AGENT)


def test_the_scenarios_name_the_vegas_controller_the_family_changes():
    from vegaskit import paths
    from vegaskit.testbed.scenario import Scenario
    for _, name, spec in [(f, n, s) for f, ms in mv.FAMILIES.items() for n, s in ms]:
        s = Scenario.load(paths.SCENARIOS / f"{name}.toml")
        r = s.run(s.profile_runs("full")[0], "full", 0)
        assert r.controllers[mv.VEGAS_CC].startswith("vegas ")
        assert r.flows[0].cc == mv.VEGAS_CC


def test_a_full_only_family_in_the_ci_profile_is_one_line(capsys):
    assert mv.main(["--profile", "ci", "--family", "agent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["model_validation: family agent runs in the full profile only"]
