"""Byte-checking TCP streams: many long-lived connections whose every byte is verified.

iperf3 does not check payloads, so swap tests use this instead. Connection i
carries a deterministic pattern (byte at offset o depends on i and o), the
server compares every byte it receives, and both ends report per-connection
byte counts, resets and corruption as JSON.

  python -m vegaskit.testbed.checkstream server --port P --conns N --report FILE
  python -m vegaskit.testbed.checkstream client --addr A --port P --conns N --seconds S
         [--cc NAME] [--rate BPS] --report FILE

The client stops sending after S seconds, half-closes each connection and
waits for the server's close, so a connection is "complete" only if both ends
saw every byte and a clean FIN.
"""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import struct
import sys
import time

from vegaskit.cliargs import OneLineParser

BLOCK = 1 << 16
CHUNK = 16 << 10


def pattern(conn_id: int) -> bytes:
    """One period of connection conn_id's stream (offset o -> byte pattern[o % BLOCK])."""
    return bytes(((o * 7) + (o >> 8) + conn_id * 13) & 0xFF for o in range(BLOCK)) * 2


async def serve(port: int, conns: int, report: str) -> int:
    results: dict[int, dict] = {}
    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        res = {"bytes": 0, "corrupt": False, "reset": False, "eof": False}
        try:
            cid = struct.unpack("!I", await reader.readexactly(4))[0]
            results[cid] = res
            pat, off = pattern(cid), 0
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    res["eof"] = True
                    break
                pos = off % BLOCK
                for start in range(0, len(data), BLOCK):
                    piece = data[start:start + BLOCK]
                    p0 = (pos + start) % BLOCK
                    if piece != pat[p0:p0 + len(piece)]:
                        res["corrupt"] = True
                off += len(data)
                res["bytes"] = off
        except (ConnectionResetError, asyncio.IncompleteReadError, BrokenPipeError):
            res["reset"] = True
        finally:
            writer.close()
            if len(results) >= conns and all(r["eof"] or r["reset"] for r in results.values()):
                done.set()

    server = await asyncio.start_server(handle, "0.0.0.0", port, backlog=conns + 16)
    print("listening", flush=True)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    await done.wait()
    server.close()
    with open(report, "w") as f:
        json.dump({str(k): v for k, v in sorted(results.items())}, f)
    return 0


async def run_client(addr: str, port: int, conns: int, seconds: float, cc: str | None,
                     rate: float, report: str) -> int:
    results: dict[int, dict] = {}
    deadline = time.monotonic() + seconds
    per_conn = rate / 8 / conns if rate else 0   # bytes/s each, 0 = as fast as allowed

    async def one(cid: int) -> None:
        res = results[cid] = {"bytes": 0, "reset": False, "closed_cleanly": False, "error": ""}
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if cc:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (addr, port))
            reader, writer = await asyncio.open_connection(sock=sock)
            writer.write(struct.pack("!I", cid))
            pat, off, t0 = pattern(cid), 0, time.monotonic()
            while time.monotonic() < deadline:
                pos = off % BLOCK
                writer.write(pat[pos:pos + CHUNK])
                off += CHUNK
                await writer.drain()
                if per_conn:
                    ahead = off / per_conn - (time.monotonic() - t0)
                    if ahead > 0:
                        await asyncio.sleep(ahead)
                res["bytes"] = off
            writer.write_eof()
            await writer.drain()
            res["closed_cleanly"] = (await reader.read()) == b""
            writer.close()
        except (ConnectionResetError, BrokenPipeError) as e:
            res["reset"] = True
            res["error"] = repr(e)
        except OSError as e:
            res["error"] = repr(e)

    await asyncio.gather(*(one(i) for i in range(conns)))
    with open(report, "w") as f:
        json.dump({str(k): v for k, v in sorted(results.items())}, f)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(prog="checkstream")
    ap.add_argument("mode", choices=("server", "client"))
    ap.add_argument("--addr", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--conns", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--cc")
    ap.add_argument("--rate", type=float, default=0, help="total bits/s over all connections")
    ap.add_argument("--report", required=True)
    a = ap.parse_args(argv)
    if a.mode == "server":
        return asyncio.run(serve(a.port, a.conns, a.report))
    return asyncio.run(run_client(a.addr, a.port, a.conns, a.seconds, a.cc, a.rate, a.report))


if __name__ == "__main__":
    sys.exit(main())
