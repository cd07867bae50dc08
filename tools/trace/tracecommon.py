"""Shared code of the vegaskit bcc trace tools (tcpcwnd, tcpccstate, tcpccretrans).

Written once, used by every tool:
- the command line, following bcc's conventions: -L/--lport and -R/--rport port
  filters (comma-separated lists), -T (HH:MM:SS time column), -t (seconds since
  tracing began), --ktime (CLOCK_MONOTONIC seconds: the clock of bpf_ktime_get_ns,
  vegasctl trace, the bpftrace scripts here and Python's time.monotonic()), --csv,
  -d/--duration, --ebpf, and, for tools that summarise, positional interval
  and count;
- the port filter as C code for the BPF program;
- the output table (text with fixed columns or CSV, same columns either way);
- the poll loop (duration, interval/count, Ctrl-C and SIGTERM end it cleanly, lost
  events reported on stderr).

The tools use tracepoint fields only: bcc compiles against whatever kernel headers
it finds, which on this machine are not the running kernel's, so kernel struct
layouts must never be read through them (docs/DESIGN.md §10).

stdout carries nothing but the header and the data; diagnostics go to stderr.
Run them with the project's venv (.venv/bin/python), which sees both Debian's bcc
bindings and the vegaskit package.
"""
from __future__ import annotations

import argparse
import math
import ipaddress
import os
import signal
import sys
import time
from dataclasses import dataclass

try:
    from vegaskit.intf import CA_STATES    # the names vegasctl prints too (bpf/vk_intf.h)
    from vegaskit.testbed.tcpprobe import INFINITE_SSTHRESH
except ImportError:
    sys.exit(f"{sys.argv[0].rsplit('/', 1)[-1]}: cannot import vegaskit: run it with the "
             "project's venv, .venv/bin/python (sudo make deps all creates it)")

TCP_STATES = {1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1",
              5: "FIN_WAIT2", 6: "TIME_WAIT", 7: "CLOSE", 8: "CLOSE_WAIT",
              9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING", 12: "NEW_SYN_RECV"}
AF_INET, AF_INET6 = 2, 10
UNKNOWN_STATE = 255      # what the BPF programs store when a state was never seen
MAX_SECONDS = 31 * 86400  # a duration or interval beyond a month is a typo


def ca_state_name(s: int) -> str:
    return CA_STATES[s] if 0 <= s < len(CA_STATES) else "?"


def tcp_state_name(s: int) -> str:
    return TCP_STATES.get(s, str(s))


# ---------------------------------------------------------------- command line

def _ports(text: str) -> list[int]:
    try:
        ports = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of ports: {text!r}")
    if not ports or any(not 0 < p < 65536 for p in ports):
        raise argparse.ArgumentTypeError(f"ports must be 1..65535: {text!r}")
    return ports


def _positive(kind):
    """A number > 0 and finite: float() takes 'nan' and 'inf', which no
    duration or interval can be (nan > 0 is false, so a bare test lets it by)."""
    def conv(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"must be a finite number > 0: {text!r}")
        if kind is float and v > MAX_SECONDS:
            raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS:g}: {text!r}")
        return v
    conv.__name__ = kind.__name__       # argparse names the type in its own messages
    return conv


class _OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr and exit 2, not argparse's usage block
    above it (`-h` still prints the whole usage)."""

    def error(self, message: str) -> None:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parser(prog: str, description: str, examples: str,
           summary: str | None = None) -> argparse.ArgumentParser:
    """The common command line; `summary` (a sentence) enables interval/count."""
    p = _OneLineParser(
        prog=prog, description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n" + examples)
    p.add_argument("-T", "--time", action="store_true",
                   help="include a time column (HH:MM:SS.mmm, local time)")
    p.add_argument("-t", "--timestamp", action="store_true",
                   help="include a timestamp column (seconds since tracing began)")
    p.add_argument("--ktime", action="store_true",
                   help="include a CLOCK_MONOTONIC timestamp column (seconds; the clock "
                        "of bpf_ktime_get_ns, vegasctl trace and the .bt scripts)")
    p.add_argument("-L", "--lport", type=_ports, metavar="PORTS",
                   help="only sockets with these local ports (comma-separated)")
    p.add_argument("-R", "--rport", type=_ports, metavar="PORTS",
                   help="only sockets with these remote ports (comma-separated)")
    p.add_argument("--csv", action="store_true", help="comma-separated output")
    p.add_argument("-d", "--duration", type=_positive(float), metavar="SECONDS",
                   help="stop after this many seconds")
    p.add_argument("--ebpf", action="store_true", help=argparse.SUPPRESS)
    if summary:
        p.add_argument("interval", nargs="?", type=_positive(float),
                       help=f"print a per-flow summary every INTERVAL seconds ({summary})"
                            " instead of one line per event")
        p.add_argument("count", nargs="?", type=_positive(int),
                       help="number of summaries, then exit")
    return p


def port_filter(args, lport: str = "args->sport", rport: str = "args->dport") -> str:
    """C statements that `return 0;` for sockets outside the -L/-R lists.

    lport/rport are C expressions, in host byte order, for the socket's local and
    remote port (the tcp tracepoints' sport/dport are exactly that).
    """
    code = []
    for ports, expr in ((args.lport, lport), (args.rport, rport)):
        if ports:
            cond = " && ".join(f"{expr} != {p}" for p in ports)
            code.append(f"if ({cond}) return 0;")
    return "\n    ".join(code)


def bpf_text(template: str, args, **subst: str) -> str:
    """Fill FILTER (the port filter) and any other NAME in a BPF program."""
    for k, v in subst.items():
        template = template.replace(k, v)
    return template.replace("FILTER", port_filter(args))


# ---------------------------------------------------------------- shared BPF code

# Per-socket view kept by tcpccstate and tcpccretrans: the congestion state (from
# tcp_cong_state_set) and cwnd/ssthresh/srtt as of the last segment the socket
# received (tcp_probe fires before the segment is processed). Keyed by the socket
# address, which all three tracepoints carry; dropped on tcp_destroy_sock.
# STATE_CHANGE_HOOK runs in tcp_cong_state_set after a real change, with `old`,
# `new`, `since` (ns when `old` was entered, 0 if unseen), `now` and `si` in scope.
C_SOCKINFO = r"""
#define AF_INET 2
#define UNKNOWN_STATE 255

struct sockinfo_t {
    u64 state_ts;       /* when ca_state was set; 0: never seen */
    u32 cwnd;
    u32 ssthresh;
    u32 srtt;
    u8 ca_state;        /* UNKNOWN_STATE until a change is seen */
    u8 probed;          /* cwnd/ssthresh/srtt valid */
};

BPF_TABLE("lru_hash", u64, struct sockinfo_t, socks, 65536);

static inline __attribute__((always_inline)) struct sockinfo_t *sockinfo(u64 sk)
{
    struct sockinfo_t *si = socks.lookup(&sk);
    if (si)
        return si;
    struct sockinfo_t z = {};
    z.ca_state = UNKNOWN_STATE;
    socks.insert(&sk, &z);
    return socks.lookup(&sk);
}

/* Copy the 4- or 16-byte addresses of tcp_cong_state_set/tcp_retransmit_skb. */
#define COPY_ADDRS(ev, args) do {                                       \
        if ((args)->family == AF_INET) {                                \
            __builtin_memcpy((ev).saddr, (args)->saddr, 4);             \
            __builtin_memcpy((ev).daddr, (args)->daddr, 4);             \
        } else {                                                        \
            __builtin_memcpy((ev).saddr, (args)->saddr_v6, 16);         \
            __builtin_memcpy((ev).daddr, (args)->daddr_v6, 16);         \
        }                                                               \
    } while (0)

TRACEPOINT_PROBE(tcp, tcp_probe)
{
    FILTER
    struct sockinfo_t *si = sockinfo((u64)args->skaddr);
    if (!si)
        return 0;
    si->cwnd = args->snd_cwnd;
    si->ssthresh = args->ssthresh;
    si->srtt = args->srtt;
    si->probed = 1;
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_cong_state_set)
{
    FILTER
    struct sockinfo_t *si = sockinfo((u64)args->skaddr);
    if (!si)
        return 0;
    u8 old = si->ca_state, new = args->cong_state;
    if (old == new)
        return 0;
    u64 now = bpf_ktime_get_ns(), since = si->state_ts;
    si->ca_state = new;
    si->state_ts = now;
    STATE_CHANGE_HOOK
    return 0;
}

TRACEPOINT_PROBE(tcp, tcp_destroy_sock)
{
    u64 sk = (u64)args->skaddr;
    socks.delete(&sk);
    return 0;
}
"""


# ---------------------------------------------------------------- addresses

def addr(family: int, raw) -> str:
    """A 4- or 16-byte address (ctypes array or bytes) as text."""
    b = bytes(raw)
    if family == AF_INET:
        return str(ipaddress.IPv4Address(b[:4]))
    a = ipaddress.IPv6Address(b[:16])
    return f"::ffff:{a.ipv4_mapped}" if a.ipv4_mapped else str(a)   # as inet_ntop


def sockaddr_addr(family: int, raw) -> str:
    """tcp_probe's saddr/daddr: a sockaddr_in or sockaddr_in6 in 28 bytes."""
    b = bytes(raw)
    return addr(family, b[4:8] if family == AF_INET else b[8:24])


@dataclass(frozen=True)
class Flow:
    laddr: str
    lport: int
    raddr: str
    rport: int

    @classmethod
    def of(cls, e, to_text=None) -> "Flow":
        """The flow of an event with family, saddr, sport, daddr and dport;
        to_text turns a raw address into text (default: addr)."""
        to_text = to_text or addr
        return cls(to_text(e.family, e.saddr), e.sport, to_text(e.family, e.daddr), e.dport)

    def sort_key(self) -> tuple:
        """Interval summaries list flows by local port, then remote port."""
        return (self.lport, self.rport, self.laddr, self.raddr)

    @property
    def local(self) -> str:
        return f"{self.laddr}:{self.lport}" if ":" not in self.laddr else f"[{self.laddr}]:{self.lport}"

    @property
    def remote(self) -> str:
        return f"{self.raddr}:{self.rport}" if ":" not in self.raddr else f"[{self.raddr}]:{self.rport}"


# ---------------------------------------------------------------- output

@dataclass
class Col:
    name: str           # text header
    width: int          # text width (negative: left-aligned)
    csv: str            # CSV header


FLOW_COLS = [Col("LADDR:LPORT", -22, "laddr,lport"), Col("RADDR:RPORT", -22, "raddr,rport")]


class Output:
    """One table on stdout: header once, then rows; text or CSV; optional times."""

    def __init__(self, args, cols: list[Col]):
        self.csv = args.csv
        self.times = []
        if args.time:
            self.times.append(Col("TIME", -12, "time"))
        if args.timestamp:
            self.times.append(Col("TIME(s)", -11, "ts"))
        if args.ktime:
            self.times.append(Col("KTIME_S", -17, "ktime"))
        self.cols = self.times + cols
        self.none = "" if self.csv else "-"        # a value the kernel did not give
        self.broken = False                         # stdout's reader went away
        self.start_ns = time.monotonic_ns()         # same clock as bpf_ktime_get_ns
        self.wall_off_ns = time.time_ns() - self.start_ns

    def header(self) -> None:
        if self.csv:
            self._emit(",".join(c.csv for c in self.cols))
        else:
            self._emit(" ".join(self._pad(c.name, c.width) for c in self.cols).rstrip())

    def row(self, ts_ns: int, values: list) -> None:
        """values: one per non-time column; a Flow fills the two flow columns."""
        cells = [self._time(c.csv, ts_ns) for c in self.times]
        for v in values:
            if isinstance(v, Flow):
                cells += ([v.laddr, v.lport, v.raddr, v.rport] if self.csv else [v.local, v.remote])
            else:
                cells.append(v)
        if self.csv:
            self._emit(",".join(str(c) for c in cells))
        else:
            self._emit(" ".join(self._pad(str(v), c.width)
                                for v, c in zip(cells, self.cols)).rstrip())

    def _time(self, kind: str, ts_ns: int) -> str:
        if kind == "time":
            wall = (ts_ns + self.wall_off_ns) / 1e9
            return time.strftime("%H:%M:%S", time.localtime(wall)) + f".{int(wall * 1000) % 1000:03d}"
        if kind == "ts":
            return f"{(ts_ns - self.start_ns) / 1e9:.6f}"
        return f"{ts_ns / 1e9:.6f}"

    @staticmethod
    def _pad(s: str, w: int) -> str:
        return s.ljust(-w) if w < 0 else s.rjust(w)

    def _emit(self, line: str) -> None:
        if self.broken:
            return
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # e.g. piped into head: stop quietly (the Runner sees the flag; raising
            # here, inside a perf-buffer callback, would be swallowed by ctypes)
            self.broken = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


def ssthresh_text(v: int, csv: bool) -> str:
    return str(v) if csv or v < INFINITE_SSTHRESH else "inf"


# ---------------------------------------------------------------- running

class Runner:
    """Polls the tool's perf buffers until duration, count or a signal ends it.

    SIGINT and SIGTERM only set a flag, checked between polls: an exception raised
    inside a perf-buffer callback (a ctypes callback) would be swallowed by ctypes,
    and the tool would never stop.
    """

    def __init__(self, args, bpf, out: Output, what: str):
        self.args, self.bpf, self.out, self.what = args, bpf, out, what
        self.lost = 0
        self.stop = False

    def lost_cb(self, n: int) -> None:
        self.lost += n

    def _on_signal(self, signum, frame) -> None:
        self.stop = True

    def open(self, table: str, callback, page_cnt: int = 64) -> None:
        self.bpf[table].open_perf_buffer(callback, page_cnt=page_cnt, lost_cb=self.lost_cb)

    def run(self, on_interval=None) -> int:
        """on_interval(now_ns) prints a summary; called every args.interval seconds,
        and once more for the partial interval when the run ends."""
        args = self.args
        interval = getattr(args, "interval", None)
        count = getattr(args, "count", None)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        start = time.monotonic()
        deadline = start + args.duration if args.duration else None
        next_tick = start + interval if interval else None
        ticks = 0
        filt = ", ".join(f"{k} {','.join(map(str, v))}" for k, v in
                         (("lport", args.lport), ("rport", args.rport)) if v)
        print(f"Tracing {self.what}{' (' + filt + ')' if filt else ''}... "
              "Hit Ctrl-C to end.", file=sys.stderr, flush=True)
        self.out.header()
        try:
            while not self.stop and not self.out.broken:
                wake = [t for t in (deadline, next_tick) if t is not None]
                timeout = 200 if not wake else \
                    max(1, min(200, int((min(wake) - time.monotonic()) * 1000)))
                self.bpf.perf_buffer_poll(timeout=timeout)
                now = time.monotonic()
                if next_tick is not None and now >= next_tick:
                    on_interval(time.monotonic_ns())
                    ticks += 1
                    if count and ticks >= count:
                        return 0
                    next_tick += interval
                if deadline is not None and now >= deadline:
                    break
            self.bpf.perf_buffer_poll(timeout=0)     # what is already buffered
            if on_interval and interval:
                on_interval(time.monotonic_ns())     # the partial last interval
            return 0
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            if self.lost:
                print(f"{self.lost} events lost (perf buffer full)", file=sys.stderr)


def start(args, program: str, what: str, event_cols: list[Col], summary_cols: list[Col],
          **subst: str):
    """What every bcc tool does first: with --ebpf, print the program and return
    None; otherwise load it and return (bpf, Output, Runner), the Output with the
    summary columns when an interval was given."""
    text = bpf_text(program, args, **subst)
    if args.ebpf:
        print(text)
        return None
    if os.geteuid() != 0:       # else bcc's compile fails in 190 lines of clang errors
        print(f"{sys.argv[0].rsplit('/', 1)[-1]}: must be run as root (it loads BPF "
              "programs): try sudo", file=sys.stderr)
        raise SystemExit(1)
    from bcc import BPF
    b = BPF(text=text)
    out = Output(args, summary_cols if args.interval is not None else event_cols)
    return b, out, Runner(args, b, out, what)


def main_guard(fn) -> None:
    """Run a tool's main(), turning Ctrl-C during start-up into a quiet exit."""
    try:
        sys.exit(fn())
    except KeyboardInterrupt:
        sys.exit(130)
