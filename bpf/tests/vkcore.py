"""ctypes bindings to build/libvkcore.so: the decision core the BPF programs compile.

Struct layouts mirror bpf/vk_intf.h and bpf/vk_core.h; the rule and variant
numbers come from the constants the build generates from vk_intf.h (their
order in its lists is their value), so the tests cannot drift from the header.
"""
from __future__ import annotations

import ctypes as C

from vegaskit import intf, paths

LIB = paths.BUILD / "libvkcore.so"
RULE = {name.upper(): i for i, name in enumerate(intf.RULES)}
VARIANT = {name.upper(): i for i, name in enumerate(intf.VARIANTS)}


SEMANTICS = {name: i for i, name in enumerate(intf.SEMANTICS)}
MODE = {name.upper(): i for i, name in enumerate(intf.MODES)}


class Params(C.Structure):
    _fields_ = [(n, C.c_uint32) for n in intf.PARAMS_FIELDS]


class Sample(C.Structure):
    _fields_ = [(n, C.c_uint32) for n in (
        "cwnd", "ssthresh", "cwnd_clamp", "base_rtt", "rtt", "cnt_rtt", "acked", "ss_grow",
        "mss", "sent", "outstanding", "now_ms", "delivered", "interval_us")]


class Adapt(C.Structure):
    _fields_ = [(n, C.c_uint32) for n in ("alpha", "beta", "prev_pkts", "prev_rtt")]


class Decision(C.Structure):
    _fields_ = [("cwnd", C.c_uint32), ("ssthresh", C.c_uint32), ("diff", C.c_int32),
                ("rule", C.c_uint32), ("alpha", C.c_uint32), ("beta", C.c_uint32),
                ("th_cmp", C.c_int32), ("mode", C.c_uint32), ("foreign_milli", C.c_int32)]


class Plus(C.Structure):
    """struct vk_plus: vegas_plus's per-socket state."""
    _fields_ = [("rate_max", C.c_uint32 * 2), ("rtt_lo", C.c_uint32 * 2),
                ("saved_cwnd", C.c_uint32),
                ("probe_cwnd", C.c_uint32), ("w_max", C.c_uint32), ("w_start", C.c_uint32),
                ("epoch_ms", C.c_uint32), ("cnt", C.c_uint32), ("probe_epoch", C.c_uint16),
                ("epoch_rounds", C.c_uint16), ("mode", C.c_uint8), ("streak", C.c_uint8),
                ("probe_rounds", C.c_uint8), ("recall", C.c_uint8)]


lib = C.CDLL(str(LIB))
lib.vkt_cbrt.restype = C.c_uint32
lib.vkt_cbrt.argtypes = [C.c_uint64]
lib.vkt_plus_loss.restype = C.c_uint32
lib.vkt_plus_loss.argtypes = [C.POINTER(Plus), C.c_uint32, C.c_uint32]
lib.vkt_plus_size.restype = C.c_uint32
lib.vkt_plus_cubic_cnt.restype = C.c_uint32
lib.vkt_plus_cubic_cnt.argtypes = [C.POINTER(Plus), C.POINTER(Sample)]
assert C.sizeof(Plus) == lib.vkt_plus_size(), "Plus does not mirror struct vk_plus"
lib.vkt_loss_ssthresh.restype = C.c_uint32
lib.vkt_loss_ssthresh.argtypes = [C.c_uint32, C.c_uint32]
lib.vkt_slow_start.restype = C.c_uint32
lib.vkt_slow_start.argtypes = [C.c_uint32] * 4
lib.vkt_clamp_cwnd.restype = C.c_uint32
lib.vkt_clamp_cwnd.argtypes = [C.c_uint64, C.c_uint32]
lib.vkt_rtt_sample.argtypes = [C.POINTER(C.c_uint32)] * 2 + [C.POINTER(C.c_uint64),
                               C.POINTER(C.c_uint32), C.c_int32]
lib.vkt_round_rtt.restype = C.c_uint32
lib.vkt_round_rtt.argtypes = [C.c_uint32, C.c_uint32, C.c_uint64, C.c_uint32]
lib.vkt_diff_agent.restype = C.c_int64
lib.vkt_diff_agent.argtypes = [C.c_uint32] * 4
lib.vkt_cmp_throughput_paper.restype = C.c_int
lib.vkt_cmp_throughput_paper.argtypes = [C.c_uint32] * 5

NO_CLAMP = 0xFFFFFFFF
INF_SSTHRESH = 0x7FFFFFFF      # TCP_INFINITE_SSTHRESH


def params(variant: str = "VEGAS", **kw) -> Params:
    base = dict(magic=intf.PARAMS_MAGIC, variant=VARIANT[variant], alpha=2, beta=4, gamma=1,
                alpha_max=64, loss_cut=2, ref_bytes=4500, gain_milli=500, half_packet=1,
                th_tie_milli=intf.TH_TIE_MILLI_DEFAULT, foreign_max=8, compete=1, compete_ss=1,
                rate_epoch=intf.PLUS_RATE_EPOCH_DEFAULT)
    if isinstance(kw.get("semantics"), str):
        kw["semantics"] = SEMANTICS[kw["semantics"]]
    base.update(kw)
    return Params(**base)


def sample(**kw) -> Sample:
    """A decision's inputs; the agent's counts default to its steady state
    under ns-2's per-packet ACKs, where they agree with cwnd: a window sent in
    the round, one packet just acknowledged (outstanding = cwnd - 1)."""
    base = dict(cwnd=10, ssthresh=INF_SSTHRESH, cwnd_clamp=NO_CLAMP, base_rtt=1000, rtt=1000,
                cnt_rtt=10, acked=1, ss_grow=1, mss=1448)
    base.update(kw)
    base.setdefault("sent", base["cwnd"])
    base.setdefault("outstanding", max(base["cwnd"] - 1, 0))
    return Sample(**base)


def vegas(p: Params, s: Sample) -> Decision:
    d = Decision()
    lib.vkt_vegas_decide(C.byref(p), C.byref(s), C.byref(d))
    return d


def rtt_sample(base: int, mn: int, cnt: int, rtt_us: int) -> tuple[int, int, int]:
    """(baseRTT, round min, round count) after one sample."""
    b, m, _, c = rtt_sample_sum(base, mn, 0, cnt, rtt_us)
    return b, m, c


def rtt_sample_sum(base: int, mn: int, total: int, cnt: int, rtt_us: int
                   ) -> tuple[int, int, int, int]:
    """(baseRTT, round min, round sum, round count) after one sample."""
    b, m, s, c = C.c_uint32(base), C.c_uint32(mn), C.c_uint64(total), C.c_uint32(cnt)
    lib.vkt_rtt_sample(C.byref(b), C.byref(m), C.byref(s), C.byref(c), rtt_us)
    return b.value, m.value, s.value, c.value


def round_rtt(semantics: str, mn: int, total: int, cnt: int) -> int:
    return lib.vkt_round_rtt(SEMANTICS[semantics], mn, total, cnt)


def diff_agent(outstanding: int, sent: int, rtt: int, base: int) -> int:
    return lib.vkt_diff_agent(outstanding, sent, rtt, base)


def cmp_throughput_paper(pkts: int, rtt: int, prev_pkts: int, prev_rtt: int,
                         tie: int = 500) -> int:
    return lib.vkt_cmp_throughput_paper(pkts, rtt, prev_pkts, prev_rtt, tie)


def adaptive(p: Params, s: Sample, a: Adapt, pipe: bool) -> Decision:
    """Vegas-A (pipe=False) or PIPE (pipe=True); updates `a` in place."""
    d = Decision()
    lib.vkt_adaptive_decide(C.byref(p), C.byref(s), C.byref(a), int(pipe), C.byref(d))
    return d


def fr(p: Params, s: Sample, frac: C.c_int32) -> Decision:
    """vegas_fr; `frac` is the fractional accumulator (1/1024 packet), updated in place."""
    d = Decision()
    lib.vkt_fr_decide(C.byref(p), C.byref(s), C.byref(frac), C.byref(d))
    return d


def plus(p: Params, s: Sample, st: Plus) -> Decision:
    """vegas_plus; `st` is the socket's state, updated in place."""
    d = Decision()
    lib.vkt_plus_decide(C.byref(p), C.byref(s), C.byref(st), C.byref(d))
    return d



def plus_loss(st: Plus, cwnd: int, loss_cut: int = 2) -> int:
    """vegas_plus's ssthresh after a loss; updates `st` in place."""
    return lib.vkt_plus_loss(C.byref(st), cwnd, loss_cut)


def plus_cubic_cnt(st: Plus, s: Sample) -> int:
    """vegas_plus's competitive growth for this round: ACKed packets per packet."""
    return lib.vkt_plus_cubic_cnt(C.byref(st), C.byref(s))


def cbrt(x: int) -> int:
    """vk_cbrt: floor(cbrt(x)) as the BPF programs compute it."""
    return lib.vkt_cbrt(x)
