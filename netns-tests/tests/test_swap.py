"""Hot-swapping on a live host: swap chains under load, in-place upgrade,
baseRTT carry-over, and unloading a controller that still has connections.

Swaps run in the sender namespace of the testbed's sender -> router -> receiver
path. A namespace's default can only be an unrestricted controller
(tcp_set_default_congestion_control refuses restricted ones outside init_net),
so the controllers are loaded --unrestricted and cubic is allowed for the
duration of the test (the allowed list is global; it is restored).
"""
from __future__ import annotations

import json
import statistics
import subprocess
import time

import pytest

from conftest import available_cc, loaded, vegasctl, vegasctl_json
from livecheck import allow_cubic, check_complete, socket_ccs, spawn_checkstream, wait_for  # noqa: F401 (fixture)
from vegaskit.testbed import iperf, runner
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.scenario import Scenario
from vegaskit.testbed.topology import htb_path, receiver_addr

pytestmark = pytest.mark.kernel
RECEIVER = receiver_addr()

CHECK_PORT = 7100


@pytest.mark.needs_kernel("iter_setsockopt")
def test_swap_chain_under_load_200_connections(allow_cubic, tmp_path):
    conns, seconds = 200, 24
    chain = ["bpf_vegas", "bpf_vegas_a", "reno", "cubic"]
    with loaded("vegas", "--unrestricted"), loaded("vegas_a", "--unrestricted"), Lab() as lab:
        path = htb_path(lab, 50_000_000, 500)
        srv = spawn_checkstream(lab, path.receiver, "server", "--port", str(CHECK_PORT),
                                "--conns", str(conns), "--report", str(tmp_path / "srv.json"))
        assert srv.stdout.readline().strip() == b"listening"
        cli = spawn_checkstream(lab, path.sender, "client", "--addr", RECEIVER, "--port",
                                str(CHECK_PORT), "--conns", str(conns), "--seconds", str(seconds),
                                "--cc", "cubic", "--rate", "40e6",
                                "--report", str(tmp_path / "cli.json"))
        wait_for(lambda: len(socket_ccs(path.sender, CHECK_PORT)) == conns, 15, "200 connections")
        assert set(socket_ccs(path.sender, CHECK_PORT)) == {"cubic"}
        times = []
        for target in chain:
            time.sleep(3)
            res = vegasctl_json("swap", target, "--netns", path.sender.name)
            ccs = socket_ccs(path.sender, CHECK_PORT)
            assert len(ccs) == conns, f"connections lost at the swap to {target}"
            assert set(ccs) == {target}, f"after swap to {target}: {sorted(set(ccs))}"
            assert res["moved"] >= conns and res["failed"] == 0
            assert path.sender.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip() == target
            times.append(res["move_ms"])
        cli.wait(timeout=seconds + 60)
        srv.wait(timeout=30)
        assert cli.returncode == 0 and srv.returncode == 0
    check_complete(tmp_path / "srv.json", tmp_path / "cli.json", conns)
    print(f"\nswap of {conns}+ sockets: median {statistics.median(times):.1f} ms, "
          f"max {max(times):.1f} ms ({times})")


def flows_on(port: int) -> list[dict]:
    return [f for f in vegasctl_json("flows") if f["dport"] == port]


@pytest.mark.needs_kernel("link_update")
def test_in_place_upgrade_new_connections_get_new_parameters():
    with loaded("vegas", "--name", "vk_up") as name, Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5201)
        old = iperf.client(lab, path.sender, RECEIVER, 5201, name, 8)
        time.sleep(2)
        r = vegasctl("load", "vegas", "--name", name, "--replace", "alpha=6", "beta=9")
        assert r.stdout.startswith("replaced")
        assert name in available_cc()
        iperf.server(lab, path.receiver, 5202)
        new = iperf.client(lab, path.sender, RECEIVER, 5202, name, 4)
        time.sleep(2.5)
        old_flows, new_flows = flows_on(5201), flows_on(5202)
        iperf.wait(old, name, 20)
        iperf.wait(new, name, 20)
    assert old_flows and new_flows
    assert {(f["alpha"], f["beta"]) for f in old_flows} == {(2, 4)}
    assert {(f["alpha"], f["beta"]) for f in new_flows} == {(6, 9)}
    assert all(f["ca"] == name for f in old_flows + new_flows)


@pytest.mark.needs_kernel("iter_setsockopt")
@pytest.mark.parametrize("keep", [1, 0])
def test_base_rtt_survives_a_swap_under_a_standing_queue(keep, tmp_path):
    """A Vegas flow with alpha=20, beta=24 on a 10 Mbit/s, 40 ms path learns
    baseRTT (~41 ms) while the queue is empty, then holds a standing queue of
    ~20 packets (1.2 ms each: ~24 ms). It is swapped to Vegas-A at 8 s. With
    keep_base_rtt the baseRTT after the swap is the one learned before (a
    minimum can only fall); a plain re-init (keep_base_rtt=0) relearns it with
    the queue inside, well above the true one, and Vegas-A, seeing
    no backlog, drains little of it: the persistent congestion of seeds 000/001.
    (A loss-based competitor would not do here: its losses drive the Vegas
    flow into RTOs, and Linux Vegas relearns baseRTT after one anyway.)"""
    snaps = {}

    def flow_now():
        return max((f for f in vegasctl_json("flows") if f["dport"] == runner.BASE_PORT + 1),
                   key=lambda f: f["decisions"])

    def swap(db):
        snaps["before"] = flow_now()
        snaps["swap"] = vegasctl_json("swap", "vk_va", "--netns", db.senders[0].name,
                                      "--port", str(runner.BASE_PORT + 1))

    scenario = Scenario.parse("""
name = "carry"
duration = 11
[links]
bottleneck = { rate = "10M", rtt_ms = 40, buffer = 100 }
[[flows]]
cc = "vk_big"
[controllers]
vk_big = "vegas alpha=20 beta=24"
[runs]
r = {}
[profiles.p]
time_scale = 1.0
""")
    with loaded("vegas_a", "--name", "vk_va", f"keep_base_rtt={keep}"):
        summary = runner.execute(scenario.run("r", "p"), tmp_path,
                                 at=[(8.0, swap), (8.5, lambda db: snaps.__setitem__("after", flow_now()))])
    before, after = snaps["before"], snaps["after"]
    print(f"\nbefore the swap: {before}\nafter: {after}")
    assert snaps["swap"]["moved"] >= 1 and not snaps["swap"]["default_set"]
    assert before["ca"] == "vk_big" and after["ca"] == "vk_va"
    # Margins from the runs of 2026-11-27: before the swap the round's RTT sat 17.2 to
    # 20.9 ms above baseRTT (15.0 in one CI run); keep=0 relearned 12.5 to 19.7 ms above
    # it in 36 runs and under 10 ms in one (Vegas-A, sizing its window to the new base,
    # drains part of the queue and the minimum follows). baseRTT itself varied by 0.2 ms.
    # Read 0.5 s after the swap (about 8 rounds), not 2 s: on 2026-12-01's AMD machine
    # Vegas-A, deciding on noisier RTTs, decreased often enough in 2 s that the minimum
    # followed the draining queue to 1.5 and 3.8 ms above (twice in one CI run). What a
    # re-init learns is the claim; what Vegas-A does with it later is another.
    # What the failure needs to say: the window (capped by the receiver's or by the
    # controller?), the rules taken, the losses and the emulator's lateness.
    assert before["rtt_us"] >= before["base_rtt_us"] + 10000, (
        f"no standing queue formed: before the swap {before}; retransmits "
        f"{summary['retransmits']}, queue mean {summary['queue_mean_pkts']} packets, "
        f"emulator's latest release {summary.get('emulator_late_max_ms')} ms late "
        f"({summary.get('emulator_late_early_max_ms')} ms in the flow's first 5 s)")
    if keep:
        assert after["base_rtt_us"] <= before["base_rtt_us"]
    else:
        assert after["base_rtt_us"] >= before["base_rtt_us"] + 5000


def test_unload_with_active_connections_they_complete_intact(tmp_path):
    conns, seconds = 20, 8
    with Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        vegasctl("load", "vegas", "--name", "vk_gone")
        try:
            srv = spawn_checkstream(lab, path.receiver, "server", "--port", str(CHECK_PORT),
                                    "--conns", str(conns), "--report", str(tmp_path / "s.json"))
            assert srv.stdout.readline().strip() == b"listening"
            cli = spawn_checkstream(lab, path.sender, "client", "--addr", RECEIVER,
                                    "--port", str(CHECK_PORT), "--conns", str(conns),
                                    "--seconds", str(seconds), "--cc", "vk_gone",
                                    "--report", str(tmp_path / "c.json"))
            wait_for(lambda: len(socket_ccs(path.sender, CHECK_PORT)) == conns, 10, "connections")
            time.sleep(2)
        finally:
            vegasctl("unload", "vk_gone")
        assert "vk_gone" not in available_cc()
        # the sockets keep the unregistered controller until they close
        assert set(socket_ccs(path.sender, CHECK_PORT)) == {"vk_gone"}
        cli.wait(timeout=seconds + 30)
        srv.wait(timeout=30)
    check_complete(tmp_path / "s.json", tmp_path / "c.json", conns)


@pytest.mark.reliability("bad_input")
def test_restricted_controller_is_refused_as_a_namespace_default_before_the_kernel_sees_it():
    """Outside the initial namespace the kernel refuses a restricted default, and
    that refusal leaks a reference to the controller's struct_ops. vegasctl must
    refuse first: one line, the namespace's default unchanged, and (checked by the
    no_leaks fixture after the unload) the controller's struct_ops freed."""
    with loaded("vegas", "--name", "vk_restr") as name, Lab() as lab:
        ns = lab.netns("x")
        before = ns.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip()
        r = vegasctl("swap", name, "--netns", ns.name, check=False)
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr.splitlines() == [
            "vegasctl: a namespace's default must be an unrestricted controller and 'vk_restr' is "
            "restricted: load it with --unrestricted, allow it in "
            "net.ipv4.tcp_allowed_congestion_control, or use --established-only"]
        assert ns.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip() == before


def test_swap_json_escapes_the_namespace_name():
    # printed raw, a '"' or '\' in an `ip netns` name made the JSON unreadable
    name = 'vk"q\\x\tz'
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        r = vegasctl("swap", "reno", "--netns", name, "--default-only", "--json")
        out = json.loads(r.stdout)
        assert out["netns"] == name and out["target"] == "reno" and out["default_set"]
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.mark.needs_kernel("link_update")
@pytest.mark.needs_kernel("iter_setsockopt")
def test_swap_after_replace_moves_sockets_still_on_the_old_code():
    # after load --replace, sockets opened before it run the old code under the
    # same name: swap called them "already on" it and left them there
    with loaded("vegas", "--name", "vk_up2") as name, Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5203)
        old = iperf.client(lab, path.sender, RECEIVER, 5203, name, 8)
        time.sleep(2)
        vegasctl("load", "vegas", "--name", name, "--replace", "alpha=6", "beta=9")
        assert {(f["alpha"], f["beta"]) for f in flows_on(5203)} == {(2, 4)}
        first = vegasctl_json("swap", name, "--netns", path.sender.name, "--from", name)
        again = vegasctl_json("swap", name, "--netns", path.sender.name, "--from", name)
        time.sleep(1.5)
        after = flows_on(5203)
        iperf.wait(old, name, 20)
    assert first["upgraded"] >= 1 and first["upgraded"] == first["moved"], first
    assert (again["moved"], again["upgraded"]) == (0, 0) and again["already"] >= first["moved"]
    assert after and {(f["alpha"], f["beta"]) for f in after} == {(6, 9)}
