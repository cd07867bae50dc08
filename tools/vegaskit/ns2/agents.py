"""Which ns-2 agent stands for a run's controller, and with which thresholds.

Only what ns-2.35 ships without modification is mapped:
- `reno` (Linux's Reno, NewReno recovery with SACK) -> Agent/TCP/Newreno, the
  papers' "New Reno";
- a `vegas` instance on the papers' arithmetic (`semantics=paper`, the `ns2`
  preset) -> Agent/TCP/Vegas with its alpha, beta and gamma. That agent is the
  arithmetic docs/DESIGN.md §3.10 describes, so no other vegas setting maps.
Vegas-A and PIPE were the papers' own modifications of the Vegas agent and are
not in ns-2; cubic, bbr and Linux's Vegas (exact arithmetic) have no agent.
A run with any such flow is not replayed (Unmapped says why).
"""
from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass

from vegaskit import paths
from vegaskit.proc import sh


class Unmapped(ValueError):
    """The run has a flow with no stock ns-2 agent."""


@dataclass(frozen=True)
class Agent:
    tcl_class: str              # Agent/TCP/...
    settings: tuple = ()        # (variable, value) set on the agent


NEWRENO = Agent("Agent/TCP/Newreno")
NO_AGENT = {
    "bpf_vegas_a": "Vegas-A, the paper's own change to ns-2's Vegas agent: not in ns-2.35",
    "bpf_pipe": "PIPE, the paper's own change to ns-2's Vegas agent: not in ns-2.35",
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
    if cc not in controllers:
        raise Unmapped(NO_AGENT.get(cc, f"{cc}: no ns-2 agent"))
    variant, p = resolve(controllers[cc])
    if variant != "vegas" or p.get("semantics") != "paper":
        raise Unmapped(f"{cc} ({controllers[cc]}): only vegas with semantics=paper is "
                       "ns-2's Vegas agent")
    a, b, g = (p["alpha"], p["beta"], p["gamma"])
    return Agent("Agent/TCP/Vegas", (("v_alpha_", a), ("v_beta_", b), ("v_gamma_", g)))
