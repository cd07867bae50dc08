"""Stage: time to move established connections between two of our controllers,
at 200 up to 100,000 of them (docs/DESIGN.md §9.1).

Idle connections between two namespaces on a veth (holdconns), spread over
ports so that more than one address pair's ephemeral ports fit; the client's
end starts on the first controller. Each round swaps the client namespace's
established connections to the other controller and back (`vegasctl swap
--established-only`), rounds interleaved across sizes; the figure is swap's
own move_ms (the iterator walk with its setsockopt calls), a median with its
interval (both directions pooled). Also: failures (must be 0), vegasctl's peak
memory (wait4's rusage of that child), and the kernel's slab growth per
connection held, host-wide (it includes the holding processes' own). The
connections are split over as many holder pairs as the file limit needs: root
without CAP_SYS_RESOURCE (a container) cannot raise it above its hard ceiling.
"""
from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import sys
import threading

from vegaskit.analysis.stats import median_summary
from vegaskit.paths import VEGASCTL
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import veth_pair

PAIR = ("bpf_vegas", "bpf_vegas_a")


def slab_kb() -> int:
    for line in open("/proc/meminfo"):
        if line.startswith("Slab:"):
            return int(line.split()[1])
    return 0


def why(proc: subprocess.Popen) -> str:
    """A helper's state for an error message: running, or its exit and stderr's end."""
    if proc.poll() is None:
        return "still running"
    err = proc.stderr.read().decode(errors="replace").strip().splitlines()
    return f"exited {proc.returncode}: {err[-1] if err else 'no stderr'}"


def line(proc: subprocess.Popen, timeout: float, want: str) -> None:
    """The next line a helper prints must be `want`; else an error saying what it did."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise RuntimeError(f"holdconns printed nothing in {timeout:.0f} s ({why(proc)})")
    got = proc.stdout.readline().strip().decode()
    if got != want:
        if not got:                     # end of file: let it finish exiting, for its status
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        raise RuntimeError(f"holdconns printed {got!r}, not {want!r} ({why(proc)})")


def swap(ns: str, target: str) -> tuple[dict, int]:
    """One `vegasctl swap`: its JSON, and its own peak memory (wait4's rusage of
    that child alone, in kB)."""
    p = subprocess.Popen([str(VEGASCTL), "swap", target, "--netns", ns, "--established-only",
                          "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killer = threading.Timer(600, p.kill)      # a swap that hangs fails the stage, not the bench
    killer.start()
    try:
        out, err = p.stdout.read(), p.stderr.read()
    finally:
        killer.cancel()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise RuntimeError(f"vegasctl swap {target}: {err.strip()}")
    return json.loads(out), usage.ru_maxrss


def per_holder() -> int:
    """Sockets one holdconns process may hold: its file limit's hard ceiling, which root
    may raise only with CAP_SYS_RESOURCE (a container may lack it), less some spare."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 256


def one_size(conns: int, rounds: int) -> dict:
    times, failed, moved, rss = [], 0, [], 0
    n_holders = -(-conns // per_holder())
    with Lab() as lab:
        p = veth_pair(lab)
        for ns in (p.a, p.b):
            ns.sysctl("net.ipv4.ip_local_port_range", "1024 65535")
            ns.sysctl("net.core.somaxconn", 4096)
        slab0, procs, port = slab_kb(), [], 7500
        for h in range(n_holders):      # pairs of holders, each within the file limit
            share = conns // n_holders + (h < conns % n_holders)
            ports = ",".join(str(port + i) for i in range(max(1, -(-share // 60000))))
            port += 16
            srv = lab.spawn(p.b, [sys.executable, "-m", "vegaskit.testbed.holdconns", "server",
                                  "--ports", ports, "--conns", str(share)], stdin=subprocess.PIPE)
            line(srv, 30, "listening")
            cli = lab.spawn(p.a, [sys.executable, "-m", "vegaskit.testbed.holdconns", "client",
                                  "--addr", p.addr_b, "--ports", ports, "--conns", str(share),
                                  "--cc", PAIR[0]], stdin=subprocess.PIPE)
            procs += [(cli, share), (srv, share)]
        for proc, share in procs:
            line(proc, 120 + share / 500, f"ready {share}")   # 100,000: about 5 minutes at most
        held_kb = slab_kb() - slab0
        for rnd in range(rounds):
            for target in (PAIR[1], PAIR[0]):
                res, peak = swap(p.a.name, target)
                rss = max(rss, peak)
                times.append(res["move_ms"])
                failed += res["failed"]
                moved.append(res["moved"])
    return {"connections": conns, "holders": n_holders, "swaps": len(times),
            "move_ms": median_summary(times), "moved_min": min(moved), "failed": failed,
            "vegasctl_max_rss_kb": rss, "slab_kb_per_connection": held_kb / conns}


def run(rounds: int, sizes: tuple[int, ...] = (200, 1_000, 10_000, 100_000)) -> dict:
    return {"pair": list(PAIR), "rounds": rounds, "sizes": [one_size(n, rounds) for n in sizes]}
