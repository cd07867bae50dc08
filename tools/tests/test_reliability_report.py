"""The reliability report counts what ran and never claims zeros over a failure."""
from vegaskit.cli.reliability import render

ROWS = [
    {"test": "a::t1", "kind": "bad_input", "outcome": "passed", "cases": 40},
    {"test": "a::t2", "kind": "race", "outcome": "passed", "cases": 20},
    {"test": "a::t3", "kind": "kill_point", "outcome": "passed", "cases": 1},
    {"test": "a::t4", "kind": "kill_point", "outcome": "skipped", "cases": 1},
]


def test_counts_by_kind_and_leaves_skips_out():
    text = render(ROWS, 10, 0)
    assert "| bad inputs tried | 1 | 40 | 0 | 0 |" in text
    assert "| races run (rounds) | 1 | 20 | 0 | 0 |" in text
    assert "| kill points | 2 | 1 | 0 | 1 |" in text
    assert "All 61 cases passed: 0 tracebacks" in text


def test_an_unclean_run_withdraws_the_zeros():
    """A teardown failure (a leak) or an interrupted run shows only in pytest's exit."""
    text = render(ROWS, 10, 1)
    assert "0 tracebacks" not in text and "pytest exit 1" in text


def test_a_failure_withdraws_the_zeros():
    rows = ROWS + [{"test": "a::t5", "kind": "race", "outcome": "failed", "cases": 7}]
    text = render(rows, 10, 1)
    assert "| races run (rounds) | 2 | 27 | 7 | 0 |" in text
    assert "0 tracebacks" not in text and "`a::t5`" in text


def test_a_skip_is_listed_with_the_reason_its_test_gave():
    """Not every skip is a missing kernel feature (one needs setpriv): the report quotes
    each test's own reason rather than claiming one for all."""
    rows = ROWS[:3] + [dict(ROWS[3], reason="needs root to drop to an unprivileged user")]
    text = render(rows, 10, 0)
    assert "- `a::t4`: needs root to drop to an unprivileged user" in text
    assert "kernel feature" not in text
    assert "- `a::t4`: no reason recorded" in render(ROWS, 10, 0)
