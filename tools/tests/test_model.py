"""Tests for vegaskit.analysis.model, the Samios-Vernon TCP Vegas throughput model (seed 001).

Expected values are worked out by hand in the comments from the paper's equations (a
calculator for the arithmetic, never the module under test). Most cases share one set of
inputs, EX: R = 0.1 s, baseRTT = 0.05 s, alpha = beta = 4, Wmax = 1000, T0 = 0.5 s, so
  R / (R - baseRTT) = 0.1 / 0.05 = 2 (exact in binary floating point: 0.05 is 0.1 / 2),
  W0 (5) = (4 + 4)/2 * 2 = 8,   W0_no-loss (3) = 4 * 2 = 8,
  bound (12) = 32 / (7*64 - 36*8 + 32) = 32 / 192 = 1/6,
  bound (26) = 8 / (3*64 - 10*8 + 16*log2(8) + 8) = 8 / (192 - 80 + 48 + 8) = 8 / 168 = 1/21.
"""

import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vegaskit.analysis import model

EX = model.ModelInputs(p=0.04, rtt=0.1, base_rtt=0.05, alpha=4, beta=4, wmax=1000, t0=0.5)
LOSS_BRANCHES = (model.NO_TO_STABLE, model.NO_TO_NOT_STABLE, model.SINGLE_TO, model.FULL,
                 model.TO_NOT_STABLE)


def ex(**changes) -> model.ModelInputs:
    return replace(EX, **changes)


# --- hand-computed values, one per branch ----------------------------------------------

def test_example_windows_and_bounds():
    r = model.predict(EX)
    assert r.w0 == 8.0 and r.w0_no_loss == 8.0
    assert r.condition_12.rhs == pytest.approx(1 / 6, rel=1e-15)
    assert r.condition_26.rhs == pytest.approx(1 / 21, rel=1e-15)


def test_no_loss_branch_hand_value():
    # R = 0.1, baseRTT = 0.08, alpha = 2, beta = 4, Wmax = 1000, p = 0:
    # (3) W0_no-loss = min(4 * 0.1 / 0.02, 1000) = 20 < Wmax, so (4) applies:
    # (4) Lambda = beta / (R - baseRTT) = 4 / 0.02 = 200 packets/s.
    r = model.predict(model.ModelInputs(0.0, 0.1, 0.08, 2, 4, 1000, 1.0), mss=1000)
    assert r.branch == model.NO_LOSS and not r.forced
    assert r.w0_no_loss == pytest.approx(20, rel=1e-12)
    assert r.throughput_pps == pytest.approx(200, rel=1e-12)
    assert r.throughput_bytes_per_s == pytest.approx(200_000, rel=1e-12)


def test_no_loss_branch_capped_by_wmax():
    # Same, Wmax = 10: (3) W0_no-loss = min(20, 10) = 10; throughput W0/R = 10 / 0.1 = 100
    # packets/s, not (4)'s 200 (the paper states (4) for W0_no-loss < Wmax only).
    r = model.predict(model.ModelInputs(0.0, 0.1, 0.08, 2, 4, 10, 1.0))
    assert r.throughput_pps == pytest.approx(100, rel=1e-12)


def test_no_loss_branch_without_queueing_uses_wmax():
    # R == baseRTT: R/(R - baseRTT) is infinite, so (3) gives Wmax = 50; 50 / 0.1 = 500.
    r = model.predict(model.ModelInputs(0.0, 0.1, 0.1, 2, 4, 50, 1.0))
    assert r.w0_no_loss == 50 and r.w0 == 50
    assert r.throughput_pps == pytest.approx(500, rel=1e-12)


def test_no_timeout_stable_branch_hand_value():
    # EX with p = 0.1: (12) 0.1 <= 1/6 holds, (26) 0.1 > 1/21 fails (auto picks (27)).
    # (1-p)/p = 0.9/0.1 = 9.   Numerator of (11): 9 + W0 = 17.
    # Denominator: (1-p)/(p W0) + W0/32 + 9/8 = 9/8 + 8/32 + 9/8 = 1.125 + 0.25 + 1.125 = 2.5,
    # times R: 0.25.   (11) = 17 / 0.25 = 68 packets/s.
    r = model.predict(ex(p=0.1), model.NO_TO_STABLE)
    assert model.predict(ex(p=0.1)).branch == model.TO_NOT_STABLE
    assert r.condition_12.holds and not r.condition_26.holds
    assert r.throughput_pps == pytest.approx(68, rel=1e-12)


def test_no_timeout_not_stable_branch_hand_value():
    # EX with p = 0.2: (12) 0.2 > 1/6 fails (auto picks (27)).
    # sqrt(56/p - 55) = sqrt(280 - 55) = sqrt(225) = 15.
    # (13) W' = (2 + 2*15)/7 = 32/7.
    # (14) = (4*15 + 14/0.2 - 10) / ((1 + 15) * 0.1) = (60 + 70 - 10) / 1.6 = 75 packets/s.
    # Cross-check with the middle form: ((1-p)/p + W') / (W'/4 R) = (4 + 32/7) / (8/70)
    #   = (60/7) * (70/8) = 75.
    r = model.predict(ex(p=0.2), model.NO_TO_NOT_STABLE)
    assert model.predict(ex(p=0.2)).branch == model.TO_NOT_STABLE
    assert not r.condition_12.holds and not r.condition_26.holds
    assert r.throughput_pps == pytest.approx(75, rel=1e-12)
    assert model.w_prime(0.2) == pytest.approx(32 / 7, rel=1e-12)


def test_no_timeout_not_stable_branch_second_hand_value():
    # p = 7/8: sqrt(56/p - 55) = sqrt(64 - 55) = 3; W' = (2 + 6)/7 = 8/7;
    # (14) = (4*3 + 14*8/7 - 10) / ((1 + 3) * 0.1) = (12 + 16 - 10) / 0.4 = 45 packets/s.
    assert model.predict(ex(p=0.875), model.NO_TO_NOT_STABLE).throughput_pps == \
        pytest.approx(45, rel=1e-12)
    assert model.w_prime(0.875) == pytest.approx(8 / 7, rel=1e-12)


def test_timeout_not_stable_branch_rebuilt_from_its_periods():
    # (27) rebuilt period by period, not from the simplified closed form, for EX at
    # p = 0.2 ((12) and (26) fail) with the time-out series of (30)-(31):
    p, R, T0 = 0.2, EX.rtt, EX.t0
    wp = model.w_prime(p)                               # (13): 32/7, below W0 = 8
    lg = math.log2(wp)                                  # > 2: a slow start exists
    p_ad = 1 / p + wp - 1                               # (16) with W'
    p_ssp, d_ssp = 2 ** lg - 4, 2 * (lg - 2)            # (17) with W'
    p_bc, d_bc = 3 * wp ** 2 / 8 - wp / 4, wp / 2       # (18) with W'
    d_tp = d_bc + (p_ad - p_ssp - p_bc) / wp            # (19)'s first form
    p_lfp, d_lfp = (1 - p) / p + wp, wp / 4             # (14)
    n = (1 - model.p_timeout(p, wp)) / model.p_timeout(p, wp)  # (20)-(21) at W'
    packets = p_ad + n * p_lfp + 2 * p * (2 - p) / (1 - p) ** 2
    seconds = (d_ssp + d_tp + n * d_lfp) * R + model.timeout_series_duration_factor(p) * T0
    r = model.predict(ex(p=p))
    assert r.branch == model.TO_NOT_STABLE
    assert r.throughput_pps == pytest.approx(packets / seconds, rel=1e-12)
    # Time-outs cost: below (14), which ignores them, for the same p.
    assert r.throughput_pps < model.predict(ex(p=p), model.NO_TO_NOT_STABLE).throughput_pps


def test_timeout_not_stable_is_the_full_model_where_12_holds():
    # (12) holds, (26) fails: W' of (13) >= W0, loss-free periods reach stable backlog,
    # and (27)'s periods are (32)'s. (Found by the simulation of the model's own process:
    # billing 1/p packets as W'/4 rounds at a window capped at W0 gave 1695 pkt/s above
    # the ceiling W0/R = 1500 at p = 8e-4, R = 45 ms, baseRTT = 41 ms, alpha = beta = 6.)
    i = model.ModelInputs(8e-4, 0.045, 0.041, 6, 6, 4340, 0.245)
    r = model.predict(i)
    assert r.condition_12.holds and not r.condition_26.holds
    assert r.branch == model.TO_NOT_STABLE
    assert r.throughput_pps == model.predict(i, model.FULL).throughput_pps
    assert r.throughput_pps < r.w0 / i.rtt


@pytest.mark.parametrize("p", [0.2, 0.02, 0.002])
def test_14_bills_a_period_a_round_short_of_its_own_sum(p):
    # (13) solves sum_{i=3W'/4}^{W'} i = 1/p + W' - 1: W'/4 + 1 windows averaging 7W'/8,
    # so (1-p)/p + W' = (W'/4 + 1) 7W'/8 exactly. (14) divides that by W'/4 rounds and
    # sends 7W'/8 + 7/2 packets a round, more than any of the windows it averages; with the
    # sum's own round count it sends the mean window (docs/DESIGN.md §8).
    wp, R = model.w_prime(p), 0.1
    assert model.throughput_no_timeout_not_stable(p, R) * R == pytest.approx(7 * wp / 8 + 3.5,
                                                                               rel=1e-12)
    assert model.throughput_no_timeout_not_stable(p, R, 1) * R == pytest.approx(7 * wp / 8,
                                                                                 rel=1e-12)


def test_extra_rounds_apply_only_where_12_fails_and_default_to_the_paper():
    fails, holds = ex(p=0.2), model.ModelInputs(8e-4, 0.045, 0.041, 6, 6, 4340, 0.245)
    assert model.predict(fails, extra_rounds=0).throughput_pps == \
        model.predict(fails).throughput_pps
    # (27): every one of the n + 1 periods ending in a loss gets the rounds, at R each
    r, counted = model.predict(fails), model.predict(fails, extra_rounds=model.ROUNDS_COUNTED)
    wp = model.w_prime(0.2)
    n = model.n_loss_free_periods(model.p_timeout(0.2, wp))
    packets = r.throughput_pps * (model.n_ss2to_not_stable(0.2, wp, n) * EX.rtt
                                  + model.timeout_series_duration_factor(0.2) * EX.t0)
    assert counted.throughput_pps == pytest.approx(
        packets / (packets / r.throughput_pps + (n + 1) * 2 * EX.rtt), rel=1e-12)
    # where (12) holds the periods are (32)'s, which bill their rounds already
    assert model.predict(holds, extra_rounds=2).throughput_pps == \
        model.predict(holds).throughput_pps


@pytest.mark.parametrize("bad", [-1, math.nan, math.inf, 101, True, "2"])
def test_extra_rounds_out_of_range_raise(bad):
    with pytest.raises(ValueError, match="extra_rounds"):
        model.predict(EX, extra_rounds=bad)


def test_timeout_not_stable_falls_with_p_across_the_w_prime_w0_crossing():
    # W0 = 20: W' of (13) falls below W0 at p = 0.01161 while (12) still holds (to 0.01515).
    # Switching to the W' periods there (an earlier version did) made auto rise 16% with p.
    i = model.ModelInputs(0.0116, 0.1, 0.05, 10, 10, 1000, 0.2)
    a, b = model.predict(i), model.predict(replace(i, p=0.0117))
    assert a.condition_12.holds and b.condition_12.holds
    assert b.throughput_pps < a.throughput_pps


# Shared by the two time-out branches, EX (p = 0.04, W0 = 8, R = 0.1, T0 = 0.5):
#   q = 1 - p = 0.96;  q^7 = 0.75144747810816;  q^8 = 0.7213895789838336
#   (21) numerator p + p q (1 - q^7) = 0.04 + 0.0384 * 0.24855252189184 = 0.04954441684064666
#        denominator 1 - q^8 = 0.2786104210161664
#        p_TO = 0.17782686182356344 (< 1, so the min is inactive)
#   (20) n = (1 - p_TO)/p_TO = 1/p_TO - 1 = 4.623447378789048
#   (24)-(25) with log2(8) = 3, 2^3 = 8, (1-p)/(p W0) = 0.96/0.32 = 3:
#        N = 2*3 + 3(n+1) + (1 + n/4)*8/8 + 9n/8 - 11/4 + (4 - 8)/8
#          = (6 + 3 + 1 - 2.75 - 0.5) + (3 + 0.25 + 1.125) n = 6.75 + 4.375 n
#          = 26.977582282202086
#   packets per SS2SS: (n+1)((1-p)/p + W0) = (n+1)(24 + 8) = 32 (n+1) = 179.95031612124953
N_EX, PACKETS_EX = 26.977582282202086, 179.95031612124953


def test_timeout_intermediates_hand_values():
    assert model.p_timeout(0.04, 8) == pytest.approx(0.17782686182356344, rel=1e-12)
    assert model.n_loss_free_periods(0.17782686182356344) == pytest.approx(4.623447378789048, rel=1e-12)
    assert model.n_ss2to(0.04, 8, 4.623447378789048) == pytest.approx(N_EX, rel=1e-12)


def test_single_timeout_branch_hand_value():
    # (23) = 32(n+1) / (N R + T0) = 179.95031612124953 / (2.6977582282202086 + 0.5)
    #      = 179.95031612124953 / 3.1977582282202086 = 56.273896673359616 packets/s.
    # Both conditions hold (0.04 <= 1/6, 0.04 <= 1/21), so the branch is valid; auto
    # would pick "full", so this one has to be forced.
    r = model.predict(EX, branch=model.SINGLE_TO)
    assert r.branch == model.SINGLE_TO and r.forced
    assert r.condition_12.holds and r.condition_26.holds
    assert r.throughput_pps == pytest.approx(56.273896673359616, rel=1e-12)


def test_full_branch_hand_value():
    # (30) P_TO-series = 2p(2-p)/(1-p)^2 = 2*0.04*1.96 / 0.9216 = 0.1568/0.9216 = 0.17013888...
    # (31) x = 2p - p^2 = 0.0784; coefficients 2^k - 64k + 320 for k = 1..6:
    #      258, 196, 136, 80, 32, 0.
    #      sum = 258 + 196x + 136x^2 + 80x^3 + 32x^4 = 274.2420923507147
    #      d = 64/0.9216 - 321 + 0.9216 * 274.2420923507147
    #        = 69.44444444444444 - 321 + 252.74151231041864 = 1.1859567548630892
    # (32) = (179.95031612124953 + 0.1701388888888889) / (2.6977582282202086 + 0.5 * 1.1859567548630892)
    #      = 180.12045501013842 / 3.2907366056517532 = 54.73560378572576 packets/s.
    r = model.predict(EX, mss=1448)
    assert r.branch == model.FULL and not r.forced
    assert r.throughput_pps == pytest.approx(54.73560378572576, rel=1e-12)
    assert r.throughput_bytes_per_s == pytest.approx(54.73560378572576 * 1448, rel=1e-12)


def test_timeout_series_equations_hand_values():
    # p = 0.5: (28) P[M=1] = (1-p)^2 = 0.25, P[M=2] = (2p - p^2)(1-p)^2 = 0.75 * 0.25 = 0.1875.
    assert model.prob_timeout_series_length(0.5, 1) == pytest.approx(0.25)
    assert model.prob_timeout_series_length(0.5, 2) == pytest.approx(0.1875)
    # (29) E[M] = 1/0.25 = 4; (30) P_TO-series = 2*0.5*1.5/0.25 = 6 = 2(E[M] - 1).
    assert model.expected_timeouts(0.5) == pytest.approx(4)
    assert model.packets_in_timeout_series(0.5) == pytest.approx(6)
    # (31) x = 0.75: sum = 258 + 196*0.75 + 136*0.5625 + 80*0.421875 + 32*0.31640625
    #      = 258 + 147 + 76.5 + 33.75 + 10.125 = 525.375;
    #      d = 64/0.25 - 321 + 0.25 * 525.375 = 256 - 321 + 131.34375 = 66.34375.
    # Directly from D_k: sum_{k<=5} (2^k - 1) 0.25 * 0.75^(k-1)
    #      = 0.25 + 0.5625 + 0.984375 + 1.58203125 + 2.4521484375 = 5.8310546875;
    #      k >= 6: 0.25 * 0.75^5 * sum_j (63 + 64 j) 0.75^j = 0.059326171875 * (63*4 + 64*12)
    #      = 60.5126953125; total 66.34375, the same.
    assert model.timeout_series_duration_factor(0.5) == pytest.approx(66.34375, rel=1e-12)
    # d(0) = 64 - 321 + 258 = 1: a lossless series is a single time-out of T0.
    assert model.timeout_series_duration_factor(0.0) == pytest.approx(1, rel=1e-12)


@pytest.mark.parametrize("p", [1e-4, 0.01, 0.04, 0.3, 0.6])
def test_d_of_p_matches_direct_sum_of_series_durations(p):
    # Independent of (31)'s closed form: E[D] = sum_k D_k P[M=k] with D_k from section 3.4,
    # P[M=k] from (28) written out here; truncated where the terms are negligible.
    x, q2 = 2 * p - p * p, (1 - p) ** 2
    direct = sum(((2 ** k - 1) if k < 6 else (63 + 64 * (k - 6))) * x ** (k - 1) * q2
                 for k in range(1, 2000))
    assert model.timeout_series_duration_factor(p) == pytest.approx(direct, rel=1e-9)
    assert model.expected_timeouts(p) == pytest.approx(
        sum(k * x ** (k - 1) * q2 for k in range(1, 2000)), rel=1e-9)


def test_p_timeout_is_capped_at_one_and_tends_to_one_over_w0():
    # (21) with W0 = 1: (p + 0) / (1 - (1-p)) = 1.
    assert model.p_timeout(0.3, 1) == pytest.approx(1)
    # W0 = 0.5, p = 0.3: q^-0.5 = 1.19523, numerator 0.3 + 0.21 * (1 - 1.19523) = 0.25900,
    # denominator 1 - 0.7^0.5 = 0.16334; the ratio 1.5857 > 1 is capped to 1.
    assert model.p_timeout(0.3, 0.5) == 1.0
    # p -> 0: numerator ~ p, denominator ~ W0 p, so p_TO -> 1/W0 = 1/8.
    assert model.p_timeout(1e-12, 8) == pytest.approx(1 / 8, rel=1e-6)


# --- the equations' edge cases and the choices made for them ---------------------------

@pytest.mark.parametrize("w0, bound", [
    (8, 1 / 6),        # 32/192
    (16, 1 / 39),      # 32/(1792 - 576 + 32) = 32/1248
    (4, math.inf),     # 7*16 - 144 + 32 = 0: P_DE <= 1/p + W0 - 1 holds for all p
    (2, math.inf),     # 28 - 72 + 32 = -12 < 0: likewise
])
def test_condition_12_bound(w0, bound):
    assert model.condition_12_bound(w0) == pytest.approx(bound, rel=1e-15)


@pytest.mark.parametrize("w0, bound", [
    (8, 1 / 21),       # 8/(192 - 80 + 48 + 8)
    (16, 1 / 85),      # 8/(768 - 160 + 64 + 8) = 8/680
    (2, 1 / 4),        # log clamped to 2: 8/(12 - 20 + 32 + 8) = 8/32 (unclamped: 8/16)
])
def test_condition_26_bound(w0, bound):
    assert model.condition_26_bound(w0) == pytest.approx(bound, rel=1e-15)


def test_slow_start_log_is_real_log2_clamped_at_two():
    assert model.slow_start_log(8) == 3
    assert model.slow_start_log(1024) == 10
    assert model.slow_start_log(12) == pytest.approx(3.584962500721156)
    assert model.slow_start_log(2) == 2  # no slow start when W0/2 <= 2
    assert model.slow_start_log(0.5) == 2


def test_n_ss2to_without_slow_start():
    # W0 = 2, p = 0.1, n = 1. Slow start is empty (log clamped to 2), so by components:
    # D_TP/R (19) = 0.9/0.2 + 2/8 + 5/4 + (4 - 4)/2 = 4.5 + 0.25 + 1.25 = 6
    # D_LFP/R (10) = 4.5 + 2/32 + 9/8 = 5.6875;   N = 0 + 6 + 1 * 5.6875 = 11.6875.
    assert model.n_ss2to(0.1, 2, 1) == pytest.approx(11.6875, rel=1e-12)


# --- conditions (12) and (26) at their boundaries ----------------------------------------

@pytest.mark.parametrize("p, holds, branch", [
    (math.nextafter(1 / 6, 0), True, model.TO_NOT_STABLE),     # (26) fails on both sides
    (1 / 6, True, model.TO_NOT_STABLE),
    (math.nextafter(1 / 6, 1), False, model.TO_NOT_STABLE),
])
def test_condition_12_at_its_boundary(p, holds, branch):
    r = model.predict(ex(p=p))
    assert r.condition_12.lhs == p
    assert r.condition_12.rhs == 1 / 6
    assert r.condition_12.holds is holds
    assert not r.condition_26.holds  # 1/6 > 1/21
    assert r.branch == branch


@pytest.mark.parametrize("p, holds, branch", [
    (math.nextafter(1 / 21, 0), True, model.FULL),
    (1 / 21, True, model.FULL),
    (math.nextafter(1 / 21, 1), False, model.TO_NOT_STABLE),
])
def test_condition_26_at_its_boundary(p, holds, branch):
    r = model.predict(ex(p=p))
    assert r.condition_26.lhs == p
    assert r.condition_26.rhs == 1 / 21
    assert r.condition_26.holds is holds
    assert r.condition_12.holds
    assert r.branch == branch


# --- limits ------------------------------------------------------------------------------

def test_p_to_zero_gives_equation_4_when_alpha_equals_beta():
    # (4) for EX: beta / (R - baseRTT) = 4 / 0.05 = 80 packets/s; p = 0 is exactly that.
    assert model.predict(ex(p=0.0)).throughput_pps == pytest.approx(80, rel=1e-12)
    errors = []
    for p in (1e-3, 1e-5, 1e-7, 1e-9):
        r = model.predict(ex(p=p))
        assert r.branch == model.FULL
        errors.append(abs(r.throughput_pps - 80) / 80)
    assert errors == sorted(errors, reverse=True)
    assert errors[-1] < 1e-6
    # The other loss branches that hold at small p tend to (4) as well.
    for branch in (model.NO_TO_STABLE, model.SINGLE_TO):
        assert model.predict(ex(p=1e-9), branch=branch).throughput_pps == pytest.approx(80, rel=1e-6)


def test_p_to_zero_with_alpha_below_beta_tends_to_w0_over_r():
    # The loss model's limit is W0/R from (5), (alpha+beta)/2/(R - baseRTT), not (4)'s
    # beta/(R - baseRTT): with alpha = 2, beta = 4, R = 0.1, baseRTT = 0.08 that is
    # 3/0.02 = 150 against 200 at p = 0 exactly (the paper's p -> 0 statement assumes
    # alpha = beta, section 3.1).
    i = model.ModelInputs(1e-9, 0.1, 0.08, 2, 4, 1000, 1.0)
    assert model.predict(i).throughput_pps == pytest.approx(150, rel=1e-6)
    assert model.predict(replace(i, p=0.0)).throughput_pps == pytest.approx(200, rel=1e-12)


@pytest.mark.parametrize("p", [0.3, 0.5, 0.9])
@pytest.mark.parametrize("rtt, base, alpha, beta", [
    (0.1, 0.05, 4, 4), (0.3, 0.25, 1, 3), (1.0, 0.2, 6, 6), (0.12, 0.1, 2, 4)])
def test_large_p_fails_12_and_the_reno_like_branch_depends_on_p_only(p, rtt, base, alpha, beta):
    # W0 (5) = 8, 12, 7.5, 18; bounds (12) = 32/192 = 0.167, 32/608 = 0.053,
    # 32/155.75 = 0.205, 32/1652 = 0.019. Every p here fails (12), so auto uses (27); (14),
    # forced, gives a throughput * R that depends on p only. (For 8/7 <= W0 <= 4, (12)
    # never fails: see test_condition_12_bound.)
    i = model.ModelInputs(p, rtt, base, alpha, beta, 1000, 2 * rtt)
    assert model.predict(i).branch == model.TO_NOT_STABLE
    r = model.predict(i, model.NO_TO_NOT_STABLE)
    s = math.sqrt(56 / p - 55)
    assert r.throughput_pps * rtt == pytest.approx((4 * s + 14 / p - 10) / (1 + s), rel=1e-12)


def test_reno_like_branch_follows_square_root_law():
    # (14) for small p: (4s + 14/p - 10)/(1+s) with s ~ sqrt(56/p) -> 14/sqrt(56p) = sqrt(3.5/p)
    # (Reno's is sqrt(1.5/p)); the next term is relatively ~ 4s p/14 ~ 2e-4 at p = 1e-8.
    for p in (1e-8, 1e-10):
        lam = model.predict(ex(p=p), branch=model.NO_TO_NOT_STABLE).throughput_pps
        assert lam * EX.rtt * math.sqrt(p) == pytest.approx(math.sqrt(3.5), rel=3e-4)


# --- monotonicity ------------------------------------------------------------------------

HYP = settings(max_examples=300, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


@st.composite
def loss_inputs(draw):
    """Inputs with W0 >= 2 (Vegas never runs below two packets) and T0 >= R (T0 is two
    smoothed RTTs plus four deviations, section 3.3). Outside that the time-out models
    are not monotone: with T0 -> 0 the packets of a time-out series come for free."""
    base = draw(st.floats(1e-3, 1.0))
    rtt = base * draw(st.floats(1.0001, 10.0))
    beta = draw(st.floats(0.5, 50.0))
    alpha = beta * draw(st.floats(0.0, 1.0))
    wmax = draw(st.sampled_from([2.0, 8.0, 64.0, 1000.0, 1e6]))
    t0 = rtt * draw(st.floats(1.0, 6.0))
    p = draw(st.floats(1e-8, 0.98))
    i = model.ModelInputs(p, rtt, base, alpha, beta, wmax, t0)
    assume(model.predict(i).w0 >= 2)
    return i


def _valid(r: model.ModelResult) -> bool:
    """Whether the branch's own conditions hold: (12) for (11); (12) and (26) for (23),
    (32); (12) or (26) failing for (27)."""
    if r.branch == model.NO_TO_NOT_STABLE:
        return True
    if r.branch == model.TO_NOT_STABLE:
        return not (r.condition_12.holds and r.condition_26.holds)
    if r.branch == model.NO_TO_STABLE:
        return r.condition_12.holds
    return r.condition_12.holds and r.condition_26.holds


def _same_piece(r1: model.ModelResult, r2: model.ModelResult) -> bool:
    """(27) is two pieces, split where (12) flips (docs/DESIGN.md §8: where (12) holds its
    periods are (32)'s), and jumps between them; monotone within each."""
    return r1.branch != model.TO_NOT_STABLE or r1.condition_12.holds == r2.condition_12.holds


def _falls(i: model.ModelInputs, i2: model.ModelInputs) -> None:
    for branch in LOSS_BRANCHES:
        r1, r2 = model.predict(i, branch), model.predict(i2, branch)
        if _valid(r1) and _valid(r2) and _same_piece(r1, r2):
            assert r2.throughput_pps <= r1.throughput_pps * (1 + 1e-12), branch


@HYP
@given(loss_inputs(), st.floats(1.000001, 3.0))
def test_throughput_falls_as_p_rises(i, factor):
    i2 = replace(i, p=min(i.p * factor, 0.99))
    assume(i2.p > i.p)
    _falls(i, i2)


@HYP
@given(loss_inputs(), st.floats(1.000001, 3.0))
def test_throughput_falls_as_rtt_rises(i, factor):
    i2 = replace(i, rtt=i.rtt * factor, t0=i.t0 * factor)
    assume(model.predict(i2).w0 >= 2)
    _falls(i, i2)


def test_27_jumps_where_12_flips_and_the_properties_compare_within_a_piece():
    """The counterexample hypothesis found: as R and T0 grow 7 to 8%, (12) comes to hold
    and (27)'s throughput jumps up by its other piece's periods."""
    i = model.ModelInputs(p=0.375, rtt=4.0, base_rtt=1.0, alpha=3.75, beta=6.0, wmax=8.0, t0=4.0)
    a = model.predict(replace(i, rtt=4.28, t0=4.28), model.TO_NOT_STABLE)
    b = model.predict(replace(i, rtt=4.32, t0=4.32), model.TO_NOT_STABLE)
    assert not a.condition_12.holds and b.condition_12.holds
    assert b.throughput_pps > 1.4 * a.throughput_pps
    assert not _same_piece(a, b)
    _falls(replace(i, rtt=4.28, t0=4.28), replace(i, rtt=4.32, t0=4.32))   # no assert fires


@HYP
@given(loss_inputs())
def test_auto_never_exceeds_the_window_it_holds(i):
    # No loss model can send faster than the stable window W0 (5) per R.
    r = model.predict(i)
    assert r.throughput_pps <= r.w0 / i.rtt * (1 + 1e-12), r.branch


def test_monotone_sweeps_on_the_example():
    # Deterministic sweeps inside each branch's region for EX (W0 = 8 at R = 0.1).
    def sweep(values, make, branch):
        lams = [model.predict(make(v), branch).throughput_pps for v in values]
        assert all(b < a for a, b in zip(lams, lams[1:])), (branch, lams)

    sweep([1e-4, 1e-3, 0.01, 0.03, 0.045], lambda p: ex(p=p), model.FULL)
    sweep([1e-4, 1e-3, 0.01, 0.03, 0.045], lambda p: ex(p=p), model.SINGLE_TO)
    sweep([1e-3, 0.01, 0.05, 0.1, 0.16], lambda p: ex(p=p), model.NO_TO_STABLE)
    sweep([0.17, 0.3, 0.5, 0.9], lambda p: ex(p=p), model.NO_TO_NOT_STABLE)
    sweep([0.05, 0.1, 0.2, 0.5, 0.9], lambda p: ex(p=p), model.TO_NOT_STABLE)
    sweep([0.1, 0.12, 0.15, 0.2], lambda R: ex(p=0.1, rtt=R, t0=5 * R), model.TO_NOT_STABLE)
    # R from 0.1 to 0.2 at p = 0.1: W0 = 4R/(R - 0.05) falls from 8 to 5.33 and (12) holds.
    sweep([0.1, 0.12, 0.15, 0.2], lambda R: ex(p=0.1, rtt=R), model.NO_TO_STABLE)
    sweep([0.1, 0.12, 0.15, 0.2], lambda R: ex(p=0.02, rtt=R), model.FULL)


# --- input validation ----------------------------------------------------------------------

@pytest.mark.parametrize("changes, field", [
    ({"p": 1.0}, "p"), ({"p": -0.01}, "p"), ({"p": math.nan}, "p"),
    ({"rtt": 0.04}, "rtt"), ({"base_rtt": 0.0, "rtt": 0.1}, "base_rtt"),
    ({"base_rtt": -1.0}, "base_rtt"), ({"rtt": math.inf}, "rtt"),
    ({"alpha": 5}, "alpha"), ({"alpha": -1}, "alpha"),
    ({"alpha": 0, "beta": 0}, "beta"),
    ({"wmax": 0}, "wmax"), ({"t0": 0}, "t0"), ({"t0": -0.5}, "t0"),
    ({"p": "0.1"}, "p"), ({"wmax": True}, "wmax"),
])
def test_invalid_inputs_raise_value_error(changes, field):
    with pytest.raises(ValueError, match=field):
        ex(**changes)


def test_edge_inputs_are_accepted():
    ex(p=0.0), ex(rtt=0.05), ex(alpha=0), ex(alpha=4, beta=4)


def test_predict_rejects_bad_branch_and_mss():
    with pytest.raises(ValueError, match="unknown branch"):
        model.predict(EX, branch="reno")
    with pytest.raises(ValueError, match="mss"):
        model.predict(EX, mss=0)
    with pytest.raises(ValueError, match="p > 0"):
        model.predict(ex(p=0.0), branch=model.FULL)
    # A subnormal p makes 1/p overflow: a clear error, never inf or nan.
    for branch in LOSS_BRANCHES:
        with pytest.raises(ValueError, match="overflows"):
            model.predict(ex(p=5e-324), branch=branch)


# --- CLI ---------------------------------------------------------------------------------

EX_ARGS = ["--p", "0.04", "--rtt", "0.1", "--base-rtt", "0.05", "--alpha", "4", "--beta", "4",
           "--wmax", "1000", "--t0", "0.5"]


def test_cli_json(capsys):
    assert model.main(EX_ARGS + ["--mss", "1448", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    doc = json.loads(out)
    assert doc["branch"] == "full" and doc["forced"] is False
    assert doc["throughput_pps"] == pytest.approx(54.73560378572576, rel=1e-12)
    assert doc["throughput_bytes_per_s"] == pytest.approx(54.73560378572576 * 1448, rel=1e-12)
    assert doc["condition_12"] == {"p": 0.04, "bound": pytest.approx(1 / 6), "holds": True}
    assert doc["condition_26"] == {"p": 0.04, "bound": pytest.approx(1 / 21), "holds": True}
    assert doc["w0"] == 8.0 and doc["inputs"]["mss"] == 1448


def test_cli_extra_rounds_reach_the_model_and_are_said(capsys):
    fails = ["--p", "0.2"] + EX_ARGS[2:]                # (12) fails at p = 0.2
    assert model.main(fails + ["--extra-rounds", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["inputs"]["extra_rounds"] == 2
    assert doc["throughput_pps"] == pytest.approx(
        model.predict(ex(p=0.2), extra_rounds=2).throughput_pps, rel=1e-12)
    assert doc["throughput_pps"] < model.predict(ex(p=0.2)).throughput_pps
    assert model.main(fails + ["--extra-rounds", "2"]) == 0
    assert "extra rounds:   2" in capsys.readouterr().out
    assert model.main(fails) == 0
    assert "extra rounds" not in capsys.readouterr().out


def test_cli_json_without_mss_and_infinite_bound(capsys):
    # alpha = beta = 2 gives W0 = 4, where the (12) bound is infinite: JSON null, not Infinity.
    args = EX_ARGS[:6] + ["--alpha", "2", "--beta", "2"] + EX_ARGS[10:] + ["--json"]
    assert model.main(args) == 0
    out = capsys.readouterr().out
    assert "Infinity" not in out
    doc = json.loads(out)
    assert doc["condition_12"]["bound"] is None and doc["condition_12"]["holds"] is True
    assert doc["throughput_bytes_per_s"] is None


def test_cli_text_and_forced_branch(capsys):
    assert model.main(EX_ARGS + ["--branch", "single-timeout", "--mss", "1000"]) == 0
    out = capsys.readouterr().out
    assert "branch:         single-timeout (forced)" in out
    assert "56.2739 packets/s (56273.9 bytes/s)" in out
    assert "condition (12): p = 0.04 <= 0.166667: holds" in out
    assert "condition (26): p = 0.04 <= 0.047619: holds" in out


@pytest.mark.parametrize("args", [
    ["--p", "1.0"] + EX_ARGS[2:],                      # p out of range
    ["--p", "abc"] + EX_ARGS[2:],                      # not a number
    EX_ARGS[:2] + ["--rtt", "0.01"] + EX_ARGS[4:],     # R < baseRTT
    EX_ARGS[:6] + ["--alpha", "5"] + EX_ARGS[8:],      # alpha > beta
    EX_ARGS[:-2],                                      # --t0 missing
    EX_ARGS + ["--mss", "-1"],
    EX_ARGS + ["--branch", "reno"],
    EX_ARGS + ["--bogus"],
    ["--p", "5e-324"] + EX_ARGS[2:] + ["--json"],       # overflows floating point
    ["--p", "0"] + EX_ARGS[2:] + ["--branch", "full"],  # loss branch without loss
    EX_ARGS + ["--extra-rounds", "-1"],
])
def test_cli_bad_input_exits_2_with_one_stderr_line(capsys, args):
    assert model.main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("model: error: ")


def _run_module(args):
    return subprocess.run([sys.executable, "-m", "vegaskit.analysis.model", *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_as_module():
    ok = _run_module(EX_ARGS + ["--json"])
    assert ok.returncode == 0 and ok.stderr == ""
    assert json.loads(ok.stdout)["branch"] == "full"
    bad = _run_module(["--p", "2"] + EX_ARGS[2:] + ["--json"])
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().count("\n") == 0 and "p must be in [0, 1)" in bad.stderr
