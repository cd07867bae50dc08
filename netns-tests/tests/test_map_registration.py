"""Registering through the struct_ops map itself, as on kernels without struct_ops
links (Linux < 6.4, such as Debian 12's 6.1): pins first, then the map update that
registers (the commit point); unload deletes the element. VEGASCTL_REFUSE makes
vegasctl take that path on a kernel that has links, so it is tested on every
kernel; on one without links it is the only path (docs/DESIGN.md §4.3, §10)."""
import json
import os
import time

import pytest

from conftest import PIN_ROOT, available_cc, vegasctl
from vegaskit.testbed import iperf
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import htb_path, receiver_addr

pytestmark = pytest.mark.kernel

NO_LINKS = {"VEGASCTL_REFUSE": "struct_ops_link"}
NAME = "vk_map"


def ctl(*args, check=True, **env):
    return vegasctl(*args, check=check, env={**NO_LINKS, **env})


def show() -> dict:
    return json.loads(ctl("show", NAME, "--json").stdout)


@pytest.fixture
def map_registered():
    ctl("load", "vegas", "--name", NAME)
    try:
        yield NAME
    finally:
        ctl("unload", NAME, check=False)


def test_load_registers_through_the_map_and_unload_unregisters(map_registered):
    assert NAME in available_cc()
    assert sorted(os.listdir(PIN_ROOT / "cc" / NAME)) == ["events", "ops", "params", "stats"]
    inst = show()
    assert (inst["state"], inst["registration"], inst["link_id"]) == ("registered", "map", 0)
    assert inst["map_id"] > 0
    ctl("set", NAME, "alpha=3", "beta=5")
    assert (show()["params"]["alpha"], show()["params"]["beta"]) == (3, 5)
    ctl("unload", NAME)
    assert NAME not in available_cc()
    assert not PIN_ROOT.exists()


@pytest.mark.reliability("bad_input")
def test_replace_in_place_is_refused_with_one_line(map_registered):
    before = show()
    r = ctl("load", "vegas", "--name", NAME, "--replace", "alpha=4", check=False)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"vegasctl: cannot replace '{NAME}' in place: it is registered through its struct_ops "
        "map (no struct_ops links before Linux 6.4), which cannot be swapped atomically; "
        "unload and load it again, or load it under another name and swap"]
    assert show() == before


@pytest.mark.reliability("kill_point")
def test_killed_before_the_registration_leaves_an_incomplete_instance_that_unload_removes():
    r = ctl("load", "vegas", "--name", NAME, check=False, VEGASCTL_CRASH_AT="load:ops-pinned")
    assert r.returncode == -9
    try:
        assert NAME not in available_cc()
        listed = {i["name"]: i for i in json.loads(ctl("list", "--json").stdout)["instances"]}
        assert listed[NAME]["state"] == "incomplete"
    finally:
        ctl("unload", NAME)
    assert not PIN_ROOT.exists()


@pytest.mark.reliability("kill_point")
def test_killed_after_unregistering_then_unload_again_completes(map_registered):
    """An unload killed after the map's element is deleted (the kernel then answers
    a second delete with EINPROGRESS) is finished by the next unload."""
    r = ctl("unload", NAME, check=False, VEGASCTL_CRASH_AT="unload:link-unpinned")
    assert r.returncode == -9
    assert NAME not in available_cc()
    ctl("unload", NAME)
    assert not PIN_ROOT.exists()


def test_a_map_registered_controller_carries_traffic(map_registered, kernel_features):
    """A connection on it runs the Vegas rule: `flows` lists its decisions."""
    if not (kernel_features["iter_sk_storage_map"] or kernel_features["iter_tcp_sk_storage"]):
        pytest.skip("this kernel lacks both flows walks (see: vegasctl features)")
    with Lab() as lab:
        path = htb_path(lab, 20_000_000, 100)
        iperf.server(lab, path.receiver, 5201)
        cli = iperf.client(lab, path.sender, receiver_addr(), 5201, NAME, 3)
        time.sleep(2)
        flows = [f for f in json.loads(ctl("flows", "--json").stdout) if f["dport"] == 5201]
        iperf.wait(cli, NAME, 30)
    assert flows and all(f["ca"] == NAME for f in flows)
    assert max(f["decisions"] for f in flows) > 10
