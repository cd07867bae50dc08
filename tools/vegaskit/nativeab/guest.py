"""The A/B runs, inside a guest whose kernel ships tcp_vegas.ko.

    python -m vegaskit.nativeab.guest --out DIR [--reps N] SCENARIO.toml...

Every scenario has two runs, `native` (cc = vegas, the kernel's tcp_vegas) and
`bpf` (cc = bpf_vegas). bpf_vegas is loaded with the module's own alpha, beta
and gamma, read from /sys/module/tcp_vegas/parameters, so the two arms differ
in nothing but the code. Repetition r runs native then bpf when r is even, bpf
then native when odd (interleaved, so drift in the machine hits both arms).
Each run writes DIR/<scenario>/<arm>-<r>/ (the runner's files) and probe.csv,
the sender sockets' tcp:tcp_probe records. DIR/setup.json records the kernel,
both parameter sets and the order the runs were made in.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from vegaskit.testbed import runner
from vegaskit.testbed.scenario import Scenario, ScenarioError
from vegaskit.testbed.tcpprobe import TcpProbe
from vegaskit.testbed.vtrace import VEGASCTL
from vegaskit.cliargs import OneLineParser

ARMS = ("native", "bpf")
PROFILE = "ab"
MODULE_PARAMS = Path("/sys/module/tcp_vegas/parameters")


class SetupError(RuntimeError):
    pass


def module_params() -> dict[str, int]:
    if "vegas" not in runner.registered():
        raise SetupError("the kernel's tcp_vegas is not registered (modprobe tcp_vegas failed?)")
    try:
        return {p: int((MODULE_PARAMS / p).read_text()) for p in ("alpha", "beta", "gamma")}
    except (OSError, ValueError) as e:
        raise SetupError(f"cannot read tcp_vegas's parameters: {e}") from None


def order(rep: int) -> tuple[str, ...]:
    return ARMS if rep % 2 == 0 else ARMS[::-1]


def write_probe(records, run_t0: float, first_port: int, path: Path) -> int:
    """The data connection's records of each flow (per peer port, the socket with
    the most records: iperf3's control connection has a handful), times from t0."""
    by_port: dict[int, Counter] = {}
    for r in records:
        by_port.setdefault(r.dport, Counter())[r.cookie] += 1
    data = {port: c.most_common(1)[0][0] for port, c in by_port.items()}
    n = 0
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "flow", "snd_cwnd", "ssthresh", "srtt_us"])
        for r in records:
            if data.get(r.dport) == r.cookie:
                w.writerow([f"{r.t - run_t0:.6f}", r.dport - first_port, r.snd_cwnd,
                            r.ssthresh, r.srtt_us])
                n += 1
    return n


def one_run(s: Scenario, arm: str, rep: int, out: Path) -> dict:
    run = s.run(arm, PROFILE)
    rundir = out / s.name / f"{arm}-{rep}"
    lo = runner.BASE_PORT + 1
    with TcpProbe(lo, runner.BASE_PORT + len(run.flows)) as probe:
        summary = runner.execute(run, rundir, plots=False)
    n = write_probe(probe.records, summary["t0_monotonic"], runner.BASE_PORT, rundir / "probe.csv")
    return {"scenario": s.name, "arm": arm, "rep": rep, "probe_records": n,
            "probe_lost_lines": probe.lost_lines}


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="python -m vegaskit.nativeab.guest",
                       description="bpf_vegas against tcp_vegas, inside the guest")
    ap.add_argument("scenarios", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=8)
    a = ap.parse_args(argv)
    if a.reps < 1:
        print("native-ab: --reps must be at least 1", file=sys.stderr)
        return 2
    try:
        scenarios = [Scenario.load(p) for p in a.scenarios]
        for s in scenarios:
            for arm in ARMS:
                s.run(arm, PROFILE)
        params = module_params()
    except (ScenarioError, SetupError) as e:
        print(f"native-ab: {e}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    load = [str(VEGASCTL), "load", "vegas", *(f"{k}={v}" for k, v in params.items())]
    r = subprocess.run(load, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"native-ab: {' '.join(load[1:])}: {r.stderr.strip()}", file=sys.stderr)
        return 1
    made = []
    try:
        shown = subprocess.run([str(VEGASCTL), "show", "bpf_vegas", "--json"], check=True,
                               capture_output=True, text=True).stdout
        setup = {"kernel": os.uname().release, "tcp_vegas": params,
                 "bpf_vegas": json.loads(shown), "reps": a.reps,
                 "scenarios": [str(p) for p in a.scenarios], "runs": made}
        for rep in range(a.reps):
            for s in scenarios:
                for arm in order(rep):
                    t = time.monotonic()
                    print(f"== {s.name} {arm} rep {rep}", flush=True)
                    made.append(one_run(s, arm, rep, a.out))
                    made[-1]["wall_s"] = round(time.monotonic() - t, 1)
                    (a.out / "setup.json").write_text(json.dumps(setup, indent=1) + "\n")
    except KeyboardInterrupt:
        print("native-ab: interrupted; everything it started was removed", file=sys.stderr)
        return 130
    finally:
        subprocess.run([str(VEGASCTL), "unload", "bpf_vegas"], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
