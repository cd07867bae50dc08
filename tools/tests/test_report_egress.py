"""The report's egress column (analysis/figures.py egress_queue): where a flow held up
by its own egress link keeps its packets, which the bottleneck's columns do not show."""
from vegaskit.testbed import report
from vegaskit.testbed.scenario import Scenario
from vegaskit.testing.summaries import SCENARIO, minimal_summary


def _queue_row(text: str) -> str:
    rows = [ln for ln in text.splitlines() if ln.startswith("| reno | ") and "bottleneck:" in ln]
    assert len(rows) == 1, rows
    return rows[0]


def test_the_report_averages_the_flows_egress_queues_over_repetitions():
    s = Scenario.parse(SCENARIO)
    sms = []
    for rep in range(6):
        links = minimal_summary()["links"] | {"d1": {"queue_mean_pkts": 2.0 + rep}}
        sms.append(minimal_summary(rep=rep, links=links))
    row = _queue_row(report.render(s, "full", sms, "make results"))
    assert "| 4.5 [2, 7] (6) |" in row       # the six repetitions' medians and range


def test_without_egress_links_the_column_says_so():
    s = Scenario.parse(SCENARIO)
    row = _queue_row(report.render(s, "full", [minimal_summary()], "make results"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-2] == "-"                   # the egress column, before the loss
