"""A scenario's run as an ns-2 script: the dumbbell of seed 000's Fig. 1.

S_i -- R1 -- R2 -- D_i, each link a duplex-link with a drop-tail queue counted in
packets (ns-2's DropTail is the papers' router); a link's "RTT" is split evenly
between its two directions, as the testbed does (docs/DESIGN.md §6.1). Every flow
is an FTP over the mapped agent (agents.py) to a TCPSink, which acknowledges every
packet as the papers' receivers did. A queue monitor on each forward link
integrates its queue (packets waiting, not the one being sent: the testbed's
emulator counts the same way) and samples it every 10 ms for the p95.

The script prints one line, `RESULT {json}`, and exits; sim.py reads it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

from vegaskit.testbed.scenario import LinkSpec, Run

from .agents import NEWRENO, OWN_VARIABLES, Agent, Unmapped, agent_for

SAMPLE_S = 0.01     # queue samples for the p95
POLL_S = 0.001      # how often file transfers are checked for completion


@dataclass(frozen=True)
class Variant:
    """One setting of the knobs the papers do not state (docs/DESIGN.md §7.2)."""
    name: str
    why: str
    window: int = 20            # Agent/TCP window_: the receiver's window, in packets
    packet_size: int = 1000     # Agent/TCP packetSize_: bytes of data a packet
    delay_factor: float = 0.5   # a link's one-way delay_ = factor x the scenario's rtt_ms
    delack: bool = False        # TCPSink/DelAck instead of an ACK a packet
    window_init: int = 2        # Agent/TCP windowInit_: the initial window, packets
    newreno_cut: float = 0.5    # Agent/TCP/Newreno decrease_num_: the window a loss leaves
    # Agent/TCP/Newreno increase_num_: packets a round added per ACK a packet; ns-2 adds
    # increase_num_/cwnd_ an ACK, however many packets it covers (tcp.cc opencwnd)
    newreno_increase: float = 1.0
    # the Vegas agents' fast-retransmit cut at a half, not a quarter: vk_halve_, which
    # only the ns make ns2 builds binds (tools/ns2agent/build.sh)
    vegas_halve: bool = False
    # a diagnostic variant asks a question of ours: it replays only when named
    # (make ns2 NS2_VARIANTS=...), and only the runs it changes: those with an agent of
    # the kind it names ("newreno", "vegas": ns-2's Vegas agent and ours built on it)
    diagnostic: bool = False
    affects: str = "all"

    @property
    def needs_our_ns(self) -> bool:
        """Whether its runs need the ns make ns2 builds, whatever their agents."""
        return self.vegas_halve

    def changes(self, agents: list[Agent]) -> bool:
        """Whether this variant changes a run with these agents (a default one: always)."""
        if self.affects == "newreno":
            return any(ag == NEWRENO for ag in agents)
        if self.affects == "vegas":
            return any(ag.tcl_class.startswith("Agent/TCP/Vegas") for ag in agents)
        return True


LINUX_LIKE = Variant("linux_like", "Linux's settings in ns-2: an open window, 1,448-byte "
                     "segments, delayed ACKs (TCPSink/DelAck), an initial window of 10",
                     window=10000, packet_size=1448, delack=True, window_init=10)


def _diagnostic(name: str, why: str, of: str, **change) -> Variant:
    """linux_like with one change: a question about `of` (a scenario's figures), which that
    scenario's notes answer with it."""
    return replace(LINUX_LIKE, name=name, diagnostic=True, **change,
                   why=f"as linux_like, {why}: a diagnostic of {of} (the notes)")


VARIANTS = {v.name: v for v in (
    Variant("text", "ns-2.35's defaults (window_ 20, packetSize_ 1000, windowInit_ 2, an ACK a "
            "packet), "
            "each link's RTT split evenly between its directions: the setup as the paper states it"),
    Variant("open_window", "as text, with window_ 10000: the receiver's window never binds",
            window=10000),
    Variant("delay_as_written", "as text, each link's \"RTT\" entered as ns-2's (one-way) "
            "delay_, which doubles every path's RTT", delay_factor=1.0),
    LINUX_LIKE,
    _diagnostic("newreno_quarter", "with NewReno cutting its window by a quarter on a loss "
                "(decrease_num_ 0.75), as ns-2's Vegas agent does (tcp-vegas.cc)",
                "alpha_beta_sweep's windows", newreno_cut=0.75, affects="newreno"),
    _diagnostic("newreno_abc", "with NewReno growing a packet a round under delayed ACKs "
                "(increase_num_ 2), as Linux's Reno does by counting the packets each ACK "
                "covers (RFC 3465); ns-2's grows half a packet",
                "alpha_beta_sweep's and buffer_sweep's drops",
                newreno_increase=2.0, affects="newreno"),
    _diagnostic("linux_like_ack_every", "with an ACK a packet (TCPSink): every agent then grows "
                "a packet a round, as Linux's Reno and Vegas do under delayed ACKs",
                "alpha_beta_sweep's windows", delack=False),
    _diagnostic("vegas_halve", "with the Vegas agents cutting their window by half on a fast "
                "retransmit, as Linux's Vegas does, not by their quarter (vk_halve_, in the ns "
                "make ns2 builds)", "alpha_beta_sweep's windows", vegas_halve=True,
                affects="vegas"),
)}
DEFAULT = [name for name, v in VARIANTS.items() if not v.diagnostic]


def size(flow, variant: Variant) -> int:
    """A flow's packetSize_: its mss when the scenario sets one (seed 004's sizes)."""
    return flow.mss or variant.packet_size


def _links(run: Run) -> dict[str, tuple[str, str, LinkSpec]]:
    """Each link by the testbed's name: (from node, to node, spec), forward direction."""
    out = {"bottleneck": ("r1", "r2", run.bottleneck)}
    for f in run.flows:
        out[f"s{f.index}"] = (f"s{f.index}", "r1", f.access)
        out[f"d{f.index}"] = ("r2", f"d{f.index}", f.egress)
    return out


def _lossy(run: Run) -> set[str]:
    """Links that ever have a random loss (they get an error model each way)."""
    named = {n for n, (_, _, spec) in _links(run).items() if spec.loss > 0}
    named |= {c.link for c in run.schedule if c.params.get("loss", 0) > 0}
    return named


def agents(run: Run) -> list[Agent]:
    """Each flow's agent; Unmapped when the run cannot be replayed."""
    out = [agent_for(f.cc, run.controllers) for f in run.flows]
    links = _links(run)
    if any(spec.spare_retx for _, _, spec in links.values()) or \
            any(c.params.get("spare_retx") for c in run.schedule):
        raise Unmapped("spare_retx: ns-2's error model cannot tell a retransmission")
    return out


def build(run: Run, variant: Variant) -> str:
    """The Tcl script of one run under one variant."""
    flow_agents = agents(run)
    links = _links(run)
    lossy = _lossy(run)
    L = ["set ns [new Simulator]",
         f"global defaultRNG; $defaultRNG seed {run.seed}",
         f"Agent/TCP set window_ {variant.window}",
         f"Agent/TCP set packetSize_ {variant.packet_size}",
         f"Agent/TCP set windowInit_ {variant.window_init}",
         f"Agent/TCP/Newreno set decrease_num_ {variant.newreno_cut}",
         f"Agent/TCP/Newreno set increase_num_ {variant.newreno_increase}",
         *(["Agent/TCP/Vegas set vk_halve_ 1"] if variant.vegas_halve else []),
         "set null [new Agent/Null]",
         "foreach n {r1 r2} { set $n [$ns node] }"]
    for f in run.flows:
        L.append(f"set s{f.index} [$ns node]; set d{f.index} [$ns node]")
    for name, (a, b, spec) in links.items():
        delay = spec.rtt_us / 1e6 * variant.delay_factor
        L.append(f"$ns duplex-link ${a} ${b} {spec.rate_bps} {delay:.6f} DropTail")
        L.append(f"$ns queue-limit ${a} ${b} {spec.buffer_pkts}; "
                 f"$ns queue-limit ${b} ${a} {spec.buffer_pkts}")
        if name in lossy:
            for x, y, d in ((a, b, "f"), (b, a, "r")):
                L.append(f"set em_{name}_{d} [new ErrorModel]; $em_{name}_{d} unit pkt; "
                         f"$em_{name}_{d} set rate_ {spec.loss}; "
                         f"$em_{name}_{d} ranvar [new RandomVariable/Uniform]; "
                         f"$em_{name}_{d} drop-target $null; $ns lossmodel $em_{name}_{d} ${x} ${y}")
        L.append(f"set qm_{name} [$ns monitor-queue ${a} ${b} [open /dev/null w] {SAMPLE_S}]")
    sink = "Agent/TCPSink/DelAck" if variant.delack else "Agent/TCPSink"
    # our agents' own variables need a class default before the first `new`
    # (agents.OWN_VARIABLES); every flow sets its own value below
    for cls in dict.fromkeys(ag.tcl_class for ag in flow_agents if ag.ours):
        L.append("; ".join(f"{cls} set {k} 0" for k in OWN_VARIABLES))
    for f, ag in zip(run.flows, flow_agents):
        i = f.index
        settings = ag.settings + ((("packetSize_", f.mss),) if f.mss else ())
        sets = "".join(f"; $tcp{i} set {k} {v}" for k, v in settings)
        L.append(f"set tcp{i} [new {ag.tcl_class}]{sets}; set sink{i} [new {sink}]")
        L.append(f"$ns attach-agent $s{i} $tcp{i}; $ns attach-agent $d{i} $sink{i}; "
                 f"$ns connect $tcp{i} $sink{i}")
        L.append(f"set ftp{i} [new Application/FTP]; $ftp{i} attach-agent $tcp{i}")
        if f.bytes:
            L.append(f"$ns at {f.start:.6f} \"$ftp{i} send {f.bytes}\"")
        else:
            L.append(f"$ns at {f.start:.6f} \"$ftp{i} start\"")
            L.append(f"$ns at {f.start + f.duration:.6f} \"$ftp{i} stop\"")
    for c in run.schedule:
        a, b, _ = links[c.link]
        for x, y, d in ((a, b, "f"), (b, a, "r")):
            acts = []
            if "rate_bps" in c.params:
                acts.append(f"[[$ns link ${x} ${y}] link] set bandwidth_ {c.params['rate_bps']}")
            if "delay_us" in c.params:
                # delay_us is half the new RTT already (scenario.py); the variant scales from RTT
                delay = c.params["delay_us"] * 2 / 1e6 * variant.delay_factor
                acts.append(f"[[$ns link ${x} ${y}] link] set delay_ {delay:.6f}")
            if "limit_pkts" in c.params:
                acts.append(f"[[$ns link ${x} ${y}] queue] set limit_ {c.params['limit_pkts']}")
            if "loss" in c.params:
                acts.append(f"$em_{c.link}_{d} set rate_ {c.params['loss']}")
            if acts:
                L.append(f"$ns at {c.at:.6f} {{{'; '.join(acts)}}}")
    L += _measure(run, variant, list(links), [ag.ours for ag in flow_agents])
    return "\n".join(L) + "\n"


def _measure(run: Run, variant: Variant, names: list[str], ours: list[bool]) -> list[str]:
    """Queue samples, completion polls and the RESULT line at the end."""
    files = [f for f in run.flows if f.bytes]
    timed = [f for f in run.flows if not f.bytes]
    # what sim.py needs beside the counters: each flow's packet size and timed stop
    meta = {"flows": [{"size": size(f, variant),
                       "stop": f.start + f.duration if f.duration else None} for f in run.flows]}
    L = [f"set meta {{{json.dumps(meta)}}}",
         f"set links {{{' '.join(names)}}}",
         "foreach l $links { set hist($l) {} }",
         f"set flows {{{' '.join(str(f.index) for f in run.flows)}}}",
         "foreach i $flows { set cw($i) {} }",
         "proc sample {} {",
         "  global ns links hist flows cw",
         "  foreach l $links { global qm_$l; lappend hist($l) [[set qm_$l] set pkts_] }",
         "  set t [$ns now]",
         # with dupacks_: the agents' cwnd_ grows by a packet per duplicate ACK in
         # fast recovery (tcp-vegas.cc, tcp-newreno.cc), where Linux's PRR lowers it;
         # and what is outstanding (highest sent less highest ACKed), which cwnd_ may pass
         "  foreach i $flows { global tcp$i; set a [set tcp$i]",
         "    lappend cw($i) \"\\[$t, [$a set cwnd_], [$a set dupacks_],"
         " [expr {[$a set maxseq_] - [$a set ack_]}]\\]\" }",
         f"  $ns at [expr {{[$ns now] + {SAMPLE_S}}}] sample",
         "}",
         "$ns at 0 sample"]
    for f in files:
        L.append(f"set done({f.index}) -1")
    L += ["proc poll {} {",
          "  global ns done"]
    for f in files:
        i, pk = f.index, -(-f.bytes // size(f, variant))
        L.append(f"  global tcp{i}; if {{$done({i}) < 0 && [$tcp{i} set ack_] >= {pk - 1}}} "
                 f"{{ set done({i}) [$ns now] }}")
    if files and not timed:
        cond = " && ".join(f"$done({f.index}) >= 0" for f in files)
        L.append(f"  if {{{cond}}} {{ finish; return }}")
    L += [f"  $ns at [expr {{[$ns now] + {POLL_S}}}] poll", "}"]
    if files:
        L.append("$ns at 0 poll")
    # RESULT: per flow its counters, per link the integrated queue, samples and counts
    # the integrator sums up to its last change; the stretch since is added here
    L += ["proc qsum {q t} {",
          "  set i [$q get-pkts-integrator]",
          "  expr {[$i set sum_] + [$i set lasty_] * ($t - [$i set lastx_])}",
          "}",
          "proc finish {} {",
          "  global ns links hist meta cw",
          "  set t [$ns now]",
          "  set out \"{\\\"t_end\\\": $t, \\\"meta\\\": $meta, \\\"flows\\\": \\[\""]
    for k, (f, mine) in enumerate(zip(run.flows, ours)):
        i = f.index
        done = f"$done({i})" if f.bytes else "-1"
        sep = "" if k == 0 else ", "
        # our agents add their decisions per rule and alpha (tools/ns2agent)
        stats = f"\\\"decisions\\\": [$tcp{i} vk-stats], " if mine else ""
        L.append(f"  global tcp{i}{'; global done' if f.bytes else ''}")
        L.append(f"  append out \"{sep}{{{stats}\\\"ack\\\": [$tcp{i} set ack_], "
                 f"\\\"retx\\\": [$tcp{i} set nrexmitpack_], "
                 f"\\\"data\\\": [$tcp{i} set ndatapack_], \\\"done\\\": {done}, "
                 f"\\\"cwnd\\\": \\[[join $cw({i}) {{, }}]\\]}}\"")
    L += ["  append out \"\\], \\\"links\\\": {\"",
          "  set first 1",
          "  foreach l $links {",
          "    global qm_$l; set q [set qm_$l]",
          "    if {!$first} { append out \", \" }; set first 0",
          "    append out \"\\\"$l\\\": {\\\"sum\\\": [qsum $q $t], "
          "\\\"drops\\\": [$q set pdrops_], \\\"arrivals\\\": [$q set parrivals_], "
          "\\\"dep_bytes\\\": [$q set bdepartures_], "
          "\\\"samples\\\": \\[[join $hist($l) {, }]\\]}\"",
          "  }",
          "  append out \"}}\"",
          "  puts \"RESULT $out\"",
          "  exit 0",
          "}",
          f"$ns at {run.duration:.6f} finish",
          "$ns run"]
    return L
