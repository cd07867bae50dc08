"""Evaluation metrics for vegaskit experiments (definitions: docs/DESIGN.md §6).

Pure Python 3.11, standard library only.

Representations used throughout this module
-------------------------------------------
Interval series
    A per-flow time series is a list of ``(t0, t1, value)`` tuples, one per
    measurement interval, exactly as iperf3 ``-J`` reports them (each entry of
    ``intervals[].sum`` has ``start``, ``end`` and ``bytes``).  ``t0`` and
    ``t1`` are seconds on one clock, ``t0 < t1``; the intervals are sorted and
    do not overlap (``t0`` of an interval >= ``t1`` of the one before; gaps are
    allowed and mean "no data", not "zero").  ``value`` is a non-negative
    constant over the interval: bytes in a *byte-count* series (input of
    :func:`throughput_series`), bits per second in a
    *throughput* series (everything else).  Time-weighted means over a time
    span weight each interval's value by the length of its overlap with the
    span; uncovered time is excluded from both numerator and denominator.

Point samples
    Queue lengths from the link emulator are ``(t, packets)`` point samples;
    the value of a sample holds from its time until the next sample (a step
    function), see :func:`queue_stats`.  RTT / one-way-delay samples are plain
    values in seconds, summarised with :func:`percentile`.

Units: time in seconds, throughput and link rates in bits per second, queue
lengths in packets, sizes in bytes.

Percentiles
    All percentiles here (:func:`percentile`, :func:`weighted_percentile`, the
    p95 of :func:`queue_stats`) use the *nearest-rank* (inverse-CDF)
    definition: the q-th percentile is the smallest observed value ``v`` such
    that at least q % of the (time-)weight is on values ``<= v``.  It always
    returns an observed value ("95 % of packets saw a delay of at most p95"),
    and the time-weighted queue p95 of equally spaced samples equals the
    unweighted percentile of the sample values.

Invalid input (negative rates or lengths, NaN/inf, mismatched lengths,
unsorted or overlapping intervals, empty input where a value is required)
raises :class:`ValueError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "Interval",
    "QueueStats",
    "throughput_series",
    "window_mean",
    "second_half_mean",
    "jain_index",
    "inter_protocol_ratio",
    "inter_protocol_ratios",
    "utilisation",
    "weighted_percentile",
    "percentile",
    "queue_stats",
    "arrival_view",
    "retransmissions",
    "loss_rate",
    "convergence_time",
]

Interval = tuple[float, float, float]
"""``(t0_seconds, t1_seconds, value)``; see the module docstring."""


class QueueStats(NamedTuple):
    """Result of :func:`queue_stats`: both fields in packets."""

    mean: float
    p95: float


class ArrivalView(NamedTuple):
    """Result of :func:`arrival_view`: what the admitted packets met."""

    ahead: float    # packets waiting ahead of each, mean
    wait_s: float   # seconds from its arrival to the start of its serialization, mean


# --------------------------------------------------------------------------
# validation helpers


def _finite(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} must be a real number, got {x!r}")
    xf = float(x)
    if not math.isfinite(xf):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return xf


def _nonneg(x: object, what: str) -> float:
    xf = _finite(x, what)
    if xf < 0:
        raise ValueError(f"{what} must be >= 0, got {x!r}")
    return xf


def _series(series: Iterable[Sequence[float]], what: str = "series") -> list[Interval]:
    """Validate an interval series (see module docstring) and return it as floats."""
    out: list[Interval] = []
    prev_end = -math.inf
    for i, item in enumerate(series):
        if len(item) != 3:
            raise ValueError(f"{what}[{i}] must be (t0, t1, value), got {item!r}")
        t0 = _finite(item[0], f"{what}[{i}].t0")
        t1 = _finite(item[1], f"{what}[{i}].t1")
        v = _nonneg(item[2], f"{what}[{i}].value")
        if not t1 > t0:
            raise ValueError(f"{what}[{i}]: need t0 < t1, got {t0} .. {t1}")
        if t0 < prev_end:
            raise ValueError(
                f"{what}[{i}] starts at {t0} before the previous interval ends ({prev_end}); "
                "intervals must be sorted and non-overlapping"
            )
        prev_end = t1
        out.append((t0, t1, v))
    return out


def _overlap_mean(series: list[Interval], a: float, b: float) -> float | None:
    """Time-weighted mean of a validated series over [a, b]; None if nothing overlaps."""
    num: list[float] = []
    den: list[float] = []
    for t0, t1, v in series:
        lo, hi = max(t0, a), min(t1, b)
        if hi > lo:
            num.append(v * (hi - lo))
            den.append(hi - lo)
    total = math.fsum(den)
    if total <= 0:
        return None
    return math.fsum(num) / total


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


# --------------------------------------------------------------------------
# throughput


def throughput_series(records: Iterable[Sequence[float]]) -> list[Interval]:
    """Per-interval throughput from bytes-per-interval records (docs/DESIGN.md §6).

    ``records`` is a byte-count interval series ``[(t0, t1, bytes), ...]``
    (seconds, seconds, bytes), e.g. iperf3 ``-J`` ``intervals[].sum``
    ``(start, end, bytes)``.  Returns the throughput series
    ``[(t0, t1, 8 * bytes / (t1 - t0)), ...]`` in bits per second, same
    intervals.  Raises ValueError on negative byte counts, ``t1 <= t0`` or
    unsorted/overlapping intervals.
    """
    return [(t0, t1, 8.0 * b / (t1 - t0)) for t0, t1, b in _series(records, "records")]


def window_mean(series: Iterable[Sequence[float]], t0: float, t1: float) -> float:
    """Time-weighted mean throughput of ``series`` over ``[t0, t1]`` (docs/DESIGN.md §6).

    ``series`` is a throughput interval series ``[(t0, t1, bps), ...]``.  Each
    interval's value is weighted by the length (seconds) of its overlap with
    ``[t0, t1]``; time not covered by any interval is excluded, so the result
    is the mean rate (bits/s) over the covered part of the window.  Raises
    ValueError if ``t1 <= t0`` or no interval overlaps the window.
    """
    a = _finite(t0, "t0")
    b = _finite(t1, "t1")
    if not b > a:
        raise ValueError(f"need t0 < t1, got {t0} .. {t1}")
    m = _overlap_mean(_series(series), a, b)
    if m is None:
        raise ValueError(f"no interval overlaps [{a}, {b}]")
    return m


def second_half_mean(series: Iterable[Sequence[float]], t_start: float, t_end: float) -> float:
    """Mean throughput over the second half of a flow's active period (docs/DESIGN.md §6).

    The flow is active over ``[t_start, t_end]`` (seconds).  The result is the
    time-weighted mean (bits/s) of the throughput interval series ``series``
    over ``[(t_start + t_end) / 2, t_end]``, i.e. :func:`window_mean` over the
    second half; the first half is discarded as slow start / convergence.
    Intervals straddling the midpoint contribute only their overlapping part.
    Raises ValueError if ``t_end <= t_start`` or no data covers the second half.
    """
    a = _finite(t_start, "t_start")
    b = _finite(t_end, "t_end")
    if not b > a:
        raise ValueError(f"need t_start < t_end, got {t_start} .. {t_end}")
    return window_mean(series, a + (b - a) / 2.0, b)


# --------------------------------------------------------------------------
# fairness


def jain_index(xs: Iterable[float]) -> float:
    """Jain's fairness index J = (sum x)^2 / (n * sum x^2) (docs/DESIGN.md §6).

    ``xs`` are per-flow allocations (normally throughputs in bits/s; J is
    dimensionless and scale-invariant).  For n values ``1/n <= J <= 1``;
    J = 1 when all are equal, J = k/n when k flows share equally and the rest
    get nothing.  Computed in exact rational arithmetic, so the bounds hold
    exactly and huge or tiny values neither overflow nor underflow.

    Raises ValueError for empty input, negative or non-finite values, and for
    all-zero input.  All zeros means nobody got anything: the formula is 0/0,
    and because J is scale-invariant its limit at the origin does not exist
    (allocations arbitrarily close to all-zero take every value in
    [1/n, 1]).  Returning 1.0 ("everyone got the same: nothing") would make a
    stalled link look perfectly fair, e.g. convergence would be declared
    during a total outage, so the caller has to decide what a stall means.
    """
    vals = [_nonneg(x, f"xs[{i}]") for i, x in enumerate(xs)]
    if not vals:
        raise ValueError("jain_index of empty input")
    fr = [Fraction(v) for v in vals]
    s = sum(fr, Fraction(0))
    if s == 0:
        raise ValueError("jain_index undefined when every allocation is zero")
    sq = sum((f * f for f in fr), Fraction(0))
    return float(s * s / (len(fr) * sq))


def inter_protocol_ratio(
    throughputs_by_variant: Mapping[str, Sequence[float]], a: str, b: str
) -> float:
    """Inter-protocol throughput ratio (docs/DESIGN.md §6; seed 000, Table 3).

    ``throughputs_by_variant`` maps a variant name (e.g. ``"vegas"``,
    ``"reno"``) to the per-flow throughputs (bits/s) of the flows running that
    variant.  Returns ``mean(flows of a) / mean(flows of b)`` (dimensionless);
    1 means the two variants share equally, > 1 favours ``a``.

    If the mean of ``b`` is zero the result is ``math.inf`` when the mean of
    ``a`` is positive (b starved) and ``math.nan`` when both are zero (no
    comparison possible).  Raises ValueError if either variant is missing or
    has no flows, or a throughput is negative or non-finite.
    """
    means = {}
    for name in (a, b):
        if name not in throughputs_by_variant:
            raise ValueError(f"variant {name!r} not in throughputs_by_variant")
        flows = [_nonneg(x, f"{name}[{i}]") for i, x in enumerate(throughputs_by_variant[name])]
        if not flows:
            raise ValueError(f"variant {name!r} has no flows")
        means[name] = _mean(flows)
    ma, mb = means[a], means[b]
    if mb == 0:
        return math.inf if ma > 0 else math.nan
    return ma / mb


def inter_protocol_ratios(flows: list[dict], key: str, digits: int | None = 3) -> dict[str, float]:
    """Mean share of each cc over the mean share of each loss-based cc; rounded for a
    summary, whole for a report (whose medians must agree with the paper rows')."""
    by_cc: dict[str, list[float]] = {}
    for fl in flows:
        by_cc.setdefault(fl["cc"], []).append(fl[key])
    loss_based = [cc for cc in by_cc if cc in ("reno", "cubic", "bbr")]
    ratios = {f"{a}/{b}": inter_protocol_ratio(by_cc, a, b)
              for a in by_cc for b in loss_based if a != b}
    return ratios if digits is None else {k: round(v, digits) for k, v in ratios.items()}


def utilisation(total_throughput_bps: float, link_rate_bps: float) -> float:
    """Link utilisation = total throughput / link rate (docs/DESIGN.md §6).

    Both arguments in bits per second, result dimensionless.  Not clamped:
    a value slightly above 1 indicates goodput/link-rate accounting or timing
    error and is reported as measured.  Raises ValueError for a negative
    throughput or a link rate <= 0.
    """
    tot = _nonneg(total_throughput_bps, "total_throughput_bps")
    rate = _finite(link_rate_bps, "link_rate_bps")
    if rate <= 0:
        raise ValueError(f"link_rate_bps must be > 0, got {link_rate_bps!r}")
    return tot / rate


# --------------------------------------------------------------------------
# percentiles, queue and delay


def _exact_q(q: object) -> Fraction:
    qf = _finite(q, "q")
    if not 0 <= qf <= 100:
        raise ValueError(f"q must be in [0, 100], got {q!r}")
    # A float q is taken as the decimal it prints as (99.9 means 999/10), so the
    # rank is exact and e.g. q=95, n=20 gives rank 19, not 19.000000000000004.
    return Fraction(q) if isinstance(q, int) else Fraction(repr(qf))


def weighted_percentile(values: Sequence[float], weights: Sequence[float], q: float) -> float:
    """Nearest-rank q-th percentile of a weighted distribution (docs/DESIGN.md §6).

    Returns the smallest value ``v`` among those with positive weight such
    that the total weight on values ``<= v`` is at least ``q/100`` of the
    total weight (the lower inverse CDF).  ``q`` in [0, 100]; q = 0 gives the
    smallest positively weighted value, q = 100 the largest.  Comparisons are
    exact (rational arithmetic), so ties at a rank boundary resolve by the
    definition, not by rounding.  Units of the result are those of
    ``values``.  Raises ValueError for mismatched lengths, non-finite values,
    negative or non-finite weights, or zero total weight.
    """
    if len(values) != len(weights):
        raise ValueError(f"values and weights differ in length: {len(values)} != {len(weights)}")
    qq = _exact_q(q) / 100
    pairs = []
    for i, (v, w) in enumerate(zip(values, weights)):
        vf = _finite(v, f"values[{i}]")
        wf = _nonneg(w, f"weights[{i}]")
        if wf > 0:
            pairs.append((vf, Fraction(wf)))
    if not pairs:
        raise ValueError("weighted_percentile needs positive total weight")
    pairs.sort(key=lambda p: p[0])
    total = sum((w for _, w in pairs), Fraction(0))
    target = qq * total
    cum = Fraction(0)
    for v, w in pairs:
        cum += w
        if cum >= target:
            return v
    return pairs[-1][0]  # unreachable: cum == total >= target at the end


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank q-th percentile of ``values`` (docs/DESIGN.md §6).

    With the n values sorted ascending, returns ``sorted[ceil(q/100 * n) - 1]``
    (``sorted[0]`` for q = 0): the smallest observed value such that at least
    q % of the values are ``<= it``.  Used for delay p95, one-way and RTT, in
    seconds (the result has the units of ``values``).  This is
    :func:`weighted_percentile` with all weights 1.  Raises ValueError for
    empty input, non-finite values or q outside [0, 100].
    """
    vals = [_finite(v, f"values[{i}]") for i, v in enumerate(values)]
    if not vals:
        raise ValueError("percentile of empty input")
    qq = _exact_q(q)
    vals.sort()
    rank = math.ceil(qq * len(vals) / 100)
    return vals[max(rank, 1) - 1]


def queue_stats(
    samples: Sequence[Sequence[float]], t_end: float | None = None
) -> QueueStats:
    """Time-weighted mean and p95 of a sampled queue length (docs/DESIGN.md §6).

    ``samples`` are ``(t_seconds, packets)`` point samples in non-decreasing
    time order, possibly irregularly spaced.  The queue length is a step
    function: each sample's value holds from its time until the next sample's
    time.  The last sample holds until ``t_end`` if given (must be >= the
    last sample time); without ``t_end`` the last sample only closes the
    series and gets no weight.  Samples at equal times get zero weight
    except the last of them.

    ``mean`` = integral of the queue length / observed duration (packets).
    ``p95`` = nearest-rank 95th percentile of the time-weighted distribution
    (:func:`weighted_percentile` with each value weighted by how long it
    held): the smallest queue length the queue was at or below for >= 95 %
    of the time (packets).  Durations are differences of the float
    timestamps and are compared exactly, so when the 95 % point falls
    exactly on a step boundary (e.g. 19 of 20 nominally equal steps)
    timestamps such as ``i * 0.001`` that are not exact in binary can tip the
    result to the neighbouring value.

    Raises ValueError for negative lengths, non-finite values, decreasing
    times, ``t_end`` before the last sample, or zero observed duration (e.g.
    a single sample without ``t_end``).
    """
    ts: list[float] = []
    qs: list[float] = []
    for i, s in enumerate(samples):
        if len(s) != 2:
            raise ValueError(f"samples[{i}] must be (t, packets), got {s!r}")
        t = _finite(s[0], f"samples[{i}].t")
        if ts and t < ts[-1]:
            raise ValueError(f"samples[{i}].t = {t} is before the previous sample ({ts[-1]})")
        ts.append(t)
        qs.append(_nonneg(s[1], f"samples[{i}].packets"))
    if not ts:
        raise ValueError("queue_stats of empty input")
    if t_end is not None:
        te = _finite(t_end, "t_end")
        if te < ts[-1]:
            raise ValueError(f"t_end = {te} is before the last sample ({ts[-1]})")
        ends = ts[1:] + [te]
    else:
        ends = ts[1:] + [ts[-1]]
    durs = [e - t for t, e in zip(ts, ends)]
    total = math.fsum(durs)
    if not total > 0:
        raise ValueError("queue_stats needs a positive observed duration")
    mean = math.fsum(q * d for q, d in zip(qs, durs)) / total
    return QueueStats(mean=mean, p95=weighted_percentile(qs, durs, 95))


def arrival_view(events: Sequence[Sequence]) -> ArrivalView | None:
    """The queue as the packets arriving at a FIFO met it, where :func:`queue_stats`
    gives it as time saw it (docs/DESIGN.md §6.6). A delay-based sender measures the
    first: each RTT sample holds one packet's wait, and packets that arrive in bursts
    meet a deeper queue than the time average holds.

    ``events`` are ``(t_seconds, waiting, kind)`` in time order as linkemu logs them:
    ``waiting`` counts the packets queued after the event, not the one in
    serialization; ``enq`` admits a packet, ``deq`` starts one's serialization (first
    in, first out), other kinds (``drop``, ``loss``) move no admitted packet in or out
    of the waiting line. ``ahead`` is the mean over admitted packets of those waiting
    when each came; ``wait_s`` the mean over those that began serialization of the time
    from its ``enq`` to its ``deq``. None when no packet was admitted.
    """
    arrivals: list[float] = []
    ahead: list[float] = []
    waits: list[float] = []
    served = 0
    for i, e in enumerate(events):
        if len(e) != 3:
            raise ValueError(f"events[{i}] must be (t, waiting, kind), got {e!r}")
        t, n, kind = _finite(e[0], f"events[{i}].t"), _nonneg(e[1], f"events[{i}].waiting"), e[2]
        if kind == "enq":
            if n < 1:
                raise ValueError(f"events[{i}]: an enq leaves at least 1 waiting, got {n}")
            arrivals.append(t)
            ahead.append(n - 1)
        elif kind == "deq":
            if served >= len(arrivals):
                raise ValueError(f"events[{i}]: a deq with no packet admitted before it")
            waits.append(t - arrivals[served])
            served += 1
    if not ahead:
        return None
    return ArrivalView(ahead=math.fsum(ahead) / len(ahead),
                       wait_s=math.fsum(waits) / len(waits) if waits else 0.0)


# --------------------------------------------------------------------------
# loss


def retransmissions(per_interval: Iterable[int]) -> int:
    """Total retransmitted segments (docs/DESIGN.md §6).

    ``per_interval`` are the sender's per-interval retransmission counts
    (iperf3 ``-J`` ``intervals[].sum.retransmits``, segments).  Returns their
    sum.  Raises ValueError for negative or non-integer counts.
    """
    total = 0
    for i, c in enumerate(per_interval):
        if isinstance(c, bool) or not isinstance(c, int):
            raise ValueError(f"per_interval[{i}] must be an int, got {c!r}")
        if c < 0:
            raise ValueError(f"per_interval[{i}] must be >= 0, got {c}")
        total += c
    return total


def loss_rate(lost: float, sent: float) -> float:
    """Loss (or retransmission) rate = lost / sent (docs/DESIGN.md §6).

    ``lost`` and ``sent`` are counts in the same unit (packets or segments;
    for TCP, ``lost`` is usually the retransmission count).  Result in
    [0, 1].  Raises ValueError if either is negative, ``lost > sent``, or
    ``sent == 0`` (nothing sent: the rate is undefined, not 0).
    """
    lo = _nonneg(lost, "lost")
    se = _nonneg(sent, "sent")
    if se == 0:
        raise ValueError("loss_rate undefined when sent == 0")
    if lo > se:
        raise ValueError(f"lost ({lost}) exceeds sent ({sent})")
    return lo / se


# --------------------------------------------------------------------------
# convergence


def convergence_time(
    per_flow_series: Mapping[object, Iterable[Sequence[float]]] | Iterable[Iterable[Sequence[float]]],
    join_time: float,
    window: float = 1.0,
    threshold: float = 0.95,
) -> float | None:
    """Time for flows to converge to a fair share after a join (docs/DESIGN.md §6).

    ``per_flow_series`` holds one throughput interval series (bits/s) per
    flow, as a mapping (flow id -> series) or a sequence of series.  Time
    after ``join_time`` (seconds) is cut into consecutive windows
    ``[join_time + k*window, join_time + (k+1)*window]``, k = 0, 1, ...; only
    complete windows are considered, i.e. up to the latest interval end of
    any flow.  In each window, a flow is *active* if its intervals overlap the
    window for a positive time; its rate is its :func:`window_mean` there.
    Jain's index (:func:`jain_index`) is computed over the active flows.

    Returns ``window_end - join_time`` for the first window whose index is
    ``>= threshold``, i.e. the earliest moment an observer averaging over
    ``window`` seconds could declare convergence; the result is therefore a
    multiple of ``window`` and at least ``window``.  It is the *first*
    window at or above the threshold, not the start of a run that stays
    above it: "stays" needs an arbitrary hold horizon and is truncated by the
    end of the run; a later relapse shows up in the J time series or the
    second-half Jain index instead.  Windows with fewer than two active
    flows (fairness between flows is not yet measurable, and J of one flow
    is trivially 1) and windows where every active flow has zero rate (J
    undefined; a stall is not convergence) never count as converged.
    Returns None if no window qualifies.

    Raises ValueError for ``window <= 0``, ``threshold`` outside (0, 1],
    non-finite ``join_time`` or invalid series.
    """
    jt = _finite(join_time, "join_time")
    w = _finite(window, "window")
    if w <= 0:
        raise ValueError(f"window must be > 0, got {window!r}")
    th = _finite(threshold, "threshold")
    if not 0 < th <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    flows_in = per_flow_series.values() if isinstance(per_flow_series, Mapping) else per_flow_series
    flows = [_series(s, f"flow[{i}]") for i, s in enumerate(flows_in)]
    ends = [s[-1][1] for s in flows if s]
    if not ends:
        return None
    horizon = max(ends)
    slack = 1e-9 * w  # absorb rounding in join_time + k*window
    k = 0
    while True:
        a = jt + k * w
        b = jt + (k + 1) * w
        if b > horizon + slack:
            return None
        rates = [m for m in (_overlap_mean(s, a, b) for s in flows) if m is not None]
        if len(rates) >= 2 and any(r > 0 for r in rates) and jain_index(rates) >= th:
            return (k + 1) * w
        k += 1


CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")     # enum tcp_ca_state, by value
CA_LOSS = 4


def ca_state_times(changes: Sequence[tuple[float, int]], t0: float, t1: float,
                   initial: int = 0) -> dict:
    """Seconds in each congestion state over [t0, t1], from a socket's state changes
    ((time, state), as tcp:tcp_cong_state_set reports them; the socket is in `initial`
    before the first), and the entries into Loss in that window: its retransmission
    time-outs (docs/DESIGN.md §6.6)."""
    if t1 < t0:
        raise ValueError(f"window ends before it starts: {t0} > {t1}")
    out = {name: 0.0 for name in CA_STATES}
    timeouts, state, since = 0, initial, -math.inf
    # by time only, stable: two changes in one microsecond keep the order they came in
    for t, new in sorted(changes, key=lambda c: c[0]) + [(math.inf, None)]:
        # `state` held over [since, t): count its overlap with the window
        out[CA_STATES[state]] += max(0.0, min(t, t1) - max(since, t0))
        if new is None:
            break
        if not 0 <= new < len(CA_STATES):
            raise ValueError(f"unknown congestion state {new}")
        if t0 <= t <= t1 and new == CA_LOSS and state != CA_LOSS:
            timeouts += 1
        state, since = new, t
    return {"seconds": {k: round(v, 6) for k, v in out.items()}, "timeouts": timeouts}


# A window grown from ACKs stays near what its path holds: congestion avoidance grows it
# only while it is full, and slow start at most doubles what it carried. Four times the
# path's capacity leaves that doubling and the hosts' own queues room; the windows the
# defect of docs/DESIGN.md §10.2 leaves were 157 times and more above it.
WINDOW_CEILING_FACTOR = 4
PACKET_BYTES = 1500


def window_ceiling_bytes(rate_bps: float, rtt_s: float, buffer_pkts: int) -> int:
    """The largest window a controller can have grown on a path whose fastest link runs
    at rate_bps, whose links' delays add up to rtt_s and whose drop-tail buffers hold
    buffer_pkts in all: four times its bytes in flight and in queues."""
    held = _nonneg(rate_bps, "rate_bps") * _nonneg(rtt_s, "rtt_s") / 8
    queued = _nonneg(buffer_pkts, "buffer_pkts") * PACKET_BYTES
    return int(WINDOW_CEILING_FACTOR * (held + queued))
