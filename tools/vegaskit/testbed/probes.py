"""Running udpprobe (numbered, timestamped UDP datagrams) between two namespaces
of a lab: the receiver first, then the sender, then the receiver's JSON."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from . import udpprobe
from .netns import Lab, Netns

PROBE = Path(udpprobe.__file__)


def probe_recv(lab: Lab, ns: Netns, port: int, idle: float, max_wait: float) -> subprocess.Popen:
    p = lab.spawn(ns, [sys.executable, str(PROBE), "recv", "--bind", f"0.0.0.0:{port}",
                       "--idle", str(idle), "--max-wait", str(max_wait)])
    if p.stdout.readline().strip() != b"ready":
        raise RuntimeError(f"udpprobe recv: {p.stderr.read().decode().strip()}")
    return p


def probe_send(lab: Lab, ns: Netns, addr: str, port: int, count: int, pps: float,
               size: int = 64) -> subprocess.Popen:
    return lab.spawn(ns, [sys.executable, str(PROBE), "send", "--to", f"{addr}:{port}",
                          "--count", str(count), "--pps", str(pps), "--size", str(size)])


def probe_result(p: subprocess.Popen, timeout: float) -> dict:
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"udpprobe: {err.decode().strip()}")
    return json.loads(out.decode().strip().splitlines()[-1])
