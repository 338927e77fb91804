"""Where one lesbcc-fig12-sim run's work goes: packets and engine events by PGM kind, and the
run's cost (CPU, wall, peak RSS of this process), for one receiver count.

    python bench/fig12_counts.py N [--loss 0.1] [--reading window] [--seed 1000] [--json]

One run of `scenarios.fig12_run` (Fig. 11's star, N PGM receivers) with its `counts`; run one
count per process so that the peak RSS is that run's. Prints a table (or one JSON line).
"""

from __future__ import annotations

import argparse
import json
import os
import resource

from castlab.experiments.lesbcc.scenarios import fig12_run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("receivers", type=int)
    ap.add_argument("--loss", type=float, default=0.10)
    ap.add_argument("--reading", default="window")
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = fig12_run(a.seed, a.receivers, a.loss, a.reading, counts=True)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load = os.getloadavg()[0]
    k = r["by_kind"]
    if a.json:
        print(json.dumps({**r, "peak_rss_mb": round(rss_mb, 1), "load1": load}, default=float))
        return 0
    n = a.receivers
    print(f"{n} receivers, worst {a.loss:.0%}, {a.reading}, seed {a.seed}: LEs passed {r['les_passed']}, "
          f"complete {r['complete']}, queue drops {r['queue_drops']}")
    print(f"{'kind':6s} {'sent':>10s} {'delivered':>14s} {'events':>14s} {'share':>6s} {'deliv/ODATA':>12s}")
    total = k["total_events"]
    for kind in ("odata", "rdata", "ncf", "spm", "nak", "other"):
        v = k[kind]
        per = v.get("delivered", 0) / max(k["odata"]["sent"], 1)
        print(f"{kind:6s} {v.get('sent', ''):>10} {v.get('delivered', ''):>14} {v['events']:>14} "
              f"{v['events'] / total:6.1%} {per:12.1f}")
    print(f"events {total:,}; CPU {r['cpu_s']:.1f} s, wall {r['wall_s']:.1f} s, peak RSS {rss_mb:.0f} MB, "
          f"load average {load:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
