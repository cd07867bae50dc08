"""Tests for vegaskit.analysis.model_sim, the simulation of the Samios-Vernon process (seed 001).

Expected values come from the paper's equations, worked out in the comments or by
model.py's closed forms where the test is precisely that the two agree. EX is model
test's example: R = 0.1 s, baseRTT = 0.05 s, alpha = beta = 4, so W0 (5) = 8 and
R / W0 = 80 packets/s without loss; bound (12) = 1/6, bound (26) = 1/21.
"""

import math
from dataclasses import asdict, replace

import pytest

from vegaskit.analysis import model
from vegaskit.analysis import model_sim as ms

EX = model.ModelInputs(p=0.002, rtt=0.1, base_rtt=0.05, alpha=4, beta=4, wmax=1000, t0=0.5)
# our validation's long path: W0 = 6 * 0.104 / 0.003 = 208, bound (12) = 1.08e-4
LONG = model.ModelInputs(p=0.01, rtt=0.104, base_rtt=0.101, alpha=6, beta=6, wmax=4340, t0=0.304)


def test_same_seed_same_result_other_seed_differs():
    a = ms.simulate(EX, rounds=20_000, seed=7)
    assert a == ms.simulate(EX, rounds=20_000, seed=7)
    assert a.packets_sent != ms.simulate(EX, rounds=20_000, seed=8).packets_sent


def test_tiny_p_tends_to_w0_over_r_and_p_zero_is_the_no_loss_model():
    # alpha = 2, beta = 6: W0 (5) = 4 * 2 = 8, W0_no-loss (3) = 6 * 2 = 12.
    i = replace(EX, alpha=2, beta=6, p=1e-9)
    r = ms.simulate(i, rounds=50_000)
    assert r.throughput_pps == pytest.approx(8 / 0.1, rel=1e-3)  # W0 / R
    # p == 0 is model 1: (4) beta / (R - baseRTT) = 6 / 0.05 = 120 = W0_no-loss / R
    r0 = ms.simulate(replace(i, p=0.0), rounds=50_000)
    assert r0.throughput_pps == pytest.approx(120, rel=1e-12)
    assert r0.delivered_pps == r0.throughput_pps and r0.loss_episodes == 0
    assert r0.throughput_pps == pytest.approx(model.predict(replace(i, p=0.0)).throughput_pps)


def test_real_window_sends_w0_packets_per_round_on_average():
    # W0 = 6 * 0.045 / 0.004 = 67.5, not an integer: error diffusion sends 67 and 68 alternately
    i = model.ModelInputs(0.0, 0.045, 0.041, 6, 6, 4340, 0.245)
    r = ms.simulate(i, rounds=1000)
    assert r.packets_sent == 67_500
    assert r.throughput_pps == pytest.approx(67.5 / 0.045, rel=1e-12)


@pytest.mark.parametrize("p, window, rounds", [
    (0.001, 30, 600_000),   # (21) = 0.0348
    (0.01, 8, 300_000),     # (21) = 0.1381
    (0.05, 8, 100_000),     # (21) = 0.1911
    (0.05, 60, 100_000),    # (21) = 0.0998
])
def test_timeout_fraction_at_a_fixed_window_is_equation_21(p, window, rounds):
    s = ms.simulate_fixed_window(p, window, rounds, seed=3)
    expected = model.p_timeout(p, window)
    se = math.sqrt(expected * (1 - expected) / s.loss_episodes)
    assert s.loss_episodes > 5_000
    assert abs(s.timeout_fraction - expected) < 4 * se


def test_loss_is_correlated_within_a_round_not_independent_per_packet():
    # W = 20, p = 0.01. Correlated (section 3): given a loss episode, k packets get
    # through with A(20, k) = q^k p / (1 - q^20); the other 20 - k are lost, and the k
    # recovery packets are lost too with probability p. An LFP sends 1/p + W - 1 packets
    # in expectation (6). Independent loss would lose a fraction p = 0.01 of packets, and
    # time out only if every packet after the first loss were lost too: about p^(W-1).
    p, w = 0.01, 20
    q = 1 - p
    a = [q**k * p / (1 - q**w) for k in range(w)]
    lost_per_episode = sum(ak * ((w - k) + p * k) for k, ak in enumerate(a))   # 10.93
    expected_loss_rate = lost_per_episode / (1 / p + w - 1)                   # 0.0918
    s = ms.simulate_fixed_window(p, w, 200_000, seed=5)
    loss_rate = 1 - s.packets_delivered / s.packets_sent
    assert loss_rate == pytest.approx(expected_loss_rate, rel=0.03)
    assert loss_rate > 5 * p
    assert s.timeout_fraction == pytest.approx(model.p_timeout(p, w), rel=0.1)  # 0.0644
    assert s.timeout_fraction > 1000 * p ** (w - 1)


def test_window_at_loss_is_w0_when_12_holds_widely_and_near_w_prime_when_it_fails():
    # EX at p = 0.0005: bound (12) = 1/6 is 333 times p, losses find the window at W0 = 8.
    held = ms.simulate(replace(EX, p=0.0005), rounds=200_000)
    assert held.mean_window_at_loss > 0.97 * 8
    # LONG: W0 = 208, p = 0.01 is 92 times bound (12); W' (13) = (2 + 2 sqrt(5545)) / 7
    # = 21.6. W' is the window for an LFP of exactly its mean length; random lengths and
    # the slow starts after time-outs put the mean a little below it (0.88 W' here).
    short = ms.simulate(LONG, rounds=200_000)
    assert short.mean_window_at_loss < 0.2 * 208
    assert 0.75 * model.w_prime(0.01) < short.mean_window_at_loss < 1.05 * model.w_prime(0.01)


@pytest.mark.parametrize("inputs", [
    EX,                                                   # W0 = 8: p 83x below (12), 24x below (26)
    replace(EX, alpha=8, beta=8, p=0.0005),              # W0 = 16: 51x below (12), 24x below (26)
])
def test_full_model_agrees_with_its_own_process_where_12_and_26_hold_widely(inputs):
    # Tolerance 2%, from the paper's approximations, not fitted: (8) bills the W0 - 1
    # packets sent after a loss at W0 packets per round, while in the process they take
    # the rest of the loss round and a recovery round, about half a round more per LFP
    # of (10) D_LFP = (1-p)/(p W0) + W0/32 + 9/8 rounds: 0.5 / 63.8 = 0.8% for W0 = 8,
    # 0.5 / 126.6 = 0.4% for W0 = 16. Losses before the window reaches W0 (a fraction
    # p P_DE (9) = 2.6% and 2.7% of LFPs, at windows >= 3W0/4) and in slow start are a
    # smaller effect of the same order; the 95% interval is about 0.1%.
    c = ms.compare(inputs, rounds=300_000, seed=11)
    assert c.auto.branch == model.FULL
    lo, hi = c.sim.throughput_ci95
    assert hi - lo < 0.005 * c.sim.throughput_pps
    assert abs(c.error(model.FULL)) < 0.02


def test_27_leaves_its_own_process_by_the_rounds_14_does_not_bill():
    # Where (12) fails, (27) as printed bills each loss-free period W'/4 rounds; the process
    # takes W'/4 + 1 rounds of windows (3W'/4 .. W', the sum of (13)) and one more until the
    # duplicate ACK returns. At LONG (p = 0.01, W' = 21.6: periods of 5.4 rounds) the two
    # unbilled rounds are a third of a period. Billed, the closed form sits within 5% of its
    # process (what is left: time-outs taken at W' and the mean period length in place of
    # random ones, a few percent each, of opposite sign); as printed it is 30% above.
    printed = {}
    for i in (replace(LONG, p=0.004), LONG):
        sim = ms.simulate(i, rounds=200_000, seed=3).throughput_pps
        counted = model.predict(i, extra_rounds=model.ROUNDS_COUNTED).throughput_pps
        assert model.predict(i).branch == model.TO_NOT_STABLE
        assert not model.predict(i).condition_12.holds
        assert abs(counted / sim - 1) < 0.05
        printed[i.p] = model.predict(i).throughput_pps / sim - 1
    assert printed[LONG.p] > 0.2


def test_timeout_series_length_is_equation_29():
    # E[M] = 1 / (1-p)^2 (29): 1.108 at p = 0.05; the series are independent of the window
    r = ms.simulate(replace(EX, p=0.05), rounds=200_000)
    se = math.sqrt((2 * 0.05 - 0.05**2) / (1 - 0.05) ** 4 / r.loss_episodes / r.timeout_fraction)
    assert abs(r.mean_timeouts_per_series - model.expected_timeouts(0.05)) < 4 * se
    assert 0 < r.timeout_time_fraction < 1


def test_interval_covers_the_estimate_and_shrinks_with_more_rounds():
    a = ms.simulate(EX, rounds=50_000)
    b = ms.simulate(EX, rounds=400_000)
    for r in (a, b):
        assert r.throughput_ci95[0] < r.throughput_pps < r.throughput_ci95[1]
    width = lambda r: r.throughput_ci95[1] - r.throughput_ci95[0]  # noqa: E731
    assert width(b) < width(a)


def test_compare_lists_auto_and_every_loss_branch_and_skips_those_that_raise(monkeypatch):
    c = ms.compare(EX, rounds=20_000)
    assert set(c.branches) == set(model.BRANCHES) - {model.NO_LOSS}
    assert c.auto == model.predict(EX)
    for name, r in c.branches.items():
        assert r == model.predict(EX, branch=name)
        assert c.error(name) == pytest.approx(r.throughput_pps / c.sim.throughput_pps - 1)

    real = model.predict

    def predict(inputs, branch=model.AUTO, mss=None):
        if branch == model.SINGLE_TO:
            raise ValueError("not for these inputs")
        return real(inputs, branch=branch, mss=mss)

    monkeypatch.setattr(model, "predict", predict)
    assert model.SINGLE_TO not in ms.compare(EX, rounds=20_000).branches


@pytest.mark.parametrize("rounds", [0, -5, 1.5, True, "1000", None])
def test_rounds_must_be_a_positive_int(rounds):
    with pytest.raises(ValueError, match="rounds"):
        ms.simulate(EX, rounds=rounds)


def test_inputs_are_validated_by_model_inputs():
    bad = object.__new__(model.ModelInputs)  # bypasses __post_init__, as a caller's object might
    for name, value in asdict(EX).items():
        object.__setattr__(bad, name, value)
    object.__setattr__(bad, "p", 1.5)
    with pytest.raises(ValueError, match="p must be in"):
        ms.simulate(bad, rounds=100)


def test_cli_prints_a_row_per_p(capsys):
    assert ms.main(["--p", "0.002", "0.01", "--rtt", "0.1", "--base-rtt", "0.05", "--alpha", "4",
                    "--beta", "4", "--wmax", "1000", "--t0", "0.5", "--rounds", "20000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[2].startswith("| 0.002 |") and out[3].startswith("| 0.01 |")
    assert ms.main(["--p", "2", "--rtt", "0.1", "--base-rtt", "0.05", "--alpha", "4", "--beta",
                    "4", "--wmax", "1000", "--t0", "0.5"]) == 2
