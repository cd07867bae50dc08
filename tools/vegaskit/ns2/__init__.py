"""The papers' own simulator: a scenario's runs replayed in ns-2 with its stock agents.

Seeds 000 and 002 ran their experiments in ns-2 with its Vegas and NewReno agents
(and a modified Vegas for Vegas-A and PIPE). Debian ships ns-2.35, so a run whose
flows all have a stock agent (NewReno, and Vegas on the ns-2 arithmetic) can be
replayed there: same topology, rates, buffers, starts (jitter included) and
schedule. Where ns-2 gives the paper's figure and Linux does not, the difference
is Linux's; where ns-2 does not give it either, the paper's setup differs from
what its text says, and the knobs (`VARIANTS`) show which setting moves it
(docs/DESIGN.md §7.2).

    agents.py   a run's controllers as ns-2 agents, or why there is none
    script.py   a run as an ns-2 Tcl script
    sim.py      run ns, read its result into a summary like the testbed's
    report.py   the cross-check report: paper, ns-2 per variant, Linux
"""
