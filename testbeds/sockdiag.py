"""Read TCP_INFO counters of sockets through NETLINK_SOCK_DIAG, without spawning ``ss``.

Calibration counts the payload the receiver's kernel took in over a window; spawning ``ss``
on a busy 2-vCPU machine took up to half a second, which blurred a 4 s window by +-5 %. This
module runs inside the receiver's namespace (``python3 -m testbeds.sockdiag --port P --warmup W
--window S``), takes both samples itself with timestamps microseconds apart, and prints
``{"bytes": N, "seconds": T, "connections": K}``.

The payload is counted as data segments received x MSS (``tcpi_data_segs_in``), not as
``tcpi_bytes_received``: the latter only moves when holes are filled, so with loss it lags by
whatever sits in the out-of-order queue (megabytes at 1 Gbit/s x 50 ms), which made a 4 s
window read up to 4 % high or low.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import time

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_DONE, NLMSG_ERROR = 3, 2
INET_DIAG_INFO = 2
TCP_ESTABLISHED = 1
DIAG_MSG_LEN = 72  # struct inet_diag_msg
# offsets in struct tcp_info
SND_MSS = 16  # u32
BYTES_RECEIVED = 128  # u64
DATA_SEGS_IN = 152  # u32


def _request(sport: int) -> bytes:
    # struct inet_diag_req_v2: family, protocol, ext, pad, states, then inet_diag_sockid
    sockid = struct.pack("!HH16s16s", sport, 0, b"", b"") + struct.pack(
        "=I2I", 0, 0xFFFFFFFF, 0xFFFFFFFF
    )
    req = struct.pack(
        "=BBBxI",
        socket.AF_INET,
        socket.IPPROTO_TCP,
        1 << (INET_DIAG_INFO - 1),
        1 << TCP_ESTABLISHED,
    )
    body = req + sockid
    header = struct.pack(
        "=IHHII", 16 + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP, 1, 0
    )
    return header + body


def bytes_received(sport: int) -> dict[str, int]:
    """{peer "addr:port": tcpi_bytes_received} of established IPv4 sockets on local ``sport``."""
    return {peer: c[0] for peer, c in counters(sport).items()}


def counters(sport: int) -> dict[str, tuple[int, int, int]]:
    """{peer: (bytes_received, data_segs_in, snd_mss)} of established IPv4 TCP sockets on
    local port ``sport``."""
    found: dict[str, tuple[int, int, int]] = {}
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG) as sock:
        sock.sendall(_request(sport))
        while True:
            data = sock.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                length, kind = struct.unpack_from("=IH", data, off)
                if kind == NLMSG_DONE:
                    return found
                if kind == NLMSG_ERROR:
                    (err,) = struct.unpack_from("=i", data, off + 16)
                    raise OSError(-err, f"sock_diag: {os.strerror(-err)}")
                _parse(data[off + 16 : off + length], sport, found)
                off += (length + 3) & ~3


def _parse(msg: bytes, sport: int, found: dict[str, tuple[int, int, int]]) -> None:
    src_port, dst_port = struct.unpack_from("!HH", msg, 4)
    if src_port != sport:
        return
    peer = f"{socket.inet_ntoa(msg[24:28])}:{dst_port}"
    off = DIAG_MSG_LEN
    while off + 4 <= len(msg):
        rta_len, rta_type = struct.unpack_from("=HH", msg, off)
        if rta_len < 4:
            break
        if rta_type == INET_DIAG_INFO and rta_len - 4 >= DATA_SEGS_IN + 4:
            info = off + 4
            (received,) = struct.unpack_from("=Q", msg, info + BYTES_RECEIVED)
            (segs,) = struct.unpack_from("=I", msg, info + DATA_SEGS_IN)
            (mss,) = struct.unpack_from("=I", msg, info + SND_MSS)
            found[peer] = (received, segs, mss)
        off += (rta_len + 3) & ~3


def sample_window(
    sport: int, warmup: float, window: float, connections: int = 1
) -> dict[str, float]:
    """Payload received over ``window`` s, by connections seen both times; the window starts
    ``warmup`` s after at least ``connections`` connections exist (waiting up to 30 s: on a
    busy machine the flows can take seconds to start)."""
    deadline = time.monotonic() + 30
    while len(counters(sport)) < connections and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(warmup)
    t0 = time.monotonic()
    first = counters(sport)
    t0 = (t0 + time.monotonic()) / 2
    time.sleep(window)
    t1 = time.monotonic()
    second = counters(sport)
    t1 = (t1 + time.monotonic()) / 2
    common = set(first) & set(second)
    segs = {c: (second[c][1] - first[c][1]) % 2**32 for c in common}
    return {
        "bytes": sum(segs[c] * second[c][2] for c in common),
        "seconds": t1 - t0,
        "connections": len(common),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--warmup", type=float, default=1.5)
    ap.add_argument("--window", type=float, default=4.0)
    ap.add_argument("--connections", type=int, default=1, help="wait for this many first")
    args = ap.parse_args()
    print(json.dumps(sample_window(args.port, args.warmup, args.window, args.connections)))


if __name__ == "__main__":
    main()
