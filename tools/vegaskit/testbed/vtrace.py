"""`vegasctl trace` as a context manager, and its CSV records as dicts."""
from __future__ import annotations

import csv
import io
import resource
import signal
import subprocess
import tempfile
import time

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


class Trace:
    """Runs `vegasctl trace ARGS` until the with-block ends (SIGINT), then parses it.

    `cpu_s`: the tracer's CPU time (user + system) from start to exit, read as the
    growth of this process's reaped children's usage while it is reaped; exact when no
    other child of this process is reaped meanwhile (the bench's single thread).

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
        self.cpu_s = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self._out.seek(0)
        self.text = self._out.read()
        self._out.close()
        self.records = parse_csv(self.text)
        for word in self.stderr.split(","):
            if word.strip().endswith("lost"):
                self.lost = int(word.split()[0])
        self.returncode = self.proc.returncode

