"""bpf_vegas carrying real iperf3 traffic through a 20 Mbit/s, 100-packet bottleneck.

The setup (topology.htb_path): sender -> router -> receiver, HTB 20 Mbit/s with a
pfifo of 100 packets on the router, no propagation delay. One 1514-byte frame
takes 0.61 ms to serialize, so baseRTT is ~0.6 ms and the BDP is ~1 packet: the
buffer (100 packets) is far larger than the BDP, and every packet of backlog
adds 0.61 ms of RTT, which is all Vegas needs to see.

Margins, from that physics:
- Goodput: at least 90% of reno's through the same path in the same module. Reno keeps
  the 100-packet buffer from emptying, so its goodput is what the path delivers on this
  host: 1448 payload bytes per 1514-byte frame is 95.6% of the rate (19.1 Mbit/s), but
  HTB (a 1-frame burst) loses the time by which its timer fires late, and on a host whose
  timers fired late by a median 88 us reno got 15.8-16.9 Mbit/s and Vegas 15.2-17.7.
- Vegas queue: Linux's diff = cwnd*(rtt-base)/base = backlog*rtt/base >= backlog,
  so holding diff <= beta bounds the backlog by beta. +2 packets: with a window of
  ~5 and delayed ACKs an RTT can carry <= 2 RTT samples, and such RTTs fall back to
  Reno growth (tcp_vegas.c), adding at most one packet each before Vegas decides again.
- Reno's window saw-tooths between ~(B+BDP)/2 and B+BDP, so its queue averages
  about 3B/4 and never less than B/2 - BDP = 49: we require 40 and 5x Vegas's queue;
  each cycle ends in an overflow, and a cycle is ~50 RTTs of ~45 ms, so 8 s has
  several, hence retransmissions > 0.
"""
import statistics
import threading
from dataclasses import dataclass

import pytest

from conftest import DEFECT_PKTS, loaded, vegasctl, vegasctl_json
from vegaskit.testbed import iperf, tcpprobe
from vegaskit.testbed.iperf import FlowResult
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.shaping import QueueMonitor
from vegaskit.testbed.topology import htb_path, receiver_addr

pytestmark = pytest.mark.kernel

RATE = 20_000_000
BUFFER = 100
SECONDS = 8
PORT = 5201
# one full segment's frame through the HTB bottleneck (1,448 bytes of payload, 12 of
# timestamps, TCP, IP and Ethernet headers: 1,514 bytes), in us at RATE
FRAME_US = 1514 * 8 / RATE * 1e6


@dataclass
class HtbFlow:
    flow: FlowResult
    queue: QueueMonitor
    drops: int


def single_flow(cc: str, rate_bps: int, limit_pkts: int, seconds: float,
                at: list[tuple[float, callable]] = ()) -> HtbFlow:
    """One iperf3 flow through the HTB path, its queue watched; each (t, fn) in
    `at` is called t seconds into the flow."""
    with Lab() as lab:
        path = htb_path(lab, rate_bps, limit_pkts)
        iperf.server(lab, path.receiver, PORT)
        with QueueMonitor(path.router, path.bottleneck_dev) as qm:
            p = iperf.client(lab, path.sender, receiver_addr(), PORT, cc, seconds)
            timers = [threading.Timer(t, fn) for t, fn in at]
            for t in timers:
                t.start()
            try:
                flow = iperf.wait(p, cc, timeout=seconds + 30)
            finally:
                for t in timers:
                    t.cancel()
        return HtbFlow(flow, qm, qm.samples[-1][2] if qm.samples else 0)


def queue_mean(run, t0, t1):
    qs = [q for _, q in run.queue.between(t0, t1)]
    assert len(qs) > 20, "queue monitor produced too few samples"
    return statistics.mean(qs)


@pytest.fixture(scope="module")
def reno_run():
    return single_flow("reno", RATE, BUFFER, SECONDS)


@pytest.mark.parametrize("calls", [2, pytest.param(1, marks=pytest.mark.needs_kernel("cong_control_ack"))])
def test_vegas_fills_link_with_small_queue_and_no_loss(reno_run, calls):
    with loaded("vegas", f"calls={calls}") as name:
        run = single_flow(name, RATE, BUFFER, SECONDS)
    alpha, beta = 2, 4
    q = queue_mean(run, 2, SECONDS)
    assert run.flow.bps_received >= 0.90 * reno_run.flow.bps_received, \
        (run.flow.bps_received, reno_run.flow.bps_received)
    # no loss: the bottleneck dropped nothing. Not the sender's retransmission
    # count: with an RTT of a few ms, a host stall of 10 ms or more fires a tail
    # loss probe; a clean-clone CI run saw 7 retransmissions with 0 drops.
    assert run.drops == 0, (run.drops, run.flow.retransmits)
    assert q <= beta + 2, f"Vegas standing queue {q:.1f} pkts, alpha..beta = {alpha}..{beta}"
    assert q >= 0.5, "no standing queue at all: Vegas is not probing"

    reno_q = queue_mean(reno_run, 2, SECONDS)
    assert reno_q >= 40 and reno_q >= 5 * q, f"reno queue {reno_q:.1f} vs vegas {q:.1f}"
    assert reno_run.flow.retransmits > 0
    assert reno_run.drops > 0


def probed_flow(cc: str, rate_bps: int, limit_pkts: int, seconds: float) -> tuple[HtbFlow, int]:
    """single_flow, with tcp_probe watching its sender: (the run, the largest window or
    finite ssthresh the kernel reported for it)."""
    with tcpprobe.TcpProbe(PORT, PORT) as probe:
        run = single_flow(cc, rate_bps, limit_pkts, seconds)
    return run, tcpprobe.largest_window(probe.records)


def clean_runs(arms: dict, want: int, attempts: int, *args) -> tuple[dict, dict]:
    """Interleaved runs of each arm (key -> controller) until each has `want` runs the
    defect left alone or `attempts` in all; (clean runs, largest windows set aside)."""
    runs = {k: [] for k in arms}
    aside = {k: [] for k in arms}
    while any(len(runs[k]) < want and len(runs[k]) + len(aside[k]) < attempts for k in arms):
        for k, cc in arms.items():
            if len(runs[k]) < want and len(runs[k]) + len(aside[k]) < attempts:
                run, worst = probed_flow(cc, *args)
                if worst > DEFECT_PKTS:
                    aside[k].append(worst)
                else:
                    runs[k].append(run)
    return runs, aside


@pytest.mark.needs_kernel("cong_control_ack")
@pytest.mark.skipif(not tcpprobe.available(), reason="this kernel has no tcp:tcp_probe tracepoint")
def test_one_call_per_ack_reduces_the_window_in_recovery_as_the_kernel_does():
    """calls=1 takes over PRR, the window's end-of-reduction reset and the pacing
    rate from the kernel (bpf/vk_ack_path.bpf.h). A 4-packet buffer under
    alpha = beta = 8 makes Vegas overflow it again and again: some 420-470 drops
    in 4 s (calls=1 416-440, calls=2 440-474, 4 runs each), each loss a Recovery
    with PRR. If PRR is left out, the window stays where the loss found it and the
    drops double (measured with the call removed: 951-954 against 470-474 for
    calls=2), so calls=1's drops must stay within 1.3x of calls=2's, and its goodput
    within 10% (both 18-19 Mbit/s). Two clean interleaved runs each, medians.

    About 4 in 10 runs of 6 s on this path meet the kernel defect of DESIGN §10.2
    (tcp_probe showed an ssthresh of 10^9 packets), whichever the arm; such a run
    floods the buffer for seconds and its drops are the defect's. Those runs are set
    aside, as the reports set them aside, and replaced: up to 8 runs an arm."""
    with loaded("vegas", "--name", "vk_one", "alpha=8", "beta=8", "calls=1") as one, \
            loaded("vegas", "--name", "vk_two", "alpha=8", "beta=8", "calls=2") as two:
        runs, aside = clean_runs({1: one, 2: two}, 2, 8, RATE, 4, 4)
    assert all(len(r) == 2 for r in runs.values()), \
        f"too few runs free of the kernel defect (DESIGN §10.2): largest windows set aside {aside}"
    drops = {c: statistics.median(r.drops for r in rs) for c, rs in runs.items()}
    goodput = {c: statistics.median(r.flow.bps_received for r in rs) for c, rs in runs.items()}
    assert drops[2] >= 100, f"the path did not make Vegas lose: {drops}"
    assert drops[1] <= 1.3 * drops[2], (drops, aside)
    assert goodput[1] >= 0.9 * goodput[2], goodput


def test_raising_alpha_beta_live_raises_the_queue():
    """Retune mid-flow from (2,4) to (400,400); the standing queue must rise.

    Linux's diff = cwnd*(rtt-base)/base, and rtt ~ cwnd*s with s = 0.61 ms per
    frame here (FRAME_US), so at the new equilibrium W*(W*s - base)/base = 400. What the
    base is decides how far the queue rises, and it is not one frame's time:
    tcp_vegas takes the smallest sample, which may be a short segment's (a third
    of a frame), and re-learns it when a sender restarts after idle. Traced over
    eleven runs, the base the controller held at the end was 360-1180 us.
    At base = 200 us the equation gives W = 11.7, a queue of ~10.7; at 1180 us,
    W = 29, still under the 100-packet buffer, so no loss. Before: (2,4) holds
    q <= 1.6 by the rule, but with a window of ~5 and delayed ACKs an RTT carries
    <= 2 samples, and tcp_vegas.c falls back to Reno growth for such RTTs until
    the window is ~6, so the queue floor is <= 5 packets (measured 3.9-4.1).
    (120 was tried first: at base = 200 us its rise is only ~1.5 packets, and a
    clean-clone CI run once saw 3.9 -> 6.5.) The base can be smaller still: a
    clean-clone CI run saw 4.0 -> 7.9, what the rule gives at a base of ~100 us.
    So the test reads the base the controller holds near the end (vegasctl
    flows) and requires half the rise the rule gives at that base.
    """
    half = 6
    held = []
    with loaded("vegas") as name:
        run = single_flow(name, RATE, BUFFER, 2 * half,
                          at=[(half, lambda: vegasctl("set", name, "alpha=400", "beta=400")),
                              (2 * half - 1, lambda: held.extend(
                                  f["base_rtt_us"] for f in vegasctl_json("flows")
                                  if f["ca"] == name and f["dport"] == PORT))])
        assert '"alpha":400' in vegasctl("show", name, "--json").stdout
    before = queue_mean(run, 2, half)
    after = queue_mean(run, half + 2, 2 * half)
    assert held, "vegasctl flows did not list the flow near its end"
    base, frame = max(held), FRAME_US   # us: the data connection's, and one frame's time
    w = (base + (base * base + 1600 * frame * base) ** 0.5) / (2 * frame)  # W(W*s-b)/b = 400
    rule = w - base / frame             # the equilibrium queue, packets
    print(f"queue {before:.1f} -> {after:.1f} packets after raising alpha/beta "
          f"(base {base} us: the rule gives {rule:.1f})")
    assert after >= before + max(0.5 * (rule - before), 1.0), \
        f"queue {before:.1f} -> {after:.1f} after raising alpha/beta, base {base} us"
    # no loss: the bottleneck dropped nothing. The sender's retransmission count is
    # not that measure: a CI pre-check saw 3 with 0 drops at the bottleneck
    # (segments the sender sent again that the bottleneck had not dropped).
    assert run.drops == 0, (run.drops, run.flow.retransmits)
