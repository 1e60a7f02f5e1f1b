#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Send Ethernet frames, "LABEL HEX" a line on stdin, out of an interface
through a packet socket (root). Prints how many it sent.

usage: send_frames.py IFACE
"""
import socket
import sys


def main():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[1], 0))
    n = 0
    for line in sys.stdin:
        if line.strip():
            s.send(bytes.fromhex(line.split()[1]))
            n += 1
    print(n)


if __name__ == "__main__":
    main()
