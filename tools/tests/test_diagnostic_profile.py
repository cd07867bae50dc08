"""A diagnostic profile (scenario.py PROFILE_KEYS, docs/DESIGN.md §6.5) is an
experiment of ours about the full runs, shorter or traced: its report gives the
profile's text and sets nothing against the paper, whose figures were measured
over the full run."""
import pytest

from vegaskit.testbed import report
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.testing.summaries import SCENARIO, minimal_summary

TEXT = SCENARIO + """
[profiles.onset]
duration = 5
diagnostic = "The first five seconds, traced."
[paper]
table = "Table 9"
columns = ["", "S1"]
rows = [["Reno", 1.0]]
[[paper.figures]]
id = "Table 9: S1 (bit/s)"
run = "reno"
metric = "throughput:S1"
value = 1000000
[report]
notes = "The full runs' reading."
"""


def test_a_diagnostic_profile_reports_its_text_and_not_the_papers_verdicts():
    s = Scenario.parse(TEXT)
    assert s.run("reno", "onset").duration == 5
    full = report.render(s, "full", [minimal_summary(profile="full")], "make results")
    onset = report.render(s, "onset", [minimal_summary(profile="onset")], "make results")
    assert "## Against the paper" in full and "The full runs' reading." in full
    assert "Table 9" in full
    assert "## What this profile is for" in onset and "The first five seconds, traced." in onset
    for absent in ("## Against the paper", "Table 9", "The full runs' reading."):
        assert absent not in onset


@pytest.mark.parametrize("value", ['""', '"  "', "3", "[]"])
def test_a_diagnostic_must_be_text(value):
    with pytest.raises(ScenarioError, match="profile onset.diagnostic must be a non-empty string"):
        Scenario.parse(TEXT.replace('"The first five seconds, traced."', value))
