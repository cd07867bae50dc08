"""The matrix of `make vegas-plus`: every case on every network for every
controller, written out as scenario files (docs/DESIGN.md §6.5) that the
testbed's runner plays like the papers' scenarios. One place holds the matrix;
the files are generated from it into the output directory, never kept twice."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MSS_WIRE = 1500            # bytes a full segment occupies on the emulated link


@dataclass(frozen=True)
class Net:
    key: str
    rate: str
    rate_bps: float
    rtt_ms: int
    duration: int          # s: long enough for the loss-based flows' sawtooth to repeat
    # Si-R1 and R2-Di as plain veths, the bottleneck the one emulator (and spinning):
    # at 100 Mbit/s a packet is 0.12 ms, below what six sleeping emulators add to
    # an RTT on a 2-core host (docs/DESIGN.md §7.3)
    direct_edges: bool = False
    # net.ipv4 knobs of every sender's namespace, the tests of what sets the size of the
    # bursts that queue at 100 Mbit/s (§7.3): the TSQ budget (tcp_limit_output_bytes),
    # and the pacing ratios that size GSO frames (tcp_pacing_ca_ratio, tcp_pacing_ss_ratio)
    sysctl: tuple[tuple[str, int], ...] = ()

    @property
    def bdp_pkts(self) -> int:
        return round(self.rate_bps * self.rtt_ms / 1000 / 8 / MSS_WIRE)

    @property
    def buffer(self) -> int:
        """One BDP, at least 20 packets: a buffer a loss-based flow fills in a few seconds."""
        return max(self.bdp_pkts, 20)


NETS = {n.key: n for n in (
    Net("10M20", "10M", 10e6, 20, 40),
    Net("10M80", "10M", 10e6, 80, 40),
    Net("100M20", "100M", 100e6, 20, 60, direct_edges=True),
    Net("100M80", "100M", 100e6, 80, 60, direct_edges=True),
    Net("100M20tsq", "100M", 100e6, 20, 60, direct_edges=True,
        sysctl=(("tcp_limit_output_bytes", 3000),)),
    # TCP builds each GSO frame from 1 ms of its pacing rate (120% of cwnd/srtt in
    # congestion avoidance, 200% in slow start) and defers a send until a frame fits:
    # at 10% and 20% a 100 Mbit/s flow's frames are 2 segments, the floor
    Net("100M20frame2", "100M", 100e6, 20, 60, direct_edges=True,
        sysctl=(("tcp_pacing_ca_ratio", 10), ("tcp_pacing_ss_ratio", 20))),
    # between the floor and the default's 10: frames of about 3, 4 and 6 segments for a
    # flow holding a BDP and a few packets (frame2 took 31% of the link, the default 99%)
    Net("100M20frame3", "100M", 100e6, 20, 60, direct_edges=True,
        sysctl=(("tcp_pacing_ca_ratio", 37), ("tcp_pacing_ss_ratio", 74))),
    Net("100M20frame4", "100M", 100e6, 20, 60, direct_edges=True,
        sysctl=(("tcp_pacing_ca_ratio", 50), ("tcp_pacing_ss_ratio", 100))),
    Net("100M20frame6", "100M", 100e6, 20, 60, direct_edges=True,
        sysctl=(("tcp_pacing_ca_ratio", 74), ("tcp_pacing_ss_ratio", 148))),
)}

# the controllers compared: vegasctl's default instances and the kernel's own
CCS = {
    "vegas_plus": "bpf_vegas_plus",
    "vegas": "bpf_vegas",
    "vegas_a": "bpf_vegas_a",
    "cubic": "cubic",
    "bbr": "bbr",
}

# vegas_plus with one parameter changed (docs/DESIGN.md §3.11): vegasctl instances, run
# only when --cc names them, never by default; the report gives each a column once it
# has runs. A run of every controller of CCS on a case replaces the case's directory,
# ablations included: they are read against the default of the same code.
# compete_ss: what a detection's switch to competitive mode does to the window
ABLATIONS = {
    "vp_ss_none": "vegas_plus compete_ss=0",
    "vp_ss_capped": "vegas_plus compete_ss=2",
    # how long the rate maximum remembers the path's rate: 8 times the default
    "vp_rate_long": "vegas_plus rate_epoch=512",
    # a third sign that reads no baseRTT: the round RTT 25% above its low of the epochs
    "vp_rise": "vegas_plus rise=25",
    # the band on the round's average RTT, not its minimum: does it see the queue that
    # bursts keep above the trough at 100 Mbit/s (docs/DESIGN.md §7.3)?
    "vp_avg_rtt": "vegas_plus semantics=paper",
}


@dataclass(frozen=True)
class Case:
    key: str
    title: str
    others: tuple[str, ...] = ()       # competitors' controllers, started with ours unless lead_s
    pair: bool = False                 # a second flow of the same controller
    leave: bool = False                # the competitors stop at half time
    # s the competitors start before ours (negative: after ours). The data connections'
    # own starts spread by up to about 1 s at 80 ms (iperf3's control exchange), and at
    # 100M80 the share against cubic followed which started first, and against reno ours
    # first always lost (docs/DESIGN.md §3.11): these cases fix the order. Run only when
    # --case names them, as the ablations.
    lead_s: float = 0.0
    on_request: bool = False


CASES = {c.key: c for c in (
    Case("alone", "alone"),
    Case("reno", "against 1 reno", ("reno",)),
    Case("cubic", "against 1 cubic", ("cubic",)),
    Case("cubic4", "against 4 cubic", ("cubic",) * 4),
    Case("leave", "a cubic flow leaves at half time", ("cubic",), leave=True),
    Case("pair", "2 flows of the controller", pair=True),
    Case("bbr", "against 1 bbr", ("bbr",)),
    Case("cubic_ahead", "against 1 cubic that starts 2 s before it", ("cubic",), lead_s=2.0,
         on_request=True),
    Case("cubic_behind", "against 1 cubic that starts 2 s after it", ("cubic",), lead_s=-2.0,
         on_request=True),
    Case("reno_ahead", "against 1 reno that starts 2 s before it", ("reno",), lead_s=2.0,
         on_request=True),
    Case("reno_behind", "against 1 reno that starts 2 s after it", ("reno",), lead_s=-2.0,
         on_request=True),
)}
# what make vegas-plus runs when no --case names one
DEFAULT_CASES = [k for k, c in CASES.items() if not c.on_request]

REPS = 6                   # [min, max] of 6 covers the median at 96.9% (§7.1)
START_JITTER_S = 0.05      # about an RTT: repetitions differ in their starts


def scenario_name(case: Case, net: Net) -> str:
    return f"vp_{case.key}_{net.key}"


def scenario_toml(case: Case, net: Net) -> str:
    """One case on one network; one run per controller, our flow first."""
    knobs = ", ".join(f"{k} = {v}" for k, v in net.sysctl)
    tsq = f"\nsysctl = {{ {knobs} }}" if knobs else ""
    ours_at = f"\nstart = {case.lead_s:g}" if case.lead_s > 0 else ""
    theirs_at = f"\nstart = {-case.lead_s:g}" if case.lead_s < 0 else ""
    flows = [f'[[flows]]\ncc = "{{cc}}"\nlabel = "S1 {{cc}}"{ours_at}{tsq}']
    others = ("{cc}",) if case.pair else case.others
    for i, cc in enumerate(others, 2):
        stop = f"\nduration = {net.duration / 2:g}" if case.leave else ""
        flows.append(f'[[flows]]\ncc = "{cc}"\nlabel = "S{i} {cc}"{theirs_at}{stop}{tsq}')
    runs = "\n".join([f'{k} = {{ cc = "{v}" }}' for k, v in CCS.items()]
                     + [f'{k} = {{ cc = "{k}" }}' for k in ABLATIONS])
    instances = "\n".join(f'{k} = "{v}"' for k, v in ABLATIONS.items())
    edges = '\nedges = "direct"' if net.direct_edges else ""
    return f'''# Generated by python -m vegaskit.cli.vegas_plus from tools/vegaskit/vegasplus/cases.py.
name = "{scenario_name(case, net)}"
title = "vegas_plus evaluation: {case.title}, {net.rate}bit/s, {net.rtt_ms} ms, {net.buffer} packets"
source = "issue 17; docs/DESIGN.md §3.11"
duration = {net.duration}
trace = "decisions"

[links]
bottleneck = {{ rate = "{net.rate}", rtt_ms = {net.rtt_ms}, buffer = {net.buffer} }}{edges}

{chr(10).join(flows)}

[controllers]
{instances}

[runs]
{runs}

[profiles.full]
time_scale = 1.0
reps = {REPS}
start_jitter_s = {START_JITTER_S}
'''


def write_scenarios(outdir: Path, cases: list[str], nets: list[str]) -> list[Path]:
    """The scenario files of the cases and networks asked for, under outdir."""
    outdir.mkdir(parents=True, exist_ok=True)
    out = []
    for c in cases:
        for n in nets:
            p = outdir / f"{scenario_name(CASES[c], NETS[n])}.toml"
            p.write_text(scenario_toml(CASES[c], NETS[n]))
            out.append(p)
    return out
