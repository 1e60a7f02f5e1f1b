#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Rewrite a classic pcap file as pcapng (one section, one interface,
an Enhanced Packet Block per record), written here from the pcapng
specification so that roxe-pcap's pcapng path is tried on a file libpcap
did not write.

usage: pcap_to_pcapng.py IN.pcap OUT.pcapng
"""
import struct
import sys


def block(btype, body):
    body += bytes(-len(body) % 4)
    total = 12 + len(body)
    return struct.pack("<II", btype, total) + body + struct.pack("<I", total)


def option(code, value):
    return struct.pack("<HH", code, len(value)) + value + bytes(-len(value) % 4)


def main():
    data = open(sys.argv[1], "rb").read()
    magic, _, _, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
    if magic != 0xA1B2C3D4:
        sys.exit("pcap_to_pcapng: %s is not a little-endian microsecond pcap" % sys.argv[1])
    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) +
                 option(1, b"roxe wire selftest") + option(0, b""))]
    out.append(block(1, struct.pack("<HHI", linktype, 0, snaplen) +
                     option(9, b"\x06") + option(0, b"")))  # if_tsresol: us
    off = 24
    while off < len(data):
        sec, usec, caplen, wirelen = struct.unpack("<IIII", data[off:off + 16])
        ts = sec * 1000000 + usec
        out.append(block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF,
                                        caplen, wirelen) + data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    open(sys.argv[2], "wb").write(b"".join(out))


if __name__ == "__main__":
    main()
