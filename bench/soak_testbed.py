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
  left, which no later packet reveals), and `received - own + lost <= sent + drops + 20` (the
  receiver cannot hear more data than the queue carried; `own`, the datagrams the receiver
  sent to its own groups, reach its socket by multicast loopback without crossing the queue:
  the driver's `datagrams_sent`, see below);
* every frame accounted for, per receiver, exactly. The source stops first, the receivers
  `--tail` seconds later, and every counter is read once nothing of the session moves any
  more, as a difference from a reading taken before any role started (the interfaces exist,
  and carry a few frames, before the bottleneck's qdisc does). A capture on the receiver's
  interface (dumpcap; `soak_frames.py` sorts it) counts what crossed the queue by kind: the
  session's datagrams (UDP to 239/8), IGMP queries, IPv6 neighbour discovery and MLD, ARP; and
  from the host's own IGMP reports and leaves, which groups it held at each instant. Then:
  - the link: the queue's `sent` (pfifo and tbf) equals the frames its port sent, the frames
    the receiver's interface received and the frames captured, with nothing dropped by any of
    them and the queue empty;
  - the host's IP layer (`/proc/net/snmp`): `InReceives` equals the IPv4 frames captured plus
    the receiver's own datagrams and its own IGMP reports to groups it holds (both come back
    by multicast loopback without crossing any link; an RLM receiver sends only to its control
    group, which it holds while it runs), and what IP received but did not deliver equals the
    session's datagrams and the group-specific queries that arrived for a group the host had
    left (the queue still held them, or they were in flight, when the leave went out);
  - UDP: `InDatagrams` equals the driver's `received`, with no buffer, port or checksum error;
  - so the driver's `received` equals the session's datagrams captured, minus those for a group
    left, plus the receiver's own: `sent - received = other frames + datagrams for a group left
    - own datagrams`, each term counted.

Needs root (the testbed). Not part of `make test`. See docs/testbed.md for a run's result.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from castlab.testbed import Testbed, available, rlm1

sys.path.insert(0, str(Path(__file__).resolve().parent))
from soak_frames import KINDS, count_frames, proc_counters  # noqa: E402

REJECTS = ("malformed", "foreign_session", "unauthenticated", "bad_mac", "wrong_source", "wrong_size",
           "misdirected", "stale_epoch", "unconfirmed_epoch", "replayed")


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


def _queue_counters(tb: Testbed, hosts: list[str]) -> tuple[float, float, dict]:
    """Each receiver's queue and port counters, read by one command in the router (tc's tbf
    and pfifo `packets`, the port's tx_packets and tx_dropped), with the wall-clock instants
    before and after the read: (t_before, t_after, {host: {...}})."""
    ports = {h: tb.bottleneck_of(h) for h in hosts}
    node = {n for n, _ in ports.values()}
    assert len(node) == 1, "the receivers' queues sit in one router"
    script = "; ".join(f"tc -s -j qdisc show dev {d}; echo; cat /sys/class/net/{d}/statistics/tx_packets "
                       f"/sys/class/net/{d}/statistics/tx_dropped" for _, d in ports.values())
    t0 = time.time()
    text = tb.run(node.pop(), ["sh", "-c", script]).stdout
    t1 = time.time()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    got = {}
    for i, h in enumerate(hosts):
        qs, tx, drop = json.loads(lines[3 * i]), int(lines[3 * i + 1]), int(lines[3 * i + 2])
        tbf, fifo = ({q.get("kind"): q for q in qs}.get(k, {}) for k in ("tbf", "pfifo"))
        got[h] = {"tbf": int(tbf.get("packets") or 0), "pfifo": int(fifo.get("packets") or 0),
                  "pfifo_drops": int(fifo.get("drops") or 0), "port_tx": tx, "port_tx_dropped": drop,
                  "backlog": sum(int(q.get("qlen") or 0) for q in qs)}
    return t0, t1, got


def _host_counters(tb: Testbed, h: str, dev: str) -> dict:
    """The receiver namespace's IP and UDP counters and its interface's rx counters."""
    snmp = proc_counters(tb.run(h, ["cat", "/proc/net/snmp"]).stdout)
    ext = proc_counters(tb.run(h, ["cat", "/proc/net/netstat"]).stdout).get("IpExt", {})
    rx = [int(x) for x in tb.run(h, ["cat", f"/sys/class/net/{dev}/statistics/rx_packets",
                                     f"/sys/class/net/{dev}/statistics/rx_dropped"]).stdout.split()]
    ip = {k: snmp.get("Ip", {}).get(k, 0) for k in ("InReceives", "InDelivers", "InHdrErrors", "InAddrErrors",
                                                     "InUnknownProtos", "InDiscards", "ForwDatagrams")}
    udp = {k: snmp.get("Udp", {}).get(k, 0) for k in ("InDatagrams", "NoPorts", "InErrors", "RcvbufErrors")}
    return {"ip": ip, "ip_in_mcast": ext.get("InMcastPkts", 0), "udp": udp, "rx_packets": rx[0], "rx_dropped": rx[1]}


def _minus(a, b):
    """a - b, key by key, for nested dicts of counts."""
    return {k: _minus(v, b[k]) if isinstance(v, dict) else v - b[k] for k, v in a.items()}


def _capture_dropped(log: Path) -> int:
    """Packets dumpcap says it dropped (its closing line), -1 if it printed none."""
    text = log.read_text() if log.exists() else ""
    hits = re.findall(r"Packets received/dropped on interface .*?: (\d+)/(\d+)", text)
    return int(hits[-1][1]) if hits else -1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=3600.0, help="seconds of session (default 3600)")
    ap.add_argument("--warmup", type=float, default=None, help="seconds of warm-up (default: a tenth, at least 60)")
    ap.add_argument("--sample", type=float, default=10.0, help="seconds between samples (default 10)")
    ap.add_argument("--out", default="out/soak")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tail", type=float, default=5.0,
                    help="seconds the receivers run after the source has stopped (default 5)")
    a = ap.parse_args()
    reason = available()
    if reason:
        print(f"soak: testbed unavailable: {reason}", file=sys.stderr)
        return 2
    if shutil.which("dumpcap") is None:
        print("soak: needs dumpcap (Wireshark's capture tool) to account for every frame", file=sys.stderr)
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
        dev = {h: tb.iface(h, "r1") for h in hosts}
        caps = {}
        for h in hosts:  # before any role: the capture sees every frame the queue sends
            (out / f"{h}.pcap").unlink(missing_ok=True)
            caps[h] = tb.spawn(h, ["dumpcap", "-q", "-P", "-s", "64", "-i", dev[h], "-w", out / f"{h}.pcap"],
                               stderr=open(out / f"{h}.dumpcap.log", "w"))
        time.sleep(2.0)
        # the bottleneck's counters start when the qdisc is made, the interfaces' when they
        # are (a few frames cross before the qdisc exists): every count is taken from here on
        base_t0, base_t1, base_q = _queue_counters(tb, hosts)
        base_h = {h: _host_counters(tb, h, dev[h]) for h in hosts}
        own_mac = {h: tb.run(h, ["cat", f"/sys/class/net/{dev[h]}/address"]).stdout.strip() for h in hosts}
        procs = {"src": tb.spawn(topo.source, [*castlab, "source", "--iface-addr", tb.addr(topo.source),
                                               "--duration", a.duration + 1, "--out", out / "src", *sess],
                                 stdout=open(out / "src.log", "w"), stderr=subprocess.STDOUT)}
        time.sleep(1.0)
        for i, h in enumerate(hosts):
            procs[h] = tb.spawn(h, [*castlab, "rlm-receiver", "--addr", tb.addr(h), "--node", i + 1,
                                    "--iface-addr", tb.addr(h), "--duration", a.duration + a.tail, "--out", out / h,
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
        # the source ends first, then the receivers (they stop at --duration and then write
        # their records: let them): once every role has ended, nothing of the session moves
        for name in ["src", *hosts]:
            try:
                procs[name].wait(timeout=max(0.0, a.duration + a.tail - (time.monotonic() - t0)) + 180)
            except subprocess.TimeoutExpired:
                tb.stop(procs[name], signal.SIGINT, timeout=30)
        time.sleep(1.0)
        # every counter, nothing of the session moving any more
        end_t0, end_t1, end_q = _queue_counters(tb, hosts)
        end_h = {h: _host_counters(tb, h, dev[h]) for h in hosts}
        time.sleep(1.0)
        for h in hosts:
            tb.stop(caps[h], signal.SIGINT, timeout=10)
    with open(out / "samples.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["t_s"])
        w.writeheader()
        w.writerows(rows)
    verdict: dict = {"duration_s": a.duration, "warmup_s": warm, "memory": {}, "lateness": {}, "counters": {},
                     "reads": {"baseline": [base_t0, base_t1], "end": [end_t0, end_t1]}}
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
        rec, rej = st["datagrams_received"], sum(st[k] for k in REJECTS)
        lost = 0
        loss_csv = out / h / "rlm_loss.csv"
        if loss_csv.exists():
            with open(loss_csv) as f:
                lost = sum(int(r["count"]) for r in csv.DictReader(f))
        q, hc = _minus(end_q[h], base_q[h]), _minus(end_h[h], base_h[h])
        q["backlog"] = end_q[h]["backlog"]
        sent, drops = q["pfifo"], q["pfifo_drops"]
        tol = 0.01 * sent + 20
        frames = count_frames(out / f"{h}.pcap", own_mac[h], since=base_t1, until=end_t0)
        # a frame captured while a read was under way may be on either side of it
        raced = count_frames(out / f"{h}.pcap", own_mac[h], since=base_t0, until=base_t1)
        raced_end = count_frames(out / f"{h}.pcap", own_mac[h], since=end_t0, until=end_t1)
        racing = sum(raced[k] + raced_end[k] for k in KINDS)
        cap_dropped = _capture_dropped(out / f"{h}.dumpcap.log")
        captured = sum(frames[k] for k in KINDS)
        ipv4 = frames["session"] + frames["igmp"] + frames["ipv4_other"]
        own = st["datagrams_sent"]
        ip = hc["ip"]
        ip_dropped = (ip["InReceives"] - ip["InDelivers"] - ip["InHdrErrors"] - ip["InAddrErrors"]
                      - ip["InUnknownProtos"] - ip["InDiscards"] - ip["ForwDatagrams"])
        exact = {
            "queue_sent": sent, "tbf_sent": q["tbf"], "queue_backlog_at_end": q["backlog"],
            "port_tx_packets": q["port_tx"], "port_tx_dropped": q["port_tx_dropped"],
            "host_rx_packets": hc["rx_packets"], "host_rx_dropped": hc["rx_dropped"],
            "captured_inbound": captured, "capture_dropped": cap_dropped, "frames_during_reads": racing,
            "by_kind": {k: frames[k] for k in KINDS}, "detail": frames["detail"],
            "session_not_member": frames["session_not_member"], "igmp_not_member": frames["igmp_not_member"],
            "own_igmp_looped": frames["own_igmp_looped"], "outbound": frames["outbound"],
            "own_datagrams_looped": own, "ip": ip, "ip_not_delivered": ip_dropped, "udp": hc["udp"],
            "other_frames": captured - frames["session"],
        }
        # the link: what the queue sent is what its port sent, the host's interface received
        # and the capture saw
        exact["frames_agree"] = (sent == q["tbf"] == q["port_tx"] == hc["rx_packets"] == captured
                                 and q["port_tx_dropped"] == hc["rx_dropped"] == cap_dropped == 0 and q["backlog"] == 0)
        # the host: IPv4 frames plus its own looped datagrams reached IP; of those, the session's
        # datagrams to groups it had left were dropped there; UDP read every one delivered
        exact["ip_agrees"] = (ip["InReceives"] == ipv4 + own + frames["own_igmp_looped"]
                              and ip_dropped == frames["session_not_member"] + frames["igmp_not_member"])
        exact["udp_agrees"] = (hc["udp"]["InDatagrams"] == rec and hc["udp"]["RcvbufErrors"] == 0
                               and hc["udp"]["NoPorts"] == 0 and hc["udp"]["InErrors"] == 0)
        exact["received_explained"] = rec == frames["session"] - frames["session_not_member"] + own
        exact["holds"] = all(exact[k] for k in ("frames_agree", "ip_agrees", "udp_agrees", "received_explained"))
        verdict["counters"][h] = {
            "qdisc_sent": sent, "qdisc_drops": drops, "received": rec, "delivered": st["delivered"],
            "rejected": rej, "not_joined": st["not_joined"], "lost": lost,
            "driver_adds_up": rec == st["delivered"] + rej + st["not_joined"],
            "sent_minus_received": sent - rec, "exact": exact,
            "holds": rec == st["delivered"] + rej + st["not_joined"] and abs(lost - drops) <= tol
            and rec - own + lost <= sent + drops + 20 and exact["holds"]}
    verdict["holds"] = all(v["holds"] for part in ("memory", "lateness", "counters")
                           for v in verdict[part].values())
    (out / "soak.json").write_text(json.dumps(verdict, indent=2) + "\n")
    print(json.dumps(verdict, indent=2))
    return 0 if verdict["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
