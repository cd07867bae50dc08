"""`vegasctl trace` as a context manager, and its CSV records as dicts."""
from __future__ import annotations

import csv
import io
import os
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from vegaskit import paths

VEGASCTL = str(paths.VEGASCTL)

INT_FIELDS = ("netns", "sport", "dport", "cwnd", "ssthresh", "in_flight", "rtt_us",
              "base_rtt_us", "cnt_rtt", "diff", "alpha", "beta", "cwnd_after", "ssthresh_after",
              "th_cmp", "sent", "outstanding")


def parse_csv(text: str) -> list[dict]:
    rows = []
    for r in csv.DictReader(io.StringIO(text)):
        for k in INT_FIELDS:
            if r.get(k) not in (None, ""):
                r[k] = int(r[k])
        r["time_s"] = float(r["time_s"])
        for k in ("th", "th_prev", "foreign"):
            if r.get(k):
                r[k] = float(r[k])
        rows.append(r)
    return rows


def _cpu_s(pid: int) -> float:
    """A live process's user + system time so far (/proc/PID/stat), 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime


class Trace:
    """Runs `vegasctl trace ARGS` until the with-block ends (SIGINT), then parses it.

    `cpu_s`: the tracer's CPU time (user + system) from the moment tracing was on (its
    header line) to its exit, its final drain included: its whole usage, read as the
    growth of this process's reaped children's usage while it is reaped (exact when no
    other child is reaped meanwhile: the bench's single thread), less what it had used
    by then (/proc), so that starting it is not counted.

    `env`: the tracer's environment; a Lab's owner_env() lets its sweep find a
    tracer whose owner was killed."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        self.args = list(args)
        self.env = env
        self.records: list[dict] = []
        self.text = ""
        self.stderr = ""
        self.lost: int | None = None
        self.cpu_s: float | None = None

    def __enter__(self) -> "Trace":
        # stdout goes to a file, not a pipe: a pipe nobody reads until the end
        # fills, blocks vegasctl, and the ring buffer then drops records.
        self._out = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([VEGASCTL, "trace", *self.args], stdout=self._out,
                                     stderr=subprocess.PIPE, text=True, env=self.env)
        deadline = time.monotonic() + 10
        while True:                       # the header line means tracing is on
            self._out.seek(0)
            self.header = self._out.readline()
            if self.header.endswith("\n"):
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise RuntimeError(f"vegasctl trace did not start: {self.proc.stderr.read()}")
            time.sleep(0.02)
        if not self.header.startswith("time_s,"):
            self.proc.kill()
            raise RuntimeError(f"vegasctl trace: unexpected output {self.header!r}")
        self._cpu_at_start = _cpu_s(self.proc.pid)
        return self

    def __exit__(self, *exc) -> None:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, self.stderr = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, self.stderr = self.proc.communicate()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) \
            - self._cpu_at_start
        self._out.seek(0)
        self.text = self._out.read()
        self._out.close()
        self.records = parse_csv(self.text)
        for word in self.stderr.split(","):
            if word.strip().endswith("lost"):
                self.lost = int(word.split()[0])
        self.returncode = self.proc.returncode

