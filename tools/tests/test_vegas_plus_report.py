"""results/vegas_plus/report.md's tables (vegaskit.vegasplus.report): each
controller's median and interval, and the goal's count for vegas_plus and for each
ablation that ran on the network."""
from __future__ import annotations

from vegaskit.vegasplus import report


def _figs(cc: str, shares: list[float]) -> dict:
    return {("cubic", "10M80", cc): [{"share": x} for x in shares]}


def test_the_goal_column_counts_the_default_and_each_ablation_that_ran():
    figs = {**_figs("vegas_plus", [1.0] * 5 + [0.5]),
            **_figs("vp_ss_capped", [1.0, 1.0, 0.5, 0.5, 0.5, 0.5])}
    (row,) = [r for r in report.table(figs, "10M80") if r.startswith("| against 1 cubic")]
    assert row.endswith("| not met (5/6); vp_ss_capped: not met (2/6) |")
    assert "| vp_ss_capped |" in report.table(figs, "10M80")[0].replace(" vegas_plus: goal", "")


def test_without_ablations_the_goal_column_is_the_defaults_alone():
    lines = report.table(_figs("vegas_plus", [1.0] * 6), "10M80")
    assert "vp_ss" not in lines[0]
    (row,) = [r for r in lines if r.startswith("| against 1 cubic")]
    assert row.endswith("| met (6/6) |")
    assert "not run" in row            # the other controllers of CCS


def test_a_rerender_takes_jain_from_the_runners_summary(tmp_path):
    """Without the queue log, the kept figures.json is read and Jain's index comes from
    summary.json, the number the case's own report.md shows (they once differed: the
    report computed its own over the run's second half)."""
    import json
    (tmp_path / "summary.json").write_text(json.dumps({"jain": 0.9773, "flows": [{}, {}]}))
    (tmp_path / "figures.json").write_text(json.dumps({"share": 1.0, "jain": 0.978}))
    keep = []
    figs = report.figures_of(tmp_path, None, "pair", keep)
    assert figs == {"share": 1.0, "jain": 0.9773, "late_1ms": None}
    assert keep == [(tmp_path / "figures.json", figs)]          # for the caller to write
    assert json.loads((tmp_path / "figures.json").read_text())["jain"] == 0.978
    # leave's Jain is its competition's, kept in figures.json
    (tmp_path / "figures.json").write_text(json.dumps({"share": 1.0, "jain": 0.5}))
    assert report.figures_of(tmp_path, None, "leave", [])["jain"] == 0.5


def test_a_pair_in_which_no_flow_sent_is_said_so_not_never():
    figs = {("pair", "10M80", "vegas_plus"): [{"jain": 1.0}] * 5 + [{"jain": None}]}
    (row,) = [r for r in report.table(figs, "10M80") if r.startswith("| 2 flows")]
    assert "| no flow sent in 1/6 |" in row and row.endswith("| not met (5/6) |")


def test_the_emulators_lateness_row_pools_every_case():
    figs = {("cubic", "10M80", "vegas_plus"): [{"share": 1.0, "late_1ms": 3}] * 6,
            ("pair", "10M80", "vegas_plus"): [{"jain": 1.0, "late_1ms": 900}] * 6,
            ("cubic", "10M80", "cubic"): [{"share": 1.0, "late_1ms": None}] * 6}
    (row,) = [r for r in report.table(figs, "10M80") if r.startswith("| link emulator")]
    assert "| 452 [3, 900] (12) |" in row and "| not counted in 6/6 |" in row


def test_the_plot_has_a_panel_per_network_that_ran_and_a_legend_entry_per_point(tmp_path,
                                                                              monkeypatch):
    """The throughput-delay plane: a grid of panels, one per network with runs, and one
    legend for the figure naming each controller and case that has a median point."""
    seen = {}
    real_save = report.plots.save

    def keep(fig, out, rect=None):
        seen["panels"] = [ax.get_title() for ax in fig.axes if ax.axison]
        seen["legend"] = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        real_save(fig, out, rect)
    monkeypatch.setattr(report.plots, "save", keep)
    point = {"delay_p95_ms": 5.0, "mbps": 9.0}
    figs = {("alone", "10M20", "vegas_plus"): [point] * 3,
            ("reno", "10M20", "cubic"): [point, {"delay_p95_ms": 7.0, "mbps": 4.0}],
            ("cubic", "100M80", "vegas"): [point]}
    assert report.plot(figs, tmp_path / "td.png")
    assert (tmp_path / "td.png").stat().st_size > 0
    assert [t.split(" ")[0] for t in seen["panels"]] == ["10M20", "100M80"]
    assert seen["legend"] == ["vegas_plus alone", "vegas against 1 cubic",
                              "cubic against 1 reno"]
    assert not report.plot({}, tmp_path / "none.png")


def test_the_summary_has_vegas_plus_s_goal_rows_on_the_goals_networks():
    figs = {("alone", "10M20", "vegas_plus"): [{"utilisation": 0.99}] * 5 + [{"utilisation": 0.9}],
            ("bbr", "100M80", "vegas_plus"): [{"share": 0.2}] * 6,
            ("alone", "100M20tsq", "vegas_plus"): [{"utilisation": 0.5}] * 6,
            ("alone", "10M20", "cubic"): [{"utilisation": 0.1}] * 6}
    lines = report.summary(figs)
    assert lines[0] == "| figure | 10M20 | 10M80 | 100M20 | 100M80 | goal |"
    (util,) = [r for r in lines if r.startswith("| alone: bottleneck utilisation")]
    assert util == ("| alone: bottleneck utilisation | 0.99 [0.9, 0.99]: 5/6 | not run | "
                    "not run | not run | ≥ 0.97 |")
    (bbr,) = [r for r in lines if r.startswith("| against 1 bbr")]
    assert bbr.endswith("| 0.2 [0.2, 0.2] (6) | report |")        # no goal, no count
    assert not any("start" in r for r in lines)                    # on-request cases stay out
    assert not any("late" in r for r in lines)


def test_the_readme_s_summary_is_replaced_between_its_markers_and_nowhere_else():
    text = f"intro\n{report.README_BEGIN}\nold table\n{report.README_END}\nrest\n"
    assert report.readme_with(["| new |"], text) == (f"intro\n{report.README_BEGIN}\n| new |\n"
                                                     f"{report.README_END}\nrest\n")
    assert report.readme_with(["| new |"], "no markers\n") is None


def test_into_the_repositorys_results_a_readme_without_its_markers_stops_before_writing(
        tmp_path, monkeypatch):
    """The README's copy is part of the report: a README whose markers are gone (or out
    of order) is an error, found before report.md or anything else is written."""
    import pytest
    from vegaskit import paths
    monkeypatch.setattr(paths, "REPO", tmp_path)
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    base = tmp_path / "results" / "vegas_plus"
    base.mkdir(parents=True)
    for text in ("no markers\n", f"{report.README_END}\n{report.README_BEGIN}\n"):
        (tmp_path / "README.md").write_text(text)
        with pytest.raises(ValueError, match="summary markers"):
            report.write(base, "cmd")
        assert list(base.iterdir()) == []
    (tmp_path / "README.md").write_text(f"a\n{report.README_BEGIN}\n{report.README_END}\nb\n")
    assert report.write(base, "cmd") == base / "report.md"
    assert "| figure | 10M20 |" in (tmp_path / "README.md").read_text()


def test_the_readmes_summary_is_the_committed_reports():
    """README.md's copy is written by report.write with the report; a hand edit of either,
    or a report written elsewhere and copied in, shows here."""
    from vegaskit import paths
    readme = (paths.REPO / "README.md").read_text()
    block = readme.split(report.README_BEGIN)[1].split(report.README_END)[0].strip()
    assert block.startswith("| figure | 10M20 | 10M80 | 100M20 | 100M80 | goal |")
    assert block in (paths.RESULTS / "vegas_plus" / "report.md").read_text()
