"""Reading a results store into one tidy DataFrame, and aggregating over seeds."""

from __future__ import annotations

import os
from typing import Optional, Sequence

__all__ = ["results", "aggregate"]


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
    a single value gives lo = hi = mean)."""
    import pandas as pd

    from castlab.stats import t_interval

    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if by is None:
        by = [c for c in ["target", *df.attrs.get("params", [])] if c in df.columns]
        if "target" in by and df["target"].nunique() <= 1:
            by.remove("target")
    by = list(by)
    for c in by:
        if c not in df.columns:
            raise ValueError(f"aggregate: no column {c!r} to group by (columns: {', '.join(df.columns)})")
    if metrics is None:
        names = df.attrs.get("metrics") or [c for c in df.columns if c not in by and c != "seed"]
        metrics = [m for m in names if m in df.columns and _numeric(df[m])]
    for m in metrics:
        if m not in df.columns:
            raise ValueError(f"aggregate: no metric column {m!r}")
    out = []
    groups = df.groupby(by, sort=True, dropna=False) if by else [((), df)]
    for gkey, g in groups:
        gkey = gkey if isinstance(gkey, tuple) else (gkey,)
        for m in metrics:
            vals = [float(v) for v in g[m].dropna() if isinstance(v, (bool, int, float)) or hasattr(v, "item")]
            mean, lo, hi = t_interval(vals, confidence)
            out.append({**dict(zip(by, gkey)), "metric": m, "n": int(len(vals)), "mean": mean, "lo": lo, "hi": hi})
    return pd.DataFrame(out, columns=[*by, "metric", "n", "mean", "lo", "hi"])


def _numeric(col) -> bool:
    """A column of numbers or booleans (with gaps allowed), not text."""
    vals = col.dropna()
    return len(vals) > 0 and all(isinstance(v, (bool, int, float)) or (hasattr(v, "item") and not isinstance(v, str))
                                 for v in vals)
