"""Rainbow over BCFS on the testbed: ``net-rainbow``.

A RaptorQ-coded file goes from one fountain source to three Rainbow receivers (one slow, two
fast: the shape of the Rainbow paper's scenario A-(i), Fig. 5) through two of castlab's
user-space routers, each hosting the simulator's BCF router, while a kernel TCP flow (Linux
reno, set with ``sysctl`` in the source's namespace) shares the up-link, as B-(iii) sets Rainbow
beside TCP. The same set-up runs in the simulator beside it.

Timelines: each process's clock starts when its driver does; the experiment notes the wall
time at which each role printed its first line (its driver was running then) and places the
receivers' records on the wall clock with it. iperf3 reports its start to the second; its
one-second intervals are placed from there. Rates within a window therefore carry up to about a
second of misalignment at either end, which the windows (tens of seconds in the full run)
absorb.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, at_least, in_range, within
from castlab.experiments.net_common import _castlab, _read_table, _skip, _unavailable, _wait, testbed_name
from castlab.experiments.plotting import figure, save

PAPER = "Yano & McCanne 1999"  # as experiments/rainbow names it, so the report groups them
SESSION = 77
# the fountain roles' default: a 416-byte symbol, its 4-byte FEC Payload ID (RFC 6330 §3.2) and
# castlab's headers fill a 512-byte reply, so the replies are as long as the twin's
SYMBOL_BYTES = 416
REPLY_BYTES = 512  # §IV-A.2's packet size
REPLY_IP_BYTES = REPLY_BYTES + 28  # what a reply is on the wire (IP and UDP headers)
# TCP in 512-byte packets as Rainbow's replies, as rainbow-b3 sets B-(iii) (§IV-B.2's packet size):
# iperf3 -M 472 clamps Linux's MSS, whose segments then carry 460 bytes (12 of timestamps);
# the simulated twin's MSS is 472 with no options. Rates compare IP bytes.
TCP_WIRE_BYTES = 512
TCP_MAXSEG = 472
REAL_TCP_PAYLOAD = 460
SIM_TCP_MSS = 472
PAPER_OVERHEAD = 0.152  # §IV-A.3: the overhead of scenario A-(i)
OVERHEAD_TOL = 0.15  # ours, decided before the first run: the set-up differs (two fast receivers, TCP beside)
RATIO_BAND = (0.67, 1.5)  # rainbow-b3's derived ratio-* rule (a factor 1.5 either way), decided before the first run
TWIN_BAND = (0.67, 1.5)
#: Declared before its first run: Rainbow's share of the TCP flow on the testbed
#: (`tcp-friendly`'s ratio) within a factor of 1.5 of the twin's share in its own window.
SHARE_VS_SIM = (1 / 1.5, 1.5)
#: The simulated twin starts its receivers this long after its TCP flow: about the time the
#: testbed's roles take to start after its iperf3 client.
RAINBOW_AFTER_TCP_S = 2.0  # completion on the testbed against the simulated twin, decided before the first run


def trq_rule_words() -> list:
    """``--config`` words giving the testbed's receivers the paper's declared TRQ-loss rule (the
    primary reading of ``castlab.experiments.rainbow.READINGS``), as the simulated twin's ``Net``."""
    from castlab.experiments.rainbow.declared import READINGS, TRQ_LOSS

    return [w for k, v in READINGS[TRQ_LOSS].value.items() for w in ("--config", f"{k}={v}")]


def _first_line_of(log: Path, p: subprocess.Popen, role: str, timeout: float = 30.0) -> float:
    """Wait until a role wrote its first line into `log`; the wall time then."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and f"[{role}] session" in log.read_text():
            return time.time()
        if p.poll() is not None:
            raise RuntimeError(f"{role} exited before it started: {log.read_text() if log.exists() else ''}")
        time.sleep(0.02)
    raise RuntimeError(f"{role} did not start within {timeout:g} s")


def _window_rates(rx: dict[str, pd.DataFrame], fast: list[str], t0: float, t1: float,
                  tcp_at, tcp_payload: int) -> dict:
    """Rainbow's up-link packets in [t0, t1) (the distinct symbols any receiver got then: each
    crossed the up-link once), eq. 1's overhead over the fast receivers with those as ps, and
    Rainbow's and TCP's rates on the up-link in IP bytes."""
    span = t1 - t0
    if span <= 0:
        return {"window_s": span, "uplink_pkts": float("nan"), "overhead": float("nan"),
                "rainbow_bps": float("nan"), "tcp_bps": float("nan"), "ratio": float("nan")}
    got = {h: df[(df["t"] >= t0) & (df["t"] < t1)] for h, df in rx.items()}
    union = set()
    for df in got.values():
        union.update(df["symbol"].tolist())
    ps = len(union)
    pr = sum(len(got[h]) for h in fast)
    rainbow_bps = ps * REPLY_IP_BYTES * 8 / span
    tcp_bps = (tcp_at(t1) - tcp_at(t0)) * 8 / span * TCP_WIRE_BYTES / tcp_payload
    return {"window_s": span, "uplink_pkts": ps, "overhead": len(fast) * ps / pr - 1 if pr else float("nan"),
            "rainbow_bps": rainbow_bps, "tcp_bps": tcp_bps,
            "ratio": rainbow_bps / tcp_bps if tcp_bps > 0 else float("nan")}


def _simulate(topo, seed: int, file_bytes: int, duration: float, warm: float) -> tuple[list[dict], dict, dict]:
    """The simulated twin: the same links, RED everywhere (the hosts' egress too, as the
    simulator shapes both directions), BCF routers on every node, the fountain source and the
    receivers starting at 0, a TCP (SACK, Reno's congestion control) flow beside them."""
    from castlab.experiments import streams
    from castlab.experiments.rainbow.topology import Net

    net = Net(seed)
    for ln in topo.links:
        net.link(ln.a, ln.b, ln.rate_bps, ln.delay_s)
    net.finish_build()
    data = streams.rng(seed, "rainbow-file").integers(0, 256, file_bytes, dtype=np.uint8).tobytes()
    src = net.source(topo.source, file=data, symbol_size=SYMBOL_BYTES)
    receivers = [h for h in topo.hosts if h.startswith("rcv")]
    for h in receivers:
        net.receiver(h, src, "slow" if h == "rcv1" else "fast", start=RAINBOW_AFTER_TCP_S)
    tcp = net.sim.add_tcp_flow(topo.source, "tcprx", variant="sack", mss_bytes=SIM_TCP_MSS, min_rto=0.2, start=0.0)
    net.sim.run(duration + RAINBOW_AFTER_TCP_S)
    recs = net.records()
    rows = [{"network": "sim", "host": r["node"], "done": bool(r["done"]),
             "identical": net.sim.rainbow_decoded(r["agent"]) == data,
             "completion_s": (r["done_s"] - r["start_s"]) if r["done"] else float("nan"),
             "received": int(r["received"])} for r in recs]
    rx = {r["node"]: pd.DataFrame({"t": r["rx_time_ns"] / 1e9, "symbol": r["rx_symbol"]}) for r in recs}
    tr = net.sim.tcp_trace(tcp)
    tt, tb = tr["rx_time_ns"] / 1e9, tr["rx_bytes"].astype(float)

    def tcp_at(x: float) -> float:
        return float(np.interp(x, tt, tb)) if len(tt) else 0.0

    done = [r["done_s"] for r in recs if r["done"]]
    t1 = min(done) if done else duration
    fast = [h for h in receivers if h != "rcv1"]
    w = _window_rates(rx, fast, RAINBOW_AFTER_TCP_S + warm, t1, tcp_at, SIM_TCP_MSS)
    return rows, w, {"source_sent": net.sim.fountain_stats(src)["sent"]}


def run_net_rainbow(out: Path, seed: int, quick: bool = False) -> Result:
    reason = _unavailable()
    if reason:
        return _skip(reason)
    if shutil.which("iperf3") is None:
        return _skip("needs iperf3 (make setup installs it with apt)")
    from castlab.testbed import Testbed, bcfs

    # the full run: the paper's 2,000 packets per receiver (§IV-A.2) as a file of 2,000 symbols
    file_bytes = 12_000 if quick else 2000 * SYMBOL_BYTES
    duration = 4.0 if quick else 150.0
    warm = 1.0 if quick else 5.0  # every role runs by then (§IV-B.2 measures from 5 s)
    topo = bcfs()
    receivers = [h for h in topo.hosts if h.startswith("rcv")]
    fast = [h for h in receivers if h != "rcv1"]
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    file_words = ["--file_bytes", file_bytes, "--file_seed", seed]
    zero: dict[str, float] = {}
    ext = {r: ("bcf", {}) for r in topo.routers}
    with Testbed(topo, testbed_name("b"), routers="user", extensions=ext, session={"session": SESSION}) as tb:
        sess = ["--source-addr", tb.addr(topo.source), "--session", SESSION]
        # the TCP flow's congestion control, named in the source's namespace (per-namespace sysctl)
        cc_set = tb.run(topo.source, ["sysctl", "-qw", "net.ipv4.tcp_congestion_control=reno"], check=False)
        cc = tb.run(topo.source, ["sysctl", "-n", "net.ipv4.tcp_congestion_control"], check=False).stdout.strip()
        server = tb.spawn("tcprx", ["iperf3", "-s", "-1", "-p", 5201, "-B", tb.addr("tcprx")])
        # the TCP flow first (Rainbow joins a link TCP already holds), then the source (a TRQ sent
        # before it listens is lost, and costs its receiver an RTO), then every receiver at once
        time.sleep(0.5)
        tcp_log = open(logs / "tcp.json", "w")
        client = tb.spawn(topo.source, ["iperf3", "-c", tb.addr("tcprx"), "-p", 5201, "-t", int(duration + 2),
                                        "-C", "reno", "-M", TCP_MAXSEG, "-i", 1, "-J"], stdout=tcp_log)
        log = logs / "source.log"
        src = tb.spawn(topo.source, _castlab("net", "rainbow-source", "--duration", duration + 2, "--seed", seed,
                                             "--status-interval", 5, "--out", out / "real_source",
                                             *file_words, *sess, *tb.host_words()),
                       stdout=open(log, "w"), stderr=subprocess.STDOUT)
        zero["source"] = _first_line_of(log, src, "rainbow-source")
        rx_procs = []
        for h in receivers:
            rx_procs.append(tb.spawn(h, _castlab("net", "rainbow-receiver", "--addr", tb.addr(h), "--node",
                                                 tb.node_id(h), "--duration", duration, "--seed", seed,
                                                 "--status-interval", 5, "--out", out / f"real_{h}",
                                                 *trq_rule_words(), *file_words, *sess),
                                     stdout=open(logs / f"{h}.log", "w"), stderr=subprocess.STDOUT))
        for h, p in zip(receivers, rx_procs):
            zero[h] = _first_line_of(logs / f"{h}.log", p, "rainbow-receiver")
        _wait([src, *rx_procs, client], duration + 30)
        tb.stop(server, timeout=5)
        tcp_log.close()
    routers = {r: tb.final_router_stats.get(r, {}) for r in topo.routers}

    # ---- the testbed's records on the wall clock
    rows, rx = [], {}
    for h in receivers:
        counts_path = out / f"real_{h}" / "rainbow_counts.json"
        c = json.loads(counts_path.read_text()) if counts_path.exists() else {}
        df = _read_table(out / f"real_{h}", "rainbow_rx")
        rx[h] = pd.DataFrame({"t": zero[h] + df["time_s"] if len(df) else [], "symbol": df.get("symbol", [])})
        done = bool(c.get("done"))
        rows.append({"network": "real", "host": h, "done": done, "identical": bool(c.get("matches_source")),
                     "completion_s": (c["done_s"] - c["start_s"]) if done else float("nan"),
                     "received": int(c.get("received", 0)), "done_wall": zero[h] + c["done_s"] if done else None})
    try:
        rep = json.loads((logs / "tcp.json").read_text())
        t_tcp = float(rep["start"]["timestamp"]["timesecs"])
        ends = np.array([t_tcp + iv["sum"]["end"] for iv in rep["intervals"]])
        cum = np.cumsum([iv["sum"]["bytes"] for iv in rep["intervals"]])
        tcp_error = rep.get("error")
    except (ValueError, KeyError, OSError) as e:
        t_tcp, ends, cum, tcp_error = float("nan"), np.array([]), np.array([]), f"unreadable iperf3 report: {e}"

    def tcp_at(x: float) -> float:
        return float(np.interp(x, np.concatenate([[t_tcp], ends]), np.concatenate([[0.0], cum]))) if len(ends) else 0.0

    t0 = max(zero.values()) + warm
    done_wall = [r["done_wall"] for r in rows if r["done_wall"] is not None]
    t1 = min(done_wall) if done_wall else max(zero.values()) + duration
    real = _window_rates(rx, fast, t0, t1, tcp_at, REAL_TCP_PAYLOAD)
    fs_path = out / "real_source" / "fountain_stats.json"
    fountain = json.loads(fs_path.read_text()) if fs_path.exists() else {}

    sim_rows, sim, sim_extra = _simulate(topo, seed, file_bytes, duration, warm)
    table = pd.DataFrame([{k: v for k, v in r.items() if k != "done_wall"} for r in rows] + sim_rows)
    table.to_csv(out / "net_rainbow_receivers.csv", index=False)
    windows = pd.DataFrame([{"network": "real", **real}, {"network": "sim", **sim}])
    windows.to_csv(out / "net_rainbow_window.csv", index=False)

    fig, ax = figure()
    for i, h in enumerate(receivers):
        df = rx[h]
        if len(df):
            ax.plot(df["t"] - min(zero.values()), np.arange(1, len(df) + 1), color=f"C{i}", label=f"{h} (testbed)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("symbols received")
    ax.set_title("Rainbow over BCFS on the testbed, beside kernel TCP")
    ax.legend(fontsize=7)
    files = save(fig, out, "net_rainbow")

    real_rows = [r for r in rows]
    decoded = float(np.mean([r["done"] and r["identical"] for r in real_rows])) if real_rows else float("nan")
    real_c = float(np.nanmean([r["completion_s"] for r in real_rows])) if any(r["done"] for r in real_rows) \
        else float("nan")
    sim_c = float(np.nanmean([r["completion_s"] for r in sim_rows])) if any(r["done"] for r in sim_rows) \
        else float("nan")
    lo, hi = RATIO_BAND
    claims = [
        at_least("all-decode", "fraction of the testbed's Rainbow receivers that decoded the file, identical to the "
                 "source's (RaptorQ, one block)", 1.0, decoded, "fraction", kind="sanity"),
        within("overhead", f"overhead against one multicast channel on the testbed, eq. 1 over the {len(fast)} fast "
               "receivers in the window (from every role's start + warm-up to the first completion), ps = packets "
               "that crossed the up-link and reached a receiver (paper, §IV-A.3, A-(i) with four fast receivers: "
               "15.2 %)", PAPER_OVERHEAD, real["overhead"], "fraction", abs_tol=OVERHEAD_TOL, kind="variant"),
        in_range("tcp-friendly", "Rainbow's rate on the shared up-link over the kernel TCP flow's in the same window, "
                 "IP bytes (B-(iii) beside TCP; within a factor 1.5 either way, as rainbow-b3's ratio-*)", lo, hi,
                 real["ratio"], "ratio", kind="derived"),
        in_range("completion-vs-sim", "mean completion time of the testbed's receivers over the simulated twin's",
                 TWIN_BAND[0], TWIN_BAND[1], real_c / sim_c if sim_c > 0 else float("nan"), "ratio", kind="derived",
                 explanation="the twin shapes the hosts' egress too and runs TCP with SACK and Reno's rules in "
                 "simulated time; the testbed runs Linux's reno and the wall clock"),
        in_range("share-vs-sim", "Rainbow's share of the kernel TCP flow on the testbed (tcp-friendly's ratio) over "
                 "the simulated twin's share in its own window (one run each): within a factor of 1.5",
                 SHARE_VS_SIM[0], SHARE_VS_SIM[1],
                 real["ratio"] / sim["ratio"] if sim["ratio"] > 0 else float("nan"), "ratio", kind="derived",
                 explanation="net_rainbow_window.csv, the real and sim rows (rainbow_bps, tcp_bps, ratio); the twin's "
                 "TCP is SACK with Reno's rules and castlab's defaults besides the MSS, the testbed's Linux reno"),
    ]
    from castlab.experiments.rainbow.declared import RED_THRESHOLDS, TRQ_LOSS, declared

    params = {"network": "real", "routers": "user", "extension": "bcf", "topology": topo.name,
              "declared_readings": declared(TRQ_LOSS, RED_THRESHOLDS),
              "description": topo.description,
              "links": [{"a": ln.a, "b": ln.b, "rate_bps": ln.rate_bps, "queue_pkts": ln.queue_pkts,
                         "delay_s": ln.delay_s, "red": list(ln.red) if ln.red else None} for ln in topo.links],
              "file_bytes": file_bytes, "symbol_bytes": SYMBOL_BYTES, "reply_bytes": REPLY_BYTES,
              "duration_s": duration, "warm_s": warm, "quick": quick,
              "tcp": f"Linux {cc or 'unknown'} (sysctl net.ipv4.tcp_congestion_control in the source's namespace"
                     f"{'' if cc_set.returncode == 0 else ', not settable: iperf3 -C reno per socket'}; "
                     f"iperf3 -C reno -M {TCP_MAXSEG}: {TCP_WIRE_BYTES}-byte packets), SACK on; simulated twin: SACK with "
                     f"Reno's rules, MSS {SIM_TCP_MSS}, min RTO 0.2 s",
              "tcp_error": tcp_error,
              "real": {"window": real, "completion_mean_s": real_c, "fountain": fountain, "routers": routers},
              "sim": {"window": sim, "completion_mean_s": sim_c, **sim_extra},
              "differences": "each reply carries its symbol's bytes and the receivers decode those (the twin's "
                             "receivers copy the bytes from the source's store as each reply arrives); "
                             "the testbed's hosts send unshaped onto their access links (the twin shapes both "
                             "directions); the first BCF router on the source's link stands for the source "
                             "node's (the source's host runs none)"}
    return Result(params, claims, ["net_rainbow_receivers.csv", "net_rainbow_window.csv", *files])
