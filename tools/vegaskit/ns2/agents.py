"""Which ns-2 agent stands for a run's controller, and with which thresholds.

What ns-2.35 ships:
- `reno` (Linux's Reno, NewReno recovery with SACK) -> Agent/TCP/Newreno, the
  papers' "New Reno";
- a `vegas` instance on the papers' arithmetic (`semantics=paper`, the `ns2`
  preset) -> Agent/TCP/Vegas with its alpha, beta and gamma. That agent is the
  arithmetic docs/DESIGN.md §3.10 describes, so no other vegas setting maps.
Ours, built into ns-2 by `make ns2` (tools/ns2agent/, docs/DESIGN.md §7.2):
- a `vegas_a` or `pipe` instance on the papers' arithmetic (their default, so
  bpf_vegas_a and bpf_pipe too) -> Agent/TCP/Vegas/A or Agent/TCP/Vegas/Pipe,
  the Vegas agent with the papers' rules in congestion avoidance, with its
  alpha, beta, gamma, alpha_max and th_tie.
Settings the agents have no form of (slow start, loss cut, idle relearning) are
Linux's side of the comparison and do not stop a mapping. cubic, bbr, Linux's
Vegas (exact arithmetic) and seed 004's Vegas have no agent: a run with any
such flow is not replayed (Unmapped says why).
"""
from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass

from vegaskit import paths
from vegaskit.proc import sh


# What our agents bind beyond ns-2's Vegas (tools/ns2agent/vk_adaptive.cc). ns-2 wants
# a class default for a bound variable before the first `new`; Vegas's own have theirs
# in ns-default.tcl, which Agent/TCP/Vegas/A and /Pipe inherit.
OWN_VARIABLES = ("alpha_max_", "th_tie_")


class Unmapped(ValueError):
    """The run has a flow with no stock ns-2 agent."""


@dataclass(frozen=True)
class Agent:
    tcl_class: str              # Agent/TCP/...
    settings: tuple = ()        # (variable, value) set on the agent
    ours: bool = False          # in the ns make ns2 builds (tools/ns2agent), not Debian's


NEWRENO = Agent("Agent/TCP/Newreno")
# our agents by variant: the papers' rules on ns-2's Vegas agent (tools/ns2agent)
ADAPTIVE = {"vegas_a": "Agent/TCP/Vegas/A", "pipe": "Agent/TCP/Vegas/Pipe"}
NO_AGENT = {
    "bpf_vegas": "Linux's Vegas (exact arithmetic, alpha 2, beta 4): no ns-2 agent",
    "bpf_vegas_fr": "seed 004's Vegas: its authors' own ns-2 agent, not in ns-2.35",
}


@functools.cache
def _variants() -> dict:
    """vegasctl's variants with their defaults and presets (`vegasctl list --json`)."""
    doc = json.loads(sh([str(paths.VEGASCTL), "list", "--json"]))
    return {v["variant"]: v for v in doc["variants"]}


def resolve(spec: str) -> tuple[str, dict[str, str]]:
    """An instance spec ('vegas --preset ns2 alpha=2') as (variant, every parameter)."""
    words = shlex.split(spec)
    if not words:
        raise Unmapped("empty controller spec")
    variant, rest = words[0], words[1:]
    info = _variants().get(variant)
    if info is None:
        raise Unmapped(f"no variant {variant!r}")
    params = {k: str(v) for k, v in info["defaults"].items()}
    assigns = []
    i = 0
    while i < len(rest):
        w = rest[i]
        if w == "--preset" and i + 1 < len(rest):
            preset = info["presets"].get(rest[i + 1])
            if preset is None:
                raise Unmapped(f"{variant}: no preset {rest[i + 1]!r}")
            assigns = preset.split() + assigns      # a preset first, then explicit values
            i += 2
            continue
        if "=" not in w:
            raise Unmapped(f"{spec!r}: cannot read {w!r}")
        assigns.append(w)
        i += 1
    for a in assigns:
        k, _, v = a.partition("=")
        params[k] = v
    return variant, params


def agent_for(cc: str, controllers: dict[str, str]) -> Agent:
    """The ns-2 agent for a flow's cc (a kernel name or one of the run's instances)."""
    if cc == "reno":
        return NEWRENO
    # a kernel name bpf_X is variant X with its defaults
    spec = controllers.get(cc) or (cc[4:] if cc[4:] in ADAPTIVE and cc[:4] == "bpf_" else None)
    if spec is None:
        raise Unmapped(NO_AGENT.get(cc, f"{cc}: no ns-2 agent"))
    variant, p = resolve(spec)
    if variant not in ("vegas", *ADAPTIVE) or p.get("semantics") != "paper":
        raise Unmapped(f"{cc} ({spec}): only vegas, vegas_a and pipe with semantics=paper "
                       "have an ns-2 agent")
    thresholds = (("v_alpha_", p["alpha"]), ("v_beta_", p["beta"]), ("v_gamma_", p["gamma"]))
    if variant == "vegas":
        return Agent("Agent/TCP/Vegas", thresholds)
    own = tuple(zip(OWN_VARIABLES, (p["alpha_max"], p["th_tie"])))
    return Agent(ADAPTIVE[variant], thresholds + own, ours=True)
