"""A scenario's outputs: the flow table (one row per receiver and flow), flat metrics, and
the files a run writes (flows.csv, levels.csv, a CSV per monitor, summary.json)."""

from __future__ import annotations

import csv
import json
import math
import platform
from pathlib import Path
from typing import Any, Optional

from castlab.scenario.build import Handles, _packet_size, _takes, capture_file, kinds_of
from castlab.scenario.schema import _flow_kinds, _kinds

# The columns of the per-receiver / per-flow table (a FlowMonitor-like summary).
FLOW_COLUMNS = ["name", "kind", "node", "sent", "received", "lost", "loss", "mean_rate_bps",
                "final_level"]


def flow_table(sc, sim) -> list[dict]:
    """One row per receiver and flow after a run (FlowMonitor-like): sent, received, lost,
    loss, mean rate over [start, now], worst-window loss per window, final level.

    `sent` of a multicast receiver is what it should have got on the layers it subscribed
    (received + lost); `lost` of a TCP flow is segments sent that its sink never counted
    (in flight at the end included); NaN where a protocol keeps no such record (the
    worst-window loss of a receiver that reports none, and of TCP)."""
    from castlab._native import worst_window_loss

    h: Handles = sim.scenario_handles
    d = sc._data
    now = sim.now
    wins = d["windows"]
    levels = sim.level_timeline()
    sessions = {se["name"]: se for se in d["sessions"]}
    nan = float("nan")

    def final_level(agent: int) -> Optional[int]:
        idx = [i for i, a in enumerate(levels["agent"]) if int(a) == agent]
        return int(levels["level"][idx[-1]]) if idx else None

    def row(name, kind, node, received, lost, bytes_, start, worst, level, sent=None):
        sent = received + lost if sent is None else sent
        r = {"name": name, "kind": kind, "node": node, "sent": int(sent), "received": int(received),
             "lost": int(lost), "loss": (lost / sent) if sent else nan,
             "mean_rate_bps": bytes_ * 8 / (now - start) if now > start else nan,
             "final_level": level}
        for w, v in zip(wins, worst):
            r[f"worst_loss_{w:g}s"] = v
        return r

    def from_reader(name, kind, node, start, a, reader, **kw):
        """The row of agent `a` from its registered row reader (castlab._registry)."""
        x = getattr(sim, reader)(a, windows=wins, **kw)
        if "worst" in x:
            worst = x["worst"]
        elif "bin_received" in x:
            rcv, lst = x["bin_received"], x["bin_lost"]
            t_ns = [int(round((k + 1) * x["bin_s"] * 1e9)) for k in range(len(rcv))]
            worst = [worst_window_loss(t_ns, rcv, lst, w) if len(rcv) else nan for w in wins]
        else:
            worst = [nan] * len(wins)
        level = x["level"] if "level" in x else final_level(a)
        if level is None:
            level = x.get("planned_level")
        rr = row(name, kind, node, x["received"], x["lost"], x["bytes"], start, worst,
                 None if level is None else int(level), sent=x.get("sent"))
        if "end_s" in x:
            end = x["end_s"] if x["end_s"] is not None else now
            rr["mean_rate_bps"] = x["bytes"] * 8 / (end - start) if end > start else nan
        return rr

    _, receivers, _ = _kinds()
    rows = []
    for r in d["receivers"]:
        a, se, start = h.receivers[r["name"]], sessions[r["session"]], h.starts[r["name"]]
        p = r["protocol"]
        reader = receivers[p]["row"]
        kw = {"source": h.sessions[r["session"]]["source"]} if _takes(reader, "source") else {}
        rows.append(from_reader(r["name"], p, r["node"], start, a, reader,
                                packet_size=_packet_size(se, kinds_of(se)), **kw))
    for t, spec in _flow_kinds().items():
        for f in d[t]:
            a = h.flows[t][f["name"]]
            # a flow built with a sink reports from it
            a = a if spec["sink"] is None else a[1]
            rows.append(from_reader(f["name"], t, f"{f['src']}->{f['dst']}", f["start"], a, spec["row"],
                                    packet_size=None))
    return rows


def metrics(rows: list[dict], sim) -> dict[str, Any]:
    """Flat scalar metrics: ``"r1.loss"`` per row and column, plus totals."""
    out: dict[str, Any] = {}
    for r in rows:
        for k, v in r.items():
            if k in ("name", "kind", "node"):
                continue
            # plain scalars for the results store: None (no level for TCP) becomes NaN
            out[f"{r['name']}.{k}"] = float("nan") if v is None else (float(v) if isinstance(v, float) else int(v))
    sent = sum(r["sent"] for r in rows)
    lost = sum(r["lost"] for r in rows)
    out["total.sent"] = sent
    out["total.received"] = sum(r["received"] for r in rows)
    out["total.lost"] = lost
    out["total.loss"] = lost / sent if sent else float("nan")
    cons = sim.conservation()
    out["total.queue_drops"] = int(cons["queue_drops"])
    out["total.events"] = int(sim.engine_stats()["events"])
    return out


def write(sc, out: Path, seed: int, sim, rows: list[dict], metrics: dict, wall_s: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    h: Handles = sim.scenario_handles
    files = ["flows.csv"]
    write_csv(out / "flows.csv", rows)
    names = {a: n for n, a in h.receivers.items()}
    lv = sim.level_timeline()
    write_csv(out / "levels.csv", [{"time_s": int(t) / 1e9, "agent": int(a), "name": names.get(int(a), ""),
                                    "level": int(l)} for t, a, l in zip(lv["time_ns"], lv["agent"], lv["level"])],
              columns=["time_s", "agent", "name", "level"])
    files.append("levels.csv")
    for m in sc._data["monitors"]:
        ch = h.channels[m["link"]][0 if m["direction"] == "ab" else 1]
        fname = f"{m['kind']}_{m['name']}.csv"
        if m["kind"] == "queue":
            s = sim.channel_series(ch)
            write_csv(out / fname, [{"time_s": int(s["time_ns"][i]) / 1e9, "qlen": int(s["qlen"][i]),
                                     "qavg": float(s["qavg"][i]), "bytes": int(s["bytes"][i]),
                                     "drops": int(s["drops"][i])} for i in range(len(s["time_ns"]))],
                      columns=["time_s", "qlen", "qavg", "bytes", "drops"])
        else:
            link = next(l for l in sc._data["links"] if l["name"] == m["link"])
            meter = sim.loss_meter(link["a"] if m["direction"] == "ab" else link["b"])
            lrows = []
            for flow, e in sorted(meter["flows"].items()):
                off, dr = e["passed"], e["dropped"]
                for b in range(off.shape[0]):
                    for layer in range(off.shape[1]):
                        if off[b, layer] or dr[b, layer]:
                            lrows.append({"time_s": (b + 1) * meter["bin_s"], "flow": int(flow), "layer": layer,
                                          "passed": int(off[b, layer]), "dropped": int(dr[b, layer])})
            write_csv(out / fname, lrows, columns=["time_s", "flow", "layer", "passed", "dropped"])
        files.append(fname)
    files += [capture_file(c) for c in sc._data.get("captures", [])]
    summary = {
        "experiment": f"scenario:{sc.name}", "paper": "", "figure": "", "seed": seed,
        "params": sc.to_dict(), "wall_s": round(wall_s, 3),
        "machine": f"{platform.machine()} {platform.system()} python {platform.python_version()}",
        "claims": [], "metrics": metrics, "flows": rows, "files": files,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=_json_default, allow_nan=True) + "\n")


def _json_default(x: Any):
    if hasattr(x, "item"):
        return x.item()
    return str(x)


def write_csv(path: Path, rows: list[dict], columns: Optional[list[str]] = None) -> None:
    """Rows to CSV with the csv module (no pandas: `import castlab` stays fast)."""
    if columns is None:
        columns = list(rows[0]) if rows else list(FLOW_COLUMNS)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})


def format_table(rows: list[dict]) -> str:
    """The flow table as aligned text, for the terminal."""
    if not rows:
        return "(no receivers or flows)"
    cols = list(rows[0])

    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            if math.isnan(v):
                return "-"
            return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
        return str(v)

    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(x[i]) for x in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cols, widths)))]
    for x in cells:
        lines.append("  ".join(v.rjust(w) if i > 2 else v.ljust(w) for i, (v, w) in enumerate(zip(x, widths))))
    return "\n".join(lines)
