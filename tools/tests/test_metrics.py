"""Unit tests for vegaskit.analysis.metrics (definitions: docs/DESIGN.md §6).

Expected values are computed by hand in the comments next to each assertion.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vegaskit.analysis import metrics as m

approx = pytest.approx


# --------------------------------------------------------------------------
# throughput_series


def test_throughput_series_bits_per_second():
    # 125000 B in 1 s   -> 125000*8/1 = 1e6 bit/s
    # 500000 B in 2 s   -> 500000*8/2 = 2e6 bit/s
    # 0 B in 0.5 s (gap before it is allowed) -> 0 bit/s
    got = m.throughput_series([(0, 1, 125000), (1, 3, 500000), (4, 4.5, 0)])
    assert got == [(0.0, 1.0, 1e6), (1.0, 3.0, 2e6), (4.0, 4.5, 0.0)]


def test_throughput_series_empty():
    assert m.throughput_series([]) == []


@pytest.mark.parametrize(
    "records",
    [
        [(0, 1, -1)],  # negative bytes
        [(1, 1, 10)],  # zero-length interval
        [(2, 1, 10)],  # t1 < t0
        [(0, 2, 10), (1, 3, 10)],  # overlapping
        [(2, 3, 10), (0, 1, 10)],  # unsorted
        [(0, 1)],  # wrong arity
        [(0, float("nan"), 1)],
        [(0, 1, float("inf"))],
    ],
)
def test_throughput_series_rejects_bad_records(records):
    with pytest.raises(ValueError):
        m.throughput_series(records)


# --------------------------------------------------------------------------
# window_mean / second_half_mean

SERIES = [(0, 1, 10), (1, 2, 20), (2, 4, 40)]


def test_window_mean_partial_overlaps():
    # [0.5, 3]: 0.5 s of 10 + 1 s of 20 + 1 s of 40 = 5 + 20 + 40 = 65 over 2.5 s -> 26
    assert m.window_mean(SERIES, 0.5, 3) == approx(26.0)


def test_window_mean_gap_is_excluded_not_zero():
    # [0, 3] with a gap [1, 2]: (1*10 + 1*30) / 2 covered seconds = 20 (not 40/3)
    assert m.window_mean([(0, 1, 10), (2, 3, 30)], 0, 3) == approx(20.0)


def test_window_mean_errors():
    with pytest.raises(ValueError):
        m.window_mean(SERIES, 5, 6)  # no overlap
    with pytest.raises(ValueError):
        m.window_mean(SERIES, 4, 4)  # touching the end only, zero-length window
    with pytest.raises(ValueError):
        m.window_mean(SERIES, 3, 2)


def test_second_half_mean_aligned():
    # active [0, 4] -> second half [2, 4] -> (20 + 30) / 2 = 25; the first half (0, 10) is ignored
    series = [(0, 1, 0), (1, 2, 10), (2, 3, 20), (3, 4, 30)]
    assert m.second_half_mean(series, 0, 4) == approx(25.0)


def test_second_half_mean_straddles_midpoint():
    # active [0, 3] -> midpoint 1.5 -> [1.5, 3]: 0.5 s of 10 + 1 s of 30 = 35 over 1.5 s = 23.333...
    series = [(0, 2, 10), (2, 4, 30)]
    assert m.second_half_mean(series, 0, 3) == approx(35 / 1.5)


def test_second_half_mean_offset_start():
    # active [10, 14] -> [12, 14]: (20 + 40)/2 = 30
    series = [(10, 11, 999), (11, 12, 999), (12, 13, 20), (13, 14, 40)]
    assert m.second_half_mean(series, 10, 14) == approx(30.0)


def test_second_half_mean_errors():
    with pytest.raises(ValueError):
        m.second_half_mean([(0, 1, 5)], 0, 4)  # nothing in [2, 4]
    with pytest.raises(ValueError):
        m.second_half_mean([(0, 1, 5)], 1, 1)
    with pytest.raises(ValueError):
        m.second_half_mean([(0, 1, -5)], 0, 1)  # negative rate


@given(
    v=st.floats(min_value=0, max_value=1e12),
    n=st.integers(min_value=1, max_value=20),
    dt=st.floats(min_value=0.01, max_value=10),
)
def test_second_half_mean_of_constant_is_constant(v, n, dt):
    series = [(i * dt, (i + 1) * dt, v) for i in range(n)]
    assert m.second_half_mean(series, 0, n * dt) == approx(v, rel=1e-12, abs=1e-300)


# --------------------------------------------------------------------------
# jain_index


@pytest.mark.parametrize(
    "xs, expected",
    [
        ([1, 1], 1.0),  # 4 / (2*2) = 1
        ([1, 0], 0.5),  # 1 / (2*1) = 0.5
        ([3, 1], 0.8),  # 16 / (2*10) = 0.8
        ([5], 1.0),  # 25 / (1*25) = 1
        ([1, 1, 0, 0], 0.5),  # 4 / (4*2) = 0.5  (k/n with k=2 sharing of n=4)
        ([1, 2, 3], 6 / 7),  # 36 / (3*14) = 36/42 = 6/7
        ([3e9, 1e9], 0.8),  # scale invariant: same as [3, 1]
        ([1e-300, 1e-300], 1.0),  # x^2 would underflow in floats; exact arithmetic
        ([1e300, 0], 0.5),  # x^2 would overflow in floats
    ],
)
def test_jain_index_values(xs, expected):
    assert m.jain_index(xs) == approx(expected, rel=1e-15)


def test_jain_index_accepts_generators():
    assert m.jain_index(x for x in (3, 1)) == approx(0.8)


@pytest.mark.parametrize("xs", [[], [0], [0, 0, 0], [1, -1], [float("nan"), 1], [math.inf, 1]])
def test_jain_index_rejects(xs):
    # empty, all-zero (0/0, documented as ValueError), negative and non-finite inputs
    with pytest.raises(ValueError):
        m.jain_index(xs)


@given(st.lists(st.floats(min_value=0, max_value=1e300), min_size=1, max_size=50).filter(any))
def test_jain_index_bounds(xs):
    # Cauchy-Schwarz: 1/n <= J <= 1
    j = m.jain_index(xs)
    assert 1 / len(xs) <= j <= 1


@given(x=st.floats(min_value=1e-300, max_value=1e300), n=st.integers(1, 50))
def test_jain_index_equal_allocations_is_exactly_one(x, n):
    assert m.jain_index([x] * n) == 1.0


# --------------------------------------------------------------------------
# inter_protocol_ratio


def test_inter_protocol_ratio():
    tp = {"vegas": [2, 4], "reno": [1, 2, 3], "cubic": [0, 0]}
    # mean(vegas) = 3, mean(reno) = 2 -> 1.5; reversed -> 2/3
    assert m.inter_protocol_ratio(tp, "vegas", "reno") == approx(1.5)
    assert m.inter_protocol_ratio(tp, "reno", "vegas") == approx(2 / 3)
    # mean(cubic) = 0: positive / 0 -> inf
    assert m.inter_protocol_ratio(tp, "vegas", "cubic") == math.inf
    # 0 / positive -> 0
    assert m.inter_protocol_ratio(tp, "cubic", "vegas") == 0.0
    # 0 / 0 -> nan
    assert math.isnan(m.inter_protocol_ratio(tp, "cubic", "cubic"))


def test_inter_protocol_ratios_of_a_runs_flows():
    """Each cc over each loss-based one: rounded to 3 digits for a summary, whole for a
    report (a median of rounded ratios printed ns-2's PIPE under `text` as 0.673 beside
    the paper row's 0.672)."""
    flows = [{"cc": "bpf_pipe", "r": 2.0}, {"cc": "bpf_pipe", "r": 4.0},
             {"cc": "reno", "r": 3.0}, {"cc": "cubic", "r": 6.0}]
    assert m.inter_protocol_ratios(flows, "r") == {"bpf_pipe/reno": 1.0, "bpf_pipe/cubic": 0.5,
                                                  "reno/cubic": 0.5, "cubic/reno": 2.0}
    third = [{"cc": "a", "r": 1.0}, {"cc": "reno", "r": 3.0}]
    assert m.inter_protocol_ratios(third, "r") == {"a/reno": 0.333}
    assert m.inter_protocol_ratios(third, "r", None) == {"a/reno": approx(1 / 3, rel=1e-12)}


def test_inter_protocol_ratio_uses_means_not_sums():
    # sums would give 6/2 = 3; means give 2/2 = 1
    assert m.inter_protocol_ratio({"a": [2, 2, 2], "b": [2]}, "a", "b") == approx(1.0)


@pytest.mark.parametrize(
    "tp, a, b",
    [
        ({"a": [1]}, "a", "b"),  # missing variant
        ({"a": [1], "b": []}, "a", "b"),  # no flows
        ({"a": [1], "b": [-1, 3]}, "a", "b"),  # negative
        ({"a": [float("nan")], "b": [1]}, "a", "b"),
    ],
)
def test_inter_protocol_ratio_rejects(tp, a, b):
    with pytest.raises(ValueError):
        m.inter_protocol_ratio(tp, a, b)


# --------------------------------------------------------------------------
# utilisation


def test_utilisation():
    assert m.utilisation(9e6, 10e6) == approx(0.9)  # 9 Mbit/s of 10 Mbit/s
    assert m.utilisation(0, 10e6) == 0.0
    assert m.utilisation(10.1e6, 10e6) == approx(1.01)  # not clamped


@pytest.mark.parametrize("tot, rate", [(-1, 10), (1, 0), (1, -10), (math.nan, 10), (1, math.inf)])
def test_utilisation_rejects(tot, rate):
    with pytest.raises(ValueError):
        m.utilisation(tot, rate)


# --------------------------------------------------------------------------
# percentile / weighted_percentile


@pytest.mark.parametrize(
    "q, expected",
    [
        # n = 5, sorted [15, 20, 35, 40, 50]; rank = ceil(q/100 * 5)
        (0, 15),  # q = 0 -> smallest
        (5, 15),  # ceil(0.25) = 1
        (30, 20),  # ceil(1.5) = 2
        (40, 20),  # ceil(2.0) = 2 (exact boundary)
        (50, 35),  # ceil(2.5) = 3
        (95, 50),  # ceil(4.75) = 5
        (100, 50),
    ],
)
def test_percentile_nearest_rank(q, expected):
    assert m.percentile([35, 20, 50, 15, 40], q) == expected


def test_percentile_exact_rank_boundary():
    # 1..20, p95: rank = ceil(0.95 * 20) = ceil(19) = 19 -> 19 (float 0.95*20 must not round up to 20)
    vals = list(range(1, 21))
    assert m.percentile(vals, 95) == 19
    assert m.percentile(vals, 95.0) == 19
    # p95.1: ceil(19.02) = 20
    assert m.percentile(vals, 95.1) == 20


def test_percentile_rank_is_exact_decimal():
    vals = list(range(1, 1001))
    # p99.9 of 1..1000: rank = ceil(0.999 * 1000) = 999 -> 999
    # (the binary float 99.9 is slightly above 99.9, which would give rank 1000)
    assert m.percentile(vals, 99.9) == 999
    # p7 of 1..100: rank = ceil(0.07 * 100) = 7 -> 7 (float 7/100*100 = 7.000000000000001 -> 8)
    assert m.percentile(list(range(1, 101)), 7) == 7
    # p28 of 1..25: rank = ceil(0.28 * 25) = 7 -> 7
    assert m.percentile(list(range(1, 26)), 28) == 7


def test_percentile_rtt_seconds():
    # RTT samples in seconds; p95 of 10 values: ceil(9.5) = 10 -> largest; p50: ceil(5) = 5 -> 0.024
    rtts = [0.020, 0.021, 0.022, 0.023, 0.024, 0.025, 0.026, 0.027, 0.028, 0.100]
    assert m.percentile(rtts, 95) == 0.100
    assert m.percentile(rtts, 50) == 0.024


def test_percentile_is_an_observed_value_not_interpolated():
    # linear interpolation would give 1.5 for the median of [1, 2]; nearest rank gives ceil(1) = 1 -> 1
    assert m.percentile([1, 2], 50) == 1


@pytest.mark.parametrize(
    "vals, q", [([], 50), ([1, 2], -1), ([1, 2], 100.5), ([1, math.nan], 50), ([1, 2], math.nan)]
)
def test_percentile_rejects(vals, q):
    with pytest.raises(ValueError):
        m.percentile(vals, q)


def test_weighted_percentile():
    # values 1, 2, 3 with weights 1, 1, 2: total 4, cumulative 1, 2, 4
    vals, w = [3, 1, 2], [2, 1, 1]
    assert m.weighted_percentile(vals, w, 25) == 1  # target 1: cum(1) = 1 >= 1
    assert m.weighted_percentile(vals, w, 50) == 2  # target 2: cum(2) = 2 >= 2
    assert m.weighted_percentile(vals, w, 51) == 3  # target 2.04: cum(2) = 2 < 2.04
    assert m.weighted_percentile(vals, w, 0) == 1
    assert m.weighted_percentile(vals, w, 100) == 3


def test_weighted_percentile_exact_boundary():
    # weights 7 and 93, total 100, p7 target = 7 exactly and cum(1) = 7 >= 7 -> 1
    # (in floats 0.07 * 100 = 7.000000000000001 > 7 would wrongly give 2)
    assert m.weighted_percentile([1, 2], [7, 93], 7) == 1
    assert m.weighted_percentile([1, 2], [7, 93], 7.01) == 2


def test_weighted_percentile_ignores_zero_weight():
    # value 0 has no weight, so even q = 0 returns 5
    assert m.weighted_percentile([0, 5], [0, 1], 0) == 5


@pytest.mark.parametrize(
    "vals, w",
    [([1, 2], [1]), ([1], [-1]), ([1, 2], [0, 0]), ([], []), ([1], [math.inf]), ([math.nan], [1])],
)
def test_weighted_percentile_rejects(vals, w):
    with pytest.raises(ValueError):
        m.weighted_percentile(vals, w, 50)


@given(
    vals=st.lists(st.integers(-1000, 1000), min_size=1, max_size=60),
    q=st.integers(0, 100),
)
def test_percentile_nearest_rank_property(vals, q):
    p = m.percentile(vals, q)
    n = len(vals)
    assert p in vals
    # at least q% of values are <= p ...
    assert 100 * sum(v <= p for v in vals) >= q * n
    # ... and p is the smallest such value: fewer than q% are strictly below it
    if q > 0:
        assert 100 * sum(v < p for v in vals) < q * n
    else:
        assert p == min(vals)
    assert p == m.weighted_percentile(vals, [1] * n, q)


# --------------------------------------------------------------------------
# queue_stats


def test_queue_stats_without_t_end():
    # steps: 0 for [0,1), 10 for [1,3), 20 for [3,4); last sample (t=4) only closes the series
    # mean = (0*1 + 10*2 + 20*1) / 4 = 40/4 = 10
    # p95: weights 0:1, 10:2, 20:1, total 4, target 3.8; cum 1, 3, 4 -> 20
    s = m.queue_stats([(0, 0), (1, 10), (3, 20), (4, 0)])
    assert s.mean == approx(10.0)
    assert s.p95 == 20
    assert s == m.QueueStats(mean=s.mean, p95=20)


def test_queue_stats_with_t_end():
    # as above, but the final 0 holds for [4, 6): mean = 40/6; weights 0:3, 10:2, 20:1, target 5.7 -> 20
    s = m.queue_stats([(0, 0), (1, 10), (3, 20), (4, 0)], t_end=6)
    assert s.mean == approx(40 / 6)
    assert s.p95 == 20


def test_queue_stats_p95_is_time_weighted():
    # 5 packets for 19 s, then 100 packets for 1 s: mean = (5*19 + 100*1)/20 = 195/20 = 9.75
    # p95: target 0.95*20 = 19 and the queue was <= 5 for exactly 19 s -> p95 = 5
    s = m.queue_stats([(0, 5), (19, 100)], t_end=20)
    assert s.mean == approx(9.75)
    assert s.p95 == 5
    # 100 held for 1.5 s: total 20.5, target 19.475 > 19 -> p95 = 100
    assert m.queue_stats([(0, 5), (19, 100)], t_end=20.5).p95 == 100


def test_queue_stats_irregular_sampling():
    # 0 for 0.1 s, then 10 for 9.9 s: time-weighted mean = 99/10 = 9.9 (sample mean would be 6.67)
    s = m.queue_stats([(0, 0), (0.1, 10), (10, 10)])
    assert s.mean == approx(9.9)
    assert s.p95 == 10


def test_queue_stats_equal_timestamps():
    # the 3 at t=0 is superseded immediately (zero weight): 7 for [0, 2) -> mean 7, p95 7
    s = m.queue_stats([(0, 3), (0, 7), (2, 7)])
    assert s.mean == approx(7.0)
    assert s.p95 == 7


def test_queue_stats_single_sample_with_t_end():
    assert m.queue_stats([(1, 4)], t_end=3) == (4.0, 4)


@pytest.mark.parametrize(
    "samples, t_end",
    [
        ([], None),
        ([(0, 1)], None),  # zero observed duration
        ([(0, 1), (0, 2)], None),  # zero observed duration
        ([(0, 1), (1, -1)], None),  # negative length
        ([(1, 1), (0, 1)], None),  # time goes backwards
        ([(0, 1), (2, 1)], 1),  # t_end before last sample
        ([(0, 1, 2)], 3),  # wrong arity
        ([(0, math.nan), (1, 1)], None),
    ],
)
def test_queue_stats_rejects(samples, t_end):
    with pytest.raises(ValueError):
        m.queue_stats(samples, t_end=t_end)


@settings(max_examples=200)
@given(
    qs=st.lists(st.integers(0, 500), min_size=1, max_size=100),
    dt=st.sampled_from([2.0**-10, 0.125, 0.5, 1.0, 3.0]),
)
def test_queue_stats_equal_spacing_matches_plain_stats(qs, dt):
    # equally long steps: time-weighted p95 equals the unweighted nearest-rank p95 of the values,
    # and the time-weighted mean equals the plain mean.
    # dt is exact in binary so the steps really are equal: with dt = 0.001 the durations
    # (i+1)*dt - i*dt differ in the last bit and an exact rank boundary (e.g. 19 of 20) can tip.
    samples = [(i * dt, q) for i, q in enumerate(qs)]
    s = m.queue_stats(samples, t_end=len(qs) * dt)
    assert s.p95 == m.percentile(qs, 95)
    assert s.mean == approx(sum(qs) / len(qs), rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------
# arrival_view


def test_arrival_view_of_a_pair_behind_a_busy_link():
    # as linkemu logs it: packet A into an idle link (enq 1, deq 0 at once); B and C
    # arrive together 0.1 s later while A serializes (enq 1, enq 2); B starts at 1.0,
    # C at 2.0. Time average of waiting over [0, 2]: 0 for 0.1 s, 2 for 0.9 s, 1 for
    # 1 s = 2.8 / 2 = 1.4; packets ahead at arrival: A 0, B 0, C 1 -> 1/3; waits:
    # A 0, B 0.9, C 1.9 -> 2.8 / 3.
    ev = [(0.0, 1, "enq"), (0.0, 0, "deq"), (0.1, 1, "enq"), (0.1, 2, "enq"),
          (1.0, 1, "deq"), (2.0, 0, "deq")]
    v = m.arrival_view(ev)
    assert v.ahead == approx(1 / 3) and v.wait_s == approx(2.8 / 3)
    assert m.queue_stats([(t, n) for t, n, _ in ev], t_end=2.0).mean == approx(1.4)


def test_arrival_view_skips_drops_and_losses_and_unserved_packets():
    # a drop is never admitted; a loss (after serialization) moves nothing; the
    # packet still waiting at the end counts as ahead-at-arrival but has no wait
    ev = [(0.0, 1, "enq"), (0.0, 0, "deq"), (0.5, 1, "enq"), (0.5, 1, "drop"),
          (1.0, 0, "deq"), (1.2, 0, "loss"), (1.5, 1, "enq")]
    v = m.arrival_view(ev)
    assert v.ahead == 0 and v.wait_s == approx(0.25)
    assert m.arrival_view([(0.0, 0, "drop")]) is None


@pytest.mark.parametrize("events", [
    [(0.0, 0, "enq")],                      # an admitted packet leaves one waiting
    [(0.0, 0, "deq")],                      # nothing to start
    [(0.0, 1, "enq", 5)],                   # wrong arity
    [(math.nan, 1, "enq")],
    [(0.0, -1, "drop")],
])
def test_arrival_view_rejects(events):
    with pytest.raises(ValueError):
        m.arrival_view(events)


# --------------------------------------------------------------------------
# retransmissions / loss_rate


def test_retransmissions():
    assert m.retransmissions([0, 3, 2]) == 5  # 0 + 3 + 2
    assert m.retransmissions([]) == 0
    assert m.retransmissions(iter([7])) == 7


@pytest.mark.parametrize("counts", [[1, -1], [1.5], [True]])
def test_retransmissions_rejects(counts):
    with pytest.raises(ValueError):
        m.retransmissions(counts)


def test_loss_rate():
    assert m.loss_rate(5, 1000) == approx(0.005)  # 5/1000
    assert m.loss_rate(0, 10) == 0.0
    assert m.loss_rate(10, 10) == 1.0


@pytest.mark.parametrize("lost, sent", [(0, 0), (1, 0), (11, 10), (-1, 10), (1, -10), (math.nan, 1)])
def test_loss_rate_rejects(lost, sent):
    with pytest.raises(ValueError):
        m.loss_rate(lost, sent)


# --------------------------------------------------------------------------
# convergence_time

# Flow A alone at 10 until B joins at t = 5; then A yields: 8, 7, 6, 5, 5 while B takes 2, 3, 4, 5, 5.
A = [(t, t + 1, 10) for t in range(5)] + [(5, 6, 8), (6, 7, 7), (7, 8, 6), (8, 9, 5), (9, 10, 5)]
B = [(5, 6, 2), (6, 7, 3), (7, 8, 4), (8, 9, 5), (9, 10, 5)]


def test_convergence_time_first_window_above_threshold():
    # J per 1-s window after t = 5:
    #   [5,6]  (8,2): 100 / (2*68) = 0.735
    #   [6,7]  (7,3): 100 / (2*58) = 0.862
    #   [7,8]  (6,4): 100 / (2*52) = 0.9615  >= 0.95  -> window end 8 - join 5 = 3 s
    assert m.convergence_time({"a": A, "b": B}, join_time=5) == approx(3.0)
    # threshold 0.99: [8,9] (5,5) -> J = 1 -> 4 s; threshold 1.0 is reached exactly there too
    assert m.convergence_time([A, B], 5, threshold=0.99) == approx(4.0)
    assert m.convergence_time([A, B], 5, threshold=1.0) == approx(4.0)
    # threshold 0.8: [6,7] 0.862 -> 2 s
    assert m.convergence_time([A, B], 5, threshold=0.8) == approx(2.0)


def test_convergence_time_windows_not_aligned_with_intervals():
    # join 5.5, windows [5.5,6.5], [6.5,7.5], [7.5,8.5]:
    #   A = (8+7)/2 = 7.5, B = (2+3)/2 = 2.5: 100 / (2*(56.25+6.25)) = 0.8
    #   A = 6.5,           B = 3.5:           100 / (2*(42.25+12.25)) = 0.917
    #   A = 5.5,           B = 4.5:           100 / (2*(30.25+20.25)) = 0.990 -> 8.5 - 5.5 = 3 s
    assert m.convergence_time([A, B], 5.5) == approx(3.0)


def test_convergence_time_half_second_windows():
    # windows of 0.5 s from 5: [5,5.5] and [5.5,6] (8,2); [6,6.5], [6.5,7] (7,3); [7,7.5] (6,4) 0.96
    # -> 5th window, end 7.5 -> 2.5 s
    assert m.convergence_time([A, B], 5, window=0.5) == approx(2.5)


def test_convergence_time_never():
    b_starved = [(t, t + 1, 1) for t in range(5, 10)]
    # (9,1): J = 100/(2*82) = 0.61 in every window, never 0.95
    a = [(t, t + 1, 9) for t in range(0, 10)]
    assert m.convergence_time([a, b_starved], 5) is None


def test_convergence_time_first_crossing_not_sustained():
    # fair in the first window, unfair afterwards: the first crossing counts -> 1 s
    a = [(5, 6, 5), (6, 7, 9), (7, 8, 9)]
    b = [(5, 6, 5), (6, 7, 1), (7, 8, 1)]
    assert m.convergence_time([a, b], 5) == approx(1.0)


def test_convergence_time_needs_two_active_flows():
    # B's data starts only at 7: windows [5,6], [6,7] hold A alone (J = 1 trivially) and do not count.
    # [7,8]: (10, 10) -> J = 1 -> 8 - 5 = 3 s (it would be 1 s if single-flow windows counted)
    a = [(t, t + 1, 10) for t in range(0, 10)]
    b = [(t, t + 1, 10) for t in range(7, 10)]
    assert m.convergence_time([a, b], 5) == approx(3.0)


def test_convergence_time_only_active_flows_count():
    # C ran only in [0, 5]; after the join A and B are equal -> J = 1 in [5,6] -> 1 s.
    # If C were counted as 0 the index would be (2)^2/(3*2) = 2/3 and never reach 0.95.
    a = [(t, t + 1, 1) for t in range(0, 8)]
    b = [(t, t + 1, 1) for t in range(5, 8)]
    c = [(t, t + 1, 1) for t in range(0, 5)]
    assert m.convergence_time([a, b, c], 5) == approx(1.0)


def test_convergence_time_stall_is_not_convergence():
    # both 0 in [5,6] (J undefined, skipped), equal in [6,7] -> 2 s
    a = [(5, 6, 0), (6, 7, 3)]
    b = [(5, 6, 0), (6, 7, 3)]
    assert m.convergence_time([a, b], 5) == approx(2.0)


def test_convergence_time_ignores_incomplete_last_window():
    # data ends at 6.5: only [5,6] is a complete window, and it is unfair (9,1)
    a = [(5, 6, 9), (6, 6.5, 5)]
    b = [(5, 6, 1), (6, 6.5, 5)]
    assert m.convergence_time([a, b], 5) is None


def test_convergence_time_no_data():
    assert m.convergence_time([], 5) is None
    assert m.convergence_time({"a": [], "b": []}, 5) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": 0},
        {"window": -1},
        {"threshold": 0},
        {"threshold": 1.01},
        {"join_time": math.nan},
    ],
)
def test_convergence_time_rejects_parameters(kwargs):
    args = {"per_flow_series": [A, B], "join_time": 5, **kwargs}
    with pytest.raises(ValueError):
        m.convergence_time(**args)


def test_convergence_time_rejects_bad_series():
    with pytest.raises(ValueError):
        m.convergence_time([A, [(5, 6, -1)]], 5)


def test_ca_state_times_integrate_each_state_over_the_window():
    from vegaskit.analysis.metrics import ca_state_times
    # Open until 2, Recovery 2-3, Open 3-5, Loss 5-6 (a time-out), Open after
    changes = [(2.0, 3), (3.0, 0), (5.0, 4), (6.0, 0)]
    r = ca_state_times(changes, 0.0, 10.0)
    assert r["seconds"] == {"open": 8.0, "disorder": 0.0, "cwr": 0.0, "recovery": 1.0, "loss": 1.0}
    assert r["timeouts"] == 1
    # a window that starts inside Recovery and ends inside Loss
    r = ca_state_times(changes, 2.5, 5.5)
    assert r["seconds"] == {"open": 2.0, "disorder": 0.0, "cwr": 0.0, "recovery": 0.5, "loss": 0.5}
    assert r["timeouts"] == 1
    # changes before the window set the state it starts in, and count nothing
    r = ca_state_times(changes, 5.5, 5.8)
    assert r["seconds"]["loss"] == pytest.approx(0.3) and r["timeouts"] == 0
    # the seconds add up to the window, whatever the changes
    for t0, t1 in ((0, 1), (1.5, 7.2), (6, 6), (0, 100)):
        assert sum(ca_state_times(changes, t0, t1)["seconds"].values()) == pytest.approx(t1 - t0)
    with pytest.raises(ValueError):
        ca_state_times([(1.0, 9)], 0, 2)
    # two changes in one microsecond: the later one holds, whatever the state numbers
    r = ca_state_times([(1.0, 3), (1.0, 0)], 0.0, 10.0)
    assert r["seconds"]["open"] == 10.0 and r["seconds"]["recovery"] == 0.0
