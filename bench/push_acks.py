"""Linux's push marks and its receiver's answer, kernel against twin, on net-tcp-vs-sim's reno+bbr.

    python bench/push_acks.py RUNS OUT [--seed 1] [--duration 30] [--base-rtt 2e-4]

RUNS is the output folder of ``bench/reno_bbr_probe_rtt.py`` (its ``run-N/`` folders: the kernel's
reno+bbr case with ``src.pcap``, dumpcap on src's port, and iperf3's ``server5201.json`` and
``server5202.json``); it is only read. For each recorded run, and for the twin of that case
(``net.twin_scenario``, seeded `seed` + run - 1, as that tool seeds it, bbr starting as the
recorded client did: ``reno_bbr_probe_rtt.recorded_gap``) with ``TcpConfig::push``
on and off, after the 5 s warm-up and per flow (5201 reno, 5202 bbr):
- kernel only: the fraction of bursts (departures of new data under 50 µs apart) whose last
  segment carries PSH, and the fraction of the other segments that do;
- kernel only: of the segments a cumulative ACK acknowledged alone, the fraction that carried
  PSH; of the first segments of two-segment ACKs sent over 3 ms before the second (held at the
  receiver for the next one), the fraction that did;
- both: the fraction of cumulative ACKs that acknowledge one segment, and of RTT samples over
  40 ms, each measured from the oldest segment the ACK acknowledges (the twin's timestamp echo;
  the kernel's first newly acknowledged segment, sent once), a queue of 30 packets being 36 ms;
- both: reno's throughput over bbr's after the warm-up.
Writes OUT/push_acks.csv and prints it. Simulated and read only: no root, no testbed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reno_bbr_probe_rtt import recorded_gap  # noqa: E402

MSS = 1448
WARM_S = 5.0
PORTS = {5201: "reno", 5202: "bbr"}


def capture(pcap: Path) -> pd.DataFrame:
    """Every TCP segment of the iperf3 ports in `pcap`: time, ports, seq, ack, length, PSH."""
    flt = " or ".join(f"tcp.port == {p}" for p in PORTS)
    r = subprocess.run(["tshark", "-r", str(pcap), "-Y", flt, "-T", "fields", "-E", "separator=;", "-e",
                        "frame.time_epoch", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.ack",
                        "-e", "tcp.len", "-e", "tcp.flags.push"], capture_output=True, text=True, check=True)
    rows = [ln.split(";") for ln in r.stdout.splitlines() if ln.count(";") == 6]
    df = pd.DataFrame(rows, columns=["t", "sport", "dport", "seq", "ack", "len", "psh"])
    for c in df.columns:
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df.dropna()


def kernel_flow(df: pd.DataFrame, port: int) -> dict:
    data = df[(df.dport == port) & (df.len > 0)]
    conn = data.groupby("sport")["len"].sum().idxmax()
    d = data[data.sport == conn].sort_values("t")
    t0 = d.t.iloc[0]
    d = d[d.t - t0 > WARM_S]
    end = (d.seq + d.len).to_numpy()
    first = ~pd.Series(end).duplicated().to_numpy()
    t, psh = d.t.to_numpy(), d.psh.to_numpy().astype(bool)
    last = np.append(np.diff(t) > 50e-6, True)
    a = df[(df.sport == port) & (df.dport == conn)].sort_values("t")
    a = a[a.t - t0 > WARM_S]
    sent = dict(zip(end[first], t[first]))
    pushed = dict(zip(end[first], psh[first]))
    alone, held, sizes, rtts = [], [], [], []
    prev = None
    for ta, ack in zip(a.t.to_numpy(), a.ack.to_numpy()):
        if prev is not None and ack > prev:
            n = int(round((ack - prev) / MSS))
            sizes.append(n)
            oldest = prev + MSS
            if oldest in sent:
                rtts.append(ta - sent[oldest])
            if n == 1 and ack in pushed:
                alone.append(pushed[ack])
            elif n == 2 and oldest in sent and ack in sent and sent[ack] - sent[oldest] > 3e-3:
                held.append(pushed[oldest])
        prev = ack if prev is None else max(prev, ack)
    sizes, rtts = np.array(sizes), np.array(rtts)
    return {"psh_burst_last": float(psh[last & first].mean()), "psh_other": float(psh[~last & first].mean()),
            "psh_acked_alone": float(np.mean(alone)) if alone else np.nan,
            "psh_held": float(np.mean(held)) if held else np.nan,
            "acks_of_one": float((sizes == 1).mean()), "rtt_over_40ms": float((rtts > 0.040).mean())}


def twin(seed: int, duration: float, base_rtt_s: float, push: bool, gap: float) -> dict:
    from castlab.experiments.tcp import net
    from castlab.scenario import Scenario

    d = net.twin_scenario(("reno", "bbr"), duration, base_rtt_s, gap=gap)
    for f in d["tcp"]:
        f["config"] = {**f.get("config", {}), "push": push}
    sim = Scenario.from_dict(d).build(seed)
    sim.run(duration)
    out, rate = {}, {}
    for name, f in (("reno", "f0"), ("bbr", "f1")):
        tr = sim.tcp_trace(sim.scenario_handles.tcp[f])
        at, acked = tr["ack_time_ns"] / 1e9, tr["acked_bytes"]
        m = at > WARM_S
        steps = np.diff(acked[m])
        steps = np.round(steps[steps > 0] / MSS)
        rt, rr = tr["rtt_time_ns"] / 1e9, tr["rtt_ns"] / 1e9
        rx, rxt = tr["rx_bytes"], tr["rx_time_ns"] / 1e9
        k = np.searchsorted(rxt, WARM_S)
        rate[name] = (rx[-1] - rx[k]) / (rxt[-1] - rxt[k])
        out[name] = {"acks_of_one": float((steps == 1).mean()), "rtt_over_40ms": float((rr[rt > WARM_S] > 0.040).mean())}
    return {"flows": out, "reno_over_bbr": rate["reno"] / rate["bbr"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--base-rtt", type=float, default=2e-4, help="the twins' round trip without queue, s "
                    "(the testbed's ping: 0.1-0.2 ms)")
    a = ap.parse_args(argv)
    runs = sorted(p for p in a.runs.glob("run-*") if (p / "src.pcap").exists())
    if not runs:
        ap.error(f"{a.runs}: no run-N/src.pcap")
    gap = recorded_gap(a.runs)
    rows = []
    for r, where in enumerate(runs, start=1):
        df = capture(where / "src.pcap")
        bps = {p: json.loads((where / f"server{p}.json").read_text())["end"]["sum_received"]["bits_per_second"]
               for p in PORTS}
        ratio = bps[5201] / bps[5202]
        for p, name in PORTS.items():
            rows.append({"run": r, "side": "kernel", "flow": name, **kernel_flow(df, p), "reno_over_bbr": ratio})
        for push in (True, False):
            t = twin(a.seed + r - 1, a.duration, a.base_rtt, push, gap)
            for name, v in t["flows"].items():
                rows.append({"run": r, "side": f"twin, push {'on' if push else 'off'}", "flow": name, **v,
                             "reno_over_bbr": t["reno_over_bbr"]})
        print(f"run {r} done", file=sys.stderr, flush=True)
    out = pd.DataFrame(rows)
    a.out.mkdir(parents=True, exist_ok=True)
    out.to_csv(a.out / "push_acks.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(out.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
