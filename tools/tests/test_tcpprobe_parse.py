"""testbed.tcpprobe's pure parts: a tcp_probe line as trace_pipe prints it, and the
largest window a capture saw (what sets a kernel test's run aside when the defect of
docs/DESIGN.md §10.2 struck)."""
from vegaskit.testbed import tcpprobe

LINE = ("  iperf3-1234  [001] ..s1. 52512.827001: tcp_probe: family=AF_INET "
        "src=198.18.1.1:47820 dest=198.18.2.1:10000 mark=0x0 data_len=0 snd_nxt=0x1 "
        "snd_una=0x1 snd_cwnd={cwnd} ssthresh={ssthresh} snd_wnd=65535 srtt=1200 "
        "rcv_wnd=65535 sock_cookie=2a")


def rec(cwnd: int, ssthresh: int) -> tcpprobe.Record:
    r = tcpprobe.parse(LINE.format(cwnd=cwnd, ssthresh=ssthresh))
    assert r is not None
    return r


def test_parse_reads_the_fields():
    r = rec(12, 7)
    assert (r.t, r.sport, r.dport, r.cookie) == (52512.827001, 47820, 10000, "2a")
    assert (r.snd_cwnd, r.ssthresh, r.srtt_us, r.data_len) == (12, 7, 1200, 0)
    assert tcpprobe.parse("  <idle>-0 [000] 1.0: tcp_retransmit_skb: skbaddr=0x0") is None


def test_largest_window_ignores_the_infinite_ssthresh_only():
    assert tcpprobe.largest_window([]) == 0
    assert tcpprobe.largest_window([rec(10, tcpprobe.INFINITE_SSTHRESH), rec(40, 20)]) == 40
    # the defect's values: an ssthresh of a kernel pointer's low half, cwnd still sane
    assert tcpprobe.largest_window([rec(7, 668_121_856), rec(9, 5)]) == 668_121_856
    assert tcpprobe.largest_window([rec(169_215_059, 5)]) == 169_215_059
