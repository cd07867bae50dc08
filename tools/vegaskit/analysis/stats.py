"""Small-sample statistics for comparing two arms of repeated runs.

A run is the unit: per-ACK samples within one run are strongly autocorrelated,
so tests are done on one number per run (docs/DESIGN.md §6). With 5 to 10 runs
an arm, exact methods are both feasible and honest:

- permutation_p: the exact two-sided permutation test of the difference of
  means (every relabelling of the pooled runs; C(10, 5) = 252 for 5 + 5);
- holm: the Holm-Bonferroni step-down adjustment across the metrics compared;
- median_interval: the distribution-free confidence interval of a median from
  order statistics (binomial), with the coverage it actually reaches;
- ks_distance: the two-sample Kolmogorov-Smirnov statistic D, as a description
  of how far two pooled distributions are apart (no p-value: the samples are
  not independent).
"""
from __future__ import annotations

import bisect
import itertools
import math
import statistics
from typing import Sequence


def permutation_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Exact two-sided p of |mean(a) - mean(b)| over all relabellings of a + b."""
    if not a or not b:
        raise ValueError("both samples need at least one value")
    pooled = [float(x) for x in (*a, *b)]
    n, total = len(a), sum(pooled)
    observed = abs(sum(a) / n - (total - sum(a)) / len(b))
    eps = 1e-9 * max(1.0, max(abs(x) for x in pooled))
    hits = count = 0
    for idx in itertools.combinations(range(len(pooled)), n):
        s = sum(pooled[i] for i in idx)
        d = abs(s / n - (total - s) / len(b))
        hits += d >= observed - eps
        count += 1
    return hits / count


def min_p(n_a: int, n_b: int) -> float:
    """The smallest p permutation_p can return for these sizes (two-sided)."""
    return 2 / math.comb(n_a + n_b, n_a)


def holm(ps: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    adj = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adj[i] = running
    return adj


def add_holm(rows: list[dict]) -> list[dict]:
    """Each row's "p", adjusted across the rows, as its "p_holm"; returns rows."""
    for row, adj in zip(rows, holm([r["p"] for r in rows])):
        row["p_holm"] = adj
    return rows


def median_interval(xs: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(low, high, coverage): the narrowest order-statistic interval [x(k), x(n-k+1)]
    whose coverage of the median is at least `level`, or [min, max] with the coverage
    it reaches when n is too small for `level` (n = 5: 93.75%)."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        raise ValueError("no values")
    def coverage(k: int) -> float:       # P(x(k) <= median <= x(n-k+1)), k 1-based
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= level:
        k += 1
    return s[k - 1], s[n - k], coverage(k)


def median_summary(xs: Sequence[float], level: float = 0.95) -> dict:
    """A figure as the bench and reports give it: median, interval (median_interval),
    coverage and the number of values."""
    lo, hi, cov = median_interval(xs, level)
    return {"median": statistics.median(xs), "low": lo, "high": hi, "coverage": cov, "n": len(xs)}


def ks_distance(a: Sequence[float], b: Sequence[float]) -> float:
    """sup |F_a(x) - F_b(x)| over x, the empirical CDFs of a and b."""
    sa, sb = sorted(a), sorted(b)
    if not sa or not sb:
        raise ValueError("both samples need at least one value")
    d = 0.0
    for x in set(sa) | set(sb):
        fa = bisect.bisect_right(sa, x) / len(sa)
        fb = bisect.bisect_right(sb, x) / len(sb)
        d = max(d, abs(fa - fb))
    return d


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)
