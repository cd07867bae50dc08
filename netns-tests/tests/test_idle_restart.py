"""idle_relearn: whether sending from nothing in flight relearns baseRTT.

tcp_vegas.c resets baseRTT on CA_EVENT_TX_START (a send that finds nothing in
flight) and CA_EVENT_CWND_RESTART (a restart after idle): the path may have
changed meanwhile. ns-2's agent, which the papers ran, has no such event. The
parameter idle_relearn chooses (docs/DESIGN.md §3.2, §3.10 item 11).

The setup: topology.two_hosts, one linkemu link of 10 Mbit/s and a 10 ms RTT.
A checkstream client writes 16 KiB every 0.25 s (512 kbit/s): each write
drains in a few RTTs and the window empties before the next, so every write
starts from nothing in flight. The RTT rises to 60 ms about 4 s in. With
idle_relearn=1 the next write relearns baseRTT at the new delay; with 0 the
flow keeps the old minimum.
"""
from __future__ import annotations

import time

import pytest

from conftest import loaded, vegasctl_json
from livecheck import spawn_checkstream, wait_for
from vegaskit.testbed.linkemu import LinkParams
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import two_hosts

pytestmark = pytest.mark.kernel
PORT = 7200


def base_rtt_us() -> int | None:
    flows = [f for f in vegasctl_json("flows") if f["dport"] == PORT]
    return flows[0]["base_rtt_us"] if flows else None


@pytest.mark.parametrize("relearn", [1, 0])
def test_idle_relearn_decides_whether_a_send_from_nothing_in_flight_relearns(relearn, tmp_path):
    with loaded("vegas", "--name", "vk_idle", f"idle_relearn={relearn}") as name, Lab() as lab:
        path = two_hosts(lab, LinkParams(rate_bps=10_000_000, delay_us=5000, limit_pkts=100))
        srv = spawn_checkstream(lab, path.b, "server", "--port", str(PORT),
                                "--report", str(tmp_path / "srv.json"))
        assert srv.stdout.readline().strip() == b"listening"
        cli = spawn_checkstream(lab, path.a, "client", "--addr", path.addr_b,
                                "--port", str(PORT), "--seconds", "9", "--cc", name,
                                "--rate", str(16384 * 8 * 4), "--report", str(tmp_path / "cli.json"))
        wait_for(lambda: base_rtt_us() is not None, 5, "a decision of the paced flow")
        time.sleep(3.5)
        before = base_rtt_us()
        path.link.set("both", delay_us=30000)
        time.sleep(4)
        after = base_rtt_us()
        cli.wait(timeout=30)
        srv.wait(timeout=30)
        assert cli.returncode == 0 and srv.returncode == 0
    print(f"idle_relearn={relearn}: baseRTT {before} us at 10 ms, {after} us after the rise to 60 ms")
    assert 10_000 <= before < 20_000, before
    if relearn:
        assert after >= 60_000, (before, after)
    else:
        assert after <= before, (before, after)
