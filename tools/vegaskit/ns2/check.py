"""make ns2's check of the ns it built (tools/ns2agent), before any replay.

Two things must hold for its figures to stand beside Debian's (docs/DESIGN.md §7.2):
- the rebuild is the same simulator: a run of the stock agents (Vegas and NewReno
  sharing a link, drops and all) gives the same counters in both binaries, and its
  one knob of ours, vk_halve_, changes the Vegas flow when set;
- our agents take the papers' rules at ties, where Vegas-A and PIPE part
  ([VegasA] §IV, [PIPE] §IV; docs/DESIGN.md §3.6): two flows of one kind on a
  saturated link, with no tie band, on ns-2's clock, which gives Th == Th' round
  after round. Vegas-A holds there; PIPE, which decides down at Th <= Th' and at
  diff = beta, takes more dec_adapt and fewer holds.
A failure is one line and stops the command: the replays would not mean what the
report says.
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from vegaskit.testbed.scenario import Scenario

from . import script, sim

SCENARIO = """
name = "ns2_check"
duration = 60
[links]
access = { rate = "10M", rtt_ms = 0 }
bottleneck = { rate = "1M", rtt_ms = 40, buffer = 20 }
egress = { rate = "10M", rtt_ms = 0 }
[[flows]]
cc = "{cc}"
[[flows]]
cc = "{cc2}"
start = 5
[controllers]
vk_ns2 = "vegas --preset ns2"
vk_va = "vegas_a th_tie=0"
vk_pipe = "pipe th_tie=0"
vk_eq20 = "vegas --preset eq20 semantics=paper"
[runs]
stock = { cc = "vk_ns2", cc2 = "reno" }
loss_bound = { cc = "vk_eq20", cc2 = "vk_eq20" }
vegas_a = { cc = "vk_va", cc2 = "vk_va" }
pipe = { cc = "vk_pipe", cc2 = "vk_pipe" }
[profiles.full]
reps = 1
"""


def _scenario(d: Path) -> Scenario:
    p = d / "ns2_check.toml"
    p.write_text(SCENARIO)
    return Scenario.load(p)


def run() -> None:
    """RuntimeError, in one line, if the built ns is not fit for the replays."""
    with tempfile.TemporaryDirectory(prefix="vegaskit-ns2-check-") as d:
        s = _scenario(Path(d))
        open_window = script.VARIANTS["open_window"]
        stock = s.run("stock", "full", 0)
        debian = sim.simulate(stock, open_window, ns=sim.binary(False))
        ours = sim.simulate(stock, open_window, ns=str(sim.BUILT))
        if debian != ours:
            raise RuntimeError(f"{sim.BUILT} differs from Debian's ns on the stock agents "
                               f"(retransmits {ours['retransmits']} against "
                               f"{debian['retransmits']}): rebuild it (make -B {sim.BUILT})")
        if debian["retransmits"] == 0:
            raise RuntimeError("ns2 check: the stock run lost nothing, so it compares too little")
        # vk_halve_ (the vegas_halve variant) reaches the Vegas agent's cut: two Vegas
        # flows whose thresholds the buffer cannot hold live on fast retransmits
        bound = s.run("loss_bound", "full", 0)
        quarter, half = (sim.simulate(bound, dataclasses.replace(open_window, vegas_halve=h),
                                      ns=str(sim.BUILT))["flows"][0] for h in (False, True))
        if quarter == half:
            raise RuntimeError("ns2 check: vk_halve_ leaves the Vegas agent's flow as it was")
        va, pipe = (sim.simulate(s.run(r, "full", 0), open_window)["flows"][0]["decisions"]
                    for r in ("vegas_a", "pipe"))
        if not (pipe["dec_adapt"] > va["dec_adapt"] and va["hold"] > pipe["hold"]):
            raise RuntimeError(f"ns2 check: Vegas-A and PIPE do not part at ties (Vegas-A {va}, "
                               f"PIPE {pipe})")
