"""Reading a results store into one tidy DataFrame, and aggregating over seeds."""

from __future__ import annotations

import math
import os
from typing import Optional, Sequence

__all__ = ["results", "aggregate", "format_aggregate", "resolve_columns", "value_sort_key"]


def results(store: os.PathLike | str, version: Optional[str] = None):
    """Every run in the store `store` as one pandas DataFrame: one row per run with the columns
    key, target, seed, status, error, castlab_version, git_commit, wall_s, finished_at, host,
    one column per parameter and one per metric (``df.attrs["params"]``, ``df.attrs["metrics"]``
    name them). A store holding several castlab versions is refused unless `version` names one
    or is ``"all"``."""
    from pathlib import Path

    from castlab.study.store import Store

    if not Path(store).is_dir():
        raise ValueError(f"results store {str(store)!r} does not exist")
    return Store(store).read(version=version)


def aggregate(df, by: Optional[Sequence[str]] = None, metrics: Optional[Sequence[str]] = None,
              confidence: float = 0.95):
    """Mean and Student-t confidence interval of each metric over the seeds of each group.

    `by`: the grouping columns (default: target and the parameters, ``df.attrs["params"]``);
    `metrics`: the metrics (default: the numeric ones of ``df.attrs["metrics"]``; a boolean
    metric such as a claim's ``.holds`` becomes the fraction of runs where it held). Runs whose
    status is not ``ok`` are left out. Returns one row per (group, metric): the group's columns,
    ``metric``, ``n`` (finite values), ``mean``, ``lo``, ``hi`` (from ``castlab.stats.t_interval``;
    one value has no interval: lo = hi = NaN; a metric whose values are all >= 0 has its lo
    clipped at 0). Groups come in the order of their values' magnitude, units read (10ms < 40ms
    < 160ms). `by` and `metrics` take full column names or their last dotted part (``delay``,
    ``loss``; a short metric name stands for every metric it ends)."""
    import pandas as pd

    from castlab.stats import t_interval

    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if by is None:
        by = [c for c in ["target", *df.attrs.get("params", [])] if c in df.columns]
        if "target" in by and df["target"].nunique() <= 1:
            by.remove("target")
    metric_cols = set(df.attrs.get("metrics") or [])
    groupable = [c for c in [*df.attrs.get("params", []), "target", "seed"] if c in df.columns]
    groupable += [c for c in df.columns if c not in groupable and c not in metric_cols]
    by = resolve_columns(list(by), groupable, "group by", expand=False)
    all_metrics = [m for m in (df.attrs.get("metrics") or [c for c in df.columns if c not in by and c != "seed"])
                   if m in df.columns]
    if metrics is None:
        metrics = [m for m in all_metrics if _numeric(df[m])]
    else:
        metrics = resolve_columns(list(metrics), all_metrics or list(df.columns), "metric", expand=True)
    # a metric whose every value is >= 0 (a loss rate, a time, a count) keeps its interval >= 0
    nonneg = {m: bool((pd.to_numeric(df[m], errors="coerce").dropna() >= 0).all()) for m in metrics}
    out = []
    groups = list(df.groupby(by, sort=False, dropna=False)) if by else [((), df)]
    # grid values in the order of their magnitude ("10ms" < "40ms" < "160ms"), not as text
    groups.sort(key=lambda kg: tuple(value_sort_key(v) for v in (kg[0] if isinstance(kg[0], tuple) else (kg[0],))))
    for gkey, g in groups:
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        for m in metrics:
            vals = [float(v) for v in g[m].dropna() if isinstance(v, (bool, int, float)) or hasattr(v, "item")]
            vals = [v for v in vals if math.isfinite(v)]
            if len(vals) >= 2:
                mean, lo, hi = t_interval(vals, confidence, nonnegative=nonneg[m])
            else:  # one run has no interval; none has no mean
                mean, lo, hi = (vals[0] if vals else math.nan), math.nan, math.nan
            out.append({**dict(zip(by, gkey)), "metric": m, "n": int(len(vals)), "mean": mean, "lo": lo, "hi": hi})
    return pd.DataFrame(out, columns=[*by, "metric", "n", "mean", "lo", "hi"])


def resolve_columns(names: Sequence[str], available: Sequence[str], what: str, expand: bool) -> list[str]:
    """The columns `names` stand for: a column's full name, or its last dotted part (``delay``
    for ``links.bottleneck.delay``, ``loss`` for ``a1.loss``). With `expand`, a short name
    stands for every column it ends (``loss``: every ``*.loss`` metric); without, it must name
    one. An unknown name is a ValueError that lists the available columns."""
    out: list[str] = []
    for n in names:
        n = n.strip()
        if n in available:
            hits = [n]
        else:
            hits = [c for c in available if c.rsplit(".", 1)[-1] == n or c.endswith("." + n)]
        if not hits:
            raise ValueError(f"aggregate: no {what} column {n!r}; available: {', '.join(available)}")
        if len(hits) > 1 and not expand:
            raise ValueError(f"aggregate: {n!r} could be {', '.join(hits)}: give the full name")
        out += [h for h in hits if h not in out]
    return out


def value_sort_key(v) -> tuple:
    """A sort key that orders numbers and quantities with units by magnitude (times before
    rates when mixed, then text): 10ms < 40ms < 160ms, 2 < 10, "1.5Mbps" < "10Mbps"."""
    from castlab.units import UnitError, parse_rate, parse_time

    if isinstance(v, bool):
        return (0, float(v), "")
    if isinstance(v, (int, float)) or hasattr(v, "item") and not isinstance(v, str):
        f = float(v)
        return (0, f if math.isfinite(f) else math.inf, "")
    text = str(v)
    import warnings

    for kind, parse in ((1, parse_time), (2, parse_rate)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return (kind, parse(text, strict=False), text)
        except (UnitError, ValueError, TypeError):
            pass
    return (3, 0.0, text)


def plain(x, digits: int = 4) -> str:
    """`x` with `digits` significant digits in plain notation (0.004251, 1413000, 12.5);
    scientific only beyond 1e12 or under 1e-6, where plain digits stop being readable."""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(f):
        return "-" if math.isnan(f) else str(f)
    if f == 0:
        return "0"
    mag = math.floor(math.log10(abs(f)))
    if mag >= 12 or mag < -6:
        return f"{f:.{digits - 1}e}"
    decimals = max(0, digits - 1 - mag)
    text = f"{f:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_aggregate(agg, confidence: float = 0.95, max_wide_groups: int = 4) -> str:
    """The aggregate as a compact text table in plain numbers. With up to `max_wide_groups`
    groups, one row per metric and one column per group ("mean [lo, hi]", n above when it
    varies); otherwise one row per (group, metric). Group columns go by their short names
    when unambiguous (``delay`` for ``links.bottleneck.delay``)."""
    cols = [c for c in agg.columns if c not in ("metric", "n", "mean", "lo", "hi")]
    short = {c: c.rsplit(".", 1)[-1] for c in cols}
    if len(set(short.values())) < len(short):
        short = {c: c for c in cols}
    recs = [dict(zip(agg.columns, r)) for r in agg.itertuples(index=False)]

    def cell(d) -> str:
        if not math.isfinite(float(d["lo"])) or d["lo"] == d["hi"]:
            return plain(d["mean"])
        return f"{plain(d['mean'])} [{plain(d['lo'])}, {plain(d['hi'])}]"

    groups: list[tuple] = []
    for d in recs:
        g = tuple(d[c] for c in cols)
        if g not in groups:
            groups.append(g)
    ns = {d["n"] for d in recs}
    if cols and len(groups) <= max_wide_groups:
        labels = [", ".join(f"{short[c]}={v}" for c, v in zip(cols, g)) for g in groups]
        metrics = list(dict.fromkeys(d["metric"] for d in recs))
        by = {(tuple(d[c] for c in cols), d["metric"]): d for d in recs}
        head = ["metric"] + labels
        rows = []
        for m in metrics:
            row = [m]
            for g in groups:
                d = by.get((g, m))
                row.append("" if d is None else cell(d) + ("" if len(ns) == 1 else f" n={d['n']}"))
            rows.append(row)
        note = (f"mean [{confidence:.0%} Student-t interval] over "
                + (f"{ns.pop()} runs per group" if len(ns) == 1 else "n runs") + "; one run has no interval")
    else:
        head = [short[c] for c in cols] + ["metric", "n", "mean", f"{confidence:.0%} interval"]
        rows = [[str(d[c]) for c in cols] + [str(d["metric"]), str(d["n"]), plain(d["mean"]),
                 "-" if not math.isfinite(float(d["lo"])) else f"{plain(d['lo'])} .. {plain(d['hi'])}"]
                for d in recs]
        note = ""
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(head)]
    fmt = lambda row: "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(head)] + [fmt(row) for row in rows] + ([note] if note else []))


def _numeric(col) -> bool:
    """A column of numbers or booleans (with gaps allowed), not text."""
    vals = col.dropna()
    return len(vals) > 0 and all(isinstance(v, (bool, int, float)) or (hasattr(v, "item") and not isinstance(v, str))
                                 for v in vals)
