"""Runs one scenario run on a dumbbell and writes its results.

    results/<scenario>/<profile>/<run>/
        flows.csv     per-flow, per-interval throughput, cwnd, RTT, retransmissions (iperf3)
        queue.csv     bottleneck queue (R1 -> R2), every change, packets
                      (every link's forward queue is summarised in summary.json)
        late.csv      the emulator's releases 1 ms or more late, every link both ways
        trace.csv     per-RTT decisions of vegaskit controllers (vegasctl trace)
        castates.csv  every sender's congestion-state changes and retransmissions
                      (tcp:tcp_cong_state_set, tcp:tcp_retransmit_skb)
        summary.json  the metrics (docs/DESIGN.md §6)
        *.png         throughput, queue, and cwnd/RTT/diff/alpha-beta of our flows

Everything the run creates (namespaces, emulators, iperf3, controllers it
loaded, the trace) is removed when it ends, also on an exception or SIGINT.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from vegaskit import hostinfo, intf
from vegaskit.analysis import metrics
from vegaskit.analysis import records as records_

from . import iperf, lateness, leftovers, tcpprobe, topology
from .linkemu import read_qlog
from .netns import Lab
from .scenario import Run, job_suffix
from .vtrace import VEGASCTL, Trace

BASE_PORT = 5201
# Job N > 0 of several runs at once serves its flows on ports of its own, so that the
# kernel's tracepoints, which see every namespace, tell its sockets from the others'.
JOB_PORTS = 100


def port_base(job: int) -> int:
    """Flow K of job `job`'s run is served on port_base(job) + K."""
    return BASE_PORT + JOB_PORTS * job


def ports_of(summary: dict) -> int:
    """A finished run's port_base, from its summary (BASE_PORT for runs made before
    jobs had ports of their own)."""
    return summary.get("port_base", BASE_PORT)


registered = leftovers.registered


def variant_of(cc: str) -> str | None:
    """bpf_vegas -> vegas: the default instance name of a vegaskit variant."""
    return cc[4:] if cc in intf.CONTROLLERS else None


def instance_names(run: Run, job: int) -> dict[str, str]:
    """The controller instance each of the run's ccs runs on. Job 0 uses the
    names themselves; job N > 0, one of several runs at once, its own
    instances, NAME.jL (scenario.job_suffix), so that no run unloads a
    controller another still uses; a name too long for that loses its bpf_
    prefix (bpf_vegas_plus.j1 would be 17 characters, vegas_plus.j1 is 13)."""
    out = {}
    for cc in sorted({f.cc for f in run.flows}):
        ours = cc in run.controllers or variant_of(cc)
        out[cc] = cc + job_suffix(job) if ours and job else cc
        if len(out[cc]) >= intf.NAME_MAX and cc.startswith("bpf_"):
            out[cc] = cc.removeprefix("bpf_") + job_suffix(job)
        if len(out[cc]) >= intf.NAME_MAX:
            raise RuntimeError(f"controller name '{cc}' is too long for job {job}'s "
                               f"instance '{out[cc]}' (at most {intf.NAME_MAX - 1} characters)")
    return out


def _load_args(run: Run, cc: str, inst: str) -> list[str]:
    """`vegasctl load` arguments that make instance `inst` for the run's `cc`."""
    if cc in run.controllers:
        return shlex.split(run.controllers[cc]) + ["--name", inst]
    if variant_of(cc):
        return [variant_of(cc), "--name", inst]
    raise RuntimeError(f"congestion control '{cc}' is not available")


def check_controllers(run: Run, job: int = 0) -> None:
    """Have vegasctl check, without loading anything (load --dry-run), every controller
    the run would load, so that a batch refuses a bad spec before any run starts, in
    vegasctl's own words."""
    for cc, inst in sorted(instance_names(run, job).items()):
        if inst in registered():
            continue
        r = subprocess.run([VEGASCTL, "load", *_load_args(run, cc, inst), "--dry-run"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{run.scenario.name}/{run.name}: controller '{cc}': "
                               f"{r.stderr.strip() or 'vegasctl load --dry-run failed'}")


@contextlib.contextmanager
def controllers(run: Run, names: dict[str, str]):
    """Load the vegaskit controllers the run needs and are not loaded, as
    names[cc]; unload them after. Yields the instances that are ours. Each is
    in a ledger before it loads, so that should this process be killed with
    SIGKILL, the next Lab's sweep unloads it (leftovers.py)."""
    ours = []
    owner = leftovers.new_owner()
    try:
        for cc, inst in sorted(names.items()):
            if inst in registered():
                continue
            args = _load_args(run, cc, inst)
            leftovers.record_loaded(owner, inst)
            # ours from here: a SIGTERM or Ctrl-C while vegasctl loads it ends the wait,
            # not vegasctl, which may finish the registration all the same
            ours.append(inst)
            r = subprocess.run([VEGASCTL, "load", *args], capture_output=True, text=True)
            if r.returncode != 0:       # vegasctl's own one line says why
                raise RuntimeError(f"controller '{cc}': {r.stderr.strip() or 'vegasctl load failed'}")
        yield [names[cc] for cc in names if cc in run.controllers or variant_of(cc)]
    finally:
        for inst in ours:               # one never registered: vegasctl says so, harmlessly
            subprocess.run([VEGASCTL, "unload", inst], capture_output=True)
        leftovers.forget_loaded(owner)


def _watch_data_start(ns, port: int, t0: float, out: dict, key: int) -> threading.Thread:
    """Record when the flow's data connection is up (the second established
    socket to `port`: iperf3's control connection comes first). iperf3's
    intervals count from its test start, just after that, while the client is
    spawned earlier by a handshake that can take seconds on a loaded 1 Mbit/s
    path; timing intervals from the spawn would shift a flow's whole series."""
    def watch():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out_ss = ns.run(["ss", "-tnH", "state", "established", f"( dport = :{port} )"],
                            check=False)
            if len(out_ss.splitlines()) >= 2:
                out[key] = time.monotonic() - t0
                return
            time.sleep(0.01)
    th = threading.Thread(target=watch, daemon=True)
    th.start()
    return th


def _python(lab: Lab, ns, module: str, *args: str) -> subprocess.Popen:
    return lab.spawn(ns, [sys.executable, "-m", module, *args])


def _transfer_result(cc: str, client: subprocess.Popen, server: subprocess.Popen,
                     tmp: Path, index: int, timeout: float) -> iperf.FlowResult:
    """A file transfer's FlowResult: the sender's TCP_INFO samples and the
    receiver's bytes per interval (testbed/transfer.py)."""
    for p in (client, server):
        _, err = p.communicate(timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"transfer ({cc}) failed: {err.decode().strip()}")
    c = json.loads((tmp / f"xfer{index}-client.json").read_text())
    srv = json.loads((tmp / f"xfer{index}-server.json").read_text())
    return iperf.FlowResult(cc=cc, bps_received=srv["bytes"] * 8 / max(c["seconds"], 1e-9),
                            retransmits=c["retransmits"], intervals=c["intervals"],
                            seconds=c["seconds"], bytes_received=srv["bytes"],
                            received=[tuple(r) for r in srv["received"]])


def _interval(run: Run) -> float:
    return 0.5 if run.duration <= 60 else 1.0


def execute(run: Run, outdir: Path, at: list[tuple[float, object]] = (),
            plots: bool = True, job: int = 0) -> dict:
    """Run it; write the files; return the summary. Each (t, fn) in `at` is
    called t seconds into the run with the Dumbbell (for tests and probes).
    plots=False skips the figures (minutes each in an emulated guest). job N > 0
    is one of several runs at once (cli/results.py --jobs): it loads its own
    controller instances, whose trace rings are their own (docs/DESIGN.md §5.1),
    and serves its flows on ports of its own (port_base), so its traces hold its
    flows alone; trace.csv names each record's controller as the run does."""
    outdir.mkdir(parents=True, exist_ok=True)
    results: dict[int, iperf.FlowResult] = {}
    started: dict[int, float] = {}
    names = instance_names(run, job)
    aliases = {inst: cc for cc, inst in names.items() if inst != cc}     # a job's own
    base = port_base(job)
    # Before controllers(): a dead run's controller still registered would look
    # loaded, be reused, and then be unloaded by the Lab's own sweep mid-run.
    leftovers.sweep()
    with tempfile.TemporaryDirectory() as tmp, controllers(run, names) as ours, Lab() as lab, \
            contextlib.ExitStack() as stack:
        link_names = ["bottleneck"] + ([] if run.direct_edges else
                                       [f"{side}{f.index}" for f in run.flows for side in "sd"])
        qlogs = {n: str(Path(tmp) / f"{n}.qlog") for n in link_names}
        db = topology.dumbbell(lab, [f.access.params() for f in run.flows], run.bottleneck.params(),
                               [f.egress.params() for f in run.flows], qlogs=qlogs,
                               seed=run.seed, ack_every=[f.acks == "every" for f in run.flows],
                               direct_edges=run.direct_edges)
        for f in run.flows:
            for key, value in f.sysctl:
                db.senders[f.index - 1].sysctl(f"net.ipv4.{key}", value)
        servers = {}
        for f in run.flows:
            port = base + f.index
            if f.bytes:         # a file transfer: completion = last byte delivered
                servers[f.index] = _python(lab, db.receivers[f.index - 1], "vegaskit.testbed.transfer",
                                           "server", "--port", str(port), "--interval",
                                           str(_interval(run)), "--report",
                                           str(Path(tmp) / f"xfer{f.index}-server.json"))
                servers[f.index].stdout.readline()          # "listening"
            else:
                iperf.server(lab, db.receivers[f.index - 1], port, _interval(run))
        trace = None
        if ours and run.trace != "off":
            what = ["--decisions"] if run.trace == "decisions" else []
            trace = stack.enter_context(
                Trace(*what, *sum((["--controller", c] for c in ours), []),
                      env=leftovers.owner_env(lab.prefix)))
        # what every sender went through, whatever its controller: the tracepoints see
        # every namespace, so the run's own ports tell its sockets
        states = None
        if run.trace != "off" and tcpprobe.states_available():
            states = stack.enter_context(tcpprobe.CaStates(base + 1, base + len(run.flows)))
        labs = stack.enter_context(leftovers.LabsAlive())
        t0 = time.monotonic()
        events = sorted([(f.start, "flow", f) for f in run.flows] +
                        [(c.at, "change", c) for c in run.schedule] +
                        [(t, "call", fn) for t, fn in at], key=lambda e: e[0])
        clients, watchers = {}, []
        for at, kind, obj in events:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            if kind == "flow":
                f = obj
                started[f.index] = time.monotonic() - t0    # until the watcher knows better
                if f.bytes:
                    args = ["client", "--addr", topology.receiver_addr(f.index), "--port",
                            str(base + f.index), "--bytes", str(f.bytes), "--cc", names[f.cc],
                            "--interval", str(_interval(run)),
                            "--report", str(Path(tmp) / f"xfer{f.index}-client.json")]
                    args += ["--mss", str(f.mss)] if f.mss else []
                    clients[f.index] = _python(lab, db.senders[f.index - 1], "vegaskit.testbed.transfer",
                                               *args)
                    continue
                clients[f.index] = iperf.client(
                    lab, db.senders[f.index - 1], topology.receiver_addr(f.index),
                    base + f.index, names[f.cc], f.duration, interval=_interval(run),
                    mss=f.mss)
                watchers.append(_watch_data_start(db.senders[f.index - 1], base + f.index,
                                                  t0, started, f.index))
            elif kind == "change":
                db.links[obj.link].set("both", **obj.params)
            else:
                obj(db)
        for f in run.flows:
            limit = (f.duration or run.duration) + 120
            if f.bytes:
                results[f.index] = _transfer_result(f.cc, clients[f.index], servers[f.index],
                                                    Path(tmp), f.index, 10 * run.duration + 120)
            else:
                results[f.index] = iperf.wait(clients[f.index], f.cc, timeout=limit)
        for th in watchers:
            th.join()
        t_end = time.monotonic() - t0
        stats = db.bottleneck.stop()
        # what the run shared the host with, and how late the emulator ran (§7.1)
        final = {"bottleneck": stats} | {name: db.links[name].stop() for name in link_names[1:]}
        host = {"emulator": lateness.emulator_lateness(list(final.values())),
                "release_late_us": lateness.release_late_means(final),
                "emulator_fifo": db.bottleneck.fifo, "emulator_fifo_poll": db.bottleneck.fifo_poll}
        t0_us = t0 * 1e6
        events = {n: read_qlog(q) for n, q in qlogs.items()}
        # forward direction (ab: sender side to receiver side) of every link
        queues = {n: [(round((e.t_us - t0_us) / 1e6, 6), e.qlen, e.event)
                      for e in ev if e.dir == "ab" and e.event != "late"]
                  for n, ev in events.items()}
        host["late"] = lateness.late_releases(events, t0_us)
    host["labs_alive_max"] = labs.most
    if trace:
        _name_as_run(trace, aliases)
        (outdir / "trace.csv").write_text(trace.text)
    ca = None
    if states:
        ca = [(round(e.t - t0, 6), e.sport, e.dport, e.kind, e.state) for e in states.records]
        with open(outdir / "castates.csv", "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["t_s", "sport", "dport", "event", "state"])     # event: state, retx
            w.writerows(ca)
    return write(run, outdir, results, started, queues, stats, host, t_end, trace, t0, plots, ca,
                 base, {cc: inst for inst, cc in aliases.items()})


def _name_as_run(trace: Trace, alias: dict[str, str]) -> None:
    """A job's trace with each record's controller named as the run names it (bpf_vegas,
    not its instance bpf_vegas.j1), so that it reads like any other run's; the
    summary's `instances` keeps which instance ran it."""
    if not alias:
        return
    rows = list(csv.reader(io.StringIO(trace.text)))
    at = rows[0].index("ca")
    for row in rows[1:]:
        row[at] = alias.get(row[at], row[at])
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    trace.text = out.getvalue()
    for r in trace.records:
        r["ca"] = alias.get(r["ca"], r["ca"])


def write(run: Run, outdir: Path, results, started, queues, stats, host, t_end, trace,
          t0: float, plots: bool = True, ca: list | None = None, base: int = BASE_PORT,
          instances: dict[str, str] | None = None) -> dict:
    """flows.csv, queue.csv, summary.json and the plots of a finished run."""
    with open(outdir / "flows.csv", "w", newline="") as fh:
        # one row per interval: bytes and bps as received, cwnd/RTT/retx as the
        # sender saw them in the interval of the same index (empty past its end)
        w = csv.writer(fh)
        w.writerow(["flow", "cc", "t0_s", "t1_s", "bytes", "bps", "cwnd_bytes", "rtt_us", "retransmits"])
        for i, r in sorted(results.items()):
            for k, (a, b, nbytes) in enumerate(r.received):
                snd = r.intervals[k] if k < len(r.intervals) else {}
                ta, tb = started[i] + a, started[i] + b
                w.writerow([i, r.cc, f"{ta:.3f}", f"{tb:.3f}", nbytes,
                            round(nbytes * 8 / max(tb - ta, 1e-9)), snd.get("snd_cwnd", ""),
                            snd.get("rtt_us", ""), snd.get("retransmits", "")])
    with open(outdir / "queue.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "qlen_pkts", "event"])     # event: enq, deq, drop, loss
        w.writerows(queues["bottleneck"])
    with open(outdir / "late.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "link", "dir", "late_ms"])
        w.writerows(host["late"])
    summary = summarize(run, results, started, queues, stats, host, t_end)
    summary["port_base"] = base
    summary["instances"] = instances or {}
    if ca is not None:
        ca_per_flow(summary["flows"], ca, base)
    if trace:
        decisions_per_flow(summary["flows"], trace.records, t0, base)
    summary["t0_monotonic"] = t0
    summary["trace_records"] = len(trace.records) if trace else None
    summary["trace_lost"] = trace.lost if trace else None
    (outdir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if plots:
        from vegaskit.analysis.plots import run_plots     # matplotlib only when plotting
        run_plots(outdir, summary)
    return summary


def rtt_min_ms(rtts_ms: list[float]) -> float | None:
    """A flow's smallest smoothed RTT over its life, one sample per interval: an upper
    bound on the baseRTT a delay-based flow learned (a flow that starts behind a
    standing queue never sees less, seed 000 section II)."""
    return round(min(rtts_ms), 3) if rtts_ms else None


def fill_rtt_min(summary: dict, rundir: Path) -> bool:
    """Give a summary written before rtt_min_ms existed that figure, from the run's own
    flows.csv; True when it changed."""
    flows = summary["flows"]
    if all("rtt_min_ms" in fl for fl in flows) or not (rundir / "flows.csv").exists():
        return False
    rtts: dict[int, list[float]] = {}
    with open(rundir / "flows.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("rtt_us") and float(row["rtt_us"]) > 0:
                rtts.setdefault(int(row["flow"]), []).append(float(row["rtt_us"]) / 1000)
    for fl in flows:
        fl["rtt_min_ms"] = rtt_min_ms(rtts.get(fl["flow"], []))
    return True


def window_ceiling(run: Run, f) -> int:
    """The largest window flow f's path lets a controller grow (metrics.window_ceiling_bytes):
    its emulated links (the bottleneck alone with direct edges), each at the largest rate,
    delay and buffer the run's schedule gives it."""
    links = {"bottleneck": run.bottleneck}
    if not run.direct_edges:
        links |= {f"s{f.index}": f.access, f"d{f.index}": f.egress}
    rate = {n: ln.rate_bps for n, ln in links.items()}
    rtt_us = {n: ln.rtt_us for n, ln in links.items()}
    buf = {n: ln.buffer_pkts for n, ln in links.items()}
    for c in run.schedule:
        if c.link in links:
            rate[c.link] = max(rate[c.link], c.params.get("rate_bps", 0))
            rtt_us[c.link] = max(rtt_us[c.link], 2 * c.params.get("delay_us", 0))
            buf[c.link] = max(buf[c.link], c.params.get("limit_pkts", 0))
    return metrics.window_ceiling_bytes(max(rate.values()), sum(rtt_us.values()) / 1e6,
                                        sum(buf.values()))


def impossible_windows(flows: list[dict]) -> list[str]:
    """The flows whose window rose above any their path lets a controller grow: the
    kernel defect of docs/DESIGN.md §10.2, not a decision; analysis/figures.py sets
    such repetitions aside."""
    return [fl["label"] for fl in flows if fl["cwnd_max_bytes"] > fl["window_ceiling_bytes"]]


WINDOW_KEYS = ("cwnd_max_bytes", "window_ceiling_bytes")   # per flow; fill_window_check's


def fill_window_check(summary: dict, rundir: Path, run: Run | None) -> bool:
    """Give a summary written before the window check its figures, from the run's own
    flows.csv and the scenario's path as it reads today; True when it changed. A run
    whose flows the scenario no longer has stays unchecked."""
    flows = summary["flows"]
    if run is None or "impossible_windows" in summary or not (rundir / "flows.csv").exists():
        return False
    by_index = {f.index: f for f in run.flows}
    if any(fl.get("flow") not in by_index for fl in flows):
        return False
    most: dict[int, int] = {}
    with open(rundir / "flows.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("cwnd_bytes"):
                i = int(row["flow"])
                most[i] = max(most.get(i, 0), int(float(row["cwnd_bytes"])))
    for fl in flows:
        fl["cwnd_max_bytes"] = most.get(fl["flow"], 0)
        fl["window_ceiling_bytes"] = window_ceiling(run, by_index[fl["flow"]])
    summary["impossible_windows"] = impossible_windows(flows)
    return True


def _time_mean(recs: list[dict], fl: dict, t0: float, key: str) -> float:
    """A decision field over the flow's life from the first record on, each value weighted
    by how long it stood (until the next decision, the last until the flow's end)."""
    ts = [r["time_s"] - t0 for r in recs] + [max(fl.get("end_s", 0.0), recs[-1]["time_s"] - t0)]
    span = ts[-1] - ts[0]
    if span <= 0:
        return float(recs[-1][key])
    return sum(r[key] * (ts[i + 1] - ts[i]) for i, r in enumerate(recs)) / span


def fill_decisions(summary: dict, rundir: Path) -> bool:
    """A traced run's flows' decisions as decisions_per_flow makes them now, from the
    run's own trace.csv (runs summarised before it, or before one of its figures,
    get them); True when they changed."""
    trace = rundir / "trace.csv"
    if not trace.exists() or summary.get("t0_monotonic") is None:
        return False
    from .vtrace import parse_csv
    before = [fl.get("decisions") for fl in summary["flows"]]
    decisions_per_flow(summary["flows"], parse_csv(trace.read_text()), summary["t0_monotonic"],
                       ports_of(summary))
    return [fl.get("decisions") for fl in summary["flows"]] != before


def ca_per_flow(flows: list[dict], ca: list[tuple], base: int = BASE_PORT) -> None:
    """Into each flow: its sender's time in each congestion state over the flow's second
    half, the time-outs (entries into Loss) there, and the retransmitted segments the
    tracepoint saw there. A flow has two sockets to its port (iperf3's control
    connection and its data): the figures are the data socket's, the one with the most
    state changes, and the retransmissions are counted over both."""
    for fl in flows:
        port = base + fl["flow"]
        half = fl["start_s"] + (fl["end_s"] - fl["start_s"]) / 2
        changes: dict[int, list] = {}
        retx = 0
        for t, sport, dport, kind, state in ca:
            if dport != port:
                continue
            if kind == "state":
                changes.setdefault(sport, []).append((t, state))
            elif half <= t <= fl["end_s"]:
                retx += 1
        busiest = max(changes.values(), key=len, default=[])
        r = metrics.ca_state_times(busiest, half, fl["end_s"])
        fl["ca_seconds_second_half"] = r["seconds"]
        fl["timeouts_second_half"] = r["timeouts"]
        fl["retransmits_traced_second_half"] = retx


def decisions_per_flow(flows: list[dict], records: list[dict], t0: float,
                       base: int = BASE_PORT) -> None:
    """Into each flow our controller traced: how many decisions of each rule it
    took, the baseRTT it held (smallest, and time-weighted mean), the mean of the
    round's RTT over baseRTT at its decisions in the flow's second half, and its alpha over
    the run (first, largest, last, time-weighted mean, and the time, from the run's
    start, it first stood above the first). Vegas-A and PIPE move alpha
    (docs/DESIGN.md §3.6); where repetitions of one run split, these say whether
    the controller's own decisions differed (§7.1). The trace keys flows by the
    sender's socket, whose destination port is the flow's."""
    for fl in flows:
        port = base + fl["flow"]
        mine = [r for r in records if r.get("type") == "decision" and r.get("dport") == port]
        if not mine:
            continue
        rules: dict[str, int] = {}
        # decisions taken with diff at the beta in force, by rule: the tie that PIPE
        # decides down and Vegas-A holds at (docs/DESIGN.md §3.6)
        at_beta: dict[str, int] = {}
        for r, seen in records_.thresholds_seen(mine):
            rules[r["rule"]] = rules.get(r["rule"], 0) + 1
            if seen and r.get("diff") == seen[1]:
                at_beta[r["rule"]] = at_beta.get(r["rule"], 0) + 1
        # in force after each decision; 0 where none was (too few RTT samples)
        held = [r for r in mine if r["alpha"]]
        d = {"count": len(mine), "rules": rules, "at_beta": at_beta}
        rises = adapt_rises(mine)
        if rises:
            d["adapt_rise"] = rises
        based = [r for r in mine if r.get("base_rtt_us")]
        if based:       # the smallest baseRTT it held (above the path's RTT, or not), and
            # how long it held a larger one: a flow that starts behind another's queue
            # learns its baseRTT there and keeps it until a lower sample comes
            d["base_rtt_min_ms"] = round(min(r["base_rtt_us"] for r in based) / 1000, 3)
            d["base_rtt_mean_ms"] = round(_time_mean(based, fl, t0, "base_rtt_us") / 1000, 3)
            # the delay its decisions read as queue (the round's RTT over baseRTT), over
            # the flow's second half: beside the bottleneck's own wait (link_queues), it
            # says how much of that delay the bottleneck's queue held
            start = fl.get("start_s") or 0.0
            half = t0 + start + (fl.get("end_s", start) - start) / 2
            above = [r["rtt_us"] - r["base_rtt_us"] for r in based
                     if r["time_s"] >= half and r.get("rtt_us")]
            if above:
                d["rtt_above_base_ms"] = round(statistics.fmean(above) / 1000, 3)
        if held:
            first = held[0]["alpha"]
            rise = next((r["time_s"] - t0 for r in held if r["alpha"] > first), None)
            d |= {"alpha_first": first, "alpha_max": max(r["alpha"] for r in held),
                  "alpha_last": held[-1]["alpha"],
                  "alpha_mean": round(_time_mean(held, fl, t0, "alpha"), 3),
                  "alpha_rise_s": None if rise is None else round(rise, 3)}
        fl["decisions"] = d


def adapt_rises(decisions: list[dict]) -> dict:
    """How far Th rose over Th' at each inc_adapt decision (the rule that raises
    alpha, docs/DESIGN.md §3.6), in packets per round: (Th - Th') * rtt, the
    quantity the tie band th_tie bounds (§3.10). Its smallest, median and largest,
    and how many rose by less than one packet per round: the rises a steady link's
    RTT noise can make, where a rising rate adds whole packets."""
    r = sorted((x["th"] - x["th_prev"]) * x["rtt_us"] / 1e6 for x in decisions
               if x.get("rule") == "inc_adapt" and x.get("th_prev") and x.get("rtt_us"))
    if not r:
        return {}
    return {"n": len(r), "min": round(r[0], 3), "median": round(statistics.median(r), 3),
            "max": round(r[-1], 3), "below_1": sum(1 for x in r if x < 1)}


def link_queues(run: Run, queues: dict[str, list], t_end: float) -> dict[str, dict]:
    """Each link's forward queue: mean and p95 in packets, the p95 as delay at
    the link's rate, and drops; and the queue the arriving packets met (packets
    ahead of each, and its wait in 1500-byte packet times at the link's rate). The
    queue of a path builds where its rate is lowest; with equal rates that can be an
    access link, not the bottleneck."""
    rates = {"bottleneck": run.bottleneck.rate_bps}
    for f in run.flows:
        rates[f"s{f.index}"], rates[f"d{f.index}"] = f.access.rate_bps, f.egress.rate_bps
    out = {}
    for name, q in queues.items():
        samples = [(t, n) for t, n, _ in q]
        qs = metrics.queue_stats(samples, max(t_end, samples[-1][0])) if len(samples) > 1 else None
        pkt_ms = 1500 * 8 / rates[name] * 1000 if rates.get(name) else 0.0
        out[name] = {"queue_mean_pkts": round(qs.mean, 2) if qs else 0.0,
                     "queue_p95_pkts": qs.p95 if qs else 0,
                     "queue_delay_p95_ms": round((qs.p95 if qs else 0) * pkt_ms, 2),
                     "drops": sum(1 for _, _, ev in q if ev == "drop")}
        # the queue as arriving packets met it: what a sender's RTT samples measure
        if (seen := metrics.arrival_view(q)) and pkt_ms:
            out[name]["arrival_ahead_pkts"] = round(seen.ahead, 3)
            out[name]["arrival_wait_pkts"] = round(seen.wait_s * 1000 / pkt_ms, 3)
    return out


def summarize(run: Run, results, started, queues, stats, host, t_end) -> dict:
    """stats: the bottleneck's final counters; host: what the run shared the host with
    and how late the emulator ran (execute())."""
    queue = queues["bottleneck"]
    flows, series = [], {}
    for f in run.flows:
        r = results[f.index]
        recs = [(started[f.index] + a, started[f.index] + b, n) for a, b, n in r.received if b > a]
        s = metrics.throughput_series(recs)
        series[f.index] = s
        begin, end = recs[0][0], recs[-1][1]
        rtts = [iv["rtt_us"] / 1000 for iv in r.intervals if iv["rtt_us"]]
        # The sender's window (tcp_info snd_cwnd, bytes) over the second half of
        # the flow's own samples, like the throughput: seed 003 reports windows.
        half = r.intervals[len(r.intervals) // 2:]
        cwnds = [iv["snd_cwnd"] for iv in half if iv.get("snd_cwnd")]
        flows.append({
            "flow": f.index, "label": f.label, "cc": f.cc, "start_s": round(started[f.index], 3),
            "end_s": round(end, 3), "mss": f.mss,
            "bytes": r.bytes_received,
            "avg_bps": round(r.bytes_received * 8 / max(end - begin, 1e-9)),
            "second_half_bps": round(metrics.second_half_mean(s, begin, end)),
            "retransmits": r.retransmits,
            "completion_s": round(r.seconds, 3) if f.bytes else None,
            "rtt_p95_ms": round(metrics.percentile(rtts, 95), 3) if rtts else None,
            "rtt_min_ms": rtt_min_ms(rtts),
            "cwnd_median_kb": round(metrics.percentile(cwnds, 50) / 1000, 1) if cwnds else None,
            # over the intervals flows.csv keeps, so that a rerender finds the same
            "cwnd_max_bytes": max((iv.get("snd_cwnd") or 0
                                   for iv in r.intervals[:len(r.received)]), default=0),
            "window_ceiling_bytes": window_ceiling(run, f),
        })
    shares = [fl["second_half_bps"] for fl in flows]
    lifetime = [fl["avg_bps"] for fl in flows]
    ratios = metrics.inter_protocol_ratios(flows, "second_half_bps")
    ab = stats["ab"]
    joins = sorted({fl["start_s"] for fl in flows})
    conv = None
    if len(joins) > 1 and joins[-1] > 0:
        conv = metrics.convergence_time(list(series.values()), joins[-1])
    # Utilisation of the bottleneck itself: IP bytes it sent over the time it
    # carried traffic (first arrival to last departure in its queue log), so
    # no per-flow timing enters it.
    busy = [t for t, _, ev in queue if ev in ("enq", "deq")]
    span = (busy[-1] - busy[0]) if len(busy) > 1 else 0.0
    links = link_queues(run, queues, t_end)
    deepest = max(links, key=lambda n: (links[n]["queue_mean_pkts"], n == "bottleneck"))
    return {
        "scenario": run.scenario.name, "run": run.name, "profile": run.profile,
        "rep": run.rep, "seed": run.seed,
        "source": run.scenario.source, "duration_s": round(t_end, 3),
        "bottleneck": {"rate_bps": run.bottleneck.rate_bps, "rtt_ms": run.bottleneck.rtt_us / 1000,
                       "buffer_pkts": run.bottleneck.buffer_pkts, "loss": run.bottleneck.loss,
                       "spare_retx": run.bottleneck.spare_retx},
        "edges": "direct" if run.direct_edges else "emulated",
        "flows": flows,
        "jain": round(metrics.jain_index(shares), 4) if any(shares) else None,
        "inter_protocol_ratio": ratios,
        # the papers' statistic: each flow's average over its lifetime (docs/DESIGN.md §7.1)
        "jain_lifetime": round(metrics.jain_index(lifetime), 4) if any(lifetime) else None,
        "inter_protocol_ratio_lifetime": metrics.inter_protocol_ratios(flows, "avg_bps"),
        "utilisation": round(metrics.utilisation(ab["bytes_out"] * 8 / span,
                                                  run.bottleneck.rate_bps), 4)
        if run.bottleneck.rate_bps and span > 0 else None,
        "queue_mean_pkts": links["bottleneck"]["queue_mean_pkts"],
        "queue_p95_pkts": links["bottleneck"]["queue_p95_pkts"],
        "queue_delay_p95_ms": links["bottleneck"]["queue_delay_p95_ms"],
        "bottleneck_drops": ab["dropped"], "bottleneck_random_losses": ab["lost"],
        # retransmissions the random loss drew but let through (spare_retx, docs/DESIGN.md §6.2)
        "bottleneck_spared": ab.get("spared", 0),
        "bottleneck_loss_rate": round(metrics.loss_rate(ab["dropped"] + ab["lost"], ab["pkts_in"]), 5)
        if ab["pkts_in"] else 0.0,
        "retransmits": metrics.retransmissions(fl["retransmits"] for fl in flows),
        "convergence_s": round(conv, 2) if conv is not None else None,
        "links": links,
        "deepest_queue_link": deepest,
        "impossible_windows": impossible_windows(flows),
        # how late the emulator released packets, every link both ways (docs/DESIGN.md §7.1)
        "emulator_late_max_ms": host["emulator"]["late_max_ms"],
        "emulator_late_1ms": host["emulator"]["late_1ms"],
        # each link's mean release lateness (us), both ways: delay on every packet
        "emulator_release_late_us": host.get("release_late_us", {}),
        # the emulators' SCHED_FIFO priority, 0: the ordinary policy (decision 42)
        "emulator_fifo": host["emulator_fifo"],
        # the share of a core (%) their busy-poll might spend under it (linkemu --fifo-poll)
        "emulator_fifo_poll": host["emulator_fifo_poll"],
        # the same in each flow's first seconds, while it takes its smallest RTT samples
        "emulator_late_early_max_ms": lateness.early_max(host["late"], started.values()),
        # the most labs alive at once while it ran, this one included: what it shared the host with
        "labs_alive_max": host["labs_alive_max"],
        # kernel release and CPU model: machines of one kind differ in how late the emulator runs
        "machine": hostinfo.host(),
    }
