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
    for _, name, spec in [(f, n, s) for f, fam in mv.FAMILIES.items() for n, s in fam.members]:
        s = Scenario.load(paths.SCENARIOS / f"{name}.toml")
        r = s.run(s.profile_runs("full")[0], "full", 0)
        assert r.controllers[mv.VEGAS_CC].startswith("vegas ")
        assert r.flows[0].cc == mv.VEGAS_CC


def test_a_full_only_family_in_the_ci_profile_is_one_line(capsys):
    assert mv.main(["--profile", "ci", "--family", "agent"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["model_validation: family agent runs in the full profile only"]


def test_from_with_family_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        mv.main(["--from", str(tmp_path), "--family", "linux"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["model_validation: error: --from runs nothing: --family does not apply"]


def _row(**m):
    base = {"run": "model_validation/l0.03_r40", "rep": 0, "p": 0.02, "R_s": 0.0455,
            "base_rtt_s": 0.041, "sent_pps": 209.0}
    return mv.vegas_row({**base, **m})


def test_the_error_splits_into_round_count_rest_and_process_where_12_fails():
    r = _row()
    assert r["w_prime_periods"] and not r["in_domain"]
    product = ((1 + r["error_round_count"]) * (1 + r["error_counted_vs_process"])
               * (1 + r["error_process"]))
    assert product == pytest.approx(1 + r["error"], rel=1e-12)
    assert r["error_counted"] == pytest.approx(r["model_counted_pps"] / 209.0 - 1, rel=1e-12)
    assert r["error_round_count"] > 0.3          # p = 2%: W' = 15, periods of 3.7 rounds
    table = "\n".join(mv._round_count_table([r]))
    assert "model_validation/l0.03_r40" in table and "Over the 1 runs where (12) fails" in table


def test_where_12_holds_the_round_count_does_not_apply_and_the_branch_says_32():
    r = _row(run="model_validation/l0.002_r40", p=0.0015, R_s=0.0466)   # (12) holds, (26) not
    assert not r["w_prime_periods"] and r["error_round_count"] == 0
    assert r["branch"].endswith("((12) holds: (32)'s periods)")
    assert mv._round_count_table([r]) == ["No run here has (12) failing."]


def test_the_sink_family_runs_the_agent_behind_per_packet_acks_on_every_flow():
    from vegaskit import paths
    from vegaskit.testbed.scenario import Scenario
    s = Scenario.load(paths.SCENARIOS / "model_validation_cross.toml")
    plain = s.run("b50_r40", "full", 0)
    assert [f.acks for f in plain.flows] == ["delayed", "delayed"]
    r = mv.with_variant(s.run("b50_r40", "full", 0), mv.SINK_RUNS)
    assert r.controllers[mv.VEGAS_CC].endswith(" semantics=paper")
    assert [f.acks for f in r.flows] == ["every", "every"]
    agent = mv.with_variant(s.run("b50_r40", "full", 0), mv.AGENT_RUNS)
    assert [f.acks for f in agent.flows] == ["delayed", "delayed"]
    assert mv.label(s, mv.SINK_RUNS) == "model_validation_cross+sink"
    assert mv.with_variant(s.run("b50_r40", "full", 0), None).controllers == plain.controllers


def test_the_summary_gives_each_familys_error_inside_the_domain():
    rows = lambda *es: [{"error": e, "in_domain": d} for e, d in es]  # noqa: E731
    got = mv._summary({"linux": rows((0.3, True), (-0.1, True), (0.9, False)),
                       "fast": [], "sink": rows((0.05, True), (-0.15, False))})
    body = [r for r in got if r.startswith("| linux") or r.startswith("| sink")]
    assert body[0].split(" | ")[1:] == ["2 of 3", "20.0%", "30.0%", "43.3% |"]
    assert body[1].split(" | ")[1:] == ["1 of 2", "5.0%", "5.0%", "10.0% |"]
    assert not any(r.startswith("| fast") for r in got)       # a family not run: no row
