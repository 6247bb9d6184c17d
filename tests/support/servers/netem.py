"""Delay and loss on a link where the kernel has no ``tc netem``: ``iptables`` hands every packet that
leaves or enters a namespace's ``eth0`` to an NFQUEUE, and this process, inside that namespace, gives each
its verdict ``DELAY_MS`` after it arrived (in arrival order), dropping ``LOSS_PERCENT`` % at random. The
kernel holds the packets meanwhile: TCP sees a real round trip of twice the delay and real losses.

Run as ``ip netns exec NS python tests/support/servers/netem.py QUEUE DELAY_MS LOSS_PERCENT SEED``; it prints
``ready`` once bound, then ``packets N dropped M`` as they change, and runs until killed (or for
``MAX_LIFE_S`` at most, should its killer die first). It speaks nfnetlink_queue over a raw netlink
socket (``linux/netfilter/nfnetlink_queue.h``): three config messages, then packet ids in, verdicts out.
"""

from __future__ import annotations

import random
import select
import socket
import struct
import sys
import time
from collections import deque

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
MSG_PACKET, MSG_VERDICT, MSG_CONFIG = 0, 1, 2
CFG_CMD, CFG_PARAMS, CFG_QUEUE_MAXLEN = 1, 2, 3
CMD_BIND = 1
COPY_META = 1
ATTR_PACKET_HDR, ATTR_VERDICT_HDR = 1, 2
NF_DROP, NF_ACCEPT = 0, 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
MAX_LIFE_S = 3600.0
# Packets the kernel may hold for us at once (its default, 1024, is a few MB of a fast push).
QUEUE_MAXLEN = 16384


def _attr(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("=HH", length, kind) + payload + b"\0" * (-length % 4)


def _message(kind: int, queue: int, attrs: list[bytes], flags: int = NLM_F_REQUEST) -> bytes:
    body = struct.pack("=BB", socket.AF_UNSPEC, 0) + struct.pack("!H", queue) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | kind, flags, 0, 0) + body


def _messages(data: bytes) -> list[tuple[int, bytes]]:
    """(type, payload after the netlink header) of each message in ``data``."""
    found, offset = [], 0
    while offset + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, offset)
        if length < 16:
            break
        found.append((kind, data[offset + 16 : offset + length]))
        offset += (length + 3) & ~3
    return found


def _packet_id(payload: bytes) -> int | None:
    """The packet id in a MSG_PACKET payload (after its 4-byte nfgenmsg), None if it has none."""
    pos = 4
    while pos + 4 <= len(payload):
        length, kind = struct.unpack_from("=HH", payload, pos)
        if length < 4:
            return None
        if kind & 0x7FFF == ATTR_PACKET_HDR:
            return int(struct.unpack_from("!I", payload, pos + 4)[0])
        pos += (length + 3) & ~3
    return None


def bind(queue: int) -> socket.socket:
    """A netlink socket bound to NFQUEUE ``queue`` in this network namespace (metadata only)."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 23)
    sock.bind((0, 0))
    config = [
        _attr(CFG_CMD, struct.pack("!BxH", CMD_BIND, socket.AF_INET)),
        _attr(CFG_PARAMS, struct.pack("!IB", 0, COPY_META)),
        _attr(CFG_QUEUE_MAXLEN, struct.pack("!I", QUEUE_MAXLEN)),
    ]
    for attr in config:
        sock.send(_message(MSG_CONFIG, queue, [attr], NLM_F_REQUEST | NLM_F_ACK))
        for kind, payload in _messages(sock.recv(65536)):
            if kind == NLMSG_ERROR and (error := struct.unpack_from("=i", payload)[0]) != 0:
                raise OSError(-error, f"nfqueue config refused: {struct.unpack_from('=HH', payload, 8)}")
    return sock


def run(queue: int, delay_s: float, loss: float, seed: int) -> None:
    """Give every queued packet its verdict ``delay_s`` after it came, dropping a ``loss`` fraction."""
    rng = random.Random(seed)
    sock = bind(queue)
    print("ready", flush=True)
    held: deque[tuple[float, int, int]] = deque()  # (due, packet id, verdict), due times in order
    end = time.monotonic() + MAX_LIFE_S
    packets = dropped = 0
    shown = (0, 0)
    while time.monotonic() < end:
        if (packets, dropped) != shown:  # what a test reads to know the link really was slowed
            print(f"packets {packets} dropped {dropped}", flush=True)
            shown = (packets, dropped)
        wait = max(0.0, held[0][0] - time.monotonic()) if held else None
        if select.select([sock], [], [], wait)[0]:
            now = time.monotonic()
            for kind, payload in _messages(sock.recv(1 << 16)):
                packet = _packet_id(payload) if kind == (NFNL_SUBSYS_QUEUE << 8) | MSG_PACKET else None
                if packet is not None:
                    verdict = NF_DROP if rng.random() < loss else NF_ACCEPT
                    held.append((now + delay_s, packet, verdict))
                    packets += 1
                    dropped += verdict == NF_DROP
        now = time.monotonic()
        while held and held[0][0] <= now:
            _due, packet, verdict = held.popleft()
            sock.send(
                _message(MSG_VERDICT, queue, [_attr(ATTR_VERDICT_HDR, struct.pack("!II", verdict, packet))])
            )


if __name__ == "__main__":
    queue_arg, delay_arg, loss_arg, seed_arg = sys.argv[1:5]
    run(int(queue_arg), int(delay_arg) / 1000, float(loss_arg) / 100, int(seed_arg))
