"""vegas_fr (seed 004): half-packet correction and proportional steps, worked by hand.

Q = cwnd*mss*(rtt-base)/rtt + mss/2 (bytes); step = k*(R-Q)/mss packets per RTT,
fractions kept in 1/1024 packet and carried to the next RTT.
"""
import ctypes

import pytest

from vkcore import RULE, fr, params, sample


def decide(cwnd, rtt, mss, R=4500, k=0.5, frac=0, base=1000, half_packet=1):
    f = ctypes.c_int32(frac)
    p = params("VEGAS_FR", ref_bytes=R, gain_milli=int(k * 1000), half_packet=half_packet)
    d = fr(p, sample(cwnd=cwnd, ssthresh=2, base_rtt=base, rtt=rtt, mss=mss), f)
    return d, f.value


def test_half_packet_correction():
    # cwnd 10, mss 1000, rtt 1250, base 1000: backlog = 10*1000*250/1250 = 2000 B
    # Q = 2000 + 1000/2 = 2500 B (without the fix it would be 2000)
    d, _ = decide(10, 1250, 1000)
    assert d.diff == 2500


def test_half_packet_correction_can_be_turned_off():
    """half_packet=0: Q is the backlog alone, the estimate section V corrects."""
    d, _ = decide(10, 1250, 1000, half_packet=0)
    assert d.diff == 2000
    # R 3000: error 1000 B = 1 packet, k 0.5 -> +0.5 packet (with the fix: +0.25)
    d, frac = decide(10, 1250, 1000, R=3000, half_packet=0)
    assert (d.cwnd, frac) == (10, 512)


def test_proportional_step_with_fraction_carried():
    # R 4500, Q 2500: error 2000 B = 2 packets of 1000 B; k 0.5 -> +1.0 packet
    d, frac = decide(10, 1250, 1000)
    assert (d.rule, d.cwnd, frac) == (RULE["PROP"], 11, 0)
    # R 3000, Q 2500: error 500 B = 0.5 pkt; k 0.5 -> +0.25 pkt = 256/1024: no whole packet
    d, frac = decide(10, 1250, 1000, R=3000)
    assert (d.cwnd, frac) == (10, 256)
    # next RTT, same error: 256 + 256 = 512 -> still 10; then 768; the fourth makes 1024 -> 11
    for expect_cwnd, expect_frac in [(10, 512), (10, 768), (11, 0)]:
        d, frac = decide(10, 1250, 1000, R=3000, frac=frac)
        assert (d.cwnd, frac) == (expect_cwnd, expect_frac)


def test_negative_error_shrinks_proportionally():
    # cwnd 20, mss 1000, rtt 2000, base 1000: backlog 20*1000*1000/2000 = 10000 B,
    # Q = 10500; R 4500: error -6000 B = -6 pkt; k 0.5 -> -3 packets
    d, frac = decide(20, 2000, 1000)
    assert (d.cwnd, frac, d.diff) == (17, 0, 10500)
    # fractional negative: error -600 B with mss 1000, k 0.5 -> -0.3 pkt = -307.2/1024,
    # truncated toward zero on magnitude: -307
    # Q must be 5100: backlog 4600 at cwnd 23, rtt 1250 -> 23*1000*250/1250 = 4600
    d, frac = decide(23, 1250, 1000)
    assert (d.diff, d.cwnd, frac) == (5100, 23, -307)


@pytest.mark.parametrize("mss,cwnd", [(1448, 5), (536, 15)])
def test_no_step_at_equilibrium_whatever_the_mss(mss, cwnd):
    # rtt = 2*base: backlog = cwnd*mss/2; Q = (cwnd+1)*mss/2. With R = Q there is no
    # error, so no step and no fraction: 1448*6/2 = 4344 B, 536*16/2 = 4288 B.
    R = (cwnd + 1) * mss // 2
    d, frac = decide(cwnd, 2000, mss, R=R, base=1000)
    assert (d.diff, d.cwnd, frac) == (R, cwnd, 0)


def test_never_below_two():
    # cwnd 30, mss 1448, rtt 10 s, base 1 ms: backlog = 30*1448*9999000/10000000 = 43435 B,
    # Q = 43435 + 724 = 44159; R 1000, k 1: step = (1000-44159)/1448 = -29.8 -> 30-29 = 1 -> 2
    d, _ = decide(30, 10_000_000, 1448, R=1000, k=1.0)
    assert (d.diff, d.cwnd) == (44159, 2)
