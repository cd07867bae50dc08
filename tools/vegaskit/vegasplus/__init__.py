"""vegas_plus's evaluation (issue 17; docs/DESIGN.md §3.11, §7.3): the cases,
the networks and the controllers compared (cases.py), the figures each case is
judged by (measure.py) and results/vegas_plus/report.md (report.py)."""
