"""NLM on the testbed: ``net-nlm``, the set-up of the NLM paper's Figures 9 and 10 (§4.1, Fig. 8)
with LMRs hosted in castlab's user-space routers, against RLM (as the paper ran it: ns-2's MMG,
``NS2_MMG_RLM``) through the same routers with no extension, each beside its simulated twin
(``experiments.nlm.topology.Fig8`` with the same bottleneck, duration and seed).

Where the real run measures what the simulation measures differently:
- loss and goodput: the simulation counts at LMR1's bottleneck queue (offered after the filters,
  dropped); the testbed counts at the receiver, from sequence gaps per layer (the NLM receiver
  restarts a layer's gap tracking when a SESS announces the layer filtered, so an LMR's filtering
  is not counted as loss; RLM's receiver checks only the layers it holds). There is one
  bottleneck and no other queue fills, so both count the bottleneck's drops;
- NLM's number of layers: L_cur of the session at LMR1's bottleneck interface, read from the
  router's counters every half second (the simulation records every change);
- join and leave: IGMP in the routers (a few ms; the relayed join crosses both routers) against
  none in the simulation;
- the hosts' own egress onto their access links has no queue and no delay (the routers delay
  their egress onto every link: the round trip is the simulation's less the two host hops).

Claim rules are those of ``nlm-fig9`` and ``nlm-fig10`` (experiments/nlm/figures.py), on one
real run each; the derived claims comparing the testbed with its twin were fixed before the first
run: NLM's mean L_cur and RLM's mean level after 60 s within half a layer of the twin's.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from castlab.experiments.common import Result, at_least, at_most, in_range, within
from castlab.experiments.nlm.topology import (ACCESS_BPS, LAYER_RATES_BPS, LINK_DELAY_S, NS2_MMG_RLM, PACKET_BYTES,
                                              QUEUE_PKTS, Fig8)
from castlab.experiments.plotting import plt, save
from castlab.experiments.net_common import _castlab, _skip, _unavailable, testbed_name

NLM_PAPER = "Nakauchi et al. 2000 (NLM)"  # the same name as experiments/nlm, so the report groups them
RECEIVER_START_S = 20.0  # §4.1: the receiver joins at 20 s
FIG9_BPS = 1.5e6  # §4.1, Fig. 9
FIG10_BPS = 1.6e6  # §4.1, Fig. 10
FROM_S = 60.0  # nlm-fig10 measures after 60 s
PAPER_S = 600.0  # §4.1: "We ran each simulation for 10 minutes"
FULL_S = PAPER_S  # the full form: the paper's duration for each of the four real runs
QUICK_S = 90.0
GOODPUT_MAX_LOSS = 0.2  # §4.2: a layer counts toward goodput below 20 % loss
SAME_LEVEL = 0.5  # derived claims: within half a layer of the twin (decided before the first run)
DROP_REQ = 2  # NlmHeader::DROP_REQ, the sender's req_kind code (as nlm-fig9 reads it)
SESSION = 81
#: The router's rate counts IP datagrams: a 1024-byte castlab packet (its envelope inside) is 1052
#: bytes there (IPv4 20 + UDP 8), while ns-2 and the simulation serialise the 1024 bytes alone.
#: Fig. 10 offers exactly its 1.6 Mb/s (100+100+200+400+800 kb/s), so the testbed's bottleneck
#: runs at B x 1052/1024: the same packets per second as the paper's link.
IP_UDP_HEADER_BYTES = 28


def wire_rate(bps: float) -> float:
    """The router's rate that carries the 1024-byte packets of a `bps` link of the paper."""
    return bps * (PACKET_BYTES + IP_UDP_HEADER_BYTES) / PACKET_BYTES


def _wait_line(path: Path, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Until a role writing to `path` prints its first line (it runs by then), or it exits."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and path.read_text().strip():
            return
        time.sleep(0.05)


def _bott_state(st: dict, port: Optional[int]) -> tuple[Optional[int], Optional[float]]:
    """(L_cur of the session, add_intvl) at LMR1's bottleneck interface from its counters."""
    status = (st.get("extension") or {}).get("status") or {}
    add = next((i.get("add_intvl") for i in status.get("interfaces", []) if i.get("channel") == port), None)
    lcur = None
    for s in status.get("sessions", []):
        v = (s.get("l_cur") or {}).get(str(port))
        lcur = int(v) if v is not None else 0
    return lcur, add


def _run_real(out: Path, seed: int, proto: str, bps: float, duration: float) -> dict:
    """One real run on nlm8 (one session): NLM with LMRs in both routers, or RLM's layered source
    and receiver through plain user routers. Returns the receiver's per-bin, per-layer counts on
    the sender's clock, the level timeline, and (NLM) the sender's requests and LMR1's L_cur and
    add_intvl as polled."""
    from castlab.testbed import Testbed, nlm8

    out.mkdir(parents=True, exist_ok=True)
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    topo = nlm8(receiver_hosts=1, rate_bps=wire_rate(bps), queue_pkts=QUEUE_PKTS, delay_s=LINK_DELAY_S, access_bps=ACCESS_BPS)
    ext = {"r1": ("lmr", {}), "r2": ("lmr", {})} if proto == "nlm" else None
    res: dict = {"proto": proto, "bottleneck_bps": bps, "duration_s": duration}
    poll = []
    with Testbed(topo, testbed_name("n"), routers="user", extensions=ext, session={"session": SESSION}) as tb:
        rcv = "rcv1"
        ttl = tb.topo.hops(topo.source, rcv) + 1
        words = [*tb.session_words(), "--ttl", ttl, *tb.host_words(), "--seed", seed]
        src_log = logs / "source.log"
        if proto == "nlm":
            argv = _castlab("net", "nlm-sender", "--duration", duration, "--iface-addr", tb.addr(topo.source),
                            "--out", out / "real_source", "--status-interval", 5, *words)
        else:
            argv = _castlab("net", "source", "--layers", len(LAYER_RATES_BPS),
                            "--rates", ",".join(f"{r:g}" for r in LAYER_RATES_BPS), "--packet-size", PACKET_BYTES,
                            "--duration", duration, "--iface-addr", tb.addr(topo.source), "--out",
                            out / "real_source", "--status-interval", 5, *words)
        src = tb.spawn(topo.source, argv, stdout=open(src_log, "w"), stderr=subprocess.STDOUT)
        _wait_line(src_log, src)
        t0 = time.monotonic()
        port = None
        while time.monotonic() - t0 < RECEIVER_START_S:
            time.sleep(0.05)
        if proto == "nlm":
            argv = _castlab("net", "nlm-receiver", "--addr", tb.addr(rcv), "--node", tb.node_id(rcv),
                            "--iface-addr", tb.addr(rcv), "--duration", duration - RECEIVER_START_S,
                            "--out", out / "real_receiver", "--status-interval", 5, *words)
        else:
            argv = _castlab("net", "rlm-receiver", "--layers", len(LAYER_RATES_BPS), "--addr", tb.addr(rcv),
                            "--node", tb.node_id(rcv), "--iface-addr", tb.addr(rcv),
                            "--duration", duration - RECEIVER_START_S, "--out", out / "real_receiver",
                            "--status-interval", 5, *words,
                            *[w for k, v in NS2_MMG_RLM.items() for w in ("--config", f"{k}={json.dumps(v)}")])
        rx = tb.spawn(rcv, argv, stdout=open(logs / "receiver.log", "w"), stderr=subprocess.STDOUT)
        t_rx = time.monotonic() - t0
        # LMR1's state at the bottleneck while the run lasts (the router rewrites its counters
        # every half second)
        end = time.monotonic() + duration + 40
        while time.monotonic() < end and (src.poll() is None or rx.poll() is None):
            st = tb.router_stats("r1")
            if st.get("ports"):
                if port is None:
                    port = [p["name"] for p in st["ports"]].index(tb.iface("r1", "r2"))
                if proto == "nlm":
                    lcur, add = _bott_state(st, port)
                    poll.append((time.monotonic() - t0, lcur, add))
            time.sleep(0.5)
        for p in (src, rx):
            tb.stop(p, timeout=15)
        res["exit_codes"] = [src.returncode, rx.returncode]
    st = tb.final_router_stats.get("r1", {})
    res["bottleneck_port"] = next((p for p in st.get("ports", []) if p.get("name") == tb.iface("r1", "r2")), {})
    res["router_stats"] = {r: s.get("stats", {}) for r, s in tb.final_router_stats.items()}
    res["receiver_start_s"] = RECEIVER_START_S
    res["receiver_spawned_s"] = t_rx
    nb = int(np.ceil(duration))
    L = len(LAYER_RATES_BPS)
    rec_grid, lost_grid = np.zeros((nb, L)), np.zeros((nb, L))
    d = out / "real_receiver"
    if proto == "nlm":
        f = d / "nlm_receiver.json"
        r = json.loads(f.read_text()) if f.exists() else {}
        bin_s = float(r.get("bin_s", 1.0))
        for key, grid in (("received", rec_grid), ("lost", lost_grid)):
            for b, row in enumerate(r.get(key, [])):
                k = int((RECEIVER_START_S + (b + 0.5) * bin_s) // 1.0)
                if 0 <= k < nb:
                    grid[k, :len(row)] += row
        sf = out / "real_source"
        req = _table(sf, "nlm_sender_req")
        res["requests"] = req
        res["lmr_poll"] = pd.DataFrame(poll, columns=["time_s", "l_cur", "add_intvl_s"])
        res["receiver"] = {k: v for k, v in r.items() if k not in ("received", "lost")}
    else:
        arr = _table(d, "rlm_arr")
        loss = _table(d, "rlm_loss")
        for tab, grid, w in ((arr, rec_grid, None), (loss, lost_grid, "count")):
            if len(tab):
                k = ((tab["time_s"].to_numpy() + RECEIVER_START_S) // 1.0).astype(int)
                m = tab["layer"].to_numpy().astype(int)
                ok = (k >= 0) & (k < nb) & (m >= 0) & (m < L)
                np.add.at(grid, (k[ok], m[ok]), tab[w].to_numpy()[ok] if w else 1)
        lv = _table(d, "levels")
        res["levels"] = lv
        c = d / "rlm_counts.json"
        res["receiver"] = json.loads(c.read_text()) if c.exists() else {}
    res["received"], res["lost"] = rec_grid, lost_grid
    return res


def _table(d: Path, stem: str) -> pd.DataFrame:
    for ext in (".csv", ".parquet"):
        p = d / f"{stem}{ext}"
        if p.exists():
            return pd.read_csv(p) if ext == ".csv" else pd.read_parquet(p)
    return pd.DataFrame()


# ---- measures on (received, lost) per 1 s bin and layer: the same for testbed and twin


def _loss(rec: np.ndarray, lost: np.ndarray) -> np.ndarray:
    tot = rec.sum(1) + lost.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, lost.sum(1) / tot, np.nan)


def _throughput(rec: np.ndarray) -> np.ndarray:
    return rec.sum(1) * PACKET_BYTES * 8.0


def _goodput(rec: np.ndarray, lost: np.ndarray) -> np.ndarray:
    """§4.2: the layers delivered with under 20 % loss, in order from the base layer (as
    ``Fig8.goodput_bps``)."""
    out = np.zeros(len(rec))
    for b in range(len(rec)):
        for m in range(rec.shape[1]):
            n = rec[b, m] + lost[b, m]
            if n == 0 or lost[b, m] / n >= GOODPUT_MAX_LOSS:
                break
            out[b] += rec[b, m] * PACKET_BYTES * 8.0
    return out


def _steps_at(t: np.ndarray, lv: np.ndarray, times: np.ndarray) -> np.ndarray:
    if len(t) == 0:
        return np.zeros(len(times))
    idx = np.searchsorted(t, times, side="right") - 1
    return np.where(idx >= 0, lv[np.clip(idx, 0, None)], 0)


def _real_levels(r: dict, bins: np.ndarray) -> np.ndarray:
    if r["proto"] == "nlm":
        p = r["lmr_poll"].dropna(subset=["l_cur"])
        return _steps_at(p["time_s"].to_numpy(), p["l_cur"].to_numpy(float), bins)
    lv = r["levels"]
    if not len(lv):
        return np.zeros(len(bins))
    return _steps_at(lv["time_s"].to_numpy() + RECEIVER_START_S, lv["level"].to_numpy(float), bins)


def _sim(seed: int, proto: str, bps: float, duration: float) -> dict:
    net = Fig8(proto, seed, 1, bps, [RECEIVER_START_S], meter_bin_s=1.0)
    net.run(duration, f"net-nlm twin {proto} {bps / 1e6:g} Mb/s")
    p, d = net._flow(0, duration)
    bins = np.arange(0, duration, 1.0)
    res = {"proto": proto, "received": p - d, "lost": d, "levels_at": net.level_at(0, bins, duration)}
    if proto == "nlm":
        srec = net.sim.nlm_sender_records(net.senders[0])
        res["requests"] = pd.DataFrame({"time_s": srec["req_time_ns"] / 1e9, "kind": srec["req_kind"],
                                        "level": srec["req_level"]})
        lr = net.sim.lmr_records("LMR1")
        iv = lr["intvl_s"][lr["intvl_oif"] == net.bott]
        res["add_intvl_max_s"] = float(iv.max()) if len(iv) else float("nan")
    return res


def _metrics(nlm: dict, rlm: dict, duration: float, real: bool) -> dict:
    bins = np.arange(0, duration, 1.0)
    n = len(bins)
    out = {}
    for name, r in (("nlm", nlm), ("rlm", rlm)):
        rec, lost = r["received"][:n], r["lost"][:n]
        loss = _loss(rec, lost)
        levels = _real_levels(r, bins) if real else r["levels_at"]
        # the last bin is cut short on the testbed: the sender stops at `duration` on its clock and
        # the receiver, started a process start-up later, on its own; measures end before it
        whole = bins < duration - 1.0
        w20, w60 = (bins >= RECEIVER_START_S) & whole, (bins >= FROM_S) & whole
        out[f"{name}_max_loss_after_20s"] = float(np.nanmax(loss[w20])) if np.isfinite(loss[w20]).any() else float("nan")
        out[f"{name}_max_loss_after_60s"] = float(np.nanmax(loss[w60])) if np.isfinite(loss[w60]).any() else float("nan")
        g, th = _goodput(rec, lost)[w60], _throughput(rec)[w60]
        out[f"{name}_goodput_mean_bps"] = float(g.mean()) if len(g) else float("nan")
        out[f"{name}_goodput_min_bps"] = float(g.min()) if len(g) else float("nan")
        out[f"{name}_throughput_mean_bps"] = float(th.mean()) if len(th) else float("nan")
        out[f"{name}_mean_level_after_60s"] = float(np.mean(levels[w60])) if w60.any() else float("nan")
        vals, counts = np.unique(levels[w60].astype(int), return_counts=True)
        out[f"{name}_held_level"] = int(vals[np.argmax(counts)]) if len(vals) else -1
        out[f"_{name}_series"] = {"loss": loss, "levels": levels, "goodput": _goodput(rec, lost),
                                  "throughput": _throughput(rec)}
    req = nlm.get("requests")
    t = float("nan")
    if req is not None and len(req):
        sel = (req["kind"].to_numpy() == DROP_REQ) & (req["level"].to_numpy() == 5)
        t = float(req["time_s"].to_numpy()[sel][0]) if sel.any() else float("nan")
    out["first_drop_req_s"] = t
    if real:
        p = nlm["lmr_poll"]["add_intvl_s"].dropna()
        out["add_intvl_max_s"] = float(p.max()) if len(p) else float("nan")
    else:
        out["add_intvl_max_s"] = nlm["add_intvl_max_s"]
    out["nlm_goodput_over_own_throughput"] = (out["nlm_goodput_mean_bps"] / out["nlm_throughput_mean_bps"]
                                              if out["nlm_throughput_mean_bps"] > 0 else float("nan"))
    out["nlm_goodput_min_over_mean"] = (out["nlm_goodput_min_bps"] / out["nlm_goodput_mean_bps"]
                                        if out["nlm_goodput_mean_bps"] > 0 else float("nan"))
    return out


def run_net_nlm(out: Path, seed: int, quick: bool = False) -> Result:
    reason = _unavailable()
    if reason:
        return _skip(reason)
    duration = QUICK_S if quick else FULL_S
    m: dict[str, dict] = {}
    runs: dict[str, dict] = {}
    for fig, bps in (("fig9", FIG9_BPS), ("fig10", FIG10_BPS)):
        real = {p: _run_real(out / f"{fig}_{p}", seed, p, bps, duration) for p in ("nlm", "rlm")}
        sim = {p: _sim(seed, p, bps, duration) for p in ("nlm", "rlm")}
        runs[fig] = {"real": real, "sim": sim}
        m[fig] = {"real": _metrics(real["nlm"], real["rlm"], duration, True),
                  "sim": _metrics(sim["nlm"], sim["rlm"], duration, False)}
    # side by side: every measure, testbed and twin
    rows = []
    for fig in m:
        for k in m[fig]["real"]:
            if not k.startswith("_"):
                rows.append({"figure": fig, "measure": k, "real": m[fig]["real"][k], "sim": m[fig]["sim"][k]})
    pd.DataFrame(rows).to_csv(out / "net_nlm.csv", index=False)
    bins = np.arange(0, duration, 1.0)
    series = {"time_s": bins}
    for fig in m:
        for side in ("real", "sim"):
            for p in ("nlm", "rlm"):
                s = m[fig][side][f"_{p}_series"]
                for k in ("levels", "loss", "goodput"):
                    series[f"{fig}_{side}_{p}_{k}"] = s[k][:len(bins)]
    pd.DataFrame(series).to_csv(out / "net_nlm_series.csv", index=False)

    fig_, axes = plt.subplots(2, 2, figsize=(8.0, 5.6), dpi=120, sharex=True)
    for col, fig in enumerate(("fig9", "fig10")):
        a1, a2 = axes[0][col], axes[1][col]
        for side, ls in (("real", "-"), ("sim", ":")):
            for p, colour in (("nlm", "k"), ("rlm", "C3")):
                s = m[fig][side][f"_{p}_series"]
                a1.step(bins, s["levels"][:len(bins)], ls, color=colour, where="post", lw=0.9,
                        label=f"{p.upper()} ({'testbed' if side == 'real' else 'simulator'})")
                a2.plot(bins, s["goodput"][:len(bins)] / 1e6, ls, color=colour, lw=0.8)
        a1.set_ylim(0, 6)
        a1.set_title(f"{'Fig. 9' if fig == 'fig9' else 'Fig. 10'} set-up, B = "
                     f"{(FIG9_BPS if fig == 'fig9' else FIG10_BPS) / 1e6:g} Mb/s", fontsize=9)
        a2.set_xlabel("Time (sec)")
    axes[0][0].set_ylabel("Layers (NLM: L_cur at LMR1)")
    axes[1][0].set_ylabel("Goodput (Mbps)")
    axes[0][0].legend(fontsize=6, loc="lower right")
    files = save(fig_, out, "net_nlm")

    r9, r10 = m["fig9"]["real"], m["fig10"]["real"]
    s9, s10 = m["fig9"]["sim"], m["fig10"]["sim"]
    twin = "the simulated twin's reading is in net_nlm.csv (column sim)"
    claims = [
        within("drop-req-at-41s", "(paper, Fig. 9) 'LMR1 detects congestion and sends DROP_REQ(S1, 5) to the sender at "
               "41[s]': when the sender received it, on the testbed", 41.0, r9["first_drop_req_s"], "s", abs_tol=2.5,
               kind="paper", explanation=f"sim twin: {s9['first_drop_req_s']:.1f} s; {twin}"),
        within("add-intvl-max", "(paper, Fig. 9) 'LMR1 increases add_intvl gradually up to add_intvl_max' (80 s): the "
               f"largest add_intvl at LMR1's bottleneck interface on the testbed, in a {duration:g} s run", 80.0,
               r9["add_intvl_max_s"], "s", abs_tol=0.0, kind="paper",
               explanation=f"sim twin: {s9['add_intvl_max_s']:g} s over the same {duration:g} s (the paper runs "
                           "600 s: add_intvl doubles from its start at each refused ADD)"),
        at_most("nlm-zero-loss", "(paper, Fig. 9) 'NLM keeps packet loss rate 0[%] through this simulation': the "
                "largest 1 s loss at the receiver after 20 s, on the testbed", 0.0, r9["nlm_max_loss_after_20s"],
                "fraction", kind="paper", explanation=f"sim twin: {s9['nlm_max_loss_after_20s']:.3f}; {twin}"),
        within("rlm-max-loss-9pct", "(paper, Fig. 10) 'the maximum overall packet loss rate is 9[%]' (RLM; largest "
               "1 s loss after 60 s), on the testbed", 0.09, r10["rlm_max_loss_after_60s"], "fraction", rel_tol=0.5,
               kind="paper", explanation=f"sim twin: {s10['rlm_max_loss_after_60s']:.3f}; {twin}"),
        at_least("rlm-keeps-level-5", "(paper, Fig. 10) 'RLM does not detect congestion and keeps the subscription "
                 "level 5': the level RLM held longest after 60 s on the testbed is 5 (1 yes, 0 no)", 1.0,
                 float(r10["rlm_held_level"] == 5), "fraction", kind="paper",
                 explanation=f"held level: testbed {r10['rlm_held_level']}, sim twin {s10['rlm_held_level']}"),
        at_least("rlm-goodput-worst-0", "(paper, Fig. 10) 'obtained goodput of RLM ... is 0 [Mbps] in the worst "
                 "case': RLM's goodput after 60 s is 0 in some 1 s bin on the testbed (1 yes, 0 no)", 1.0,
                 float(r10["rlm_goodput_min_bps"] == 0), "fraction", kind="paper",
                 explanation=f"smallest 1 s goodput: testbed {r10['rlm_goodput_min_bps'] / 1e3:.0f} kb/s, sim twin "
                             f"{s10['rlm_goodput_min_bps'] / 1e3:.0f} kb/s (a chance event, nlm-fig10)"),
        at_least("nlm-goodput-near-throughput", "(paper, Fig. 10) 'NLM can achieve ... as high goodput as "
                 "throughput': NLM's mean goodput after 60 s over its own mean throughput, on the testbed", 0.99,
                 r10["nlm_goodput_over_own_throughput"], "ratio", kind="sanity",
                 explanation=f"sim twin: {s10['nlm_goodput_over_own_throughput']:.3f}"),
        at_least("nlm-goodput-stable", "(paper, Fig. 10) 'NLM can achieve stable ... goodput': smallest 1 s goodput "
                 "after 60 s over the mean, on the testbed (at least 0.5)", 0.5, r10["nlm_goodput_min_over_mean"],
                 "ratio", kind="paper", explanation=f"sim twin: {s10['nlm_goodput_min_over_mean']:.3f}"),
    ]
    for fig, r, s in (("fig9", r9, s9), ("fig10", r10, s10)):
        for p, what in (("nlm", "NLM's mean L_cur at LMR1's bottleneck interface"),
                        ("rlm", "RLM's mean subscription level")):
            k = f"{p}_mean_level_after_60s"
            claims.append(in_range(f"{p}-level-matches-sim-{fig}", f"(derived) {what} after 60 s ({fig} set-up), "
                                   f"testbed against its simulated twin: differs by at most {SAME_LEVEL} layer",
                                   0.0, SAME_LEVEL, abs(r[k] - s[k]), "layers", kind="derived",
                                   explanation=f"testbed {r[k]:.2f}, sim {s[k]:.2f}"))
    params = {"network": "real", "topology": "nlm8 (NLM Fig. 8, N = 1)", "routers": "user",
              "extensions": {"nlm": "lmr in r1 (LMR1) and r2 (LMR2)", "rlm": "none (plain user routers)"},
              "rlm_config": NS2_MMG_RLM, "layer_rates_bps": LAYER_RATES_BPS, "packet_bytes": PACKET_BYTES,
              "queue_pkts": QUEUE_PKTS, "access_bps": ACCESS_BPS,
              "link_delays_s": {"src->r1": 0.0, "r1->src": LINK_DELAY_S, "r1->r2": LINK_DELAY_S,
                                "r2->r1": LINK_DELAY_S, "r2->rcv1": LINK_DELAY_S, "rcv1->r2": 0.0},
              "bottleneck_bps": {"fig9": FIG9_BPS, "fig10": FIG10_BPS},
              "bottleneck_router_rate_bps": {"fig9": wire_rate(FIG9_BPS), "fig10": wire_rate(FIG10_BPS)},
              "duration_s": duration,
              "paper_duration_s": PAPER_S, "receiver_start_s": RECEIVER_START_S, "seed": seed,
              "metrics": {fig: {side: {k: v for k, v in m[fig][side].items() if not k.startswith("_")}
                                for side in ("real", "sim")} for fig in m},
              "runs": {fig: {p: {k: runs[fig]["real"][p].get(k) for k in ("exit_codes", "bottleneck_port",
                                                                         "router_stats", "receiver",
                                                                         "receiver_spawned_s")}
                             for p in ("nlm", "rlm")} for fig in runs},
              "differences": "the router's bottleneck rate counts IP datagrams, so it runs at B x 1052/1024 to carry "
                             "the paper's 1024-byte packets at B (bottleneck_router_rate_bps); "
                             "loss and goodput counted at the receiver from sequence gaps (simulation: at LMR1's "
                             "queue); NLM's L_cur polled from LMR1's counters every 0.5 s (simulation: every change); "
                             "IGMP join/leave in the routers (a few ms) against none; the hosts' own egress has no "
                             "queue or delay (the simulation delays both directions of every link); "
                             f"{duration:g} s runs (the paper's {PAPER_S:g} s); one real run per protocol and figure "
                             "(the simulation's nlm-fig9/10 average 5 seeds); the receiver "
                             "is started 20 s after the sender's first line and counts on its own clock, which its "
                             "process start-up (under a second) shifts against the sender's"}
    return Result(params, claims, ["net_nlm.csv", "net_nlm_series.csv", *files])
