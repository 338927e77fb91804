"""net-tcp-vs-sim's claims decided again on a recorded full run with the twin recomputed: the
kernel's readings as they were recorded, the twin with the testbed's token bucket (the default)
or serialising (``--serialising``, the ablation).

    python bench/tcp_vs_sim_refresh.py RUN OUT [--serialising]

RUN is a full run's folder (``castlab reproduce net-tcp-vs-sim``: ``cases.csv`` and
``CASE/seed-N/``); it is only read. OUT (which must not exist) becomes a copy of it, in which
``net.refresh_twins`` replaces every row's twin (from the row's case, seed and recorded ping
round trip) and ``net.result_from`` decides the claims as the full form does. OUT/summary.json
keeps the run's own wall time; the refresh's wall time, its start and end (UTC) and the load
average are in OUT/bench_refresh.json. The verdicts are printed, one claim a line.

Simulated only (no testbed, no root): a pure function of the recorded run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import time
from pathlib import Path


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a full net-tcp-vs-sim run (read only)")
    ap.add_argument("out", type=Path, help="the copy to refresh (must not exist)")
    ap.add_argument("--serialising", action="store_true", help="twins whose bottleneck serialises every packet "
                    "(no token bucket; the ablation)")
    a = ap.parse_args(argv)
    if not (a.run / "cases.csv").exists():
        ap.error(f"{a.run}/cases.csv: not a net-tcp-vs-sim run")
    if a.out.exists():
        ap.error(f"{a.out}: exists (the refresh writes a fresh copy)")

    from castlab.experiments import REGISTRY
    from castlab.experiments.common import write_summary
    from castlab.experiments.tcp import net

    shutil.copytree(a.run, a.out)
    burst = None if a.serialising else net.TWIN_TBF_BURST_BYTES
    rec = {"experiment": "net-tcp-vs-sim", "refresh_twins": True, "serialising": a.serialising,
           "source": str(a.run.resolve()), "started": _now(), "load_before": list(os.getloadavg())}
    t = time.perf_counter()
    df = net.refresh_twins(a.out, burst)
    quick = float(df["duration_s"].iloc[0]) < net.FULL_DURATION_S
    seed = int(df["seed"].min())
    r = net.result_from(a.out, df, seed, quick, burst)
    rec.update(wall_s=round(time.perf_counter() - t, 1), ended=_now(), load_after=list(os.getloadavg()))
    old = json.loads((a.run / "summary.json").read_text()) if (a.run / "summary.json").exists() else {}
    write_summary(a.out, REGISTRY["net-tcp-vs-sim"], seed, r, float(old.get("wall_s", 0.0)), quick=quick)
    (a.out / "bench_refresh.json").write_text(json.dumps(rec, indent=1) + "\n")
    for c in r.claims:
        ours = f"{c.ours:.4g}" if isinstance(c.ours, float) else str(c.ours)
        over = c.statement[c.statement.rfind(" ["):] if c.statement.endswith("]") else ""
        print(f"{c.verdict:10s} {c.id}: {ours}{over}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
