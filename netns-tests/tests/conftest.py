"""Fixtures for the kernel tests: vegasctl, loaded controllers, and a leak check.

Every kernel test must leave the host as it found it: no namespaces of ours, no
pins under /sys/fs/bpf/vegaskit, no controller we registered, no tracefs
instance of ours (tcp_probe capture), and no struct_ops
map of ours still alive once its registration is gone. The autouse
`no_leaks` fixture asserts that after each test (and cleans up, so one leak
does not cascade into every later test).
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from vegaskit import intf, paths
from vegaskit.testbed import leftovers, tcpprobe

VEGASCTL = paths.VEGASCTL
PIN_ROOT = Path(intf.PIN_ROOT)
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
# A window or ssthresh no path of the tests that use it can make (they hold ~5 and ~102):
# the kernel defect of docs/DESIGN.md §10.2, which turns a BPF controller's ssthresh
# into the low half of a kernel pointer (10^5 to 10^9 packets) and its window after
# it. tcpprobe.largest_window above this sets a run aside, as the reports do.
DEFECT_PKTS = 1000


def pytest_collection_modifyitems(config, items):
    """A kernel test whose assertion fails runs up to twice more, 5 s apart
    (pytest-rerunfailures; the log shows each as R, counts the reruns and, with
    --rerun-show-tracebacks in pytest.ini, keeps each rerun's assertion): its flows
    share two cores with whatever else the machine runs, and machines of this kind
    differ in that noise (docs/DESIGN.md §9.3). Three times is a failure. Not the
    reliability cases, which count each case once. A rerun of a test that reads a
    module's shared runs sees the same runs, unless its fixture makes them per
    attempt (PerAttempt)."""
    for item in items:
        if item.get_closest_marker("kernel") and not item.get_closest_marker("reliability"):
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=5,
                                              only_rerun=["AssertionError"]))


class PerAttempt:
    """A module's shared runs, made once per attempt at its tests: every test's first
    attempt shares one set, and a rerun (pytest-rerunfailures' execution_count 2, 3)
    gets a set of its own, made at its first need and shared by the module's other
    reruns of that attempt, so a rerun judges fresh flows, not the ones that failed
    (docs/DESIGN.md §9.3). A module fixture returns PerAttempt(make); a function
    fixture hands its tests `.get(request)`."""

    def __init__(self, make):
        self.make, self.made = make, {}

    def get(self, request):
        attempt = getattr(request.node, "execution_count", 1)
        if attempt not in self.made:
            self.made[attempt] = self.make()
        return self.made[attempt]


def available_cc() -> list[str]:
    return AVAILABLE.read_text().split()


def vegasctl(*args: str, check: bool = True, user: int | None = None,
             wrap: list[str] | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    argv = [str(VEGASCTL), *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    if wrap:
        argv = [*wrap, *argv]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       env={**os.environ, **env} if env else None)
    if check and r.returncode != 0:
        raise AssertionError(f"vegasctl {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r


def vegasctl_json(*args: str):
    return json.loads(vegasctl(*args, "--json").stdout)


@contextlib.contextmanager
def loaded(variant: str, *args: str):
    """Load a controller for the duration of a with-block; always unload it."""
    out = vegasctl_json("load", variant, *args)
    try:
        yield out["name"]
    finally:
        vegasctl("unload", out["name"], check=False)


def _our_controllers() -> list[str]:
    if not (PIN_ROOT / "cc").is_dir():
        return []
    return sorted(n.replace(intf.PIN_DOT, ".") for n in os.listdir(PIN_ROOT / "cc"))


# Every controller's struct_ops map is named after its SEC(".struct_ops.link")
# variable (bpf/vk_common.bpf.h), whatever name it registers under: vk_ops with
# calls=2, vk_ops_one with calls=1.
OPS_MAP_NAMES = ("vk_ops", "vk_ops_one")
# The kernel frees an unregistered struct_ops map asynchronously, after its
# last socket lets go and an RCU-tasks-trace grace period: milliseconds here,
# seconds on a loaded machine. Longer than this means something holds it.
OPS_FREE_TIMEOUT = 15.0


def _bpftool_json(*args: str) -> list[dict]:
    r = subprocess.run(["bpftool", "-j", *args], capture_output=True, text=True, timeout=30)
    return json.loads(r.stdout or "[]") if r.returncode == 0 else []


def _ops_maps() -> set[int]:
    return {m["id"] for m in _bpftool_json("map", "show")
            if m.get("type") == "struct_ops" and m.get("name") in OPS_MAP_NAMES}


def _unlinked_ops_maps() -> set[int]:
    """Our struct_ops maps that no struct_ops link (registration) holds."""
    linked = {l.get("map_id") for l in _bpftool_json("link", "show") if l.get("type") == "struct_ops"}
    return _ops_maps() - linked


def _ops_maps_still_alive(before: set[int]) -> set[int]:
    """New maps of ours left without a registration, after waiting for the kernel."""
    deadline = time.monotonic() + OPS_FREE_TIMEOUT
    while (alive := _unlinked_ops_maps() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.fixture(autouse=True)
def no_leaks(request):
    if request.node.get_closest_marker("kernel") is None:
        yield
        return
    assert os.geteuid() == 0, "kernel tests need root: run `sudo make test`"
    before_cc, before_ours = set(available_cc()), set(_our_controllers())
    before_maps = _ops_maps()
    yield
    # Only what this test made: namespaces carry their creator's pid, and
    # controllers are compared with the set before the test, so a concurrent
    # run on the same host is neither blamed nor cleaned up.
    leaked_ns = leftovers.owned_namespaces(os.getpid())
    others = leftovers.loaded_by_others(os.getpid())
    leaked_cc = sorted(set(_our_controllers()) - before_ours - others)
    own_probe = [d.name for d in tcpprobe.own_instances()]
    leaked_tracing = bool(own_probe)
    if leaked_tracing:
        tcpprobe.sweep_own()
    for name in leaked_cc:
        vegasctl("unload", name, check=False)
    for ns in leaked_ns:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert not leaked_ns, f"namespaces left behind: {leaked_ns}"
    assert not leaked_cc, f"controllers left loaded: {leaked_cc}"
    assert not leaked_tracing, f"tracing left switched on: {own_probe}"
    if not before_ours and not others:
        assert not PIN_ROOT.exists(), f"{PIN_ROOT} left behind"
    ours_registered = {n for n in set(available_cc()) - before_cc - others
                       if n.startswith(("bpf_", "vk"))}
    assert not ours_registered, f"controllers still registered: {ours_registered}"
    alive = _ops_maps_still_alive(before_maps)
    assert not alive, f"struct_ops maps {sorted(alive)} outlived their registration by {OPS_FREE_TIMEOUT} s"


@pytest.fixture(scope="session", autouse=True)
def built():
    assert VEGASCTL.exists(), "build first: make"


@pytest.fixture(scope="session")
def kernel_probe(built) -> dict:
    """`vegasctl features --json`: what it finds in the running kernel (probed, not
    assumed), and for each feature it lacks, what the kernel refused or did not have.
    A probe of ours that could not run fails the command, never reads as a "no"."""
    return vegasctl_json("features")


@pytest.fixture(scope="session")
def kernel_features(kernel_probe) -> dict[str, bool]:
    return kernel_probe["features"]


@pytest.fixture(autouse=True)
def needs_kernel(request):
    """@pytest.mark.needs_kernel("feature", ...): skip, naming what is missing,
    when the running kernel lacks a feature. Only for kernel features: what
    vegaskit itself provides is never a reason to skip."""
    marker = request.node.get_closest_marker("needs_kernel")
    if marker is None:
        return
    have = request.getfixturevalue("kernel_features")
    unknown = [f for f in marker.args if f not in have]
    assert not unknown, f"needs_kernel names features vegasctl does not probe: {unknown}"
    missing = [f for f in marker.args if not have[f]]
    if missing:
        why = request.getfixturevalue("kernel_probe")["why"]
        pytest.skip("this kernel lacks " + "; ".join(f"{f} ({why[f]})" for f in missing))
