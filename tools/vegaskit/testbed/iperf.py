"""iperf3 flows: one server per flow (3.12 runs one test per server), JSON results."""
from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass

from .netns import Lab, Netns


class FlowFailed(RuntimeError):
    """A flow's iperf3 ended in an error (make results makes the repetition once more:
    docs/DESIGN.md §7.1)."""


@dataclass
class FlowResult:
    """What iperf3 -J reports for one flow; times relative to the flow's start."""
    cc: str
    bps_received: float
    retransmits: int
    intervals: list[dict]     # start, end, bytes, snd_cwnd (bytes), rtt_us, retransmits
    seconds: float = 0.0      # the test's length: a transfer's completion time with -n
    bytes_received: int = 0
    received: list[tuple[float, float, int]] = ()   # the receiver's (start, end, bytes)

    @classmethod
    def from_json(cls, cc: str, doc: dict) -> "FlowResult":
        """`intervals` are the sender's (bytes written, tcp_info cwnd, RTT,
        retransmissions); `received` the receiver's (--get-server-output): what
        the sender wrote into its socket in an interval is not what crossed."""
        received = [(iv["streams"][0]["start"], iv["streams"][0]["end"], iv["streams"][0]["bytes"])
                    for iv in doc.get("server_output_json", {}).get("intervals", [])]
        ivs = []
        for iv in doc["intervals"]:
            s = iv["streams"][0]
            ivs.append({"start": s["start"], "end": s["end"], "bytes": s["bytes"],
                        "snd_cwnd": s.get("snd_cwnd", 0), "rtt_us": s.get("rtt", 0),
                        "retransmits": s.get("retransmits", 0)})
        end = doc["end"]
        return cls(cc=cc, bps_received=end["sum_received"]["bits_per_second"],
                   retransmits=end["sum_sent"].get("retransmits", 0), intervals=ivs,
                   seconds=end["sum_received"].get("seconds", 0.0),
                   bytes_received=end["sum_received"].get("bytes", 0), received=received)


def server(lab: Lab, ns: Netns, port: int, interval: float = 0.5) -> subprocess.Popen:
    """One-off server; JSON, so a client's --get-server-output returns its intervals."""
    p = lab.spawn(ns, ["iperf3", "-s", "-1", "-J", "-i", str(interval), "-p", str(port)])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:      # wait until it listens
        if f":{port} " in ns.run(["ss", "-Htln"], check=False):
            return p
        time.sleep(0.05)
    raise RuntimeError(f"iperf3 server on port {port} did not start")


def client(lab: Lab, ns: Netns, addr: str, port: int, cc: str, seconds: float,
           interval: float = 0.5, mss: int | None = None, streams: int = 1) -> subprocess.Popen:
    """A flow of `seconds` (or `streams` of them, iperf3 -P, at most 128). (Transfers
    of N bytes: testbed/transfer.py; iperf3 -n stops counting when the sender has
    written them, not when they arrive.)"""
    argv = ["iperf3", "-c", addr, "-p", str(port), "-C", cc, "-i", str(interval), "-J",
            "--get-server-output", "-t", str(seconds)]
    if mss:
        argv += ["-M", str(mss)]
    if streams > 1:
        argv += ["-P", str(streams)]
    return lab.spawn(ns, argv)


def wait(p: subprocess.Popen, cc: str, timeout: float) -> FlowResult:
    out, err = p.communicate(timeout=timeout)
    doc = json.loads(out) if out.strip() else {}
    if p.returncode != 0 or "error" in doc:
        raise FlowFailed(f"iperf3 ({cc}) failed: {doc.get('error') or err.decode().strip()}")
    return FlowResult.from_json(cc, doc)
