"""Long simulated runs: each protocol for 10^5 simulated seconds with per-packet records off,
this process's resident memory sampled as the run goes.

    .venv/bin/python bench/soak_sim.py [--until 1e5] [--chunks 10] [--only rlm,tcp]

One small topology per protocol (a source, a 1 Mb/s DropTail 20 bottleneck, two receivers
behind it; the BCFS ones with BCF routers), built from a scenario dict and run in `--chunks`
slices of `--until / chunks` seconds (the results do not depend on the slicing). Sinks and RLM
receivers keep their default records (`record = "summary"`: counters, no row per packet); TCP,
NLM (sender, receivers, LMRs) and LE-SBCC run with `trace = "off"` (no row per ACK, request,
sample or rate change; the same run otherwise, tests/scenario/test_trace_switch.py). The
rule, fixed before any run: memory is flat when RSS after the last slice exceeds RSS after the
second slice (the warm-up) by at most max(4 MiB, 5 %). Event records that grow by design
(one row per join-experiment, level change or loss event) are counted in that allowance.
Prints one line per protocol and writes `soak_sim.json` beside `--out`. Not part of
`make test`; docs/engine.md gives a run's result.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

from castlab.scenario import Scenario


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


LINKS = [{"name": "access", "a": "src", "b": "r1", "rate": "10Mbps", "delay": "5ms", "queue_limit": 50},
         {"name": "bottleneck", "a": "r1", "b": "r2", "rate": "1Mbps", "delay": "20ms", "queue_limit": 20},
         {"a": "r2", "b": "h1", "rate": "10Mbps", "delay": "5ms", "queue_limit": 50},
         {"a": "r2", "b": "h2", "rate": "10Mbps", "delay": "5ms", "queue_limit": 50}]


def scenario(proto: str, until: float) -> dict:
    d: dict = {"name": f"soak-{proto}", "duration": f"{until}s", "nodes": ["src", "r1", "r2", "h1", "h2"],
               "links": LINKS, "sessions": [], "receivers": []}
    rx = lambda protocol, **kw: [{"name": f"{protocol}{i}", "node": h, "session": "s", "protocol": protocol,
                                  "start": f"{i}s", **kw} for i, h in enumerate(("h1", "h2"), 1)]
    off = {"trace": "off"}
    if proto in ("rlm", "sink"):
        d["sessions"] = [{"name": "s", "source": "src", "layers": 6, "base_rate": "32kbps"}]
        d["receivers"] = rx("rlm") if proto == "rlm" else rx("sink", level=4)
    elif proto == "rlc":
        d["sessions"] = [{"name": "s", "source": "src", "kind": "rlc"}]
        d["receivers"] = rx("rlc")
    elif proto == "nlm":
        d["sessions"] = [{"name": "s", "source": "src", "kind": "nlm", "layers": 6, "base_rate": "32kbps",
                          "config": off}]
        d["receivers"] = rx("nlm", config=off)
        d["routers"] = [{"kind": "lmr", "node": n, "config": off} for n in ("r1", "r2")]
    elif proto == "lesbcc":
        d["sessions"] = [{"name": "s", "source": "src", "kind": "lesbcc", "config": off}]
        d["receivers"] = rx("pgm")
    elif proto == "rainbow":
        d["sessions"] = [{"name": "s", "source": "src", "kind": "fountain"}]
        d["receivers"] = rx("rainbow")
        d["routers"] = [{"kind": "bcf"}]
    elif proto == "tcp":
        d["tcp"] = [{"name": f"tcp{i}", "src": "src", "dst": h, "config": off} for i, h in enumerate(("h1", "h2"), 1)]
    else:
        raise ValueError(proto)
    return d


PROTOCOLS = ["rlm", "sink", "rlc", "nlm", "lesbcc", "rainbow", "tcp"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--until", type=float, default=1e5)
    ap.add_argument("--chunks", type=int, default=10)
    ap.add_argument("--only", default=",".join(PROTOCOLS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="out/soak_sim")
    a = ap.parse_args()
    results = {}
    for proto in a.only.split(","):
        gc.collect()
        sim = Scenario.from_dict(scenario(proto, a.until)).build(a.seed)
        rss, t0 = [], time.perf_counter()
        for k in range(1, a.chunks + 1):
            sim.run(a.until * k / a.chunks)
            rss.append(rss_kib())
        warm, end = rss[1], rss[-1]
        allow = max(4096, warm * 0.05)
        results[proto] = {"rss_kib": rss, "growth_kib": end - warm, "allowed_kib": allow,
                          "holds": end - warm <= allow, "wall_s": round(time.perf_counter() - t0, 1)}
        print(f"{proto:8s} RSS after each slice (MiB): {' '.join(f'{r / 1024:.1f}' for r in rss)}; growth after "
              f"warm-up {(end - warm) / 1024:+.2f} MiB (allowed {allow / 1024:.1f}): "
              f"{'flat' if end - warm <= allow else 'GROWS'}; {results[proto]['wall_s']} s wall", flush=True)
        del sim
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak_sim.json").write_text(json.dumps({"until_s": a.until, "seed": a.seed, "results": results},
                                                  indent=2) + "\n")
    return 0 if all(r["holds"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
