"""The PFTK model (analysis/pftk.py), against hand values of its equation (33)."""
import math

import pytest

from vegaskit.analysis import pftk


def test_hand_value():
    # p = 0.01, R = 0.1, T0 = 0.5, b = 1: sqrt(2p/3) = 0.0816497, R * that = 0.00816497;
    # 3 sqrt(3p/8) = 0.183712; T0 * 0.183712 * 0.01 * (1 + 0.0032) = 0.000921499.
    # B = 1 / 0.00908647 = 110.054 packets/s.
    assert pftk.throughput(0.01, 0.1, 0.5, 1e6) == pytest.approx(110.054, rel=1e-5)


def test_small_p_is_the_square_root_law_and_b_slows_growth():
    # Without time-outs B -> 1 / (R sqrt(2bp/3)): sqrt(3/2)/(R sqrt(p)) for b = 1.
    p, r = 1e-8, 0.05
    assert pftk.throughput(p, r, 1.0, 1e9) * r * math.sqrt(p) == pytest.approx(math.sqrt(1.5), rel=1e-3)
    assert pftk.throughput(0.01, r, 1.0, 1e9, b=2) < pftk.throughput(0.01, r, 1.0, 1e9, b=1)


def test_the_receive_window_caps_it():
    assert pftk.throughput(1e-6, 0.1, 0.5, 20) == pytest.approx(200)
    assert pftk.throughput(0.0, 0.1, 0.5, 20) == pytest.approx(200)


@pytest.mark.parametrize("args", [(-0.1, 0.1, 0.5, 10), (1.0, 0.1, 0.5, 10), (0.01, 0, 0.5, 10),
                                  (0.01, 0.1, math.nan, 10), (0.01, 0.1, 0.5, -1)])
def test_bad_input_is_refused(args):
    with pytest.raises(ValueError):
        pftk.throughput(*args)
