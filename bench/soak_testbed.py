"""Soak: one testbed session for a long time, checked for memory, timer lateness and counters.

    sudo .venv/bin/python bench/soak_testbed.py --duration 3600 --out out/soak

RLM's topology (1) from `castlab testbed` (`rlm1`, two receivers, each behind its own
1.5 Mb/s DropTail 20 bottleneck), a six-layer source (32 kb/s * 2^m, 1000-byte packets) and
an RLM receiver on each host, all for `--duration` seconds. The receivers keep summary records
(`--config record=summary`): the per-arrival table the testbed's analysis reads would grow
by 8 bytes a packet, which is not what a soak looks for. Every `--sample` seconds it reads
each role process's resident memory (VmRSS) and the timer lateness its status lines report.
At the end it writes `samples.csv` and `soak.json` and prints the verdicts. The rules, fixed
before any run:

* memory flat: after `--warmup` seconds, each process's RSS at the end exceeds its RSS at the
  end of the warm-up by at most max(2 MiB, 2 %) (the RLM receivers keep one record row per
  level change, experiment and loss event: bytes per minute, inside that allowance);
* lateness not drifting: each process's mean timer lateness over the last quarter of the
  post-warm-up samples is at most twice that of the first quarter plus 200 us;
* counters add up, per receiver: the bottleneck's queue (tc, the independent count)
  forwarded `sent` packets and dropped `drops`; the receiver read `received` datagrams and
  detected `lost` by sequence gaps; its driver's `received` equals `delivered + rejected +
  not_joined` exactly, |lost - drops| is at most 1 % of `sent` plus 20 (losses in a layer just
  left, which no later packet reveals), and `received + lost <= sent + drops + 20` (the
  receiver cannot hear more data than the queue carried). `sent - received` is reported, not
  judged: the queue also carries frames that are not the session's (the bridge's IGMP
  queries, ARP, IPv6 neighbour discovery), which a 40 s trial showed to be a few per second.

Needs root (the testbed). Not part of `make test`. See docs/testbed.md for a run's result.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from castlab.testbed import Testbed, available, rlm1

REJECTS = ("malformed", "foreign_session", "unauthenticated", "bad_mac", "wrong_source", "wrong_size",
           "misdirected", "stale_epoch")


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def lateness(log: Path) -> tuple[int, int]:
    """(timer fires, total lateness in us) from the role's latest status line."""
    hits = re.findall(r"timers=(\d+) late_total_us=(\d+)", log.read_text()) if log.exists() else []
    return (int(hits[-1][0]), int(hits[-1][1])) if hits else (0, 0)


def slope_per_h(rows: list[dict]) -> float:
    """Least-squares slope of RSS against time, KiB per hour (reported, not judged)."""
    n = len(rows)
    mt = sum(r["t_s"] for r in rows) / n
    mr = sum(r["rss_kib"] for r in rows) / n
    var = sum((r["t_s"] - mt) ** 2 for r in rows)
    cov = sum((r["t_s"] - mt) * (r["rss_kib"] - mr) for r in rows)
    return round(cov / var * 3600, 1) if var > 0 else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=3600.0, help="seconds of session (default 3600)")
    ap.add_argument("--warmup", type=float, default=None, help="seconds of warm-up (default: a tenth, at least 60)")
    ap.add_argument("--sample", type=float, default=10.0, help="seconds between samples (default 10)")
    ap.add_argument("--out", default="out/soak")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    reason = available()
    if reason:
        print(f"soak: testbed unavailable: {reason}", file=sys.stderr)
        return 2
    warm = a.warmup if a.warmup is not None else max(60.0, a.duration / 10)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    topo = rlm1(receivers=2)
    hosts = [h for h in topo.hosts if h != topo.source]
    castlab = [sys.executable, "-m", "castlab", "net"]
    rows: list[dict] = []
    with Testbed(topo, f"sk{os.getpid() % 10000}") as tb:
        ttl = tb.topo.hops(topo.source, hosts[0]) + 1
        sess = ["--source-addr", tb.addr(topo.source), "--ttl", ttl, "--session", 79, "--layers", 6,
                "--seed", a.seed, "--status-interval", min(a.sample, 10.0)]
        procs = {"src": tb.spawn(topo.source, [*castlab, "source", "--iface-addr", tb.addr(topo.source),
                                               "--duration", a.duration + 15, "--out", out / "src", *sess],
                                 stdout=open(out / "src.log", "w"), stderr=subprocess.STDOUT)}
        time.sleep(1.0)
        for i, h in enumerate(hosts):
            procs[h] = tb.spawn(h, [*castlab, "rlm-receiver", "--addr", tb.addr(h), "--node", i + 1,
                                    "--iface-addr", tb.addr(h), "--duration", a.duration, "--out", out / h,
                                    "--config", "record=summary", *sess],
                                stdout=open(out / f"{h}.log", "w"), stderr=subprocess.STDOUT)
        t0 = time.monotonic()
        try:
            # the last sample a little before the receivers' end, not while they write records
            while time.monotonic() - t0 < a.duration - a.sample:
                time.sleep(a.sample)
                t = time.monotonic() - t0
                for name, p in procs.items():
                    fires, late = lateness(out / f"{name}.log")
                    rows.append({"t_s": round(t, 1), "proc": name, "rss_kib": rss_kib(p.pid), "timer_fires": fires,
                                 "late_total_us": late})
        except KeyboardInterrupt:
            print("soak: interrupted; checking what was sampled", file=sys.stderr)
        for h in hosts:  # they stop at --duration and then write their records: let them
            try:
                procs[h].wait(timeout=max(0.0, a.duration - (time.monotonic() - t0)) + 180)
            except subprocess.TimeoutExpired:
                tb.stop(procs[h], signal.SIGINT, timeout=30)
        time.sleep(1.0)
        qdisc = {h: tb.qdisc_stats(h) for h in hosts}
        tb.stop(procs["src"], signal.SIGINT, timeout=30)
    with open(out / "samples.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["t_s"])
        w.writeheader()
        w.writerows(rows)
    verdict: dict = {"duration_s": a.duration, "warmup_s": warm, "memory": {}, "lateness": {}, "counters": {}}
    for name in procs:
        mine = [r for r in rows if r["proc"] == name and r["rss_kib"] > 0]
        after = [r for r in mine if r["t_s"] >= warm]
        if len(after) < 4:
            verdict["memory"][name] = {"holds": False, "why": "too few samples after the warm-up"}
            continue
        base, end = after[0]["rss_kib"], after[-1]["rss_kib"]
        allow = max(2048, base * 0.02)
        verdict["memory"][name] = {"rss_warm_kib": base, "rss_end_kib": end, "rss_max_kib": max(r["rss_kib"] for r in after),
                                   "growth_kib": end - base, "allowed_kib": allow,
                                   "slope_kib_per_h": slope_per_h(after), "holds": end - base <= allow}
        q = max(1, len(after) // 4)

        def mean_late(seg):
            df = seg[-1]["timer_fires"] - seg[0]["timer_fires"]
            return (seg[-1]["late_total_us"] - seg[0]["late_total_us"]) / df if df > 0 else 0.0

        first, last = mean_late(after[: q + 1]), mean_late(after[-q - 1:])
        verdict["lateness"][name] = {"first_quarter_mean_us": first, "last_quarter_mean_us": last,
                                     "holds": last <= 2 * first + 200}
    for h in hosts:
        st = json.loads((out / h / "net_stats.json").read_text())["stats"]
        q = qdisc[h].get("pfifo", {})
        rec, rej = st["datagrams_received"], sum(st[k] for k in REJECTS)
        lost = 0
        loss_csv = out / h / "rlm_loss.csv"
        if loss_csv.exists():
            with open(loss_csv) as f:
                lost = sum(int(r["count"]) for r in csv.DictReader(f))
        sent, drops = int(q.get("packets") or 0), int(q.get("drops") or 0)
        tol = 0.01 * sent + 20
        verdict["counters"][h] = {
            "qdisc_sent": sent, "qdisc_drops": drops, "received": rec, "delivered": st["delivered"],
            "rejected": rej, "not_joined": st["not_joined"], "lost": lost,
            "driver_adds_up": rec == st["delivered"] + rej + st["not_joined"],
            "other_frames": sent - rec,
            "holds": rec == st["delivered"] + rej + st["not_joined"] and abs(lost - drops) <= tol
            and rec + lost <= sent + drops + 20}
    verdict["holds"] = all(v["holds"] for part in ("memory", "lateness", "counters")
                           for v in verdict[part].values())
    (out / "soak.json").write_text(json.dumps(verdict, indent=2) + "\n")
    print(json.dumps(verdict, indent=2))
    return 0 if verdict["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
