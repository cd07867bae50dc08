"""Vegas-A (seed 000, IV) and PIPE (seed 002, IV): every row of the table of docs/DESIGN.md §3.6.

diff = cwnd*(rtt-base)/rtt. With base = 1000 us and cwnd = 10, choosing rtt sets
diff exactly: rtt = 10000/(10-diff), e.g. diff 2 -> 1250, 3 -> 1428.57 (not exact),
so the cases use these exact points (cwnd 10, base 1000):
  rtt 1000 -> diff 0      rtt 1111 -> 0.9991   rtt 1250 -> 2.0 exactly
  rtt 1500 -> 3.333       rtt 1667 -> 4.001    rtt 2000 -> 5.0 exactly
alpha/beta are chosen around those. Th = cwnd/rtt (semantics=exact); Th' from prev_pkts/prev_rtt.
"""
import pytest

from vkcore import Adapt, RULE, adaptive, params, sample

BASE = 1000


def run(variant, alpha, beta, rtt, th, cwnd=10):
    """One decision in congestion avoidance; th in '>', '<', '=' sets Th' relative to Th."""
    prev_rtt = rtt
    prev_pkts = {">": cwnd - 1, "<": cwnd + 1, "=": cwnd}[th]
    a = Adapt(alpha=alpha, beta=beta, prev_pkts=prev_pkts, prev_rtt=prev_rtt)
    p = params(variant, alpha=alpha, beta=beta, alpha_max=64)
    d = adaptive(p, sample(cwnd=cwnd, ssthresh=2, base_rtt=BASE, rtt=rtt), a,
                 pipe=(variant == "PIPE"))
    return (d.cwnd - cwnd, a.alpha - alpha, a.beta - beta, d.rule)


INC, INC_A, DEC_A, HOLD = RULE["INC"], RULE["INC_ADAPT"], RULE["DEC_ADAPT"], RULE["HOLD"]

# (name, alpha, beta, rtt, Th vs Th', expected Vegas-A, expected PIPE)
# expected = (d cwnd, d alpha, d beta, rule)
TABLE = [
    ("between, Th rising", 2, 5, 1500, ">", (1, 1, 1, INC_A), (1, 1, 1, INC_A)),
    ("between, Th falling", 2, 5, 1500, "<", (0, 0, 0, HOLD), (0, 0, 0, HOLD)),
    ("between, Th equal", 2, 5, 1500, "=", (0, 0, 0, HOLD), (0, 0, 0, HOLD)),
    ("below alpha>1, Th rising", 3, 6, 1250, ">", (1, 0, 0, INC), (1, 0, 0, INC)),
    ("below alpha>1, Th falling", 3, 6, 1250, "<", (-1, -1, -1, DEC_A), (-1, -1, -1, DEC_A)),
    ("below alpha>1, Th equal", 3, 6, 1250, "=", (0, 0, 0, HOLD), (-1, -1, -1, DEC_A)),
    ("below alpha==1, Th falling", 1, 3, 1000, "<", (1, 0, 0, INC), (1, 0, 0, INC)),
    ("below alpha==1, Th equal", 1, 3, 1000, "=", (1, 0, 0, INC), (1, 0, 0, INC)),
    ("above beta", 1, 3, 2000, ">", (-1, 0, 0, DEC_A), (-1, 0, 0, DEC_A)),   # alpha stays >= 1
    ("above beta, alpha>1", 2, 4, 2000, ">", (-1, -1, -1, DEC_A), (-1, -1, -1, DEC_A)),
    # boundaries: diff == alpha (2.0 at rtt 1250), diff == beta (5.0 at rtt 2000)
    ("diff == alpha, Th rising", 2, 6, 1250, ">", (0, 0, 0, HOLD), (1, 0, 0, INC)),
    ("diff == alpha, Th falling", 2, 6, 1250, "<", (0, 0, 0, HOLD), (-1, -1, -1, DEC_A)),
    ("diff == beta", 2, 5, 2000, ">", (0, 0, 0, HOLD), (-1, -1, -1, DEC_A)),
]


@pytest.mark.parametrize("name,alpha,beta,rtt,th,vegas_a,pipe", TABLE, ids=[t[0] for t in TABLE])
def test_vegas_a_row(name, alpha, beta, rtt, th, vegas_a, pipe):
    assert run("VEGAS_A", alpha, beta, rtt, th) == vegas_a


@pytest.mark.parametrize("name,alpha,beta,rtt,th,vegas_a,pipe", TABLE, ids=[t[0] for t in TABLE])
def test_pipe_row(name, alpha, beta, rtt, th, vegas_a, pipe):
    assert run("PIPE", alpha, beta, rtt, th) == pipe


def test_the_differences_are_exactly_the_boundaries_and_ties():
    """Where the compiled core's Vegas-A and PIPE decide differently: only at ties."""
    differ = [t[0] for t in TABLE if run("VEGAS_A", *t[1:5]) != run("PIPE", *t[1:5])]
    assert differ == ["below alpha>1, Th equal", "diff == alpha, Th rising",
                      "diff == alpha, Th falling", "diff == beta"]


def test_alpha_capped_at_alpha_max_and_gap_kept():
    a = Adapt(alpha=5, beta=8, prev_pkts=9, prev_rtt=1500)
    d = adaptive(params("VEGAS_A", alpha_max=5), sample(cwnd=10, ssthresh=2, rtt=1500), a, False)
    # diff 3.33 < alpha 5 -> below, alpha > 1, Th rising -> cwnd+1 only
    assert (d.rule, a.alpha, a.beta) == (INC, 5, 8)
    a = Adapt(alpha=3, beta=6, prev_pkts=9, prev_rtt=1667)
    d = adaptive(params("VEGAS_A", alpha_max=3), sample(cwnd=10, ssthresh=2, rtt=1667), a, False)
    # diff 4.001 in (3, 6), Th 10/1667 > Th' 9/1667 -> INC_ADAPT, but alpha is at
    # alpha_max: the window grows, the thresholds do not
    assert (d.rule, d.cwnd, a.alpha, a.beta) == (INC_A, 11, 3, 6)


def test_th_prime_is_updated_and_first_decision_sees_rising_throughput():
    a = Adapt(alpha=2, beta=5, prev_pkts=0, prev_rtt=0)
    d = adaptive(params("VEGAS_A"), sample(cwnd=10, ssthresh=2, rtt=1500), a, False)
    assert d.rule == INC_A                       # no Th' yet: Th > 0
    assert (a.prev_pkts, a.prev_rtt) == (10, 1500)


def test_reno_fallback_keeps_thresholds_and_measures_th():
    """A round with too few samples for a decision still measured the actual
    throughput: it becomes Th' (seed 000, IV: "at previous rtt")."""
    a = Adapt(alpha=4, beta=7, prev_pkts=8, prev_rtt=1200)
    d = adaptive(params("PIPE"), sample(cnt_rtt=2), a, True)
    assert d.rule == RULE["RENO"]
    assert (a.alpha, a.beta, a.prev_pkts, a.prev_rtt) == (4, 7, 10, 1000)
    assert (d.alpha, d.beta) == (4, 7)


def test_round_without_rtt_samples_leaves_th_prime():
    a = Adapt(alpha=4, beta=7, prev_pkts=8, prev_rtt=1200)
    d = adaptive(params("PIPE"), sample(cnt_rtt=0, rtt=0x7FFFFFFF), a, True)
    assert d.rule == RULE["RENO"]
    assert (a.prev_pkts, a.prev_rtt) == (8, 1200)


def test_slow_start_is_vegas_slow_start():
    a = Adapt(alpha=1, beta=3)
    # in slow start, backlog diff = 20*1000/2000 = 10 > gamma -> exit at target+1 = 11
    d = adaptive(params("VEGAS_A"), sample(cwnd=20, rtt=2000), a, False)
    assert (d.rule, d.cwnd) == (RULE["SS_EXIT"], 11)
