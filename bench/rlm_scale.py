"""The RLM star's scale table (run by `make bench`): events, events per receiver, ns per event
and memory per receiver at 10^2, 10^3 and 10^4 receivers.

    python3 bench/rlm_scale.py [--sizes N,N,...] [--seconds S,S,...]

The RLM star is the RLM paper's topology (2) (S -1.5 Mb/s- X, each receiver on its own
1.5 Mb/s link from X, 10 ms, DropTail 20, the six-layer source), with receivers starting
uniformly on [0, 10] s (castlab's protocols bench `rlm-star`). Each size runs as its own
process, so that its peak resident memory is its own. Printed per size: simulated seconds, the
engine's events, events per receiver, the join announcements and session messages the
receivers sent and the control packets delivered to them (and, below the table, the
control packets of each run's second half), CPU ns per event (the run's CPU
time of the process's thread, set-up excluded), the process's wall time, its peak RSS in all
and per receiver (MB = 10^6 bytes, KB = 10^3; it includes the process's fixed few MB, which
dominate at 100 receivers) and the receivers' own state per receiver (`RlmReceiver::memory`, allocated capacities: the same on any
machine). The CPU figures depend on the machine's load, printed beside them; the counts and
the receivers' bytes do not.

Default sizes and simulated times: 100 and 1,000 receivers for 120 s, 10,000 for 20 s (the
first 20 s hold the start-up, when every receiver's join-timers are short and its session
interval is still at its minimum: docs/engine.md, "RLM at scale").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench_binary(name: str) -> str:
    out = subprocess.run(
        ["cargo", "bench", "-p", "castlab-sim", "--bench", name, "--no-run", "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == name and msg.get(
                "executable"):
            return msg["executable"]
    raise SystemExit(f"could not find the {name} bench binary")


def probe(binary: str, n: int, seconds: float) -> dict:
    """One `rlm-star` run as its own process: its `key value` line, its wall time and peak RSS."""
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "--bench", "rlm-star", str(n), str(seconds)], cwd=ROOT, stdout=subprocess.PIPE,
                         text=True)
    out = p.stdout.read()
    _, status, _ = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"rlm-star {n} {seconds} failed ({status})")
    line = next(x for x in out.splitlines() if x.startswith("rlm-star "))
    f = line.split()[1:]
    d = {k: float(v) for k, v in zip(f[::2], f[1::2])}
    d["process_wall_s"] = time.perf_counter() - t0
    # the process's own high-water mark (VmHWM): wait4's maxrss would also count the forked
    # copy of this Python process before the exec
    d["maxrss_bytes"] = d["rss_peak_mib"] * 1024.0 * 1024.0
    return d


def main() -> int:
    args = sys.argv[1:]
    sizes = [int(x) for x in args[args.index("--sizes") + 1].split(",")] if "--sizes" in args else [100, 1000, 10000]
    dflt = {100: 120.0, 1000: 120.0, 10000: 20.0}
    if "--seconds" in args:
        secs = [float(x) for x in args[args.index("--seconds") + 1].split(",")]
        if len(secs) == 1:
            secs = secs * len(sizes)
    else:
        secs = [dflt.get(n, 20.0) for n in sizes]
    binary = bench_binary("protocols")
    print(f"RLM star (topology (2), receivers starting on [0, 10] s); load average before "
          f"{os.getloadavg()[0]:.2f} (2 cores shared: CPU ns per event is an upper bound under load)")
    head = (f"{'receivers':>9} {'sim s':>6} {'events':>13} {'per rx':>9} {'joins':>7} {'sessions':>9} "
            f"{'ctl deliv.':>11} {'ns/event':>9} {'wall s':>7} {'peak RSS MB':>12} {'KB/rx (RSS)':>12} "
            f"{'KB/rx (agent)':>14}")
    print(head)
    rows = []
    for n, s in zip(sizes, secs):
        d = probe(binary, n, s)
        rows.append(d)
        print(f"{n:>9} {s:>6g} {d['events']:>13,.0f} {d['events_per_receiver']:>9,.0f} {d['joins']:>7,.0f} "
              f"{d['sessions']:>9,.0f} {d['control_delivered']:>11,.0f} {d['cpu_ns_per_event']:>9.1f} "
              f"{d['process_wall_s']:>7.2f} {d['maxrss_bytes'] / 1e6:>12.1f} {d['maxrss_bytes'] / n / 1e3:>12.1f} "
              f"{d['rx_bytes'] / 1e3:>14.2f}",
              flush=True)
    print("control packets over the second half of each run (join announcements, session messages):")
    for n, s, d in zip(sizes, secs, rows):
        print(f"  {n:>7}: {d['joins_2nd_half']:,.0f} joins and {d['sessions_2nd_half']:,.0f} session messages "
              f"in [{s / 2:g}, {s:g}] s; {d['events_2nd_half'] / n:,.0f} events per receiver there")
    print("agent bytes per receiver, by part (RlmReceiver::memory):")
    for n, d in zip(sizes, rows):
        parts = ", ".join(f"{k[3:]} {d[k]:,.0f}" for k in
                          ("rx_fixed", "rx_members", "rx_heard", "rx_records", "rx_layers", "rx_windows", "rx_queues"))
        print(f"  {n:>7}: {parts}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
