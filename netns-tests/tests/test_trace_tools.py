"""The kernel-side trace tools (tools/trace) on real traffic, for reno and bpf_vegas.

One run per controller: two iperf3 flows of that controller share the testbed's
20 Mbit/s, 100-packet bottleneck (topology.htb_path), to server ports A and B. Every
tool is started before the traffic (and waited for: its header line is the
readiness signal), filtered on flow A (-R A, or `0 A` for the .bt scripts; a few
extra instances filter on -L B or summarise per interval), and stopped with SIGINT
after the flows end. At SQUEEZE_AT the bottleneck's pfifo is cut to 1 packet for
SQUEEZE_FOR seconds: with two flows each keeping a window above the BDP (~1
packet) that forces drops, so both flows retransmit and change congestion state
under either controller (reno also overflows the 100-packet buffer on its own).

What is checked, per tool:
- output: it traced flow A (per-ACK tools: >= 1000 lines; state tools: an entry
  into recovery or loss; retransmission tools: >= 1 retransmission), exited 0 on
  SIGINT, lost no events; the .bt scripts name the flow's controller; the bcc
  tools' stdout is nothing but CSV.
- cwnd against iperf3's tcp_info samples (snd_cwnd / MSS 1448, every 0.1 s): per-ACK
  tools point by point and as medians (test_cwnd_agrees_with_iperf); the state and
  retransmission tools' events within what iperf3 and the per-ACK twin saw
  (test_event_cwnd_agrees). Why each margin is what it is: those tests' docstrings.
- port filters: every line is flow A's port (-R A / `0 A`) or flow B's local port
  (-L B / `B 0`), although the other flow was as busy and (for the state and
  retransmission tools) retransmitted too.
- interval mode (bcc tools): the per-interval summaries add up to the per-event
  output of the twin instance (same events, counted in the kernel for tcpcwnd).
- tcpcwnd.py's DIFF estimate: every line matches its definition, from that line's
  cwnd and srtt and the running minimum of the flow's srtt.
- -T/-t/--ktime columns are consistent; the bcc tools' CLI follows bcc's.

A tcp_probe capture of our own (testbed.tcpprobe, not the tools under test) watches
both flows: a run in which the kernel defect of docs/DESIGN.md §10.2 struck (an
ssthresh of 10^7 packets and more; a CI run saw the tools report cwnd 66,786,760
during the squeeze) is set aside and run again, up to ATTEMPTS runs, as the reports
set such repetitions aside. The tools must report such windows as they are; the
comparisons with iperf3 are of the controller's windows, not of the defect's.
"""
from __future__ import annotations

import bisect
import csv
import io
import json
import math
import os
import sys
import re
import signal
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import DEFECT_PKTS, loaded
from vegaskit import intf, paths
from vegaskit.testbed import iperf, tcpprobe
from vegaskit.testbed.netns import Lab
from vegaskit.testbed.topology import htb_path, receiver_addr, sender_addr
from vegaskit.testbed.shaping import QDISC_HANDLE

pytestmark = pytest.mark.kernel
SENDER, RECEIVER = sender_addr(), receiver_addr()

TRACE = paths.REPO / "tools" / "trace"
PY = sys.executable          # the venv: it sees Debian's bcc bindings
BPFTRACE = "/usr/bin/bpftrace"
MSS = 1448
RATE, BUFFER, SECONDS = 20_000_000, 100, 8
SQUEEZE_AT, SQUEEZE_FOR = 6.0, 0.3
IPERF_INTERVAL = 0.1
ALIGN = 0.010           # s: uncertainty of iperf3's t = 0 against the trace (docstring)
SHIFT_MAX = 0.040       # s: the latest iperf3's zero is looked for after the trace's
# Server ports of our own (below the ephemeral range, distinct per pytest process)
# so that other testbeds on this host, which use 5201, never match our filters.
PORT_A = 10000 + 2 * (os.getpid() % 10000)
PORT_B = PORT_A + 1
READY_TIMEOUT = 60
ATTEMPTS = 4            # runs before the defect (module docstring) fails the module


@dataclass
class Tool:
    argv: list[str]
    kind: str               # cwnd | state | retrans
    fmt: str                # bt | csv
    summary: bool = False   # interval mode


def _bt(script: str, lport: int, rport: int) -> list[str]:
    return [BPFTRACE, str(TRACE / script), str(lport), str(rport)]


def _py(tool: str, *args) -> list[str]:
    return [PY, str(TRACE / tool), *map(str, args)]


A, B = PORT_A, PORT_B
TOOLS = {
    "tcpcwnd.bt": Tool(_bt("tcpcwnd.bt", 0, A), "cwnd", "bt"),
    "tcpccstate.bt": Tool(_bt("tcpccstate.bt", 0, A), "state", "bt"),
    "tcpccretrans.bt": Tool(_bt("tcpccretrans.bt", 0, A), "retrans", "bt"),
    "tcpcwnd.py": Tool(_py("tcpcwnd.py", "-R", A, "--ktime", "--csv"), "cwnd", "csv"),
    "tcpccstate.py": Tool(_py("tcpccstate.py", "-R", A, "-T", "-t", "--ktime", "--csv"),
                          "state", "csv"),
    "tcpccretrans.py": Tool(_py("tcpccretrans.py", "-R", A, "--ktime", "--csv"),
                            "retrans", "csv"),
    # local-port filters, on the receiving end of flow B
    "tcpcwnd.bt-lport": Tool(_bt("tcpcwnd.bt", B, 0), "cwnd", "bt"),
    "tcpcwnd.py-lport": Tool(_py("tcpcwnd.py", "-L", B, "--ktime", "--csv"), "cwnd", "csv"),
    # interval mode: one summary per second
    "tcpcwnd.py-1s": Tool(_py("tcpcwnd.py", "-R", A, "--ktime", "--csv", 1), "cwnd", "csv", True),
    "tcpccstate.py-1s": Tool(_py("tcpccstate.py", "-R", A, "--ktime", "--csv", 1),
                             "state", "csv", True),
    "tcpccretrans.py-1s": Tool(_py("tcpccretrans.py", "-R", A, "--ktime", "--csv", 1),
                               "retrans", "csv", True),
}
MAIN = ["tcpcwnd.bt", "tcpccstate.bt", "tcpccretrans.bt",
        "tcpcwnd.py", "tcpccstate.py", "tcpccretrans.py"]
CWND_TOOLS = [k for k in MAIN if TOOLS[k].kind == "cwnd"]
EVENT_TOOLS = [k for k in MAIN if TOOLS[k].kind != "cwnd"]


# ---------------------------------------------------------------- parsing

@dataclass
class Rec:
    t: float                # CLOCK_MONOTONIC seconds
    laddr: str
    lport: int
    raddr: str
    rport: int
    cwnd: int | None
    extra: dict = field(default_factory=dict)


def _hostport(s: str) -> tuple[str, int]:
    h, p = s.rsplit(":", 1)
    return h.strip("[]"), int(p)


def parse_bt(kind: str, text: str) -> list[Rec]:
    """The .bt scripts' fixed columns; other lines (Attaching..., header) skipped."""
    recs = []
    for line in text.splitlines():
        p = line.split()
        if len(p) < 8 or not re.fullmatch(r"\d+\.\d{6}", p[0]):
            continue
        (la, lp), (ra, rp) = _hostport(p[1]), _hostport(p[2])
        if kind == "cwnd":          # KTIME L R CC CWND ...
            cwnd, extra = p[4], {"cc": p[3]}
        elif kind == "state":       # KTIME L R CC OLD -> NEW MS CWND ...
            cwnd, extra = p[8], {"cc": p[3], "old": p[4], "new": p[6], "ssthresh": p[9]}
        else:                       # KTIME L R CC STATE CA_STATE CWND ...
            cwnd, extra = p[6], {"cc": p[3], "ca_state": p[5], "ssthresh": p[7]}
        recs.append(Rec(float(p[0]), la, lp, ra, rp, int(cwnd), extra))
    return recs


def parse_csv(text: str) -> tuple[list[str], list[dict]]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows, "no output at all"
    header, body = rows[0], rows[1:]
    bad = [r for r in body if len(r) != len(header)]
    assert not bad, f"stdout is not pure CSV: {bad[:3]}"
    return header, [dict(zip(header, r)) for r in body]


def parse_py(text: str) -> list[Rec]:
    _, rows = parse_csv(text)
    return [Rec(float(r["ktime"]), r["laddr"], int(r["lport"]), r["raddr"], int(r["rport"]),
                int(r["cwnd"]) if r.get("cwnd") else None, r) for r in rows]


def records(run, key: str) -> list[Rec]:
    tool = TOOLS[key]
    return parse_bt(tool.kind, run.out[key]) if tool.fmt == "bt" else parse_py(run.out[key])


def data_flow(recs: list[Rec]) -> list[Rec]:
    """Flow A's data connection: the sender's socket with the most records (the
    other one to port A is iperf3's control connection)."""
    mine = [r for r in recs if r.laddr == SENDER and r.raddr == RECEIVER
            and r.rport == PORT_A]
    assert mine, "no records of flow A"
    counts: dict[int, int] = {}
    for r in mine:
        counts[r.lport] = counts.get(r.lport, 0) + 1
    lport = max(counts, key=counts.get)
    return [r for r in mine if r.lport == lport]


# ---------------------------------------------------------------- the runs

@dataclass
class ToolRun:
    cc: str
    flow_a: iperf.FlowResult
    flow_b: iperf.FlowResult
    out: dict[str, str]         # stdout per tool
    err: dict[str, str]         # stderr per tool
    rc: dict[str, int]
    largest_window: int = 0     # packets, by our own tcp_probe capture of both flows


def _squeeze(path) -> None:
    """Cut the bottleneck's pfifo to 1 packet for SQUEEZE_FOR seconds."""
    def limit(n: int) -> None:
        path.router.run(["tc", "qdisc", "change", "dev", path.bottleneck_dev, "parent", "1:1",
                         "handle", QDISC_HANDLE, "pfifo", "limit", str(n)], check=False)
    limit(1)
    try:
        time.sleep(SQUEEZE_FOR)
    finally:
        limit(BUFFER)


def _wait_ready(procs: dict, files: dict) -> None:
    """Each tool prints its header once its probes are attached (bcc compiles first)."""
    deadline = time.monotonic() + READY_TIMEOUT
    pending = set(procs)
    while pending:
        for key in list(pending):
            text = files[key][0].read_text()
            if "LPORT" in text or "lport" in text:
                pending.discard(key)
            elif procs[key].poll() is not None:
                raise AssertionError(f"{key} exited ({procs[key].returncode}): "
                                     f"{files[key][1].read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not ready after {READY_TIMEOUT} s: {sorted(pending)}")
        time.sleep(0.05)


def traced_run(cc: str, tmp: Path) -> ToolRun:
    with tcpprobe.TcpProbe(PORT_A, PORT_B) as probe:
        run = _traced_run(cc, tmp)
    run.largest_window = tcpprobe.largest_window(probe.records)
    return run


def _traced_run(cc: str, tmp: Path) -> ToolRun:
    with Lab() as lab:
        path = htb_path(lab, RATE, BUFFER)
        procs, files, handles = {}, {}, []
        try:
            for key, tool in TOOLS.items():
                files[key] = (tmp / f"{key}.out", tmp / f"{key}.err")
                out, err = open(files[key][0], "w"), open(files[key][1], "w")
                handles += [out, err]
                procs[key] = lab.spawn(None, tool.argv, stdout=out, stderr=err)
            _wait_ready(procs, files)
            time.sleep(0.2)
            iperf.server(lab, path.receiver, PORT_A)
            iperf.server(lab, path.receiver, PORT_B)
            ca = iperf.client(lab, path.sender, RECEIVER, PORT_A, cc, SECONDS,
                              interval=IPERF_INTERVAL)
            cb = iperf.client(lab, path.sender, RECEIVER, PORT_B, cc, SECONDS,
                              interval=IPERF_INTERVAL)
            timer = threading.Timer(SQUEEZE_AT, _squeeze, args=(path,))
            timer.start()
            try:
                flow_a = iperf.wait(ca, cc, timeout=SECONDS + 30)
                flow_b = iperf.wait(cb, cc, timeout=SECONDS + 30)
            finally:
                timer.cancel()
                timer.join()
            # iperf3's samples beside the tools' outputs: a failed comparison can be replayed
            (tmp / "iperf3-a.json").write_text(json.dumps(flow_a.intervals))
            time.sleep(0.3)                     # the last ACKs' events
            for p in procs.values():
                os.killpg(p.pid, signal.SIGINT)
            rc = {}
            for key, p in procs.items():
                try:
                    rc[key] = p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    # bpftrace 0.17 was once (1 run in ~15, cause unknown)
                    # still running 20 s after SIGINT; a second Ctrl-C is what
                    # a user would press. The tool must still exit 0.
                    print(f"{key}: still running 10 s after SIGINT, sent another")
                    os.killpg(p.pid, signal.SIGINT)
                    try:
                        rc[key] = p.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        rc[key] = None          # Lab.close() kills it
        finally:
            for h in handles:
                h.close()
    return ToolRun(cc, flow_a, flow_b,
               {k: f[0].read_text() for k, f in files.items()},
               {k: f[1].read_text() for k, f in files.items()}, rc)


def clean_run(cc: str, tmp_path_factory) -> ToolRun:
    """A traced run the defect (module docstring) left alone, of up to ATTEMPTS."""
    aside = []
    for _ in range(ATTEMPTS):
        run = traced_run(cc, tmp_path_factory.mktemp(f"trace-{cc}"))
        if run.largest_window <= DEFECT_PKTS:
            return run
        aside.append(run.largest_window)
        print(f"{cc}: run set aside, the kernel defect of DESIGN §10.2 struck "
              f"(largest window or ssthresh {run.largest_window} packets)")
    pytest.fail(f"{cc}: every one of {ATTEMPTS} runs met the kernel defect (DESIGN §10.2): "
                f"largest windows {aside}")


@pytest.fixture(scope="module", params=["reno", "vegas"])
def run(request, tmp_path_factory) -> ToolRun:
    if request.param == "reno":
        return clean_run("reno", tmp_path_factory)
    with loaded(request.param) as name:
        return clean_run(name, tmp_path_factory)


# ---------------------------------------------------------------- helpers

def iperf_cwnd(flow: iperf.FlowResult) -> list[tuple[float, float, float]]:
    """(interval end s, snd_cwnd in packets, srtt s) from iperf3's tcp_info
    samples; an srtt of 0 (none yet) is infinite."""
    return [(iv["end"], iv["snd_cwnd"] / MSS, iv["rtt_us"] / 1e6 or math.inf)
            for iv in flow.intervals]


class Steps:
    """A per-ACK record stream as a step function of time since the flow's first ACK.

    tcp:tcp_probe fires before an ACK is processed, so a record shows the value
    in force since the previous ACK was processed: the value in force at t is
    the first record after t (unless a timer acted in between: stalled())."""

    def __init__(self, recs: list[Rec]):
        self.t0 = recs[0].t
        self.ts = [r.t - self.t0 for r in recs]
        self.cwnd = [r.cwnd for r in recs]

    def at(self, t: float) -> int:
        """The value in force at t: that of the first record after t."""
        return self.cwnd[min(len(self.cwnd) - 1, bisect.bisect_right(self.ts, t))]

    def range(self, t1: float, t2: float) -> tuple[int, int]:
        """min and max of the values in force at some time in [t1, t2]: the
        records from the last at or before t1 to the first after t2."""
        i = max(0, bisect.bisect_right(self.ts, t1) - 1)
        vals = self.cwnd[i:bisect.bisect_right(self.ts, t2) + 1]
        return min(vals), max(vals)

    def stalled(self, t1: float, t2: float) -> bool:
        """No ACK at all in [t1, t2]: the flow waits for a timer."""
        i = bisect.bisect_left(self.ts, t1)
        return i == len(self.ts) or self.ts[i] > t2

    def before(self, t: float) -> tuple[float, int]:
        """Time and value of the last record at or before t (the first if none)."""
        i = max(0, bisect.bisect_right(self.ts, t) - 1)
        return self.ts[i], self.cwnd[i]

    def around(self, t: float) -> set[int]:
        """The values of the last record before t and the first after it."""
        i = bisect.bisect_right(self.ts, t)
        return {self.cwnd[j] for j in (i - 1, i) if 0 <= j < len(self.cwnd)}


def is_mid_ack(steps: Steps, t: float, r: Rec, prev: tuple[float, Rec] | None) -> bool:
    """Whether an event r at t reads a cwnd a .bt script can see that tcp:tcp_probe
    (which fires before each ACK is processed) cannot show, by the kernel's rules:
    - the growth of the last ACK before t, if a timer (RTO, RACK reordering, TLP)
      then acted before the next ACK: that ACK's probe + 1 or + 2 (an ACK covers
      <= 2 segments with delayed ACKs; tcp_slow_start, tcp_cong_avoid_ai, PRR);
    - a retransmission in Recovery after PRR's cut of the last ACK before t, if an
      RTO then acted before the next ACK (that ACK's probe shows 1, tcp_enter_loss):
      tcp_cwnd_reduction sets cwnd = in-flight + sndcnt, at most ssthresh once
      in-flight is under it (+1 on Recovery's first ACK, the forced retransmission:
      the probe's + 1 or + 2 above covers it), and at most the probe's value while
      in-flight, itself at most that value, is above it; so 1..max(probe, ssthresh)
      (seen: probe 3, event 2 in Recovery with ssthresh 3, next probe 1). Only
      tcpccretrans.bt's records carry ca_state and ssthresh;
    - leaving CWR/Recovery, tcp_end_cwnd_reduction() sets cwnd = ssthresh, and the
      same ACK may enter Recovery again at once: the ssthresh of an event earlier
      within the same inter-ACK gap.
    """
    tp, p = steps.before(t)
    if r.cwnd in (p + 1, p + 2):
        return True
    ssthresh = r.extra.get("ssthresh", "")
    if r.extra.get("ca_state") == "recovery" and ssthresh.isdigit() and steps.at(t) == 1 \
            and 1 <= r.cwnd <= max(p, int(ssthresh)):
        return True
    return (prev is not None and prev[0] >= tp and prev[1].extra.get("ssthresh", "").isdigit()
            and r.cwnd == int(prev[1].extra["ssthresh"]))


# ---------------------------------------------------------------- tests

def test_cli_follows_bcc_conventions():
    for tool in ("tcpcwnd.py", "tcpccstate.py", "tcpccretrans.py"):
        h = subprocess.run(_py(tool, "-h"), capture_output=True, text=True, timeout=30)
        assert h.returncode == 0, h.stderr
        for opt in ("-L PORTS, --lport", "-R PORTS, --rport", "-T, --time", "-t, --timestamp",
                    "--csv", "--duration", "interval", "count"):
            assert opt in h.stdout, f"{tool} -h lacks {opt}"
        e = subprocess.run(_py(tool, "--ebpf", "-L", "80", "-R", "443,8443"),
                           capture_output=True, text=True, timeout=30)
        assert e.returncode == 0, e.stderr
        assert "if (args->sport != 80) return 0;" in e.stdout
        assert "if (args->dport != 443 && args->dport != 8443) return 0;" in e.stdout
        bad = subprocess.run(_py(tool, "-R", "70000"), capture_output=True, text=True, timeout=30)
        assert bad.returncode == 2 and "1..65535" in bad.stderr


@pytest.mark.parametrize("key", MAIN + ["tcpcwnd.bt-lport", "tcpcwnd.py-lport"])
def test_output(run, key):
    tool = TOOLS[key]
    assert run.rc[key] == 0, f"{key} exit {run.rc[key]}: {run.err[key][-2000:]}"
    assert "lost" not in run.err[key].lower(), run.err[key]
    recs = records(run, key)
    if key.endswith("-lport"):
        assert len([r for r in recs if r.lport == PORT_B]) >= 1000, len(recs)
        return
    flow = data_flow(recs)
    if tool.kind == "cwnd":
        assert len(flow) >= 1000, f"only {len(flow)} per-ACK records of flow A"
        assert all(r.cwnd > 0 for r in flow)
    elif tool.kind == "state":
        new = [r.extra["new"] for r in flow]
        assert {"recovery", "loss"} & set(new), f"no loss episode traced: {new}"
    else:
        assert len(flow) >= 1
        assert all(r.extra["ca_state"] in (*intf.CA_STATES, "?")
                   for r in flow)
    if tool.fmt == "bt":
        # The .bt scripts name the controller. iperf3 sets TCP_CONGESTION after
        # connect(), so the flow's very first ACK (of its cookie) is seen under
        # the namespace's default controller; everything past 1 s is ours.
        t0 = flow[0].t if tool.kind == "cwnd" else data_flow(records(run, "tcpcwnd.bt"))[0].t
        assert {r.extra["cc"] for r in flow if r.t - t0 >= 1.0} == {run.cc}


def test_time_columns(run):
    """-T (HH:MM:SS.mmm), -t (s since start) and --ktime (CLOCK_MONOTONIC) agree."""
    header, rows = parse_csv(run.out["tcpccstate.py"])
    assert header[:3] == ["time", "ts", "ktime"]
    assert rows
    offsets = []
    for r in rows:
        assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", r["time"]), r["time"]
        assert 0 <= float(r["ts"]) < READY_TIMEOUT + SECONDS + 60
        offsets.append(float(r["ktime"]) - float(r["ts"]))
    assert max(offsets) - min(offsets) < 1e-5      # both from the event's own timestamp


def cwnd_offsets(steps: Steps, samples: list, shift: float) -> tuple[list, list, list]:
    """Each iperf3 sample (t, cwnd) against the tool's values in force within
    t + shift +- ALIGN: (packets off, for the samples outside stalls; the samples in
    stalls; the samples off), the last two as (t, iperf3, tool's min, max)."""
    dist, stalls, misses = [], [], []
    for t, c in samples:
        lo, hi = steps.range(t + shift - ALIGN, t + shift + ALIGN)
        off = max(0, lo - c, c - hi)
        if off and steps.stalled(t + shift - ALIGN, t + shift + ALIGN):
            # What the last ACK's processing left, replaced by a timer (RTO,
            # TLP) before the next probe: no per-ACK tool can show it.
            stalls.append((round(t, 3), c, lo, hi))
            continue
        dist.append(off)
        if off:
            misses.append((round(t, 3), c, lo, hi))
    return dist, stalls, misses


@pytest.mark.parametrize("key", CWND_TOOLS)
def test_cwnd_agrees_with_iperf(run, key):
    """A per-ACK tool's cwnd against iperf3's samples of the same flow.

    Paired: each iperf3 sample at time t (t >= 1 s, past slow start) against the cwnd values in force within t +- ALIGN (10 ms). A record
    is tcp_probe's, taken before its ACK is processed, so it shows the value in
    force since the previous ACK; the values in force over an interval are those
    of its records plus the first record after it.
    iperf3's own t = 0 is not in the trace; t = 0 here is the flow's first ACK
    (of iperf3's 37-byte cookie), and on this testbed iperf3's zero follows it by
    a few ms (the best-fitting offset measured 2-4 ms; the first data ACK came
    1-13 ms after the cookie's). The window absorbs that offset: point to point
    (the value in force at t itself) 86-99% of samples matched in five runs
    per controller, within the window 100%. On a host whose timers fired late
    (a p50 of 88 us, emulators up to 31 ms late) a CI run matched 82% for reno,
    every miss within 2 packets; its iperf3 samples were not kept (they are now,
    iperf3-a.json beside the tools' outputs), so the cause is not shown. A later
    zero of iperf3's clock fits it, so the offset is now fitted per run: the one
    in [0, SHIFT_MAX] that matches the most samples, one number, printed. If the
    cause was jitter instead, this test will fail again and its samples will say
    so. Required: >= 90% exactly, all
    within 3 packets (PRR in a recovery moves cwnd by several packets per
    ACK), except samples taken in a stall, with no ACK at all within t +- ALIGN
    (the squeeze's RTO waits): there iperf3 reads what the last ACK's
    processing left, which a timer replaces before the next probe fires, so no
    per-ACK tool can show it (seen: 2 where the probes on both sides say 1, an
    RTO between; a CI run had one sample 8 off, its trace not kept). Stalled
    samples count as inexact toward the 90% and are printed, as are the
    point-to-point figures.

    Medians over the steady part (2 s .. end): the tool's
    time-weighted median (its step function sampled every ms; the per-ACK median
    would weight the times a flow has the larger window, hence more ACKs) against
    the median of iperf3's samples, within max(2 packets, 10%): reno's window
    saw-tooths over ~20 packets, and 60 samples spread over several cycles put the
    sample median within ~1 packet of the true one."""
    steps = Steps(data_flow(records(run, key)))
    samples = [(t, c) for t, c, _ in iperf_cwnd(run.flow_a) if t >= 1.0]
    assert len(samples) >= 50
    # iperf3's zero follows the trace's by an offset of its own run (see the docstring):
    # the one in [0, SHIFT_MAX] that matches the most samples
    shift = max((i / 1000 for i in range(int(SHIFT_MAX * 1000) + 1)),
                key=lambda sh: sum(d == 0 for d in cwnd_offsets(steps, samples, sh)[0]))
    point = sorted(abs(steps.at(t + shift) - c) for t, c in samples)
    dist, stalls, misses = cwnd_offsets(steps, samples, shift)
    exact = sum(d == 0 for d in dist) / len(samples)
    tool_med = statistics.median(steps.at(2.0 + i / 1000) for i in range(int((SECONDS - 2) * 1000)))
    iperf_med = statistics.median(c for t, c in samples if t > 2.0)
    print(f"{run.cc} {key}: n={len(samples)}; iperf3's zero {shift * 1000:.0f} ms after the "
          f"trace's; within +-{ALIGN * 1000:.0f} ms: {exact:.0%} exact, "
          f"max off {max(dist, default=0)}, in stalls {stalls}; point-to-point |diff| median "
          f"{statistics.median(point)}, max {point[-1]}, zero "
          f"{sum(d == 0 for d in point) / len(point):.0%}; median cwnd tool {tool_med} iperf3 {iperf_med}")
    assert exact >= 0.9, f"only {exact:.0%} of iperf3's samples match the tool within {ALIGN} s"
    assert max(dist) <= 3, f"iperf3 {max(dist)} packets off the tool's values; (t, iperf3, " \
        f"tool's min, max): {misses}"
    assert abs(tool_med - iperf_med) <= max(2, 0.1 * iperf_med), (tool_med, iperf_med)


@pytest.mark.parametrize("key", EVENT_TOOLS)
def test_event_cwnd_agrees(run, key):
    """Each event's cwnd (1 s <= t <= end - 0.25 s:
    past slow start, iperf3 samples on both sides) is at least 1 and at most
    the largest of iperf3's samples within +-0.25 s of it, widened by max(3, 15%)
    for the growth between a sample and the event. No lower bound from iperf3:
    these events are loss episodes, where an RTO sets cwnd to 1 and PRR can cut
    it to 1-2, and at this path's ~1 ms RTT slow start restores it within a few
    ms, so a 0.1 s sampler can miss the dip entirely (seen: events at cwnd 1-2
    while every iperf3 sample within 0.25 s was >= 6). Upward, each sample is
    widened by the congestion-avoidance growth possible between it and the
    event, 1 packet per RTT (iperf3's srtt): at this path's RTT of a few ms
    cwnd can climb tens of packets between two samples 0.1 s apart, and a
    loss event can catch it at the top (slow start after a loss stops at
    ssthresh, below the window the samples saw). The other way round, a
    loss episode can stall the flow, no ACK until the RTO fires, and with no
    ACK cwnd stays at its last ACK's value (PRR only moves it on ACKs), while
    iperf3 showed nothing of it (seen: Recovery entered at cwnd 60, 0.26 s with
    no ACK, the RTO's Loss event at 60, and no iperf3 sample above 32 within
    0.25 s of it); so the window reaches from the last ACK before the event
    (the per-ACK tool's record) - 0.25 s. And it is the per-ACK tool's cwnd
    at the ACK just before or just after the event (the same kernel variable:
    events happen while an ACK is processed, or between two ACKs) for >= 90%.
    The bcc tools report the last tcp_probe value by design. The .bt scripts read
    the socket mid-ACK, and in the squeeze's loss episodes the kernel sets values
    there that no tcp_probe shows; those its rules predict are counted apart
    (is_mid_ack: the last ACK's growth or PRR cut before a timer acted; cwnd =
    ssthresh when a Recovery ends and the same ACK starts the next), the rest must stay
    under 10%. E.g. leaving Recovery at cwnd 2 with ssthresh 20 and re-entering
    it in the same ACK reports 20, where tcp_probe sees 2 before and 1 after."""
    twin = "tcpcwnd.bt" if key.endswith(".bt") else "tcpcwnd.py"
    steps = Steps(data_flow(records(run, twin)))
    samples = iperf_cwnd(run.flow_a)
    # past slow start, and while iperf3 samples on both sides of the event exist
    events = [r for r in data_flow(records(run, key))
              if r.cwnd is not None and 1.0 <= r.t - steps.t0 <= SECONDS - 0.25]
    assert events, "no events past slow start"
    out_of_range, mid_ack, mismatched = [], 0, []
    prev = None
    for r in events:
        t = r.t - steps.t0
        # A stall (no ACK until a timer fires) freezes cwnd at its last ACK's
        # value: the window reaches back to that ACK (docstring).
        since = min(t, steps.before(t)[0])
        # Each sample's value, widened by what congestion avoidance can add
        # (1 packet per RTT, iperf3's srtt) between it and the event.
        near = [c + max(3, 0.15 * c) + abs(t - te) / rtt
                for te, c, rtt in samples if since - 0.25 <= te <= t + 0.25]
        hi = max(near)
        if not 1 <= r.cwnd <= hi:
            out_of_range.append((round(t, 3), r.cwnd, round(hi, 1)))
        if r.cwnd not in steps.around(t):
            if key.endswith(".bt") and is_mid_ack(steps, t, r, prev):
                mid_ack += 1
            else:
                mismatched.append((round(t, 3), r.cwnd, steps.around(t), r.extra))
        prev = (t, r)
    print(f"{run.cc} {key}: {len(events)} events, {len(out_of_range)} outside iperf3's range, "
          f"{mid_ack} mid-ACK values, {len(mismatched)} differing from {twin}")
    assert not out_of_range, f"cwnd outside iperf3's view: {out_of_range[:5]}"
    assert len(mismatched) <= 0.1 * len(events), f"cwnd differs from {twin}: {mismatched[:5]}"


@pytest.mark.parametrize("key", MAIN + ["tcpcwnd.bt-lport", "tcpcwnd.py-lport"])
def test_port_filter_excludes_other_flows(run, key):
    recs = records(run, key)
    assert recs
    # flow B was just as busy, and lost packets in the squeeze too
    assert run.flow_b.bps_received > 0.2 * RATE, run.flow_b.bps_received
    if key.endswith("-lport"):
        assert {r.lport for r in recs} == {PORT_B}
        return
    assert {r.rport for r in recs} == {PORT_A}
    if TOOLS[key].kind != "cwnd":
        assert run.flow_b.retransmits > 0


@pytest.mark.parametrize("key", ["tcpcwnd.py-1s", "tcpccstate.py-1s", "tcpccretrans.py-1s"])
def test_interval_summaries(run, key):
    assert run.rc[key] == 0, run.err[key][-2000:]
    _, rows = parse_csv(run.out[key])
    assert rows, "no summary"
    assert {int(r["rport"]) for r in rows} == {PORT_A}
    events = data_flow(records(run, key.replace("-1s", "")))
    lport = events[0].lport
    mine = [r for r in rows if int(r["lport"]) == lport and r["laddr"] == SENDER]
    kind = TOOLS[key].kind
    if kind == "cwnd":
        # one line per interval with samples: the flow lasted SECONDS (+ start/stop)
        assert SECONDS - 1 <= len(mine) <= SECONDS + 3, len(mine)
        total = sum(int(r["samples"]) for r in mine)
        assert abs(total - len(events)) <= 0.01 * len(events), (total, len(events))
        for r in mine:
            assert int(r["cwnd_min"]) <= float(r["cwnd_avg"]) <= int(r["cwnd_max"])
    elif kind == "state":
        for state in ("recovery", "loss"):
            assert sum(int(r[state]) for r in mine) == \
                sum(e.extra["new"] == state for e in events), state
    else:
        assert sum(int(r["retrans"]) for r in mine) == len(events)


def test_diff_estimate_follows_its_definition(run):
    """tcpcwnd.py's DIFF = CWND * (SRTT - MINRTT) / SRTT, MINRTT the running minimum
    of the flow's srtt (kept in the kernel, per sock_cookie); checked line by line,
    in the order of the events' kernel timestamps: perf buffers are per CPU, so the
    printed order can put an event after one from another CPU that already saw its
    srtt in the minimum (seen once: MINRTT 17 before the line with srtt 17)."""
    flow = sorted(data_flow(records(run, "tcpcwnd.py")), key=lambda r: r.t)
    assert len({r.extra["cookie"] for r in flow}) == 1
    low, diffs = None, []
    for r in flow:
        srtt = int(r.extra["srtt_us"])
        if srtt and (low is None or srtt < low):
            low = srtt
        if low is None:
            assert r.extra["minrtt_us"] == "" and r.extra["diff"] == ""
            continue
        assert int(r.extra["minrtt_us"]) == low
        want = r.cwnd * (srtt - low) / srtt
        assert abs(float(r.extra["diff"]) - want) <= 0.011, (r.extra, want)
        diffs.append(float(r.extra["diff"]))
    steady = [float(r.extra["diff"]) for r in flow if 2.0 <= r.t - flow[0].t <= SQUEEZE_AT]
    print(f"{run.cc}: MINRTT {low} us, DIFF estimate median {statistics.median(steady):.1f} "
          f"(2 s .. {SQUEEZE_AT} s)")
