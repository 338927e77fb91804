"""An unmodified OpenPGM receiver with OpenPGM's congestion control on (its PGMCC: ACKs when
named acker), driven through ctypes on the system's libpgm-5.3.so.0; nothing of OpenPGM is
compiled or copied here, only its public API called, with the constants of its public headers.

    python openpgm_cc_receiver.py IFACE_ADDR GROUP PORT SECONDS

Receives for SECONDS (bounded), then prints one JSON line: messages and bytes received, the
status codes pgm_recv returned, and whether the calls set up. The socket is PGM over UDP
(OpenPGM's UDP encapsulation) on PORT for unicast and multicast, the group joined on the
interface of IFACE_ADDR.
"""

from __future__ import annotations

import collections
import ctypes
import json
import socket
import sys
import time

LIB = "libpgm-5.3.so.0"

# socket.h's option enum, counted from PGM_SEND_SOCK = 0x2000 (OpenPGM 5.x)
PGM_MTU = 0x2008
PGM_MULTICAST_LOOP = 0x200C
PGM_MULTICAST_HOPS = 0x200D
PGM_PEER_EXPIRY = 0x2015
PGM_SPMR_EXPIRY = 0x2016
PGM_RXW_SQNS = 0x2018
PGM_NAK_BO_IVL = 0x201B
PGM_NAK_RPT_IVL = 0x201C
PGM_NAK_RDATA_IVL = 0x201D
PGM_NAK_DATA_RETRIES = 0x201E
PGM_NAK_NCF_RETRIES = 0x201F
PGM_USE_CC = 0x2022  # the 35th: OpenPGM's congestion control (struct {ack_bo_ivl, ack_c, ack_c_p})
PGM_RECV_ONLY = 0x2024
PGM_PASSIVE = 0x2025
PGM_NOBLOCK = 0x2027
PGM_SEND_GROUP = 0x2028
PGM_JOIN_GROUP = 0x2029
PGM_UDP_ENCAP_UCAST_PORT = 0x2030
PGM_UDP_ENCAP_MCAST_PORT = 0x2031
PGM_TIME_REMAIN = 0x2005
IPPROTO_PGM = 113

STATUS = ["ERROR", "NORMAL", "RESET", "FIN", "EOF", "WOULD_BLOCK", "RATE_LIMITED", "TIMER_PENDING", "CONGESTION"]


class SockaddrStorage(ctypes.Structure):
    _fields_ = [("ss_family", ctypes.c_uint16), ("data", ctypes.c_uint8 * 118), ("align", ctypes.c_uint64)]


class GroupSourceReq(ctypes.Structure):
    _fields_ = [("gsr_interface", ctypes.c_uint32), ("gsr_group", SockaddrStorage),
                ("gsr_source", SockaddrStorage), ("gsr_addr", SockaddrStorage)]


class AddrInfo(ctypes.Structure):
    _fields_ = [("ai_family", ctypes.c_uint16), ("ai_recv_addrs_len", ctypes.c_uint32),
                ("ai_recv_addrs", ctypes.POINTER(GroupSourceReq)), ("ai_send_addrs_len", ctypes.c_uint32),
                ("ai_send_addrs", ctypes.POINTER(GroupSourceReq))]


class Tsi(ctypes.Structure):
    _fields_ = [("gsi", ctypes.c_uint8 * 6), ("sport", ctypes.c_uint16)]


class PgmSockaddr(ctypes.Structure):
    _fields_ = [("sa_port", ctypes.c_uint16), ("sa_addr", Tsi)]


class InterfaceReq(ctypes.Structure):
    _fields_ = [("ir_interface", ctypes.c_uint32), ("ir_scope_id", ctypes.c_uint32), ("ir_address", SockaddrStorage)]


class PgmccInfo(ctypes.Structure):
    _fields_ = [("ack_bo_ivl", ctypes.c_uint32), ("ack_c", ctypes.c_uint32), ("ack_c_p", ctypes.c_uint32)]


class Error(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_int), ("code", ctypes.c_int), ("message", ctypes.c_char_p)]


class Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


def main() -> int:
    iface_addr, group, port, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), min(float(sys.argv[4]), 120.0)
    out: dict = {"setup": [], "messages": 0, "bytes": 0, "status": collections.Counter()}
    lib = ctypes.CDLL(LIB)
    for f in ("pgm_init", "pgm_getaddrinfo", "pgm_socket", "pgm_setsockopt", "pgm_getsockopt", "pgm_bind3",
              "pgm_connect", "pgm_close", "pgm_gsi_create_from_string"):
        getattr(lib, f).restype = ctypes.c_bool
    lib.pgm_recv.restype = ctypes.c_int
    err = ctypes.POINTER(Error)()

    def check(ok, what):
        out["setup"].append((what, bool(ok)))
        if not ok:
            msg = err.contents.message.decode() if err else ""
            print(json.dumps({**out, "failed": what, "error": msg}), flush=True)
            raise SystemExit(2)

    check(lib.pgm_init(ctypes.byref(err)), "pgm_init")
    res = ctypes.POINTER(AddrInfo)()
    network = f"{iface_addr};{group}".encode()
    check(lib.pgm_getaddrinfo(network, None, ctypes.byref(res), ctypes.byref(err)), "pgm_getaddrinfo")
    sock = ctypes.c_void_p()
    check(lib.pgm_socket(ctypes.byref(sock), socket.AF_INET, socket.SOCK_SEQPACKET, socket.IPPROTO_UDP,
                         ctypes.byref(err)), "pgm_socket")

    def opt(name, value, what):
        v = ctypes.c_int(value) if isinstance(value, int) else value
        check(lib.pgm_setsockopt(sock, IPPROTO_PGM, name, ctypes.byref(v), ctypes.sizeof(v)), what)

    opt(PGM_UDP_ENCAP_UCAST_PORT, port, "udp_encap_ucast_port")
    opt(PGM_UDP_ENCAP_MCAST_PORT, port, "udp_encap_mcast_port")
    opt(PGM_RECV_ONLY, 1, "recv_only")
    opt(PGM_PASSIVE, 0, "passive")
    opt(PGM_MTU, 1500, "mtu")
    opt(PGM_RXW_SQNS, 4096, "rxw_sqns")
    opt(PGM_PEER_EXPIRY, 300_000_000, "peer_expiry")  # microseconds (pgm_secs)
    opt(PGM_SPMR_EXPIRY, 250_000, "spmr_expiry")
    opt(PGM_NAK_BO_IVL, 50_000, "nak_bo_ivl")
    opt(PGM_NAK_RPT_IVL, 2_000_000, "nak_rpt_ivl")
    opt(PGM_NAK_RDATA_IVL, 2_000_000, "nak_rdata_ivl")
    opt(PGM_NAK_DATA_RETRIES, 50, "nak_data_retries")
    opt(PGM_NAK_NCF_RETRIES, 50, "nak_ncf_retries")
    # ack_bo_ivl 50 ms, C = 75 (%), c_p = 500/65536 (OpenPGM's fixed point), as its examples
    opt(PGM_USE_CC, PgmccInfo(50_000, 75, 500), "use_congestion_control")
    addr = PgmSockaddr()
    addr.sa_port = port
    addr.sa_addr.sport = 0
    check(lib.pgm_gsi_create_from_string(ctypes.byref(addr.sa_addr.gsi), b"openpgm-rx", -1, ctypes.byref(err)),
          "gsi")
    ifr = InterfaceReq()
    ifr.ir_interface = res.contents.ai_recv_addrs[0].gsr_interface
    ifr.ir_address = res.contents.ai_send_addrs[0].gsr_addr
    check(lib.pgm_bind3(sock, ctypes.byref(addr), ctypes.sizeof(addr), ctypes.byref(ifr), ctypes.sizeof(ifr),
                        ctypes.byref(ifr), ctypes.sizeof(ifr), ctypes.byref(err)), "pgm_bind3")
    for i in range(res.contents.ai_recv_addrs_len):
        opt(PGM_JOIN_GROUP, res.contents.ai_recv_addrs[i], "join_group")
    opt(PGM_SEND_GROUP, res.contents.ai_send_addrs[0], "send_group")
    opt(PGM_MULTICAST_LOOP, 0, "multicast_loop")
    opt(PGM_MULTICAST_HOPS, 16, "multicast_hops")
    opt(PGM_NOBLOCK, 1, "noblock")
    check(lib.pgm_connect(sock, ctypes.byref(err)), "pgm_connect")

    buf = ctypes.create_string_buffer(65536)
    n = ctypes.c_size_t()
    tv = Timeval()
    tvlen = ctypes.c_uint32(ctypes.sizeof(tv))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        e = ctypes.POINTER(Error)()
        st = lib.pgm_recv(sock, buf, len(buf), 0, ctypes.byref(n), ctypes.byref(e))
        name = STATUS[st] if 0 <= st < len(STATUS) else str(st)
        out["status"][name] += 1
        if e:
            lib.pgm_error_free(e)
        if st == 1:
            out["messages"] += 1
            out["bytes"] += n.value
        elif st == 7:
            tvlen.value = ctypes.sizeof(tv)
            lib.pgm_getsockopt(sock, IPPROTO_PGM, PGM_TIME_REMAIN, ctypes.byref(tv), ctypes.byref(tvlen))
            time.sleep(min(tv.tv_sec + tv.tv_usec * 1e-6, 0.002))
        elif st in (5, 6, 8):
            time.sleep(0.0005)
        elif st in (2, 3):
            continue
        else:
            break
    lib.pgm_close(sock, True)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
