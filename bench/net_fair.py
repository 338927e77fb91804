"""The full forms of net-peers and net-tfmcc-uftp (both start orders, 180 s per case) with their
seeds in parallel processes, then the claims decided over all seeds as `castlab reproduce` does.

    python bench/net_fair.py net-tfmcc-uftp OUT [--seeds 1-3]
    python bench/net_fair.py net-peers OUT --seeds 1
    python bench/net_fair.py tfmcc-windows-rmax OUT --seeds 1
    python bench/net_fair.py net-peers OUT --seeds 1-3 --schemes uftp --orders tcp-first
    python bench/net_fair.py net-peers OUT --seeds 1-3 --refresh-twins
    python bench/net_fair.py net-baselines OUT --refresh-twins
    python bench/net_fair.py net-peers OUT --seeds 1-3 --refresh-twins --serialising

The fifth form runs no testbed: in a copy of a full run in OUT (net-peers, net-tfmcc-uftp) it
recomputes every seed's simulated twins (`peers.refresh_twins`, `net.refresh_twins`: the twin
columns and rows replaced, the testbed's readings kept), a process per seed, and decides the
claims over every seed's table as the full form does; the sixth does the same for a net-baselines
run in OUT (its one seed, `baselines.net.refresh_twins`). summary.json keeps the run's own wall
time; the refresh's is in OUT/bench_refresh.json. The twins are the default ones (the testbed's
delay per link and token bucket); with `--serialising` (the last form) their last hops serialise
every packet instead (`tbf_burst` None, the ablation), and the claims are decided on those.

The fourth form reruns a selection of net-peers' cases (schemes, start orders; in net-tfmcc-uftp
`tfmcc` or `uftp` against every TCP flavour) in seed tables a full run left in OUT (a copy: the
cases' directories are replaced and the old ones kept in OUT/seed-K/replaced/), replaces their
rows in each seed's table and windows.csv, and decides
the claims over every seed's table as the full form does; its record is OUT/bench_rerun.json.

The third form runs an ablation of `peers.ABLATIONS` in net-tfmcc-uftp's cases (one TCP flow per
kernel algorithm, both start orders, a process per seed and order) with its twin, and writes
OUT/seed-K/ablation-ORDER.csv; it decides no claims (an ablation is no reading).

Each seed runs in a process of its own (`--one K`: the seed's table into OUT/seed-K/), on a
testbed of its own (`testbed_name` carries the pid). A seed whose table an earlier run of the
same settings left is kept (`reuse`). Once all have ended, the experiment's run function reads
every seed's table and writes OUT/summary.json with the claims, as `castlab reproduce` would.
OUT/bench.json records the wall time, the start and end (UTC) and the load average, sampled
every 30 s while the seeds ran: testbed runs share the machine's cores with other jobs.
Root and the testbed's tools (iperf3; uftp for net-tfmcc-uftp) are needed, as for the
experiments themselves.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ablation(name: str, where: Path, seed: int, order: str) -> None:
    import pandas as pd

    from castlab.experiments.tfmcc import peers

    rows = []
    for algo in peers.TCP_ALGOS:
        r = peers.run_case(where / order / f"{name}_{algo}", seed, peers.FULL_DURATION_S, name, (algo,), order=order)
        t = peers.twin(name, seed, peers.FULL_DURATION_S, (algo,), order)
        rows.append({"scheme": name, "tcp": algo, "order": order, "rate_bps": r["scheme_mean_bps"],
                     "share": r["share"], "loss": r["loss"], "lead_s": r["lead_s"],
                     **{f"share_w{k}": v for k, v in enumerate(r["window_shares"])},
                     "twin_share": t["share"], **{f"twin_share_w{k}": v for k, v in enumerate(t["window_shares"])},
                     "tcp_errors": "; ".join(r["tcp_errors"])})
    pd.DataFrame(rows).to_csv(where / f"ablation-{order}.csv", index=False)


def _rerun(name: str, where: Path, seed: int, schemes: list[str], orders: list[str]) -> None:
    """Run the cases `schemes` x `orders` of net-peers (or of net-tfmcc-uftp: "tfmcc", "uftp",
    against each TCP flavour) again for the seed table in `where` and put them in its place: each
    case's directory (the old one moved to ``replaced/``) and its rows of the table (in their
    place) and of windows.csv."""
    import shutil

    import pandas as pd

    from castlab.experiments.tfmcc import net, peers

    table = "peers.csv" if name == "net-peers" else "tfmcc_uftp.csv"
    if not (where / table).exists():
        raise SystemExit(f"{where}/{table}: no table of a full run to rerun cases in")
    scratch = where / "rerun"
    shutil.rmtree(scratch, ignore_errors=True)
    if name == "net-peers":
        new = peers.peers_table(scratch, seed, peers.FULL_DURATION_S, schemes, peers.TCP_ALGOS, orders=tuple(orders))
        key, dirs = ["scheme", "order"], [(o, n) for o in orders for n in schemes]
        picked = lambda w: w["scheme"].isin(schemes) & w["order"].isin(orders)
    else:
        new = net.tfmcc_uftp_table(scratch, seed, peers.FULL_DURATION_S, peers.TCP_ALGOS, tuple(orders),
                                   impls=tuple(schemes))
        key, dirs = ["impl", "tcp", "order"], [(o, f"{n}_{a}") for o in orders for n in schemes for a in peers.TCP_ALGOS]
        names = ["castlab" if n == "tfmcc" else n for n in schemes]
        picked = lambda w: w["impl"].isin(names) & w["order"].isin(orders)
    fresh = {tuple(r[k] for k in key): r for r in new.to_dict("records")}
    old = pd.read_csv(where / table)
    had = {tuple(r[k] for k in key) for r in old.to_dict("records")}
    rows = [fresh.get(tuple(r[k] for k in key), r) for r in old.to_dict("records")]
    rows += [r for k, r in fresh.items() if k not in had]
    wins = pd.read_csv(where / "windows.csv")
    wins = pd.concat([wins[~picked(wins)], pd.read_csv(scratch / "windows.csv")], ignore_index=True)
    for o, d in dirs:
        if (where / o / d).exists():
            (where / "replaced" / o).mkdir(parents=True, exist_ok=True)
            shutil.rmtree(where / "replaced" / o / d, ignore_errors=True)
            (where / o / d).rename(where / "replaced" / o / d)
        (where / o).mkdir(parents=True, exist_ok=True)
        (scratch / o / d).rename(where / o / d)
    shutil.rmtree(scratch)
    wins.to_csv(where / "windows.csv", index=False)
    pd.DataFrame(rows, columns=list(dict.fromkeys([*old.columns, *new.columns]))).to_csv(where / table, index=False)


def _refresh(name: str, where: Path, seed: int, serialising: bool = False) -> None:
    """Recompute the simulated twins of the seed table in `where` (no testbed)."""
    from castlab.experiments.tfmcc import net, peers

    burst = None if serialising else peers.TESTBED_TBF_BURST_BYTES
    if name == "net-peers":
        peers.refresh_twins(where, seed, peers.FULL_DURATION_S, peers.TCP_ALGOS, tbf_burst=burst)
    else:
        net.refresh_twins(where, seed, peers.FULL_DURATION_S, tbf_burst=burst)


def _baselines(out: Path, serialising: bool = False) -> int:
    """net-baselines' twins recomputed in the run in `out`, its claims decided again."""
    from castlab.experiments import REGISTRY
    from castlab.experiments.baselines import net as bnet
    from castlab.experiments.common import write_summary

    if not (out / "baselines-net.csv").exists():
        raise SystemExit(f"{out}/baselines-net.csv: no table of a net-baselines run")
    rec = {"experiment": "net-baselines", "refresh_twins": True, "serialising": serialising, "started": _now(),
           "load": [list(os.getloadavg())]}
    t0 = time.monotonic()
    bnet.refresh_twins(out, tbf_burst=None if serialising else bnet.peers.TESTBED_TBF_BURST_BYTES)
    r = bnet.redecide(out)
    rec.update(ended=_now(), wall_s=time.monotonic() - t0)
    (out / "bench_refresh.json").write_text(json.dumps(rec, indent=1))
    old = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    write_summary(out, REGISTRY["net-baselines"], int(r.params["seed"]), r, float(old.get("wall_s", rec["wall_s"])))
    for c in r.claims:
        print(f"{c.verdict:10s} {c.id}: {c.ours:.4g}" if isinstance(c.ours, float) else f"{c.verdict:10s} {c.id}")
    return 0


def _one(name: str, out: Path, seed: int, order: str | None = None, schemes: list[str] | None = None,
         orders: list[str] | None = None, refresh: bool = False, serialising: bool = False) -> None:
    from castlab.experiments.tfmcc import net, peers

    where = out / f"seed-{seed}"
    where.mkdir(parents=True, exist_ok=True)
    if refresh:
        _refresh(name, where, seed, serialising)
    elif schemes:
        _rerun(name, where, seed, schemes, orders or list(peers.ORDERS))
    elif name in peers.ABLATIONS:
        _ablation(name, where, seed, order or peers.ORDERS[0])
    elif name == "net-peers":
        peers.peers_table(where, seed, peers.FULL_DURATION_S, list(peers.SCHEMES), peers.TCP_ALGOS)
    else:
        net.tfmcc_uftp_table(where, seed, peers.FULL_DURATION_S, peers.TCP_ALGOS)


def _decide(name: str, out: Path, seeds: list[int], wall: float) -> None:
    from castlab.experiments import REGISTRY
    from castlab.experiments.common import write_summary

    exp = REGISTRY[name]
    if wall is None:  # a refresh of the twins: the run's own wall time stands
        old = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
        wall = float(old.get("wall_s", 0.0))
    r = exp.run(out, seeds[0], quick=False, seeds=len(seeds), reuse=True)
    write_summary(out, exp, seeds[0], r, wall, quick=False)
    for c in r.claims:
        print(f"{c.verdict:10s} {c.id}: {c.ours:.4g}" if isinstance(c.ours, float) else f"{c.verdict:10s} {c.id}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("experiment", help="net-peers, net-tfmcc-uftp, or an ablation's name (peers.ABLATIONS)")
    ap.add_argument("out", type=Path)
    ap.add_argument("--seeds", default="1-3", help="consecutive seeds, e.g. 1-3 or 2 (default 1-3)")
    ap.add_argument("--schemes", help="rerun only these schemes' cases (comma-separated; net-tfmcc-uftp: tfmcc, "
                    "uftp) in the seed tables of a full run in OUT")
    ap.add_argument("--orders", help="with --schemes: only in these start orders (comma-separated; default both)")
    ap.add_argument("--refresh-twins", action="store_true", help="recompute the simulated twins in the seed tables "
                    "of a full run in OUT (a copy) and decide the claims again; no testbed")
    ap.add_argument("--serialising", action="store_true", help="with --refresh-twins: twins whose last hops "
                    "serialise every packet (no token bucket; the ablation)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--order", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.out = a.out.resolve()  # the peers' own programs (uftpd -D) take absolute paths only
    from castlab.experiments.tfmcc.peers import ABLATIONS, ORDERS, SCHEMES

    ablation = a.experiment in ABLATIONS
    if a.serialising and not a.refresh_twins:
        ap.error("--serialising: only with --refresh-twins")
    if a.experiment == "net-baselines":
        if not a.refresh_twins:
            ap.error("net-baselines: only with --refresh-twins (castlab reproduce net-baselines runs it)")
        return _baselines(a.out, a.serialising)
    if not ablation and a.experiment not in ("net-peers", "net-tfmcc-uftp"):
        ap.error(f"experiment: net-peers, net-tfmcc-uftp or one of {', '.join(ABLATIONS)}")
    if a.refresh_twins and (ablation or a.schemes):
        ap.error("--refresh-twins: net-peers, net-tfmcc-uftp or net-baselines, without --schemes")
    schemes = a.schemes.split(",") if a.schemes else None
    orders = a.orders.split(",") if a.orders else None
    if orders and not schemes:
        ap.error("--orders: only with --schemes")
    if schemes and ablation:
        ap.error("--schemes: net-peers or net-tfmcc-uftp")
    allowed = SCHEMES if a.experiment == "net-peers" else ("tfmcc", "uftp")
    if schemes and not set(schemes) <= set(allowed):
        ap.error(f"--schemes: of {', '.join(allowed)}")
    if orders and not set(orders) <= set(ORDERS):
        ap.error(f"--orders: of {', '.join(ORDERS)}")
    if a.one is not None:
        _one(a.experiment, a.out, a.one, a.order, schemes, orders, a.refresh_twins, a.serialising)
        return 0
    lo, _, hi = a.seeds.partition("-")
    seeds = list(range(int(lo), int(hi or lo) + 1))
    if not seeds:
        ap.error("--seeds: no seed")
    a.out.mkdir(parents=True, exist_ok=True)
    rec = {"experiment": a.experiment, "seeds": seeds, "started": _now(), "load": [],
           **({"rerun": {"schemes": schemes, "orders": orders or list(ORDERS)}} if schemes else {}),
           **({"refresh_twins": True, "serialising": a.serialising} if a.refresh_twins else {})}
    # a rerun or a refresh keeps the full run's record
    bench = "bench_rerun.json" if schemes else ("bench_refresh.json" if a.refresh_twins else "bench.json")
    t0 = time.monotonic()
    procs = {}
    for s in seeds:
        for o in ORDERS if ablation else [None]:
            done = f"ablation-{o}.csv" if ablation else ("peers.csv" if a.experiment == "net-peers" else "tfmcc_uftp.csv")
            if a.refresh_twins and not (a.out / f"seed-{s}" / done).exists():
                ap.error(f"--refresh-twins: {a.out}/seed-{s}/{done}: no seed table of a full run")
            if not schemes and not a.refresh_twins and (a.out / f"seed-{s}" / done).exists():
                continue  # kept from an earlier run; _decide reads it
            tail = ["--order", o] if o else []
            tail += ["--refresh-twins"] if a.refresh_twins else []
            tail += ["--serialising"] if a.serialising else []
            tail += ["--schemes", a.schemes, *(["--orders", a.orders] if a.orders else [])] if schemes else []
            kind = "-rerun" if schemes else ("-refresh" if a.refresh_twins else "")
            log = open(a.out / f"seed-{s}{'-' + o if o else ''}{kind}.log", "w")
            procs[f"{s}{'-' + o if o else ''}"] = subprocess.Popen(
                [sys.executable, __file__, a.experiment, str(a.out), "--one", str(s), *tail],
                stdout=log, stderr=subprocess.STDOUT)
    try:
        while any(p.poll() is None for p in procs.values()):
            rec["load"].append([round(time.monotonic() - t0), *os.getloadavg()])
            (a.out / bench).write_text(json.dumps(rec, indent=1))
            time.sleep(30)
    finally:
        for p in procs.values():  # only the processes started here, by their pid
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=60)
    rec.update(ended=_now(), wall_s=time.monotonic() - t0, exit={s: p.returncode for s, p in procs.items()})
    (a.out / bench).write_text(json.dumps(rec, indent=1))
    if any(p.returncode != 0 for p in procs.values()):
        print(f"a seed's process failed: {rec['exit']} (OUT/seed-K.log)", file=sys.stderr)
        return 1
    if not ablation:
        _decide(a.experiment, a.out, seeds, None if a.refresh_twins else rec["wall_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
