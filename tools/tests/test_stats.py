"""vegaskit.analysis.stats against values worked out by hand and brute force."""
import itertools
import math
import random

import pytest

from vegaskit.analysis import stats


def test_permutation_p_of_fully_separated_arms_is_the_smallest_possible():
    a, b = [10, 11, 12, 13, 14], [1, 2, 3, 4, 5]
    assert stats.permutation_p(a, b) == pytest.approx(2 / 252)
    assert stats.min_p(5, 5) == pytest.approx(2 / 252)


def test_permutation_p_of_identical_arms_is_one():
    assert stats.permutation_p([3, 3, 3], [3, 3, 3]) == 1.0


def test_permutation_p_matches_a_brute_force_count():
    rng = random.Random(7)
    a = [rng.gauss(0, 1) for _ in range(4)]
    b = [rng.gauss(0.8, 1) for _ in range(5)]
    pooled = a + b
    obs = abs(sum(a) / 4 - sum(b) / 5)
    hits = 0
    for idx in itertools.combinations(range(9), 4):
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(9) if i not in idx]
        hits += abs(sum(x) / 4 - sum(y) / 5) >= obs - 1e-12
    assert stats.permutation_p(a, b) == pytest.approx(hits / math.comb(9, 4))


def test_holm_adjusts_step_down_and_stays_monotone():
    # sorted p: 0.01, 0.02, 0.04 -> 3*0.01, 2*0.02, max(0.04, 1*0.04)
    assert stats.holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_median_interval_of_five_is_min_max_at_93_75_percent():
    lo, hi, cov = stats.median_interval([5, 1, 4, 2, 3])
    assert (lo, hi) == (1, 5)
    assert cov == pytest.approx(1 - 2 / 32)


def test_median_interval_narrows_when_n_allows():
    xs = list(range(1, 21))                 # n = 20: k = 6 gives 95.9%
    lo, hi, cov = stats.median_interval(xs)
    assert (lo, hi) == (6, 15)
    assert cov >= 0.95


def test_ks_distance():
    assert stats.ks_distance([1, 2, 3], [1, 2, 3]) == 0
    assert stats.ks_distance([1, 2], [3, 4]) == 1
    assert stats.ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)


def test_empty_samples_are_refused():
    with pytest.raises(ValueError):
        stats.permutation_p([], [1])
    with pytest.raises(ValueError):
        stats.median_interval([])
