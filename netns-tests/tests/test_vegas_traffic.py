"""bpf_vegas carrying real iperf3 traffic through a 20 Mbit/s, 100-packet bottleneck.

The setup (testbed/path.py): sender -> router -> receiver, HTB 20 Mbit/s with a
pfifo of 100 packets on the router, no propagation delay. One 1514-byte frame
takes 0.61 ms to serialize, so baseRTT is ~0.6 ms and the BDP is ~1 packet: the
buffer (100 packets) is far larger than the BDP, and every packet of backlog
adds 0.61 ms of RTT, which is all Vegas needs to see.

Margins, from that physics:
- Goodput: 1448 payload bytes per 1514-byte frame is 95.6% of the rate; 90% leaves
  room for slow start and header options.
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

import pytest

from conftest import loaded, vegasctl
from testbed.single_flow import single_flow

pytestmark = pytest.mark.kernel

RATE = 20_000_000
BUFFER = 100
SECONDS = 8


def queue_mean(run, t0, t1):
    qs = [q for _, q in run.queue.between(t0, t1)]
    assert len(qs) > 20, "queue monitor produced too few samples"
    return statistics.mean(qs)


@pytest.fixture(scope="module")
def reno_run():
    return single_flow("reno", RATE, BUFFER, SECONDS)


def test_vegas_fills_link_with_small_queue_and_no_loss(reno_run):
    with loaded("vegas") as name:
        run = single_flow(name, RATE, BUFFER, SECONDS)
    alpha, beta = 2, 4
    q = queue_mean(run, 2, SECONDS)
    assert run.flow.bps_received >= 0.90 * RATE, run.flow.bps_received
    assert run.flow.retransmits == 0
    assert run.drops == 0
    assert q <= beta + 2, f"Vegas standing queue {q:.1f} pkts, alpha..beta = {alpha}..{beta}"
    assert q >= 0.5, "no standing queue at all: Vegas is not probing"

    reno_q = queue_mean(reno_run, 2, SECONDS)
    assert reno_q >= 40 and reno_q >= 5 * q, f"reno queue {reno_q:.1f} vs vegas {q:.1f}"
    assert reno_run.flow.retransmits > 0
    assert reno_run.drops > 0


def test_raising_alpha_beta_live_raises_the_queue():
    """Retune mid-flow from (2,4) to (20,24); the queue must rise in the second half.

    With a BDP of ~1 packet, diff = q*(1 + q/BDP), so diff >= 20 needs a backlog
    q >= 4, while (2,4) holds q <= 1.6 by the rule (<= 3.6 with the Reno fallback
    above): the second half's queue must exceed the first by at least 1 packet.
    """
    half = 6
    with loaded("vegas") as name:
        run = single_flow(name, RATE, BUFFER, 2 * half,
                          at=[(half, lambda: vegasctl("set", name, "alpha=20", "beta=24"))])
        assert '"alpha":20' in vegasctl("show", name, "--json").stdout
    before = queue_mean(run, 2, half)
    after = queue_mean(run, half + 2, 2 * half)
    assert after >= before + 1, f"queue {before:.1f} -> {after:.1f} after raising alpha/beta"
    assert run.flow.retransmits == 0
