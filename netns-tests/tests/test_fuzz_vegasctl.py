"""Fuzz stage for vegasctl (issue 12): generated command lines, from its own
words and from a careless or hostile user's, each checked against the kernel.

Every case must end in success or in one `vegasctl: ` line on stderr with a
non-zero exit, never a signal, a traceback or a second line; and the system
must show what was asked and nothing else: a refused command changes nothing,
a load adds one controller (a dry run none), an unload removes one, a set retunes one, a
swap changes at most its namespace's default, the rest change nothing. `swap`
runs inside a namespace of the fuzz's own (nsenter --net, so the pin tree is
the host's): the host's default is the fuzz's no business, and is checked
unchanged after every case.

`make test` runs a fixed, derandomized set; `make fuzz` many more
(VK_FUZZ_EXAMPLES).
"""
from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import PIN_ROOT, available_cc, vegasctl, vegasctl_json
from vegaskit.testing import reliability

pytestmark = pytest.mark.kernel

EXAMPLES = int(os.environ.get("VK_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, derandomize="VK_FUZZ_EXAMPLES" not in os.environ,
                deadline=None, suppress_health_check=list(HealthCheck))

NAMES = ["fz1", "fz2", "fz.3", "bpf_vegas_a", "cubic", "a" * 16, "bad/name", "-x", "", ".h"]
VARIANTS = ["vegas", "vegas_a", "pipe", "vegas_fr", "reno", "VEGAS", ""]
VALUES = ["0", "1", "2", "3", "-1", "nan", "inf", "1e9", "0x10", "4294967296", "99999999999",
          "1/4", "1/2", "0.5", "paper", "exact", "", " 1", "1 "]
KEYS = ["alpha", "beta", "gamma", "alpha_max", "ref_bytes", "gain", "ss_every_other_rtt",
        "loss_cut", "semantics", "half_packet", "th_tie", "keep_base_rtt", "idle_relearn",
        "delta", ""]
OPTIONS = ["--json", "-v", "--unrestricted", "--replace", "--all", "--help", "--bogus",
           "--name", "--preset", "--via", "--netns", "-L", "--port", "--controller", "--alpha",
           "--decisions", "--count", "--acks", "--duration", "--from", "--default-only",
           "--established-only", "--addr", "--lport", "198.18.0.1", "reno", "--dry-run",
           "--check"]
WORDS = (st.sampled_from(NAMES + VARIANTS + VALUES + OPTIONS + ["ns2", "linux", "fr3k", "nope",
                                                                 "sk_storage", "tcp"])
         | st.builds(lambda k, v: f"{k}={v}", st.sampled_from(KEYS), st.sampled_from(VALUES)))
# metrics --listen and --textfile are not in the words: one serves until killed, the
# other writes where it is told; apply's file arguments are words, so none exists.
# reset is not fuzzed: it unloads every instance on the host, a concurrent run's too
# (test_apply.py covers its refusals)
COMMANDS = ["load", "unload", "set", "show", "list", "features", "flows", "trace", "swap", "",
            "lod", "export", "metrics", "apply"]
FUZZ_NETNS = "vk_fuzz_swap"
HOST_DEFAULT = "/proc/sys/net/ipv4/tcp_congestion_control"


def netns_default() -> str:
    return subprocess.run(["ip", "netns", "exec", FUZZ_NETNS, "sysctl", "-n",
                           "net.ipv4.tcp_congestion_control"],
                          capture_output=True, text=True, check=True).stdout.strip()


def state() -> tuple:
    """What vegasctl may change: registrations, our pins, each instance's params,
    the host's default controller and the fuzz namespace's."""
    pins = sorted(os.path.relpath(os.path.join(d, f), PIN_ROOT)
                  for d, _, fs in os.walk(PIN_ROOT) for f in fs) if PIN_ROOT.exists() else []
    params = {i["name"]: (i["params"], i["generation"])
              for i in vegasctl_json("list")["instances"]}
    with open(HOST_DEFAULT) as f:
        host = f.read().strip()
    return set(available_cc()), pins, params, host, netns_default()


@pytest.fixture
def baseline():
    """Leave the kernel as found: every controller the fuzz registered goes, at
    the end of the test (all its examples), before the leak check looks; and
    the namespace swap runs in goes too."""
    before = set(available_cc())
    subprocess.run(["ip", "netns", "add", FUZZ_NETNS], check=True)
    try:
        yield before
    finally:
        subprocess.run(["ip", "netns", "del", FUZZ_NETNS], check=True)
        for name in set(available_cc()) - before:
            vegasctl("unload", name, check=False)
    assert set(available_cc()) == before


@pytest.mark.reliability("bad_input")
@FUZZ
@given(cmd=st.sampled_from(COMMANDS), words=st.lists(WORDS, max_size=6))
def test_a_command_line_does_what_it_says_or_nothing(baseline, cmd, words):
    reliability.case()
    argv = [cmd, *words] if cmd else words
    if cmd == "trace":          # bounded: a trace runs until its duration
        argv += ["--duration", "0.2"]
    before = state()
    # swap in the fuzz's namespace: the host's default is left alone
    wrap = ["nsenter", f"--net=/var/run/netns/{FUZZ_NETNS}"] if cmd == "swap" else None
    r = vegasctl(*argv, check=False, wrap=wrap)
    after = state()
    assert r.returncode >= 0, f"{argv}: killed by signal {-r.returncode}"
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("vegasctl: "), (argv, r.stderr)
        assert after == before, f"{argv} was refused but changed the system"
        return
    cc0, _, p0, host0, ns0 = before
    cc1, _, p1, host1, ns1 = after
    assert host1 == host0, f"{argv} changed the host's default"
    if "--help" in argv or "-h" in argv:
        assert after == before
    elif cmd == "swap":
        assert after[:3] == before[:3], argv
        assert ns1 == ns0 or ns1 in words, (argv, ns0, ns1)
    elif cmd == "load" and "--dry-run" in argv:
        assert after == before, argv
    elif cmd == "load":
        assert len(cc1 - cc0) == 1 and cc0 <= cc1, (argv, cc1 - cc0)
        assert "--replace" in argv or all(p1[n] == p0[n] for n in p0), argv
    elif cmd == "unload":
        gone = cc0 - cc1
        assert len(gone) == 1 and gone <= set(words) and cc1 <= cc0, (argv, gone)
    elif cmd == "set":
        assert cc1 == cc0
        changed = [n for n in p0 if p1.get(n) != p0[n]]
        assert len(changed) <= 1 and set(changed) <= set(words), (argv, changed)
    else:
        assert (cc1, p1) == (cc0, p0), argv
