"""Whole-process benchmarks, castlab beside ns-2 (run by `make bench`).

    python3 bench/compare.py [--big] [--runs N] [--only NAME]

For each scenario it runs the processes one after another (castlab's Rust engine bench binary,
castlab through its Python API with `import castlab` included, and ns-2 where `ns` is on the
PATH), N times each (default 3, alternating; once from 10,000 receivers), and prints per
process the median wall time, the median CPU time (user + system: less sensitive to the
machine's load than the wall time when other processes compete for the cores), its peak
resident memory (the child's maximum RSS from wait4), events/s and packets forwarded/s
(castlab's own counters, per wall second; ns-2 has none, so its rates are not printed), and
the ratios ns-2 / castlab of the wall and of the CPU medians, then of every paired run (run i of
ns-2 against run i of castlab, taken back to back) with their minimum and, for the issue's goals
(star-100 from Python >= 8, rlm-100 >= 30), whether the goal holds in every paired run. Wall times depend on the machine's load:
the load average is printed with the results.

Scenarios: RLM receivers on the RLM paper's topology (2), 100 receivers, 600 s (castlab's
protocols bench `rlm` against ns-2's own RLM in tests/ns2/rlm.tcl); 100 NewReno flows through
a 10 Mb/s dumbbell, 100 s (protocols bench `tcp100` against tests/ns2/dumbbell100.tcl);
the CBR star (one
992 kb/s CBR source, RLM's star S-R1 10 Mb/s, R1-R2 1.5 Mb/s, R2-receivers 10 Mb/s, 10 ms
links) at 100 receivers for 600 s, 1,000 for 60 s and 10,000 for 60 s; with --big also
100,000 for 60 s; tcp-ns2-100: 100 NewReno flows on a 10 Mb/s dumbbell (queue 20) for 60 s,
castlab through Python (the fidelity comparison of docs/fidelity/tcp.md). ns-2 runs up to 1,000
receivers (at 10,000 it held 9 GB after 165 s and was stopped).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
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


def run(cmd: list[str]) -> tuple[float, float, str, float]:
    """Wall seconds, peak RSS MiB, stdout and CPU seconds (user + system) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({status})")
    return wall, ru.ru_maxrss / 1024.0, out, ru.ru_utime + ru.ru_stime


def counters(out: str) -> tuple[float, float]:
    """(events, forwarded) from the Rust bench line or bench/star.py's line."""
    if out.startswith("events "):
        f = out.split()
        return float(f[1]), float(f[3])
    # "... | 15.25 M events, ... | 7.6 M packets forwarded, ..."
    ev = float(out.split("| ")[1].split(" M events")[0]) * 1e6
    fw = float(out.split("| ")[2].split(" M packets")[0]) * 1e6
    return ev, fw


# The goals: ns-2 / castlab at least this in *every* paired run (not only the median).
GOALS = {"star-100": {"castlab (Python, whole process)": 8.0}, "rlm-100": {"castlab (Rust)": 30.0}}


def paired(ns2: list, ours: list, goal: float | None) -> None:
    """Print ns-2 / castlab of each paired run (run i of both, taken back to back), the minimum,
    and whether `goal` holds in every run, on wall and on CPU time."""
    for label, col in (("wall", 0), ("cpu", 3)):
        ratios = [a[col] / b[col] for a, b in zip(ns2, ours)]
        line = f"    {label}: " + ", ".join(f"{r:.1f}" for r in ratios) + f"; min {min(ratios):.1f}"
        if goal is not None:
            holds = all(r >= goal for r in ratios)
            line += f"; goal >= {goal:g} in every run: {'holds' if holds else 'does NOT hold'}"
        print(line)


def main() -> None:
    args = sys.argv[1:]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 3
    only = args[args.index("--only") + 1] if "--only" in args else None
    big = "--big" in args
    binary = bench_binary("engine")
    py = str(ROOT / ".venv" / "bin" / "python")
    ns = shutil.which("ns")
    sizes = [(100, 600), (1000, 60), (10000, 60)] + ([(100000, 60)] if big else [])
    scenarios = []
    for n, secs in sizes:
        procs = {"castlab (Rust)": [binary, "--bench", "star", str(n), str(secs)]}
        if os.path.exists(py) and n <= 10000:
            procs["castlab (Python, whole process)"] = [py, "bench/star.py", str(n), str(secs)]
        # ns-2's dense-mode set-up at 10,000 receivers held 9 GB after 165 s without finishing
        # (docs/engine.md), so ns-2 runs the smaller stars only
        if ns and n <= 1000:
            procs["ns-2.35"] = [ns, "bench/ns2/cbr_star.tcl", str(n), str(secs)]
        scenarios.append((f"star-{n}", f"CBR star, {n} receivers, {secs} s simulated", n, procs))
    # RLM receivers: topology (2) of the RLM paper (S -1.5 Mb/s- X -1.5 Mb/s- R_i, 10 ms, DropTail
    # 20), 100 receivers starting on [30, 120] s, 600 s; ns-2 runs its own RLM (tests/ns2/rlm.tcl,
    # with rearm=1 as tests/ns2/rlm_compare.py does), castlab its protocols bench `rlm`.
    procs = {"castlab (Rust)": [bench_binary("protocols"), "--bench", "rlm"]}
    if ns:
        procs["ns-2.35"] = [ns, "tests/ns2/rlm.tcl", "0.01", "600", "1", "-1", "-", "high=100", "rearm=1"]
    scenarios.append(("rlm-100", "RLM, 100 receivers on topology (2), 600 s simulated", 100, procs))
    # 100 NewReno flows on the 10 Mb/s dumbbell, queue 20, 60 s (docs/fidelity/tcp.md): castlab
    # through Python (bench/tcp100.py), ns-2 its Agent/TCP/Newreno (tests/ns2/dumbbell100.tcl)
    procs = {"castlab (Python, whole process)": [py, "bench/tcp100.py", "100", "20", "60"]}
    if ns:
        procs["ns-2.35"] = [ns, "tests/ns2/dumbbell100.tcl", "Newreno", "100", "20", "0", "60", "-", "-"]
    scenarios.append(("tcp-ns2-100", "TCP NewReno, 100 flows on a 10 Mb/s dumbbell, 60 s simulated", 100, procs))
    # 100 NewReno flows through a 10 Mb/s, 20 ms dumbbell with a one-BDP DropTail queue, flow i
    # starting at i * 0.05 s, 100 s: castlab's protocols bench `tcp100` against
    # tests/ns2/dumbbell100.tcl with queue-limit 54 (castlab's 53 waiting packets) and its evenly
    # spaced starts, i * 5 / 100 s (the same set-up and TCP parameters).
    procs = {"castlab (Rust)": [bench_binary("protocols"), "--bench", "tcp100"]}
    if ns:
        procs["ns-2.35"] = [ns, "tests/ns2/dumbbell100.tcl", "Newreno", "100", "54", "0", "100", "-", "-"]
    scenarios.append(("newreno-100", "100 NewReno flows, 10 Mb/s dumbbell, 100 s simulated", 100, procs))
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores shared: wall times are upper bounds above ~1)")
    for name, title, n, procs in scenarios:
        if only and only != name:
            continue
        res: dict[str, list] = {k: [] for k in procs}
        n_runs = runs if n < 10000 else 1  # the big stars run once
        for _ in range(n_runs):
            for k, cmd in procs.items():
                res[k].append(run(cmd))
        print(f"\n{title} ({n_runs} runs each, median):")
        med, med_cpu = {}, {}
        for k, rs in res.items():
            wall = statistics.median(r[0] for r in rs)
            cpu = statistics.median(r[3] for r in rs)
            rss = max(r[1] for r in rs)
            med[k], med_cpu[k] = wall, cpu
            if k.startswith("castlab"):
                ev, fw = counters(rs[0][2])
                print(f"  {k:34s} {wall:7.2f} s  (cpu {cpu:6.2f} s)  {rss:7.0f} MiB  {ev / wall / 1e6:6.2f} M events/s  "
                      f"{fw / wall / 1e6:6.2f} M forwarded/s  ({ev / 1e6:.2f} M events)")
            else:
                print(f"  {k:34s} {wall:7.2f} s  (cpu {cpu:6.2f} s)  {rss:7.0f} MiB")
        if "ns-2.35" in med:
            for k in med:
                if k.startswith("castlab"):
                    print(f"  ns-2 / {k}: {med['ns-2.35'] / med[k]:.1f} (wall), "
                          f"{med_cpu['ns-2.35'] / med_cpu[k]:.1f} (cpu), medians")
                    paired(res["ns-2.35"], res[k], GOALS.get(name, {}).get(k))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
