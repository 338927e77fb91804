"""``castlab plot``: a picture of a results store or of a scenario run.

- A results store (a folder with ``runs/``): a metric's mean over seeds with its Student-t
  interval against a grid parameter, one line per combination of the other parameters.
- A scenario run (what ``castlab scenario run`` writes: ``DIR/seed-N/`` or one ``seed-N``
  folder): per receiver its subscription level and the rate that level subscribes to over
  time, and the monitored queues' lengths.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Optional, Sequence

__all__ = ["plot_store", "plot_scenario_run", "plot_path"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _x_value(v) -> float:
    """A grid value as a number on the x axis: numbers as they are, times in s, rates in bit/s."""
    from castlab.study.results import value_sort_key

    kind, number, _ = value_sort_key(v)
    return number if kind < 3 else math.nan


def plot_store(store: Path | str, out: Path | str, metrics: Optional[Sequence[str]] = None,
               x: Optional[str] = None, confidence: float = 0.95) -> Path:
    """Draw `metrics` (full or short names; default the first numeric metric) against the grid
    parameter `x` (default the first parameter with more than one value) into the PNG `out`,
    one panel per metric (at most six), one line per combination of the other parameters."""
    from castlab.study import aggregate, results
    from castlab.study.results import _numeric, resolve_columns, value_sort_key

    df = results(store, version="all")
    df = df[df["status"] == "ok"] if "status" in df.columns else df
    params = [p for p in df.attrs.get("params", []) if p in df.columns]
    if not params:
        raise ValueError(f"{store}: the store's runs have no grid parameter to plot against")
    varying = [p for p in params if df[p].nunique(dropna=False) > 1]
    x = resolve_columns([x], params, "parameter", expand=False)[0] if x else (varying or params)[0]
    all_metrics = [m for m in df.attrs.get("metrics", []) if m in df.columns and _numeric(df[m])]
    if not all_metrics:
        raise ValueError(f"{store}: no numeric metric to plot")
    chosen = resolve_columns(list(metrics), all_metrics, "metric", expand=True) if metrics else all_metrics[:1]
    if len(chosen) > 6:
        raise ValueError(f"{len(chosen)} metrics ({', '.join(chosen[:8])}...): give at most six with --metric")
    others = [p for p in varying if p != x]
    agg = aggregate(df, by=[x, *others], metrics=chosen, confidence=confidence)
    plt = _plt()
    fig, axes = plt.subplots(len(chosen), 1, figsize=(6.4, 2.2 + 2.0 * len(chosen)), squeeze=False, sharex=True)
    xs_text = sorted(agg[x].unique(), key=value_sort_key)
    numeric = all(math.isfinite(_x_value(v)) for v in xs_text)
    pos = {v: (_x_value(v) if numeric else i) for i, v in enumerate(xs_text)}
    for ax, m in zip(axes[:, 0], chosen):
        sub = agg[agg["metric"] == m]
        groups = sub.groupby(others, sort=False) if others else [((), sub)]
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            g = g.assign(_x=[pos[v] for v in g[x]]).sort_values("_x")
            label = ", ".join(f"{o.rsplit('.', 1)[-1]}={k}" for o, k in zip(others, key)) or None
            lo = (g["mean"] - g["lo"]).fillna(0).clip(lower=0)
            hi = (g["hi"] - g["mean"]).fillna(0).clip(lower=0)
            ax.errorbar(g["_x"], g["mean"], yerr=[lo, hi], marker="o", capsize=3, label=label)
        ax.set_ylabel(m)
        ax.grid(True, alpha=0.3)
        if label:
            ax.legend(fontsize=7)
    ax = axes[-1, 0]
    if numeric and min(pos.values()) > 0 and max(pos.values()) / min(pos.values()) >= 10:
        ax.set_xscale("log")
    ax.set_xticks([pos[v] for v in xs_text], [str(v) for v in xs_text])
    ax.minorticks_off()
    ax.set_xlabel(x)
    n = sorted(set(agg["n"]))
    runs = f"{n[0]} seeds" if len(n) == 1 else f"{n[0]}-{n[-1]} seeds"
    axes[0, 0].set_title(f"{Path(store).name}: mean over {runs}, {confidence:.0%} Student-t interval", fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def _seed_dir(run: Path, seed: Optional[int]) -> Path:
    if (run / "summary.json").is_file() and (run / "levels.csv").is_file():
        return run
    dirs = sorted(run.glob("seed-*"), key=lambda d: int(d.name.split("-", 1)[1]) if d.name[5:].isdigit() else 0)
    if seed is not None:
        dirs = [d for d in dirs if d.name == f"seed-{seed}"]
    if not dirs:
        raise ValueError(f"{run}: no scenario run here (expected seed-N/ folders with summary.json and levels.csv"
                         + (f", seed {seed}" if seed is not None else "") + ")")
    return dirs[0]


def plot_scenario_run(run: Path | str, out: Path | str, seed: Optional[int] = None) -> Path:
    """Per receiver of one seed of a scenario run (`seed`, default the first): its level and
    the rate that level subscribes to over time, and every queue monitor's queue length."""
    d = _seed_dir(Path(run), seed)
    summary = json.loads((d / "summary.json").read_text())
    sc = summary.get("params", {})
    duration = float(sc.get("duration", 0.0))
    rates = {s["name"]: s.get("rates") or [] for s in sc.get("sessions", [])}
    session_of = {r["name"]: r.get("session") for r in sc.get("receivers", [])}
    with open(d / "levels.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["name"]]
    names = list(dict.fromkeys(r["name"] for r in rows))
    queues = sorted(d.glob("queue_*.csv"))
    plt = _plt()
    panels = 2 + (1 if queues else 0)
    fig, axes = plt.subplots(panels, 1, figsize=(7.5, 2.3 * panels + 0.6), sharex=True)
    # receivers often hold the same level: each line is lifted by a small step of its own so
    # that none hides another (the ticks stay on the integer levels)
    spread = 0.25 / max(1, len(names) - 1) if len(names) > 1 else 0.0
    for i, name in enumerate(names):
        pts = [(float(r["time_s"]), int(r["level"])) for r in rows if r["name"] == name]
        t = [p[0] for p in pts] + [duration or pts[-1][0]]
        lv = [p[1] for p in pts] + [pts[-1][1]]
        axes[0].step(t, [v + (i - (len(names) - 1) / 2) * spread for v in lv], where="post", label=name)
        cum = rates.get(session_of.get(name), [])
        if cum:
            kbps = [sum(cum[:max(0, level)]) / 1e3 for level in lv]
            axes[1].step(t, kbps, where="post", label=name)
    from matplotlib.ticker import MaxNLocator

    axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_ylabel("level (layers)" + ("\nlines offset to stay apart" if spread else ""))
    axes[1].set_ylabel("subscribed rate (kb/s)")
    if names:
        axes[0].legend(fontsize=7, ncol=min(4, len(names)), loc="upper left")
    else:
        axes[0].text(0.5, 0.5, "no level changes recorded", ha="center", transform=axes[0].transAxes)
    for q in queues:
        with open(q) as f:
            qs = list(csv.DictReader(f))
        axes[2].plot([float(r["time_s"]) for r in qs], [int(r["qlen"]) for r in qs], lw=0.8,
                     label=q.stem.replace("queue_", ""))
    if queues:
        axes[2].set_ylabel("queue (packets)")
        axes[2].legend(fontsize=7)
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    if duration:
        axes[-1].set_xlim(0, duration)
    axes[0].set_title(f"{summary.get('experiment', d.parent.name)}, seed {summary.get('seed', '?')}", fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_path(path: Path | str, out: Optional[Path | str] = None, metrics: Optional[Sequence[str]] = None,
              x: Optional[str] = None, seed: Optional[int] = None) -> Path:
    """A store or a scenario run, whichever `path` is; the PNG goes to `out` (default
    PATH/plot.png for a store, PATH/plot-seed-N.png for a run)."""
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"{path}: not a folder (give a results store or a scenario run's output folder)")
    if (p / "runs").is_dir():
        return plot_store(p, out or p / "plot.png", metrics=metrics, x=x)
    d = _seed_dir(p, seed)
    return plot_scenario_run(d, out or p / f"plot-{d.name}.png")
