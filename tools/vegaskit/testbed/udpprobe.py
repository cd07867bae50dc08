"""Numbered, timestamped UDP datagrams: order, loss and one-way delay across a link.

Run inside a namespace (`ip netns exec NS python udpprobe.py ...`); it imports
nothing from the testbed, so it runs by path with any Python 3.
Every datagram carries (seq, send time): CLOCK_MONOTONIC is one clock for all
namespaces of the host, so the receiver's clock minus the send time is the
one-way delay.

    udpprobe.py recv --bind ADDR:PORT [--idle S] [--max-wait S]
        prints "ready" once bound, then on exit one JSON line:
        {"seq": [...], "send_ns": [...], "recv_ns": [...], "kernel_ns": [...]}
        in arrival order; recv_ns is when this process got the datagram,
        kernel_ns when the receiving stack did (SO_TIMESTAMPNS, moved from
        CLOCK_REALTIME to CLOCK_MONOTONIC; null if none came), free of this process's wake-up
    udpprobe.py send --to ADDR:PORT --count N --pps R [--size B]
        prints {"sent": N, "start_ns": ..., "end_ns": ...}
"""
from __future__ import annotations

import json
import socket
import struct
import sys
import time

from vegaskit.cliargs import OneLineParser

HEADER = struct.Struct("!QQ")       # seq, send time (ns, CLOCK_MONOTONIC)
SO_RCVBUFFORCE = 33                 # root may exceed net.core.rmem_max
SO_TIMESTAMPNS = 35                 # also the cmsg type, SCM_TIMESTAMPNS
TIMESPEC = struct.Struct("qq")
BURST = 32                          # datagrams per pacing step at high rates


def _addr(s: str) -> tuple[str, int]:
    host, _, port = s.rpartition(":")
    return host, int(port)


def recv(args) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
    except PermissionError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 << 20)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.bind(_addr(args.bind))
    print("ready", flush=True)
    seqs, sent, got, kern = [], [], [], []
    deadline = time.monotonic() + args.max_wait
    sock.settimeout(args.max_wait)
    while True:
        try:
            data, anc, _, _ = sock.recvmsg(65535, socket.CMSG_SPACE(TIMESPEC.size))
        except socket.timeout:
            break
        now = time.monotonic_ns()
        # the clocks' offset between two monotonic reads, at their midpoint: one read
        # each side would count the time between them into every stamp
        real_minus_mono = time.time_ns() - (now + time.monotonic_ns()) // 2
        stamp = None                    # no SO_TIMESTAMPNS with it: said, not guessed
        for level, kind, raw in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(raw) >= 16:
                sec, nsec = TIMESPEC.unpack_from(raw)
                stamp = sec * 1_000_000_000 + nsec - real_minus_mono
        seq, t = HEADER.unpack_from(data)
        seqs.append(seq)
        sent.append(t)
        got.append(now)
        kern.append(stamp)
        # Until the first datagram wait up to max_wait; then stop `idle` after the last.
        sock.settimeout(max(0.001, min(args.idle, deadline - time.monotonic())))
        if time.monotonic() >= deadline:
            break
    print(json.dumps({"seq": seqs, "send_ns": sent, "recv_ns": got, "kernel_ns": kern}),
          flush=True)


def send(args) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect(_addr(args.to))
    pad = b"\0" * max(0, args.size - HEADER.size)
    # Paced in bursts: sleeping is only accurate to ~100 us, so at high rates
    # send up to BURST datagrams per wake-up, each no earlier than its time.
    start = time.monotonic_ns()
    step = 1e9 / args.pps
    i = 0
    while i < args.count:
        due = start + int(i * step)
        now = time.monotonic_ns()
        if due > now:
            time.sleep((due - now) / 1e9)
        n = 0
        while i < args.count and n < BURST and start + int(i * step) <= time.monotonic_ns():
            sock.send(HEADER.pack(i, time.monotonic_ns()) + pad)
            i += 1
            n += 1
    end = time.monotonic_ns()
    # Linger before exiting. Measured: without this the last datagram reaches
    # the emulator ~3 ms late, because our busy exit (Python's teardown) keeps
    # the woken reader off this CPU until the next tick.
    time.sleep(0.05)
    print(json.dumps({"sent": args.count, "start_ns": start, "end_ns": end}),
          flush=True)


def main(argv: list[str]) -> None:
    p = OneLineParser(prog="udpprobe", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--bind", required=True)
    r.add_argument("--idle", type=float, default=1.0, help="stop this long after the last datagram")
    r.add_argument("--max-wait", type=float, default=30.0, help="stop after this long in all")
    s = sub.add_parser("send")
    s.add_argument("--to", required=True)
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--pps", type=float, required=True)
    s.add_argument("--size", type=int, default=64, help="UDP payload bytes (>= 16)")
    args = p.parse_args(argv)
    recv(args) if args.cmd == "recv" else send(args)


if __name__ == "__main__":
    main(sys.argv[1:])
