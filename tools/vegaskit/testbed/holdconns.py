"""Many idle established TCP connections, held open: what a swap at scale moves.

  python -m vegaskit.testbed.holdconns server --ports P1,P2 --conns N
  python -m vegaskit.testbed.holdconns client --addr A --ports P1,P2 --conns N [--cc NAME]

The connections are spread over the ports, so that more of them than one
address pair's ephemeral ports fit. Each side prints "ready N" once it holds its
N sockets, then holds them until stdin closes or it is signalled. Raises its
own file limit (root may, up to fs.nr_open, with CAP_SYS_RESOURCE).
"""
from __future__ import annotations

import resource
import selectors
import socket
import sys
import time

from vegaskit.cliargs import OneLineParser


def raise_nofile(n: int) -> None:
    want = n + 64
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
        except ValueError:      # above the hard limit without CAP_SYS_RESOURCE
            raise SystemExit(f"holdconns: {n} sockets need {want} files, more than this "
                             f"process may open (hard limit {hard})") from None


def server(ports: list[int], conns: int) -> list[socket.socket]:
    sel, held = selectors.DefaultSelector(), []
    for p in ports:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("0.0.0.0", p))
        ls.listen(4096)
        ls.setblocking(False)
        sel.register(ls, selectors.EVENT_READ)
    print("listening", flush=True)
    while len(held) < conns:
        for key, _ in sel.select(timeout=1):
            while len(held) < conns:
                try:
                    s, _ = key.fileobj.accept()
                except BlockingIOError:
                    break
                held.append(s)
    return held


def client(addr: str, ports: list[int], conns: int, cc: str | None) -> list[socket.socket]:
    held, pending = [], []
    for i in range(conns):
        s = socket.socket()
        if cc:
            try:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            except FileNotFoundError:   # ENOENT: no controller of that name is registered
                raise SystemExit(f"holdconns: congestion control '{cc}' is not registered "
                                 "(net.ipv4.tcp_available_congestion_control)") from None
        s.setblocking(False)
        s.connect_ex((addr, ports[i % len(ports)]))
        pending.append(s)
        if len(pending) >= 512:         # bounded SYN bursts: the listen backlogs keep up
            held += settle(pending)
            pending = []
    return held + settle(pending)


def settle(socks: list[socket.socket]) -> list[socket.socket]:
    """Wait until every socket is connected; fail on any that is refused."""
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_WRITE)
    left, deadline = len(socks), time.monotonic() + 60
    while left and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, "connect failed")
            sel.unregister(key.fileobj)
            left -= 1
    if left:
        raise TimeoutError(f"{left} connections not established in 60 s")
    return socks


def main() -> int:
    ap = OneLineParser(prog="holdconns")
    ap.add_argument("mode", choices=["server", "client"])
    ap.add_argument("--addr")
    ap.add_argument("--ports", required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--cc")
    a = ap.parse_args()
    ports = [int(p) for p in a.ports.split(",")]
    raise_nofile(a.conns + len(ports))
    held = server(ports, a.conns) if a.mode == "server" else client(a.addr, ports, a.conns, a.cc)
    print(f"ready {len(held)}", flush=True)
    sys.stdin.read()                    # until the parent closes our stdin, or kills us
    return 0


if __name__ == "__main__":
    sys.exit(main())
