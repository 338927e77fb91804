"""Per-flow drops at net-peers' bottleneck and each flow's arrival pattern there, on the testbed
and in its simulated twin, from packet logs on both sides of the bottleneck.

The testbed's bottleneck is the kernel's tbf + pfifo on rcv1's bridge port; its own counters
(`tc -s`) hold one drop count for all flows. Its two packet counters (``castlab.testbed.count
--packets``: on src's interface, what leaves; on rcv1's, what arrives) log every packet with an
id that forwarding leaves unchanged, so a packet logged at src and never at rcv1 was dropped on
the way, and nowhere but the pfifo drops (the path has no other queue that fills). The twin logs
the same two places with the simulator's per-link pcap (``Simulator.enable_pcap`` on src -> r1
and r1 -> rcv1; its TCP segments are written inside castlab's envelope, as UDP datagrams, so
every flow is in the capture).

A multicast packet reaches rcv1's queue only while rcv1 is a member of its group (the bridge
forwards a group to members' ports only), and a layered receiver joins and leaves. A packet of
group G sent at t counts as offered to rcv1's queue when rcv1 received some packet of G sent
within MEMBER_S before t and some sent within MEMBER_S after it; other packets of G are left out
of the group's counts. A unicast flow (TCP) to rcv1 is offered in full.

Per flow, from its packets offered in the measured span (send times): packets, drops, the drop
fraction; the gaps between its successive packets (quantiles); the fraction of its packets that
follow the flow's previous one within BURST_S (``burst_frac``), and the drop fraction of those
(``drop_burst``) and of the rest (``drop_alone``). For the whole link: the fraction of rcv1's
arrivals that follow the previous one sooner than half a serialisation time at the link's rate
(``train_frac``; a fluid bottleneck sends none: a queue served in trains would), and the mean
time from src to rcv1 of each flow's delivered packets (``sojourn_ms``: the queueing delay it
met). The phase columns test whether a flow takes the places the queue frees: a full drop-tail
queue admits a packet only between a departure and the next arrival, and an ACK-clocked TCP
sender with no propagation delay answers each departure within a fraction of a millisecond.
Per flow: the median time from the bottleneck's last departure to the packet's arrival at the
queue (``phase_p50_ms``), the fraction arriving within SOON_S of it (``soon_frac``), and the
drop fraction of those (``drop_soon``) and of the rest (``drop_late``).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

BURST_S = 1e-3  # a packet within 1 ms of its flow's previous one is in a burst
SOON_S = 1e-3  # a packet reaching the queue within 1 ms of its last departure came "soon" after it
MEMBER_S = 2.0  # rcv1 a member of G around t: it received a G packet sent within 2 s before and after
MSS = 1448  # Linux's TCP payload per segment on a 1500-byte MTU with timestamps
PID_BYTES = 64  # as castlab.testbed.count: the id covers the transport header and payload's first bytes
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_IPV4 = 228

COLUMNS = ["flow", "packets", "drops", "drop_frac", "burst_frac", "drop_burst", "drop_alone", "gap_p10_ms",
           "gap_p50_ms", "gap_p90_ms", "sojourn_ms", "phase_p50_ms", "soon_frac", "drop_soon", "drop_late"]


def read_log(path: Path, mss: int = MSS) -> pd.DataFrame:
    """A ``count --packets`` log as ``t_s`` (s, CLOCK_REALTIME), ``flow`` (``mc:GROUP`` or
    ``tcp:PORT``), ``bytes`` and ``pid``, in time order. A TCP packet of more than `mss` payload
    bytes (a segmentation offload's) is the segments the bottleneck's tbf cuts from it, each with
    its own sequence number as ``pid``, all at the packet's time."""
    d = pd.read_csv(path, dtype={"key": str})
    tcp = (d["kind"] == "tcp").to_numpy(bool)
    pay = d["payload"].to_numpy(np.int64)
    k = np.where(tcp & (pay > mss), -(-pay // mss), 1)
    rep = np.repeat(np.arange(len(d)), k)
    i = np.arange(len(rep)) - np.repeat(np.cumsum(k) - k, k)  # segment index within its packet
    hdr = (d["bytes"].to_numpy(np.int64) - pay)[rep]
    seg = np.where(k[rep] > 1, np.minimum(mss, pay[rep] - i * mss), pay[rep])
    pid = d["pid"].to_numpy(np.int64)[rep]
    pid = np.where(tcp[rep], (pid + i * mss) % (1 << 32), pid)
    out = pd.DataFrame({"t_s": d["time_ns"].to_numpy(np.int64)[rep] / 1e9,
                        "flow": (d["kind"].astype(str) + ":" + d["key"].astype(str)).to_numpy()[rep],
                        "bytes": hdr + seg, "pid": pid})
    return out.sort_values("t_s", kind="stable").reset_index(drop=True)


def read_pcap(path: Path) -> pd.DataFrame:
    """A simulator link capture (nanosecond pcap of IPv4 records, castlab_net::pcap) as
    :func:`read_log`'s columns: ``flow`` is ``mc:GROUP`` for a multicast datagram and
    ``uc:DST_IP:DST_PORT`` otherwise; ``pid`` the CRC-32 of up to PID_BYTES from the UDP
    header on. Raises ValueError on a file that is not such a capture."""
    b = Path(path).read_bytes()
    if len(b) < 24:
        raise ValueError(f"{path}: not a pcap (too short)")
    magic, = struct.unpack_from("<I", b, 0)
    network, = struct.unpack_from("<I", b, 20)
    if magic != PCAP_MAGIC_NS or network != LINKTYPE_IPV4:
        raise ValueError(f"{path}: not a nanosecond IPv4 pcap (magic {magic:#x}, link type {network})")
    t, flow, size, pid = [], [], [], []
    at = 24
    while at + 16 <= len(b):
        sec, ns, incl, _orig = struct.unpack_from("<IIII", b, at)
        at += 16
        rec = b[at:at + incl]
        at += incl
        if len(rec) < 28 or rec[0] >> 4 != 4:
            raise ValueError(f"{path}: a record at byte {at - incl} is not IPv4")
        ihl = (rec[0] & 0x0F) * 4
        total, = struct.unpack_from("!H", rec, 2)
        dst = ".".join(str(x) for x in rec[16:20])
        dport, = struct.unpack_from("!H", rec, ihl + 2)
        t.append(sec + ns / 1e9)
        flow.append(f"mc:{dst}" if rec[16] >= 224 else f"uc:{dst}:{dport}")
        size.append(total)
        pid.append(zlib.crc32(rec[ihl:ihl + PID_BYTES]))
    return pd.DataFrame({"t_s": np.asarray(t, float), "flow": flow, "bytes": np.asarray(size, np.int64),
                         "pid": np.asarray(pid, np.int64)})


def match(sent: pd.DataFrame, got: pd.DataFrame) -> pd.DataFrame:
    """`sent` with ``delivered`` (bool) and ``t_rx`` (s, NaN if dropped): the k-th packet of a
    flow with a given id at rcv1 is the k-th sent with it (a retransmission that repeats a
    packet's bytes repeats its id); of n sent and m received, the first n - m count as dropped."""
    s = sent.copy()
    s["occ"] = s.groupby(["flow", "pid"]).cumcount()
    g = got.copy()
    g["occ"] = g.groupby(["flow", "pid"]).cumcount()
    n_sent = s.groupby(["flow", "pid"])["pid"].transform("size")
    m = g.groupby(["flow", "pid"]).size().rename("m_rx")
    s = s.join(m, on=["flow", "pid"])
    s["m_rx"] = s["m_rx"].fillna(0).astype(int)
    lost = n_sent - s["m_rx"]
    s["delivered"] = s["occ"] >= lost
    # the j-th delivered occurrence is the j-th received one
    s["rx_occ"] = s["occ"] - lost
    g = g.rename(columns={"t_s": "t_rx", "occ": "rx_occ"})[["flow", "pid", "rx_occ", "t_rx"]]
    s = s.merge(g, on=["flow", "pid", "rx_occ"], how="left")
    s.loc[~s["delivered"], "t_rx"] = np.nan
    return s.drop(columns=["occ", "m_rx", "rx_occ"]).sort_values("t_s", kind="stable").reset_index(drop=True)


def offered(m: pd.DataFrame) -> pd.Series:
    """Which of :func:`match`'s packets were offered to rcv1's queue (module doc): every unicast
    packet; a multicast one when a packet of its group sent within MEMBER_S before it and one
    within MEMBER_S after it reached rcv1 (itself counts for both)."""
    keep = pd.Series(True, index=m.index)
    for f, g in m.groupby("flow"):
        if not f.startswith("mc:"):
            continue
        t = g["t_s"].to_numpy(float)
        td = np.sort(t[g["delivered"].to_numpy(bool)])
        if not len(td):
            keep[g.index] = False
            continue
        i = np.searchsorted(td, t, side="right")  # td[i-1] <= t < td[i]
        before = np.where(i > 0, t - td[np.maximum(i - 1, 0)], np.inf)
        j = np.searchsorted(td, t, side="left")  # td[j] >= t
        after = np.where(j < len(td), td[np.minimum(j, len(td) - 1)] - t, np.inf)
        keep[g.index] = (before <= MEMBER_S) & (after <= MEMBER_S)
    return keep


def flow_table(sent: pd.DataFrame, got: pd.DataFrame, span: tuple[float, float],
               names: Optional[dict] = None, hop_s: float = 0.0) -> pd.DataFrame:
    """One row per flow (COLUMNS) over the packets offered to the queue with send times in
    `span` (s, the logs' clock); `names` renames flows (e.g. ``tcp:5201`` -> ``reno``). The gaps
    and bursts count the flow's previous packet even when it was sent just before the span.
    `hop_s`: from the send log's place to the queue (the twin's 1 ms link before r1), for the
    phase columns: how long after the bottleneck's last departure (any flow's latest packet in
    `got` up to then, which freed a place in the queue) each packet reached the queue."""
    m = match(sent, got)
    m = m[offered(m)].copy()
    m["gap_s"] = m.groupby("flow")["t_s"].diff()
    dep = np.sort(got["t_s"].to_numpy(float))
    at = m["t_s"].to_numpy(float) + hop_s
    i = np.searchsorted(dep, at, side="right") - 1
    m["phase_s"] = np.where(i >= 0, at - dep[np.maximum(i, 0)], np.nan)
    a, b = span
    m = m[(m["t_s"] >= a) & (m["t_s"] < b)]
    rows = []
    for f, g in m.groupby("flow", sort=True):
        lost = ~g["delivered"].to_numpy(bool)
        gap = g["gap_s"].to_numpy(float)
        burst = gap < BURST_S  # NaN (the flow's first packet) is not a burst
        gq = gap[np.isfinite(gap)] * 1e3
        q = np.quantile(gq, [0.1, 0.5, 0.9]) if len(gq) else [np.nan] * 3
        ph = g["phase_s"].to_numpy(float)
        soon = ph < SOON_S
        soj = (g["t_rx"] - g["t_s"]).to_numpy(float)
        soj = soj[np.isfinite(soj)]
        rows.append({"flow": (names or {}).get(f, f), "packets": len(g), "drops": int(lost.sum()),
                     "drop_frac": float(lost.mean()), "burst_frac": float(burst.mean()),
                     "drop_burst": float(lost[burst].mean()) if burst.any() else np.nan,
                     "drop_alone": float(lost[~burst].mean()) if (~burst).any() else np.nan,
                     "gap_p10_ms": q[0], "gap_p50_ms": q[1], "gap_p90_ms": q[2],
                     "sojourn_ms": float(soj.mean() * 1e3) if len(soj) else np.nan,
                     "phase_p50_ms": float(np.nanmedian(ph) * 1e3) if np.isfinite(ph).any() else np.nan,
                     "soon_frac": float(soon.mean()),
                     "drop_soon": float(lost[soon].mean()) if soon.any() else np.nan,
                     "drop_late": float(lost[~soon].mean()) if (~soon).any() else np.nan})
    return pd.DataFrame(rows, columns=COLUMNS)


def train_frac(got: pd.DataFrame, rate_bps: float, span: tuple[float, float]) -> float:
    """The fraction of rcv1's arrivals in `span` that follow the previous arrival sooner than
    half the serialisation time of the later one (its IP bytes at `rate_bps`): 0 on a fluid
    bottleneck, which spaces them by at least a whole serialisation time."""
    t = got["t_s"].to_numpy(float)
    ser = got["bytes"].to_numpy(float) * 8 / rate_bps
    gap = np.diff(t)
    sel = (t[1:] >= span[0]) & (t[1:] < span[1])
    if not sel.any():
        return float("nan")
    return float(np.mean(gap[sel] < 0.5 * ser[1:][sel]))


def testbed_flows(case_dir: Path, duration: float, warm: float, tcp: tuple[str, ...], tcp_port: int,
                  t0: float, delay_s: float = 0.0) -> pd.DataFrame:
    """:func:`flow_table` of a net-peers case's two packet logs (``packets_src.csv``,
    ``packets_rcv1.csv``) over [t0 + warm, t0 + duration) (t0: the measurement's second 0 on the
    logs' clock, ``t0_realtime_s`` in case.json); TCP flows named by their algorithm. `delay_s`:
    a delay between the queue and rcv1 (a router's delay line), taken off rcv1's times so that
    they are the queue's departures."""
    sent = read_log(case_dir / "packets_src.csv")
    got = read_log(case_dir / "packets_rcv1.csv")
    got = got.assign(t_s=got["t_s"] - delay_s)
    names = {f"tcp:{tcp_port + k}": a for k, a in enumerate(tcp)}
    return flow_table(sent, got, (t0 + warm, t0 + duration), names)


def twin_names(sent: pd.DataFrame, tcp: tuple[str, ...], rcv1_ip: str) -> dict:
    """The twin's unicast flows to rcv1 named by their algorithm: the twin starts its TCP flows
    0.1 s apart in `tcp`'s order, and no other unicast flow goes from src to rcv1, so they are
    the unicast flows to `rcv1_ip` in the order of their first packet."""
    uc = sent[sent["flow"].str.startswith(f"uc:{rcv1_ip}:")]
    first = uc.groupby("flow")["t_s"].min().sort_values()
    return {f: a for f, a in zip(first.index, tcp)}
