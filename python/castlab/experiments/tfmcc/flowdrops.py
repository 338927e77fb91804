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
FIFO_TOL_S = 1e-3  # the two logs' stamps may invert a FIFO's order by this much (the stacks' latency)
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
    """`sent` with ``delivered`` (bool) and ``t_rx`` (s, NaN if dropped). A packet whose id
    occurs once in each log is delivered if it arrived after it was sent. Packets of one flow
    sharing an id (a retransmission repeats its id; two TCP connections to one port can share a
    sequence number; two datagrams can share a CRC) are paired with their arrivals at rcv1 by
    the queue's order: from the last arrival back, each takes the latest copy sent before it
    (and before the copy the next arrival took) that a FIFO could have delivered then, between
    the arrivals of the once-seen packets sent just before and just after the copy (within
    FIFO_TOL_S); failing one, the latest copy sent before it. An arrival with no copy sent
    before it is left out (it belongs to a packet sent before the log began)."""
    s = sent.reset_index(drop=True)
    key = ["flow", "pid"]
    n_sent = s.groupby(key)["pid"].transform("size").to_numpy()
    gs = got.sort_values("t_s", kind="stable")
    m = gs.groupby(key).size().rename("m_rx")
    m_rx = s.join(m, on=key)["m_rx"].fillna(0).astype(int).to_numpy()
    t_s = s["t_s"].to_numpy(float)
    t_rx = np.full(len(s), np.nan)
    one = (n_sent == 1) & (m_rx == 1)
    if one.any():
        first = gs.drop_duplicates(key).set_index(key)["t_s"]
        t = first.reindex(pd.MultiIndex.from_frame(s.loc[one, key])).to_numpy(float)
        t_rx[np.flatnonzero(one)] = np.where(t >= t_s[one], t, np.nan)
    many = (n_sent > 1) & (m_rx > 0) | (m_rx > 1)
    if many.any():
        # the FIFO's clock: once-seen packets' (sent, arrived), arrivals made monotone
        ref = np.flatnonzero(np.isfinite(t_rx))
        ref = ref[np.argsort(t_s[ref], kind="stable")]
        ref_in = t_s[ref]
        lo_out = np.maximum.accumulate(t_rx[ref]) if len(ref) else np.array([])
        hi_out = np.minimum.accumulate(t_rx[ref][::-1])[::-1] if len(ref) else np.array([])

        def fits(ts: np.ndarray, r: float) -> np.ndarray:
            i = np.searchsorted(ref_in, ts, side="left") - 1  # sent before the copy
            k = np.searchsorted(ref_in, ts, side="right")  # sent after it
            lo = np.where(i >= 0, lo_out[np.maximum(i, 0)], -np.inf) if len(ref) else np.full(len(ts), -np.inf)
            hi = np.where(k < len(ref), hi_out[np.minimum(k, len(ref) - 1)], np.inf) if len(ref) \
                else np.full(len(ts), np.inf)
            return (lo - FIFO_TOL_S <= r) & (r <= hi + FIFO_TOL_S)

        keys = set(map(tuple, s.loc[many, key].itertuples(index=False)))
        arrivals = {k: g["t_s"].to_numpy(float) for k, g in gs.groupby(key) if k in keys}
        for k, g in s[many].groupby(key):
            ts = g["t_s"].to_numpy(float)
            idx = g.index.to_numpy()
            o = np.argsort(ts, kind="stable")
            ts, idx = ts[o], idx[o]
            j = len(ts)
            for r in arrivals[k][::-1]:
                before = np.flatnonzero(ts[:j] <= r)
                if not len(before):
                    continue
                ok = before[fits(ts[before], r)]
                i = int(ok[-1] if len(ok) else before[-1])
                t_rx[idx[i]] = r
                j = i
    out = s.assign(delivered=np.isfinite(t_rx), t_rx=t_rx)
    return out.sort_values("t_s", kind="stable").reset_index(drop=True)


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


# ------------------------------------------------------------------ the queue's occupancy

OCC_COLUMNS = ["flow", "packets", "drops", "drop_frac", "full_frac", "full_index", "drop_if_full",
               "drop_if_room", "in_queue_mean", "in_queue_full", "fills", "fill_ms", "full_part",
               "answer_none", "answer_one"]
ANSWER_S = 2e-3  # a flow's arrival within 2 ms of one of its own departures answers it (an ACK clock)


def occupancy(sent: pd.DataFrame, got: pd.DataFrame, hop_s: float = 0.0) -> pd.DataFrame:
    """The bottleneck queue's length as each offered packet reached it, from the two logs.

    A packet is in the queue from its arrival (its send time plus `hop_s`, the delay from the
    send log's place to the queue) to its departure (its time in `got`; a log after the queue
    is late by the way out, a capture of a serialising link holds the packet in service too).
    A dropped packet never enters. :func:`match`'s offered packets (:func:`offered`), in send
    order, with ``t_in``, ``t_out`` (NaN if dropped) and ``q``: how many packets were in the
    queue just before this one arrived, and ``decided``: false for a packet not delivered that
    arrived after the last delivered one (still queued when the logs end, as far as they tell:
    a FIFO would have sent it before any later arrival). Events at one instant count in this
    order: departures of packets that arrived earlier, then arrivals in the send log's order (a
    segmentation offload's segments join one by one), then the departures of packets that
    arrived at that instant (a bucket that passes a packet at once)."""
    m = match(sent, got)
    m = m[offered(m)].reset_index(drop=True)
    t_in = m["t_s"].to_numpy(float) + hop_s
    t_out = m["t_rx"].to_numpy(float)
    ok = np.isfinite(t_out)
    n = len(m)
    idx = np.arange(n)
    dep = idx[ok]
    ev_t = np.concatenate([t_in, t_out[ok]])
    ev_kind = np.concatenate([np.ones(n, np.int8), np.where(t_out[ok] > t_in[ok], 0, 2).astype(np.int8)])
    ev_seq = np.concatenate([idx, dep])
    ev_inc = np.concatenate([ok.astype(np.int64), -np.ones(len(dep), np.int64)])
    order = np.lexsort((ev_seq, ev_kind, ev_t))
    level = np.cumsum(ev_inc[order])
    before = np.concatenate([[0], level[:-1]])  # the queue just before each event
    pos = np.empty(len(order), np.int64)
    pos[order] = np.arange(len(order))
    last = t_in[ok].max() if ok.any() else -np.inf
    return m.assign(t_in=t_in, t_out=t_out, q=before[pos[:n]], decided=ok | (t_in <= last))


def _steps(occ: pd.DataFrame, flow: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
    """The queue's length (of `flow`'s packets only, if given) as a step function: event times
    and the length from each on, in :func:`occupancy`'s event order."""
    sel = np.ones(len(occ), bool) if flow is None else (occ["flow"] == flow).to_numpy(bool)
    t_in = occ["t_in"].to_numpy(float)
    t_out = occ["t_out"].to_numpy(float)
    ok = np.isfinite(t_out) & sel
    dep = np.flatnonzero(ok)
    ev_t = np.concatenate([t_in[ok], t_out[ok]])
    ev_kind = np.concatenate([np.ones(len(dep), np.int8), np.where(t_out[ok] > t_in[ok], 0, 2).astype(np.int8)])
    ev_seq = np.concatenate([dep, dep])
    ev_inc = np.concatenate([np.ones(len(dep), np.int64), -np.ones(len(dep), np.int64)])
    order = np.lexsort((ev_seq, ev_kind, ev_t))
    return ev_t[order], np.cumsum(ev_inc[order])


def time_at(times: np.ndarray, level: np.ndarray, span: tuple[float, float], cond) -> float:
    """The fraction of `span` during which the step function (`times`, `level`: the level from
    each time on, 0 before the first) satisfies `cond` (a function of the level array)."""
    a, b = span
    inside = (times > a) & (times < b)
    cuts = np.concatenate([[a], times[inside], [b]])
    j = np.searchsorted(times, cuts[:-1], side="right") - 1
    lv = np.where(j >= 0, level[np.maximum(j, 0)], 0)
    return float(np.sum(np.diff(cuts)[cond(lv)]) / (b - a))


def occupancy_table(occ: pd.DataFrame, span: tuple[float, float], limit: int,
                    names: Optional[dict] = None) -> tuple[pd.DataFrame, dict]:
    """Per flow (OCC_COLUMNS) over the packets of :func:`occupancy` that reached the queue in
    `span` (and are ``decided``), and for the link: ``full_time``, the fraction of `span` the queue held `limit`
    packets or more (F); ``mean_q``; ``drops_seen_full`` and ``admitted_seen_full``, the
    fractions of drops and of admitted packets that met a queue at its limit (1 and 0 when the
    reconstruction is the queue's own view: drop-tail drops exactly those).

    Per flow: ``full_frac``, the fraction of its arrivals that met the queue at its limit;
    ``full_index``, that over F (1 for arrivals at random times, as Poisson arrivals see time
    averages; above 1 when the flow arrives when the queue is full more than the time share);
    ``drop_if_full`` and ``drop_if_room``, its drop fraction among arrivals meeting a full
    queue and the rest; ``in_queue_mean``, its packets in the queue on average over `span`, and
    ``in_queue_full``, on average over the time the queue is at its limit.

    Who keeps it full: ``fills``, the flow's arrivals that brought the queue to its limit; each
    starts a full spell that lasts to the next departure (``fill_ms``, their mean), and
    ``full_part`` is their total over the span (the flows' parts add up to F, but for a spell
    begun before the span). How the flow answers its own departures (an ACK clock with no
    propagation delay answers within a fraction of a millisecond): of its departures in the
    span, the fraction followed within ANSWER_S (and before its next departure) by none of its
    own arrivals (``answer_none``) and by exactly one (``answer_one``: one segment per ACK,
    where delayed ACKs release two for every second departure)."""
    a, b = span
    t, lv = _steps(occ)
    full_time = time_at(t, lv, span, lambda x: x >= limit)
    cuts_in = (t > a) & (t < b)
    cuts = np.concatenate([[a], t[cuts_in], [b]])
    j = np.searchsorted(t, cuts[:-1], side="right") - 1
    seg_lv = np.where(j >= 0, lv[np.maximum(j, 0)], 0)
    dt = np.diff(cuts)
    full_seg = seg_lv >= limit
    sel = occ[(occ["t_in"] >= a) & (occ["t_in"] < b) & occ["decided"]]
    lost = ~sel["delivered"].to_numpy(bool)
    full = sel["q"].to_numpy() >= limit
    link = {"full_time": full_time, "mean_q": float(np.sum(dt * seg_lv) / (b - a)),
            "drops_seen_full": float(full[lost].mean()) if lost.any() else float("nan"),
            "admitted_seen_full": float(full[~lost].mean()) if (~lost).any() else float("nan")}
    dep_all = np.sort(occ["t_out"].dropna().to_numpy(float))
    rows = []
    for f, g in sel.groupby("flow", sort=True):
        lo = ~g["delivered"].to_numpy(bool)
        fu = g["q"].to_numpy() >= limit
        fill_t = g["t_in"].to_numpy(float)[~lo & (g["q"].to_numpy() == limit - 1)]
        k_next = np.searchsorted(dep_all, fill_t, side="right")
        spell = np.where(k_next < len(dep_all), dep_all[np.minimum(k_next, len(dep_all) - 1)], b) - fill_t
        mine = occ[occ["flow"] == f]
        own_dep = np.sort(mine["t_out"].dropna().to_numpy(float))
        own_dep = own_dep[(own_dep >= a) & (own_dep < b)]
        own_arr = np.sort(mine["t_in"].to_numpy(float))
        until = np.minimum(own_dep + ANSWER_S, np.append(own_dep[1:], np.inf))
        answers = np.searchsorted(own_arr, until, side="right") - np.searchsorted(own_arr, own_dep, side="right")
        ft, flv = _steps(occ, f)
        # the flow's level on the link's segments: evaluate at each segment's start
        k = np.searchsorted(ft, cuts[:-1], side="right") - 1
        f_seg = np.where(k >= 0, flv[np.maximum(k, 0)], 0) if len(ft) else np.zeros(len(dt))
        rows.append({"flow": (names or {}).get(f, f), "packets": len(g), "drops": int(lo.sum()),
                     "drop_frac": float(lo.mean()), "full_frac": float(fu.mean()),
                     "full_index": float(fu.mean() / full_time) if full_time > 0 else float("nan"),
                     "drop_if_full": float(lo[fu].mean()) if fu.any() else float("nan"),
                     "drop_if_room": float(lo[~fu].mean()) if (~fu).any() else float("nan"),
                     "in_queue_mean": float(np.sum(dt * f_seg) / (b - a)),
                     "in_queue_full": float(np.sum((dt * f_seg)[full_seg]) / np.sum(dt[full_seg]))
                     if full_seg.any() else float("nan"),
                     "fills": len(fill_t), "fill_ms": float(spell.mean() * 1e3) if len(spell) else float("nan"),
                     "full_part": float(spell.sum() / (b - a)),
                     "answer_none": float(np.mean(answers == 0)) if len(answers) else float("nan"),
                     "answer_one": float(np.mean(answers == 1)) if len(answers) else float("nan")})
    return pd.DataFrame(rows, columns=OCC_COLUMNS), link
