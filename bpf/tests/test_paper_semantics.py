"""semantics=paper: the decisions of the papers' ns-2 agent (docs/DESIGN.md §3.10).

ns-2.35 tcp/tcp-vegas.cc, recv(): rtt = v_sumRTT_ / v_cntRTT_ (the round's
average); expect = (t_seqno_ - last_ack_)/baseRTT, the packets outstanding after
the ACK plus one (an ns-2 ACK names the last packet received); actual =
rttLen/rtt, the packets sent in the round; delta = int((expect - actual) *
baseRTT + 0.5). Th = actual, compared at half a packet per round. The table's
cases are the agent's steady state under per-packet ACKs (a window of 10 sent,
9 outstanding after the ACK), base 1000 us:

  rtt 1200 -> backlog 1.667 -> 2     rtt 1300 -> 2.308 -> 2
  rtt 1450 -> 3.103 -> 3             rtt 2000 -> 5.0   -> 5

Th vs Th': '>' and '<' are one packet per RTT more or less, '~' is the same
count 20 us slower (0.15 packet per round): jitter.
"""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from vkcore import (Adapt, RULE, adaptive, cmp_throughput_paper, diff_agent, params,
                    round_rtt, rtt_sample_sum, sample, vegas)

BASE = 1000
INC, INC_A, DEC, DEC_A, HOLD = (RULE[r] for r in ("INC", "INC_ADAPT", "DEC", "DEC_ADAPT", "HOLD"))


def run(variant, semantics, alpha, beta, rtt, th, cwnd=10):
    prev_pkts, prev_rtt = {">": (cwnd - 1, rtt), "<": (cwnd + 1, rtt), "~": (cwnd, rtt + 20)}[th]
    a = Adapt(alpha=alpha, beta=beta, prev_pkts=prev_pkts, prev_rtt=prev_rtt)
    p = params(variant, alpha=alpha, beta=beta, semantics=semantics)
    d = adaptive(p, sample(cwnd=cwnd, ssthresh=2, base_rtt=BASE, rtt=rtt), a,
                 pipe=(variant == "PIPE"))
    return (d.cwnd - cwnd, a.alpha - alpha, d.rule, d.diff, d.th_cmp)


# (name, alpha, beta, rtt, Th vs Th', Vegas-A paper, PIPE paper, both exact)
# each expected = (d cwnd, d alpha, rule); exact mode is the same for both variants here
TABLE = [
    ("between, Th jitter", 1, 4, 1300, "~", (0, 0, HOLD), (0, 0, HOLD), (1, 1, INC_A)),
    ("between, Th a packet higher", 1, 4, 1300, ">", (1, 1, INC_A), (1, 1, INC_A), (1, 1, INC_A)),
    ("between, Th a packet lower", 1, 4, 1300, "<", (0, 0, HOLD), (0, 0, HOLD), (0, 0, HOLD)),
    ("diff rounds to alpha, Th higher", 2, 5, 1300, ">", (0, 0, HOLD), (1, 0, INC), (1, 1, INC_A)),
    ("diff rounds to alpha, Th lower", 2, 5, 1300, "<", (0, 0, HOLD), (-1, -1, DEC_A),
     (0, 0, HOLD)),
    ("diff rounds to beta", 1, 3, 1450, ">", (0, 0, HOLD), (-1, 0, DEC_A), (-1, 0, DEC_A)),
    ("below alpha>1, Th jitter", 3, 6, 1200, "~", (0, 0, HOLD), (-1, -1, DEC_A), (1, 0, INC)),
    ("below alpha>1, Th higher", 3, 6, 1200, ">", (1, 0, INC), (1, 0, INC), (1, 0, INC)),
    ("above beta", 2, 4, 2000, "~", (-1, -1, DEC_A), (-1, -1, DEC_A), (-1, -1, DEC_A)),
]
IDS = [t[0] for t in TABLE]


@pytest.mark.parametrize("name,alpha,beta,rtt,th,vegas_a,pipe,exact", TABLE, ids=IDS)
def test_row(name, alpha, beta, rtt, th, vegas_a, pipe, exact):
    assert run("VEGAS_A", "paper", alpha, beta, rtt, th)[:3] == vegas_a
    assert run("PIPE", "paper", alpha, beta, rtt, th)[:3] == pipe
    assert run("VEGAS_A", "exact", alpha, beta, rtt, th)[:3] == exact
    assert run("PIPE", "exact", alpha, beta, rtt, th)[:3] == exact


def test_variants_differ_in_paper_mode_exactly_on_ties():
    """The cases where PIPE departs from Vegas-A all have diff == alpha,
    diff == beta or Th ~ Th' (th_cmp 0), and in exact mode none of them differ."""
    differ = []
    for t in TABLE:
        va, pi = run("VEGAS_A", "paper", *t[1:5]), run("PIPE", "paper", *t[1:5])
        if va[:3] != pi[:3]:
            diff, th_cmp = va[3], va[4]
            assert diff in (t[1], t[2]) or th_cmp == 0, t[0]
            differ.append(t[0])
        assert run("VEGAS_A", "exact", *t[1:5])[:3] == run("PIPE", "exact", *t[1:5])[:3]
    assert differ == ["diff rounds to alpha, Th higher", "diff rounds to alpha, Th lower",
                      "diff rounds to beta", "below alpha>1, Th jitter"]


def moves_under_jitter(semantics: str) -> list[str]:
    """20 rounds at cwnd 10 on a standing queue of ~2.3 packets, the RTT
    wobbling by 20 us: the rules that changed the window or the thresholds."""
    a = Adapt(alpha=1, beta=4, prev_pkts=10, prev_rtt=1320)
    p = params("VEGAS_A", alpha=1, beta=4, semantics=semantics)
    moves = []
    for i in range(20):
        d = adaptive(p, sample(cwnd=10, ssthresh=2, base_rtt=BASE, rtt=1300 + 20 * (i % 2)), a,
                     False)
        if d.rule != HOLD:
            moves.append(d.rule)
    return moves


def test_jitter_alone_moves_nothing_in_paper_mode():
    """Issue 11: with exact fractions Th > Th' is decided by microsecond jitter,
    so alpha and cwnd move on noise. The same rounds in paper mode hold."""
    assert len(moves_under_jitter("exact")) >= 8
    assert moves_under_jitter("paper") == []


@pytest.mark.parametrize("out,sent,rtt,base,want", [
    (9, 10, 1000, 1000, 0), (9, 10, 1250, 1000, 2), (9, 10, 1300, 1000, 2),
    (9, 10, 1450, 1000, 3),
    (4, 5, 2000, 1000, 3),      # 2.5 rounds up, as int(x + 0.5)
    (2, 3, 2000, 1000, 2),      # 1.5 -> 2
    (3, 4, 2000, 1000, 2),      # 2.0 exactly
    (9, 10, 900, 1000, 0),      # faster than baseRTT: 10 - 11.11 + 0.5 = -0.61 -> 0
    # rerouting after the switch (docs/DESIGN.md §3.10): cwnd 4, rtt 281 ms,
    # baseRTT 78 ms, 4 sent in the round
    (3, 4, 281000, 78000, 3),   # per-packet ACK (ns-2): 4 - 1.11 = 2.89 -> 3
    (2, 4, 281000, 78000, 2),   # a delayed ACK of two (Linux): 3 - 1.11 = 1.89 -> 2
    (0, 4, 281000, 78000, 0),   # 1 - 1.11 + 0.5 = 0.39 -> 0
    (0, 10, 1000, 1000, -8),    # 1 - 10 + 0.5 = -8.5: int() truncates toward zero, -8
])
def test_diff_agent_rows(out, sent, rtt, base, want):
    assert diff_agent(out, sent, rtt, base) == want


@settings(max_examples=2000, derandomize=True)
@given(st.integers(0, 100_000), st.integers(0, 100_000), st.integers(1, 10_000_000),
       st.integers(1, 10_000_000))
def test_diff_agent_is_the_agents_arithmetic(out, sent, rtt, base):
    """int() of a Fraction truncates toward zero, as C's int() does (in exact
    arithmetic); the agent's t_seqno_ - last_ack_ is the packets outstanding
    plus one."""
    expect, actual = Fraction(out + 1, base), Fraction(sent, rtt)
    assert diff_agent(out, sent, rtt, base) == int((expect - actual) * base + Fraction(1, 2))


def test_round_rtt_is_the_average_in_paper_mode():
    b, m, s, c = 10_000, 10_000, 0, 0
    for rtt_us in (1199, 1299, 1499):          # vrtt = rtt_us + 1
        b, m, s, c = rtt_sample_sum(b, m, s, c, rtt_us)
    assert (b, m, s, c) == (1200, 1200, 4000, 3)
    assert round_rtt("exact", m, s, c) == 1200
    assert round_rtt("paper", m, s, c) == 1333
    assert round_rtt("paper", m, 0, 0) == m          # no samples: nothing to average


@pytest.mark.parametrize("pkts,rtt,pp,pr,want", [
    (10, 1300, 10, 1320, 0),     # jitter: 10 - 10*1300/1320 = 0.15 packet per round
    (10, 1300, 9, 1300, 1),      # one packet more in the same time
    (10, 1300, 11, 1300, -1),
    (10, 1000, 10, 1049, 0),     # 0.467: inside half a packet
    (10, 1000, 10, 1053, 1),     # 0.503: outside
    (5, 281000, 4, 281000, 1),   # rerouting's window growing on a long RTT: a whole
                                 # packet per round (0.28 per baseRTT of 78 ms)
    (11, 1100, 10, 1000, 0),     # saturated link: a packet more, a packet's time longer
    (10, 1300, 0, 0, 1),         # no Th' yet counts as Th' = 0
])
def test_throughput_compared_at_half_a_packet_per_round(pkts, rtt, pp, pr, want):
    assert cmp_throughput_paper(pkts, rtt, pp, pr) == want


@pytest.mark.parametrize("pkts,rtt,pp,pr,tie,want", [
    (10, 1300, 10, 1320, 0, 1),        # th_tie=0: any rise counts, jitter too (the agent's doubles)
    (10, 1320, 10, 1300, 0, -1),
    (10, 1300, 10, 1300, 0, 0),        # only an exact tie is a tie
    (10, 1300, 10, 1320, 100, 1),      # 0.15 packet: outside a 0.1 band
    (10, 1300, 10, 1320, 200, 0),      # inside a 0.2 band
    (10, 1000, 9, 1000, 1000, 1),      # a whole packet is outside a band of one
    (10, 1000, 10, 1001, 1000, 0),
])
def test_the_tie_band_is_a_parameter(pkts, rtt, pp, pr, tie, want):
    assert cmp_throughput_paper(pkts, rtt, pp, pr, tie) == want


def test_adaptive_paper_mode_counts_what_the_agent_counts():
    """Rerouting after the switch: cwnd 5, rtt 281 ms, baseRTT 78 ms, alpha 1,
    beta 3, the window grown by one at the same RTT (Th up a packet per round).
    The agent's counts after a per-packet ACK (4 out, so t_seqno_ - last_ack_
    = 5; 5 sent) give 3.6 -> 4 > beta, as cwnd for both does: it backs off.
    After a delayed ACK of three (2 out) they give 1.6 -> 2, inside (alpha,
    beta), and Th rising grows the window and the thresholds."""
    a = Adapt(alpha=1, beta=3, prev_pkts=4, prev_rtt=281000)
    p = params("VEGAS_A", alpha=1, beta=3, semantics="paper")
    s = sample(cwnd=5, ssthresh=2, base_rtt=78000, rtt=281000, outstanding=4, sent=5)
    d = adaptive(p, s, a, pipe=False)
    assert (d.diff, d.th_cmp, d.rule, d.cwnd) == (4, 1, RULE["DEC_ADAPT"], 4)
    assert (a.prev_pkts, a.prev_rtt) == (5, 281000)      # Th' is the count sent
    a = Adapt(alpha=1, beta=3, prev_pkts=4, prev_rtt=281000)
    s = sample(cwnd=5, ssthresh=2, base_rtt=78000, rtt=281000, outstanding=2, sent=5)
    d = adaptive(p, s, a, pipe=False)
    assert (d.diff, d.th_cmp, d.rule, d.cwnd, a.alpha) == (2, 1, INC_A, 6, 2)
    a = Adapt(alpha=1, beta=3, prev_pkts=4, prev_rtt=281000)
    d = adaptive(params("VEGAS_A", alpha=1, beta=3, semantics="exact"), s, a, pipe=False)
    assert (d.rule, a.prev_pkts) == (RULE["DEC_ADAPT"], 5)   # exact: cwnd 5, 3.6 > beta


def test_vegas_paper_mode_uses_the_agents_rounded_backlog():
    """ns-2's Vegas: delta from its counts, rounded; Linux: floor(cwnd*(rtt-base)/base)."""
    s = sample(cwnd=10, ssthresh=2, base_rtt=BASE, rtt=1450)
    d = vegas(params("VEGAS", alpha=1, beta=3, semantics="paper"), s)
    assert (d.diff, d.rule) == (3, HOLD)              # 3.10 -> 3: not above beta
    d = vegas(params("VEGAS", alpha=1, beta=3, semantics="exact"), s)
    assert (d.diff, d.rule) == (4, DEC)               # 10*450/1000 = 4.5 -> 4 > 3
    s = sample(cwnd=10, ssthresh=2, base_rtt=BASE, rtt=1450, outstanding=7, sent=10)
    d = vegas(params("VEGAS", alpha=1, beta=3, semantics="paper"), s)
    assert (d.diff, d.rule) == (1, HOLD)              # 7+1 - 6.90 = 1.10 -> 1: at alpha
    d = vegas(params("VEGAS", alpha=1, beta=3, semantics="exact"), s)
    assert (d.diff, d.rule) == (4, DEC)               # exact ignores the counts
