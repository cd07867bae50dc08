"""Classic Vegas decision core (bpf/vk_core.h), rule by rule, against Linux tcp_vegas.c.

diff = cwnd * (rtt - base) / base (integer division), decided once per RTT.
"""
import pytest
from hypothesis import given, strategies as st

from vkcore import (INF_SSTHRESH, NO_CLAMP, RULE, params, rtt_sample, sample, vegas, lib)



def ca(**kw):
    """A sample in congestion avoidance (cwnd >= ssthresh)."""
    kw.setdefault("ssthresh", 5)
    return sample(**kw)


# --- congestion avoidance: the three rules --------------------------------------------
def test_increase_when_diff_below_alpha():
    # cwnd 10, rtt 1100, base 1000: diff = 10*100/1000 = 1 < alpha 2 -> cwnd+1
    d = vegas(params(), ca(cwnd=10, rtt=1100))
    assert (d.rule, d.diff, d.cwnd) == (RULE["INC"], 1, 11)


def test_hold_between_alpha_and_beta():
    # diff = 10*300/1000 = 3, alpha 2 <= 3 <= beta 4 -> unchanged
    d = vegas(params(), ca(cwnd=10, rtt=1300))
    assert (d.rule, d.diff, d.cwnd) == (RULE["HOLD"], 3, 10)


@pytest.mark.parametrize("rtt,rule", [(1200, "HOLD"), (1400, "HOLD")])
def test_boundaries_hold(rtt, rule):
    # diff == alpha (2) and diff == beta (4): neither "> beta" nor "< alpha"
    assert vegas(params(), ca(cwnd=10, rtt=rtt)).rule == RULE[rule]


def test_decrease_when_diff_above_beta():
    # diff = 10*500/1000 = 5 > 4 -> cwnd 9; ssthresh = min(5, 9-1) = 5, then
    # tcp_current_ssthresh: max(5, 9/2 + 9/4 = 4+2 = 6) = 6
    d = vegas(params(), ca(cwnd=10, rtt=1500, ssthresh=5))
    assert (d.rule, d.diff, d.cwnd, d.ssthresh) == (RULE["DEC"], 5, 9, 6)


def test_diff_uses_integer_division_like_linux():
    # 7*999/1000 = 6.993 -> 6 (not rounded): hold at alpha=6 beta=6
    d = vegas(params(alpha=6, beta=6), ca(cwnd=7, base_rtt=1000, rtt=1999))
    assert (d.diff, d.rule) == (6, RULE["HOLD"])


# --- slow start ----------------------------------------------------------------------
def test_slow_start_grows_while_diff_small():
    # in slow start (cwnd 10 < ssthresh), diff = 0 <= gamma 1 -> tcp_slow_start(acked=2)
    d = vegas(params(), sample(cwnd=10, rtt=1000, acked=2))
    assert (d.rule, d.cwnd) == (RULE["SS_GROW"], 12)


def test_slow_start_exit_caps_at_target_plus_one():
    # cwnd 20, rtt 2000, base 1000: diff = 20 > gamma; target = 20*1000/2000 = 10
    # -> cwnd = min(20, 11) = 11, ssthresh = min(inf, 10) = 10, then
    # tcp_current_ssthresh = max(10, 5 + 2) = 10
    d = vegas(params(), sample(cwnd=20, rtt=2000))
    assert (d.rule, d.cwnd, d.ssthresh) == (RULE["SS_EXIT"], 11, 10)


def test_slow_start_exit_threshold_is_strictly_greater_than_gamma():
    # diff = 10*100/1000 = 1 == gamma -> still growing
    assert vegas(params(), sample(cwnd=10, rtt=1100)).rule == RULE["SS_GROW"]
    # diff = 10*200/1000 = 2 > gamma -> exit
    assert vegas(params(), sample(cwnd=10, rtt=1200)).rule == RULE["SS_EXIT"]


def test_every_other_rtt_freezes_and_tests_gamma_only_in_frozen_rtt():
    p = params(ss_every_other_rtt=1)
    # growing RTT: no gamma test even though diff = 10 > gamma
    assert vegas(p, sample(cwnd=10, rtt=2000, ss_grow=1)).rule == RULE["SS_GROW"]
    # frozen RTT with small diff: window unchanged
    d = vegas(p, sample(cwnd=10, rtt=1000, ss_grow=0))
    assert (d.rule, d.cwnd) == (RULE["SS_FREEZE"], 10)
    # frozen RTT with diff > gamma: exit
    assert vegas(p, sample(cwnd=10, rtt=2000, ss_grow=0)).rule == RULE["SS_EXIT"]


# --- fallback with <= 2 samples --------------------------------------------------------
@pytest.mark.parametrize("cnt", [0, 1, 2])
def test_reno_fallback_with_two_or_fewer_samples(cnt):
    d = vegas(params(), ca(cnt_rtt=cnt, rtt=5000))
    assert (d.rule, d.cwnd) == (RULE["RENO"], 10)


def test_three_samples_are_enough():
    assert vegas(params(), ca(cnt_rtt=3, rtt=5000)).rule == RULE["DEC"]


# --- clamps --------------------------------------------------------------------------
def test_cwnd_never_below_two():
    d = vegas(params(), ca(cwnd=2, ssthresh=2, rtt=9000))
    assert (d.rule, d.cwnd) == (RULE["DEC"], 2)


def test_cwnd_never_above_clamp():
    d = vegas(params(), ca(cwnd=50, ssthresh=5, cwnd_clamp=50, rtt=1000))
    assert (d.rule, d.cwnd) == (RULE["INC"], 50)


def test_slow_start_respects_ssthresh_and_clamp():
    assert lib.vkt_slow_start(10, 12, 5, NO_CLAMP) == 12
    assert lib.vkt_slow_start(10, 100, 5, 13) == 13
    assert lib.vkt_clamp_cwnd(1, 100) == 2
    assert lib.vkt_clamp_cwnd(2**40, 100) == 100


# --- loss response and RTT sampling ----------------------------------------------------
@pytest.mark.parametrize("cwnd,cut,expect", [
    (10, 2, 5), (11, 2, 5),        # Linux: cwnd >> 1
    (10, 4, 7), (12, 4, 9),        # seed 001: reduce by 25%, floor(3/4 cwnd)
    (2, 4, 2), (1, 2, 2),          # never below 2
])
def test_loss_ssthresh(cwnd, cut, expect):
    assert lib.vkt_loss_ssthresh(cwnd, cut) == expect


def test_rtt_sample_ignores_negative_and_adds_one():
    assert rtt_sample(0x7FFFFFFF, 0x7FFFFFFF, 0, -1) == (0x7FFFFFFF, 0x7FFFFFFF, 0)
    assert rtt_sample(0x7FFFFFFF, 0x7FFFFFFF, 0, 0) == (1, 1, 1)       # never zero
    assert rtt_sample(500, 900, 4, 700) == (500, 701, 5)


# --- properties ----------------------------------------------------------------------
@given(cwnd=st.integers(0, 10**6), base=st.integers(1, 10**7), extra=st.integers(0, 10**7),
       ssthresh=st.integers(0, INF_SSTHRESH), cnt=st.integers(0, 100),
       alpha=st.integers(0, 100), gap=st.integers(0, 100), grow=st.integers(0, 1),
       every_other=st.integers(0, 1))
def test_window_stays_in_bounds(cwnd, base, extra, ssthresh, cnt, alpha, gap, grow, every_other):
    p = params(alpha=alpha, beta=alpha + gap, ss_every_other_rtt=every_other)
    s = sample(cwnd=cwnd, base_rtt=base, rtt=base + extra, ssthresh=ssthresh, cnt_rtt=cnt,
               ss_grow=grow, cwnd_clamp=10**6)
    d = vegas(p, s)
    if d.rule != RULE["RENO"]:
        assert 2 <= d.cwnd <= 10**6
        # one packet per RTT in congestion avoidance (after the clamp to >= 2)
        if d.rule not in (RULE["SS_GROW"], RULE["SS_EXIT"]):
            assert abs(int(d.cwnd) - max(cwnd, 2)) <= 1
        # Linux's diff, exactly, saturated to the record's 32 bits
        assert d.diff == min(cwnd * extra // base, 2**31 - 1)
