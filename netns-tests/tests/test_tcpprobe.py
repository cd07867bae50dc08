"""tcp:tcp_probe capture through a tracefs instance (vegaskit.testbed.tcpprobe), the
native A/B's only instrument: it must see a real flow's sender, nothing else, and
leave no tracing switched on."""
import os

import pytest

from vegaskit.testbed import iperf, tcpprobe
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import htb_path, receiver_addr

pytestmark = pytest.mark.kernel

if not tcpprobe.available():
    pytest.skip("this kernel has no tcp:tcp_probe tracepoint", allow_module_level=True)


def instances() -> list[str]:
    d = tcpprobe.TRACEFS / "instances"
    return sorted(n for n in os.listdir(d) if n.startswith(tcpprobe.PREFIX))


def test_probe_sees_the_senders_acks_and_switches_itself_off():
    with Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5201)
        with tcpprobe.TcpProbe(5201, 5201) as probe:
            assert instances() == [f"{tcpprobe.PREFIX}{os.getpid()}"]
            p = iperf.client(lab, path.sender, receiver_addr(), 5201, "reno", 3)
            flow = iperf.wait(p, "reno", timeout=40)
    assert instances() == [], "the tracefs instance outlived the capture"
    recs = probe.records
    assert all(r.dport == 5201 for r in recs), "the filter let other sockets through"
    by_cookie = {}
    for r in recs:
        by_cookie.setdefault(r.cookie, []).append(r)
    data = max(by_cookie.values(), key=len)
    # 20 Mbit/s for 3 s is ~5000 segments; with delayed ACKs ~2500 ACKs reach the sender.
    assert len(data) > 1000, f"only {len(data)} records for the data connection"
    assert max(r.snd_cwnd for r in data) > 10, "cwnd never grew past the initial window"
    assert all(r.srtt_us > 0 for r in data[10:])
    # The records span the flow, in CLOCK_MONOTONIC like the testbed's times.
    assert data[-1].t - data[0].t == pytest.approx(flow.seconds, abs=1.0)


def test_an_instance_left_by_a_dead_process_is_swept():
    dead = 2 ** 22 + 1          # above pid_max's default limit: no such process
    d = tcpprobe.TRACEFS / "instances" / f"{tcpprobe.PREFIX}{dead}"
    d.mkdir()
    try:
        (d / "events" / "tcp" / "tcp_probe" / "enable").write_text("1")
        assert tcpprobe.sweep() == [d.name]
        assert not d.exists()
    finally:
        if d.exists():
            (d / "events" / "tcp" / "tcp_probe" / "enable").write_text("0")
            d.rmdir()
