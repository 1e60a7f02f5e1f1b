#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The ICRC checked by an implementation that shares nothing with roxe's.

This script finds the headers itself, masks the variant fields as RoCE v2
annex A17.3.3 says, and runs Python's zlib.crc32 over eight bytes of 0xff
(the absent LRH) and the masked bytes. Against roxe it checks:
  - every frame roxe's builder makes (frame_dump hex) carries that ICRC;
  - frames this script builds, with ICRCs this script computes, pass roxe's
    parser and ICRC (frame_dump check), and fail it once a byte is changed;
  - known answers: a CNP captured from a ConnectX-4 Lx NIC and a UC SEND
    published with scapy's RoCE layer (ICRCs from those sources), and a
    frame spelled out here.
Prints nested KTAP; exits 0 if all pass, 1 otherwise.

usage: icrc_independent.py FRAME_DUMP
"""
import random
import struct
import subprocess
import sys
import zlib

LRH = b"\xff" * 8


def be16(f, off):
    return f[off] << 8 | f[off + 1]


def locate(f):
    """(l3, ip version, l4, end of ICRC) of a frame, read from its headers."""
    off = 12
    ethertype = be16(f, off)
    while ethertype in (0x8100, 0x88A8):
        off += 4
        ethertype = be16(f, off)
    l3 = off + 2
    if ethertype == 0x0800:
        l4 = l3 + (f[l3] & 0x0F) * 4
        return l3, 4, l4, l3 + be16(f, l3 + 2)
    if ethertype == 0x86DD:
        return l3, 6, l3 + 40, l3 + 40 + be16(f, l3 + 4)
    raise ValueError("neither IPv4 nor IPv6")


def icrc(f, mask=True):
    """The ICRC the frame should carry, as an integer (stored LSB first)."""
    l3, version, l4, end = locate(f)
    m = bytearray(f[l3:end - 4])
    if mask:
        if version == 4:
            for i in (1, 8, 10, 11):  # TOS, TTL, header checksum
                m[i] = 0xFF
        else:
            m[0] |= 0x0F  # traffic class (high nibble), not the version
            for i in (1, 2, 3, 7):  # traffic class, flow label, hop limit
                m[i] = 0xFF
        udp = l4 - l3
        m[udp + 6] = m[udp + 7] = 0xFF  # UDP checksum
        m[udp + 8 + 4] = 0xFF  # BTH: FECN, BECN, resv6
    crc = zlib.crc32(LRH + bytes(m))
    if f[l4 + 8] == 0x1C:
        # FLUSH as Linux's rxe sends and checks it: its opcode table has
        # no payload offset for FLUSH, so BTH, FETH and RETH count twice
        crc = zlib.crc32(f[l4 + 8:end - 4], crc)
    return crc


def stored(f):
    end = locate(f)[3]
    return int.from_bytes(f[end - 4:end], "little")


def unhex(text):
    return bytes.fromhex("".join(text.split()))


# --- frames built here, independently of roxe's builder -----------------------

# opcode: (extension header bytes, payload allowed); IBA table 35.
OPCODES = {
    0x00: (0, True), 0x04: (0, True), 0x05: (4, True), 0x06: (16, True),
    0x0A: (16, True), 0x0B: (20, True), 0x0C: (16, False), 0x0D: (4, True),
    0x0E: (0, True), 0x10: (4, True), 0x11: (4, False), 0x12: (12, False),
    0x13: (28, False), 0x14: (28, False), 0x17: (4, True), 0x24: (0, True),
    0x2B: (20, True), 0x64: (8, True), 0x65: (12, True), 0x81: (0, True),
}


def ipv4_checksum(h):
    s = sum(struct.unpack(">%dH" % (len(h) // 2), h))
    while s > 0xFFFF:
        s = (s >> 16) + (s & 0xFFFF)
    return ~s & 0xFFFF


def build(rnd):
    """A RoCE v2 frame with arbitrary contents in every field the ICRC
    masks or ignores, and its ICRC."""
    op = rnd.choice(sorted(OPCODES))
    ext, has_payload = OPCODES[op]
    if op == 0x81:
        plen = 16
    else:
        plen = rnd.choice([0, 1, 2, 3, 5, 8, 100, 1021]) if has_payload else 0
    pad = -plen % 4
    bth = bytes([op, rnd.getrandbits(2) << 6 | pad << 4]) + \
        struct.pack(">HII", rnd.getrandbits(16), rnd.getrandbits(32),
                    rnd.getrandbits(32))
    body = bth + rnd.randbytes(ext) + rnd.randbytes(plen) + \
        (bytes(pad) if rnd.random() < 0.5 else rnd.randbytes(pad))
    udp_len = 8 + len(body) + 4
    udp = struct.pack(">HHHH", rnd.getrandbits(16), 4791, udp_len,
                      rnd.getrandbits(16))
    eth = rnd.randbytes(12)
    for _ in range(rnd.choice([0, 0, 1, 2])):
        eth += struct.pack(">HH", rnd.choice([0x8100, 0x88A8]),
                           rnd.getrandbits(16))
    if rnd.random() < 0.5:
        opts = bytes([1] * rnd.choice([0, 0, 4, 8, 40]))
        ihl = (20 + len(opts)) // 4
        ip = bytearray(struct.pack(
            ">BBHHHBBH4s4s", 0x40 | ihl, rnd.getrandbits(8),
            ihl * 4 + udp_len, rnd.getrandbits(16), rnd.choice([0, 0x4000]),
            rnd.getrandbits(8), 17, 0, rnd.randbytes(4), rnd.randbytes(4)))
        ip += opts
        csum = ipv4_checksum(bytes(ip)) if rnd.random() < 0.5 else rnd.getrandbits(16)
        struct.pack_into(">H", ip, 10, csum)
        eth += b"\x08\x00"
    else:
        ip = struct.pack(">IHBB16s16s",
                         6 << 28 | rnd.getrandbits(28), udp_len, 17,
                         rnd.getrandbits(8), rnd.randbytes(16), rnd.randbytes(16))
        eth += b"\x86\xdd"
    f = eth + bytes(ip) + udp + body + bytes(4)
    f = f[:-4] + icrc(f).to_bytes(4, "little")
    # Ethernet padding or an FCS after the frame: not ours to read.
    return f + rnd.randbytes(rnd.choice([0, 0, 2, 4, 30]))


# --- known answers -------------------------------------------------------------

# A CNP captured on a ConnectX-4 Lx (published with scapy's RoCE tests): the
# NIC computed the ICRC in hardware, the last four bytes.
CX4_CNP = unhex("""
    e41d2dab2bc2 7cfe90643b32 0800
    45 c2 003c 718c 4000 40 11 9161 0a001101 0a001201
    0000 12b7 0028 0000
    81 00 ffff 40 000118 00 000000
    00000000000000000000000000000000
    82fd002a
""")

# UC SEND_ONLY, MigReq, 2 pad bytes, from scapy's RoCE tests; ICRC
# 0x78f353f3 (as the bytes go on the wire) computed by scapy.
SCAPY_UC = unhex("""
    248a07a8fa22 248a07a8fa22 0800
    45 01 0040 0478 4000 40 11 b4d5 c0a80007 c0a80007
    c000 12b7 002c aca2
    24 60 ffff 00 0000d3 00 cf1710
    4630818be28935d9 0e9a95505401be88 5e50 0000
    78f353f3
""")

# Spelled out here: RC RDMA WRITE ONLY with immediate over IPv6 in a VLAN,
# every masked field non-zero; its ICRC is appended by icrc() below.
HAND_V6 = unhex("""
    02aabbccddee 021122334455 8100 a07b 86dd
    6b a1 2345 0034 11 3f
    fd000000000000000000000000000001 fd000000000000000000000000000002
    d431 12b7 0034 7e57
    0b b0 ffff c0 000011 80 000102
    0000000100002000 00abcdef 00000005
    deadbeef
    68656c6c6f 000000
""") + bytes(4)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, ok, name, why=""):
        self.n += 1
        if not ok:
            self.failed += 1
            print("# %s" % why)
        print("%sok %d %s" % ("" if ok else "not ", self.n, name))


def roxe_check(frame_dump, frames):
    """roxe's verdict on each frame: (verdict, stored, computed)."""
    text = "".join("f%d %s\n" % (i, f.hex()) for i, f in enumerate(frames))
    out = subprocess.run([frame_dump, "check"], input=text, text=True,
                         capture_output=True, check=True).stdout.split("\n")
    res = []
    for line in out[:len(frames)]:
        _, verdict, st, comp = line.split()
        res.append((verdict, st, comp))
    if len(res) != len(frames):
        raise RuntimeError("frame_dump check answered %d of %d" % (len(res), len(frames)))
    return res


def main():
    frame_dump = sys.argv[1]
    tap = Tap()
    print("1..7")

    # roxe's frames, this script's ICRC.
    lines = subprocess.run([frame_dump, "hex"], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    frames = [(l.split()[0], bytes.fromhex(l.split()[1])) for l in lines if l]
    bad = [n for n, f in frames if icrc(f) != stored(f)]
    fams = {n.split("/")[1] for n, f in frames}
    tap.result(not bad and len(frames) > 500 and len(fams) >= 6,
               "roxe_frames_carry_the_annex_icrc (%d frames, %s)" % (len(frames), " ".join(sorted(fams))),
               "ICRC differs: %s" % " ".join(bad[:10]))

    # Controls: the check can fail. Masking matters in every frame (the
    # builder sends UDP checksum 0, masked to 0xffff); one changed payload
    # or header byte is always noticed.
    unmasked = [n for n, f in frames if icrc(f, mask=False) == stored(f)]
    flipped = []
    for n, f in frames:
        g = bytearray(f)
        g[locate(f)[3] - 5] ^= 0x01
        if icrc(bytes(g)) == stored(bytes(g)):
            flipped.append(n)
    tap.result(not unmasked and not flipped, "controls_masking_matters_and_flips_fail",
               "unmasked CRC matched: %s; flip unnoticed: %s" % (unmasked[:5], flipped[:5]))

    # Known answers from hardware and from scapy.
    for name, f, want in (("kat_connectx4_cnp", CX4_CNP, 0x2A00FD82),
                          ("kat_scapy_uc_send_only", SCAPY_UC, 0xF353F378)):
        verdict, st, comp = roxe_check(frame_dump, [f])[0]
        ok = icrc(f) == want == stored(f) and verdict == "ok" and \
            int(comp, 16) == want and int(st, 16) == want
        tap.result(ok, name, "want %08x: python %08x, roxe %s stored %s computed %s"
                   % (want, icrc(f), verdict, st, comp))

    # Spelled out here, ICRC from this script.
    f = HAND_V6[:-4] + icrc(HAND_V6).to_bytes(4, "little")
    verdict, st, comp = roxe_check(frame_dump, [f])[0]
    tap.result(verdict == "ok" and int(comp, 16) == icrc(f) == int(st, 16),
               "kat_hand_written_ipv6_vlan (icrc %08x)" % icrc(f),
               "python %08x, roxe %s stored %s computed %s" % (icrc(f), verdict, st, comp))

    # Frames built here: roxe must parse them and agree on the ICRC ...
    rnd = random.Random(4791)
    built = [build(rnd) for _ in range(600)]
    res = roxe_check(frame_dump, built)
    bad = ["%d:%s/%s/%s" % (i, v, s, c) for i, (v, s, c) in enumerate(res)
           if v != "ok" or s != c or int(c, 16) != icrc(built[i])]
    tap.result(not bad, "python_frames_pass_roxe (%d frames)" % len(built),
               "roxe disagrees: %s" % " ".join(bad[:10]))

    # ... and notice one changed byte anywhere the ICRC covers.
    broken = []
    for f in built:
        l3, version, l4, end = locate(f)
        g = bytearray(f)
        i = rnd.randrange(l4 + 8 + 5, end)  # past the masked BTH byte
        g[i] ^= 1 << rnd.randrange(8)
        broken.append(bytes(g))
    res = roxe_check(frame_dump, broken)
    bad = ["%d:%s" % (i, v) for i, (v, s, c) in enumerate(res) if v == "ok" and s == c]
    tap.result(not bad, "python_frames_with_a_flipped_bit_fail_roxe",
               "went unnoticed: %s" % " ".join(bad[:10]))

    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
