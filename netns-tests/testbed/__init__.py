"""vegaskit testbed: network namespaces, links, traffic and the scenario runner.

The analysis package (tools/vegaskit: metrics, plots, the model) is a sibling
in this repository, not an installed package: make it importable however the
testbed is started (pytest, `python -m testbed.cli`, `make demo`).
"""
import sys
from pathlib import Path

_TOOLS = str(Path(__file__).resolve().parents[2] / "tools")
if _TOOLS not in sys.path:
    sys.path.append(_TOOLS)
