"""A file transfer whose completion time is the delivery of its last byte.

iperf3 -n ends its test when the sender has *written* the bytes: what is still
in the socket buffer or in flight is cut off, so neither its byte count nor its
time is a transfer's (seed 000, Tables 6-8). Here the sender writes N bytes,
half-closes, and stops the clock when the receiver, having read every byte up
to EOF, closes its side.

  python -m vegaskit.testbed.transfer server --port P --report FILE [--interval S]
  python -m vegaskit.testbed.transfer client --addr A --port P --bytes N --cc CC
         [--mss M] [--interval S] --report FILE

The client samples TCP_INFO (cwnd, RTT, retransmissions) every interval; the
server reports bytes received per interval. Times count from the client's
connect() and the server's accept().
"""
from __future__ import annotations

import json
import os
import select
import socket
import struct
import sys
import time

from vegaskit.cliargs import OneLineParser

CHUNK = 64 << 10


def tcp_info(sock: socket.socket) -> dict:
    """snd_cwnd (packets), rtt (us), total_retrans and snd_mss from struct tcp_info."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    u32 = struct.unpack_from("<24I", raw, 8)      # after the eight u8 fields
    return {"snd_mss": u32[2], "rtt_us": u32[15], "snd_cwnd": u32[18], "total_retrans": u32[23]}


def serve(port: int, report: str, interval: float) -> int:
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", port))
    ls.listen(1)
    print("listening", flush=True)
    conn, _ = ls.accept()
    t0 = time.monotonic()
    total, mark, got, received = 0, 0.0, 0, []
    while True:
        data = conn.recv(CHUNK)
        now = time.monotonic() - t0
        while now >= mark + interval:            # close the intervals that ended
            received.append((mark, mark + interval, got))
            mark, got = mark + interval, 0
        if not data:
            break
        got += len(data)
        total += len(data)
    received.append((mark, now, got))
    conn.close()
    with open(report, "w") as f:
        json.dump({"bytes": total, "seconds": now, "received": received}, f)
    return 0


def send(addr: str, port: int, nbytes: int, cc: str, mss: int | None, interval: float,
         report: str) -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    if mss:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    t0 = time.monotonic()
    s.connect((addr, port))
    s.setblocking(False)
    payload = os.urandom(CHUNK)
    left, intervals, mark, sent_iv, retx0 = nbytes, [], 0.0, 0, tcp_info(s)["total_retrans"]

    def sample(now: float) -> None:
        nonlocal mark, sent_iv, retx0
        info = tcp_info(s)
        intervals.append({"start": mark, "end": now, "bytes": sent_iv,
                          "snd_cwnd": info["snd_cwnd"] * info["snd_mss"], "rtt_us": info["rtt_us"],
                          "retransmits": info["total_retrans"] - retx0})
        mark, sent_iv, retx0 = now, 0, info["total_retrans"]

    eof_sent = False
    while True:
        now = time.monotonic() - t0
        if now >= mark + interval:
            sample(now)
        if not eof_sent and left == 0:
            s.shutdown(socket.SHUT_WR)
            eof_sent = True
        r, w, _ = select.select([s], [] if eof_sent else [s], [], max(0.0, mark + interval - now))
        if w:
            n = s.send(payload[:min(left, CHUNK)])
            left -= n
            sent_iv += n
        if r and s.recv(1) == b"":                # the receiver read everything and closed
            break
    now = time.monotonic() - t0
    sample(now)
    total_retx = sum(iv["retransmits"] for iv in intervals)
    s.close()
    with open(report, "w") as f:
        json.dump({"seconds": now, "bytes": nbytes, "retransmits": total_retx,
                   "intervals": intervals}, f)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="transfer")
    ap.add_argument("mode", choices=("server", "client"))
    ap.add_argument("--addr")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bytes", type=int)
    ap.add_argument("--cc")
    ap.add_argument("--mss", type=int)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--report", required=True)
    a = ap.parse_args(argv)
    if a.mode == "server":
        return serve(a.port, a.report, a.interval)
    if not (a.addr and a.bytes and a.cc):
        ap.error("client needs --addr, --bytes and --cc")
    return send(a.addr, a.port, a.bytes, a.cc, a.mss, a.interval, a.report)


if __name__ == "__main__":
    sys.exit(main())
