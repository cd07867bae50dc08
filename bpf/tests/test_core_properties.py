"""Properties of every variant's core over random sequences of per-RTT samples.

Each sequence feeds a decision's window into the next sample, as the kernel
does. With cwnd up to 1e6 packets and RTTs up to 10 s we check the invariants
of docs/DESIGN.md §3 and compare diff with exact (Python integer) arithmetic, so
any 32-bit overflow in the C would show as a mismatch.
"""
import ctypes

from hypothesis import given, settings, strategies as st

from vkcore import Adapt, RULE, adaptive, fr, params, sample, vegas

MAX_CWND = 10**6
MAX_RTT = 10_000_000          # 10 s in us
S32_MAX = 2**31 - 1

steps = st.lists(st.tuples(st.integers(1, MAX_RTT),          # base_rtt
                           st.integers(0, MAX_RTT),          # extra queueing delay
                           st.integers(0, 50),               # RTT samples this RTT
                           st.integers(0, 2**31 - 1)),       # ssthresh
                 min_size=1, max_size=40)


def exact_linux_diff(cwnd, base, rtt):
    return min(cwnd * (rtt - base) // base, S32_MAX)


def exact_backlog(cwnd, base, rtt, mss=1):
    return cwnd * mss * (rtt - base) // rtt


@settings(max_examples=300)
@given(cwnd0=st.integers(0, MAX_CWND), seq=steps, alpha=st.integers(0, 1000),
       gap=st.integers(0, 1000))
def test_vegas_sequences(cwnd0, seq, alpha, gap):
    p = params("VEGAS", alpha=alpha, beta=alpha + gap)
    cwnd = cwnd0
    for base, extra, cnt, ssthresh in seq:
        rtt = min(base + extra, MAX_RTT + base)
        d = vegas(p, sample(cwnd=cwnd, base_rtt=base, rtt=rtt, cnt_rtt=cnt, ssthresh=ssthresh,
                            cwnd_clamp=MAX_CWND))
        if d.rule == RULE["RENO"]:
            continue
        assert 2 <= d.cwnd <= MAX_CWND
        assert d.diff == exact_linux_diff(cwnd, base, rtt)
        cwnd = d.cwnd


@settings(max_examples=300)
@given(cwnd0=st.integers(0, MAX_CWND), seq=steps, alpha=st.integers(1, 64),
       gap=st.integers(0, 64), alpha_max=st.integers(64, 200), pipe=st.booleans())
def test_adaptive_sequences(cwnd0, seq, alpha, gap, alpha_max, pipe):
    variant = "PIPE" if pipe else "VEGAS_A"
    p = params(variant, alpha=alpha, beta=alpha + gap, alpha_max=alpha_max)
    a = Adapt(alpha=alpha, beta=alpha + gap)
    cwnd = cwnd0
    for base, extra, cnt, ssthresh in seq:
        rtt = base + extra
        d = adaptive(p, sample(cwnd=cwnd, base_rtt=base, rtt=rtt, cnt_rtt=cnt, ssthresh=ssthresh,
                               cwnd_clamp=MAX_CWND), a, pipe)
        assert 1 <= a.alpha <= alpha_max
        assert a.beta - a.alpha == gap
        assert (d.alpha, d.beta) == (a.alpha, a.beta)
        if d.rule == RULE["RENO"]:
            continue
        assert 2 <= d.cwnd <= MAX_CWND
        assert d.diff == min(exact_backlog(cwnd, base, rtt), S32_MAX)
        cwnd = d.cwnd


@settings(max_examples=300)
@given(cwnd0=st.integers(0, MAX_CWND), seq=steps, mss=st.integers(64, 9000),
       ref=st.integers(4500, 10**7), gain=st.integers(1, 1000))
def test_fr_sequences(cwnd0, seq, mss, ref, gain):
    p = params("VEGAS_FR", ref_bytes=ref, gain_milli=gain)
    frac = ctypes.c_int32(0)
    cwnd = cwnd0
    for base, extra, cnt, ssthresh in seq:
        rtt = base + extra
        d = fr(p, sample(cwnd=cwnd, base_rtt=base, rtt=rtt, cnt_rtt=cnt, ssthresh=ssthresh,
                         cwnd_clamp=MAX_CWND, mss=mss), frac)
        assert abs(frac.value) < 1024
        if d.rule == RULE["RENO"]:
            continue
        assert 2 <= d.cwnd <= MAX_CWND
        assert d.diff == min(exact_backlog(cwnd, base, rtt, mss) + mss // 2, S32_MAX)
        cwnd = d.cwnd
