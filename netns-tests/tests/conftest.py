"""Fixtures for the kernel tests: vegasctl, loaded controllers, and a leak check.

Every kernel test must leave the host as it found it: no namespaces of ours, no
pins under /sys/fs/bpf/vegaskit, no controller we registered. The autouse
`no_leaks` fixture asserts that after each test (and cleans up, so one leak
does not cascade into every later test).
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from testbed import netns

ROOT = Path(__file__).resolve().parents[2]
VEGASCTL = ROOT / "build" / "vegasctl"
PIN_ROOT = Path("/sys/fs/bpf/vegaskit")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def available_cc() -> list[str]:
    return AVAILABLE.read_text().split()


def vegasctl(*args: str, check: bool = True, user: int | None = None,
             wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    argv = [str(VEGASCTL), *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    if wrap:
        argv = [*wrap, *argv]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
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
    # bpffs spells '.' as '+' in directory names (loader/vk_registry.c)
    return sorted(n.replace("+", ".") for n in os.listdir(PIN_ROOT / "cc"))


@pytest.fixture(autouse=True)
def no_leaks(request):
    if request.node.get_closest_marker("kernel") is None:
        yield
        return
    assert os.geteuid() == 0, "kernel tests need root: run `sudo make test`"
    before_cc, before_ours = set(available_cc()), set(_our_controllers())
    yield
    # Only what this test made: namespaces carry their creator's pid, and
    # controllers are compared with the set before the test, so a concurrent
    # run on the same host is neither blamed nor cleaned up.
    leaked_ns = netns.owned_namespaces(os.getpid())
    leaked_cc = sorted(set(_our_controllers()) - before_ours)
    for name in leaked_cc:
        vegasctl("unload", name, check=False)
    for ns in leaked_ns:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    assert not leaked_ns, f"namespaces left behind: {leaked_ns}"
    assert not leaked_cc, f"controllers left loaded: {leaked_cc}"
    if not before_ours:
        assert not PIN_ROOT.exists(), f"{PIN_ROOT} left behind"
    ours_registered = {n for n in set(available_cc()) - before_cc if n.startswith(("bpf_", "vk"))}
    assert not ours_registered, f"controllers still registered: {ours_registered}"


@pytest.fixture(scope="session", autouse=True)
def built():
    assert VEGASCTL.exists(), "build first: make"
