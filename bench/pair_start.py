"""net-tcp-vs-sim's pairs: the min RTT each kernel pair's second flow started with, and the share
before and after that flow's first PROBE_RTT, kernel, twin, and the twin told the kernel's start.

    python bench/pair_start.py RUN [RUN ...] [--out FILE.csv]

Each RUN is a full run's folder (``castlab reproduce net-tcp-vs-sim``: ``cases.csv`` and
``CASE/seed-N/series.csv``, ``samples.csv``); it is only read. For every pair row:
- ``first_minrtt_ms``: the min RTT of the second flow's first ss sample, its handshake's
  (``net.first_minrtt``): tens of microseconds where the handshake came before the first flow's
  data, the first flow's queue otherwise;
- the first flow's throughput over the second's, from the warm-up to ``late_from_s`` (the second
  flow's start plus ``net.LATE_AFTER_SECOND_S``) and from then to the end, kernel and twin (the
  twin's series as recorded);
- the same two ratios for the twin rerun with the second flow holding the kernel's first min RTT
  as its handshake's (``TcpConfig::handshake_rtt``; BBR's min RTT and initial pacing rate, as
  tcp_bbr.c's init takes them), seeded as the row, its flows as far apart as the row's
  (``pair_start_gap_s``, or ``net.RECORDED_PAIR_START_GAP_S``).
Prints the table and writes it to ``--out`` if given. Simulated and read only: no testbed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def told_twin(algos: tuple[str, str], duration: float, seed: int, base_rtt_s: float, gap: float,
              handshake_s: float) -> dict:
    """The row's twin with its second flow holding `handshake_s` as its handshake's RTT: its
    series (time_s and each flow's ``_sim_bps`` per BIN_S)."""
    from castlab.experiments.tcp import net
    from castlab.scenario import Scenario

    d = net.twin_scenario(algos, duration, base_rtt_s, gap=gap)
    f = d["tcp"][1]
    f["config"] = {**f.get("config", {}), "handshake_rtt": float(handshake_s)}
    sim = Scenario.from_dict(d).build(seed)
    sim.run(duration)
    edges = np.arange(0.0, duration + 1e-9, net.BIN_S)
    out = {"time_s": edges[:-1]}
    for k, a in enumerate(algos):
        out[f"f{k}_{a}_sim_bps"] = net.sim_rate(sim.tcp_trace(sim.scenario_handles.tcp[f"f{k}"]), edges)
    return out


def rows_of(run: Path) -> list[dict]:
    from castlab.experiments.tcp import net

    df = pd.read_csv(run / "cases.csv")
    out = []
    for row in df.to_dict("records"):
        algos = tuple(str(row["case"]).split("+"))
        if len(algos) != 2:
            continue
        seed, duration = int(row["seed"]), float(row["duration_s"])
        warm = net.FULL_WARM_S if duration >= net.FULL_DURATION_S else net.QUICK_WARM_S
        gap = net.row_gap(row)
        late = gap + net.LATE_AFTER_SECOND_S
        where = run / row["case"] / f"seed-{seed}"
        series = pd.read_csv(where / "series.csv")
        smp = pd.read_csv(where / "samples.csv")
        first = net.first_minrtt(smp[(smp["side"] == "kernel") & (smp["flow"] == 1)])
        r = {"run": run.name, "case": row["case"], "seed": seed, "gap_s": gap, "first_minrtt_ms": first,
             "late_from_s": late}
        for side, name in (("kernel", "kernel"), ("sim", "twin")):
            r[f"{name}_early"] = net.pair_window_ratio(series, algos, side, warm, late)
            r[f"{name}_late"] = net.pair_window_ratio(series, algos, side, late, duration)
        if np.isfinite(first) and first > 0:
            told = told_twin(algos, duration, seed, float(row["base_rtt_s"]), gap, first / 1e3)
            r["told_early"] = net.pair_window_ratio(told, algos, "sim", warm, late)
            r["told_late"] = net.pair_window_ratio(told, algos, "sim", late, duration)
        else:
            r["told_early"] = r["told_late"] = float("nan")
        out.append(r)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path, nargs="+", help="full net-tcp-vs-sim runs (read only)")
    ap.add_argument("--out", type=Path, help="write the table here as CSV")
    a = ap.parse_args(argv)
    for run in a.runs:
        if not (run / "cases.csv").exists():
            ap.error(f"{run}/cases.csv: not a net-tcp-vs-sim run")
    df = pd.DataFrame([r for run in a.runs for r in rows_of(run)])
    if a.out:
        df.to_csv(a.out, index=False)
    with pd.option_context("display.width", 220, "display.max_rows", 200):
        print(df.round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
