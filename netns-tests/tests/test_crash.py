"""vegasctl killed (SIGKILL) in the middle of load, replace, unload and swap.

VEGASCTL_CRASH_AT=POINT makes vegasctl kill itself at a named step. After each
crash: the kernel state is whatever the last completed step left, the next
`vegasctl list` says so truthfully, and `vegasctl unload` cleans up.
"""
import os
import subprocess

import pytest

from conftest import PIN_ROOT, VEGASCTL, available_cc, loaded, vegasctl, vegasctl_json
from vegaskit.testbed.netns import Lab

pytestmark = pytest.mark.kernel
NAME = "vk_crash"


def crash(point: str, *args: str) -> None:
    env = dict(os.environ, VEGASCTL_CRASH_AT=point)
    r = subprocess.run([str(VEGASCTL), *args], env=env, capture_output=True, timeout=30)
    assert r.returncode == -9, f"{point}: expected SIGKILL, got {r.returncode} {r.stderr}"


def instance(name: str) -> dict | None:
    return next((i for i in vegasctl_json("list")["instances"] if i["name"] == name), None)


@pytest.mark.reliability("kill_point")
@pytest.mark.needs_kernel("struct_ops_link")   # the link path's steps (map path: test_map_registration)
@pytest.mark.parametrize("point", ["load:registered", "load:params-pinned"])
def test_killed_during_load(point):
    crash(point, "load", "vegas", "--name", NAME)
    # The registration lived only in the dead process's link fd: the kernel dropped it.
    assert NAME not in available_cc()
    inst = instance(NAME)
    assert inst is not None and inst["state"] == "incomplete"
    vegasctl("unload", NAME)
    assert instance(NAME) is None and not PIN_ROOT.exists()
    # and the name can be loaded again
    with loaded("vegas", "--name", NAME):
        assert instance(NAME)["state"] == "registered"


@pytest.mark.reliability("kill_point")
def test_killed_during_unload():
    vegasctl("load", "vegas", "--name", NAME)
    crash("unload:link-unpinned", "unload", NAME)
    assert NAME not in available_cc()          # the link pin was the last reference
    assert instance(NAME)["state"] == "incomplete"
    r = vegasctl("set", NAME, "alpha=1", check=False)       # retuning nothing that runs
    assert r.returncode != 0 and "incomplete" in r.stderr
    vegasctl("unload", NAME)
    assert not PIN_ROOT.exists()


@pytest.mark.reliability("kill_point")
@pytest.mark.needs_kernel("link_update")
def test_killed_during_replace_rolls_forward():
    with loaded("vegas", "--name", NAME):
        crash("replace:updated", "load", "vegas", "--name", NAME, "--replace", "alpha=7", "beta=9")
        inst = instance(NAME)                 # reading repairs the interrupted commit
        assert inst["state"] == "registered"
        assert (inst["params"]["alpha"], inst["params"]["beta"]) == (7, 9)
        assert not (PIN_ROOT / "cc" / NAME / "params_new").exists()
        vegasctl("set", NAME, "alpha=8")      # and the live controller is retunable
        assert instance(NAME)["params"]["alpha"] == 8


@pytest.mark.reliability("kill_point")
@pytest.mark.needs_kernel("iter_setsockopt")
def test_killed_during_swap_then_rerun_completes():
    with loaded("vegas", "--name", NAME, "--unrestricted"), Lab() as lab:
        ns = lab.netns("s")
        crash("swap:default-set", "swap", NAME, "--netns", ns.name)
        assert ns.run(["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).strip() == NAME
        assert instance(NAME)["state"] == "registered"
        res = vegasctl_json("swap", NAME, "--netns", ns.name)
        assert res["failed"] == 0
        vegasctl("swap", "reno", "--netns", ns.name)
