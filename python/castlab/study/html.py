"""A sweep's page: ``castlab results STORE --html`` writes one self-contained HTML file (see
``castlab.report_html``) with the aggregate over seeds and a plot per metric against the swept
parameter, opened offline in any browser."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Optional

from castlab.report_html import data_uri, page
from castlab.report_html import escape as _e

__all__ = ["write_store_html"]


def write_store_html(store: Path | str, out: Optional[Path | str] = None, confidence: float = 0.95) -> Path:
    """Write a sweep's page (default STORE/report.html): the aggregate over seeds per grid
    point (mean and Student-t interval), and per numeric metric a plot against the swept
    parameter (``castlab.plot.plot_store``: one line per combination of the other parameters,
    intervals over seeds). Returns the page's path."""
    from castlab.plot import plot_store
    from castlab.study import aggregate, results
    from castlab.study.results import _numeric, plain

    store = Path(store)
    path = Path(out) if out else store / "report.html"
    df = results(store, version="all")
    ok = df[df["status"] == "ok"] if "status" in df.columns else df
    params = [p for p in df.attrs.get("params", []) if p in df.columns]
    metrics = [m for m in df.attrs.get("metrics", []) if m in ok.columns and _numeric(ok[m])]
    varying = [p for p in params if ok[p].nunique(dropna=False) > 1]
    agg = aggregate(ok, confidence=confidence, metrics=metrics) if metrics else None
    seeds = sorted(ok["seed"].unique().tolist()) if "seed" in ok.columns else []
    failed = len(df) - len(ok)
    body = [f"<h1>Sweep: {_e(store.name)}</h1>",
            f'<p class="muted">{len(ok)} runs that finished ({failed} failed) over {len(seeds)} seeds; '
            f'parameters: {_e(", ".join(params) or "none")}; varying: {_e(", ".join(varying) or "none")}. '
            f"Mean and {confidence:.0%} Student-t interval over the seeds of each grid point.</p>"]
    if agg is not None and len(agg):
        group_cols = [c for c in agg.columns if c not in ("metric", "n", "mean", "lo", "hi")]
        heads = [*group_cols, "metric", "n", "mean", f"{confidence:.0%} interval"]
        rows = []
        for r in agg.to_dict("records"):
            lo, hi = r["lo"], r["hi"]
            interval = "–" if not (isinstance(lo, float) and math.isfinite(lo)) else f"{plain(lo)} .. {plain(hi)}"
            rows.append("<tr>" + "".join(f"<td>{_e(r[c])}</td>" for c in group_cols)
                        + f'<td>{_e(r["metric"])}</td><td class="n">{r["n"]}</td><td class="n">{_e(plain(r["mean"]))}'
                        f'</td><td class="n">{_e(interval)}</td></tr>')
        body += ["<h2>Aggregate over seeds</h2>",
                 '<table id="aggregate"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in heads)
                 + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"]
    if metrics and params:
        body.append(f"<h2>Metrics against {_e(varying[0] if varying else params[0])}</h2><div class=\"figs\">")
        with tempfile.TemporaryDirectory(prefix="castlab-html-") as tmp:
            for i, m in enumerate(metrics):
                png = plot_store(store, Path(tmp) / f"{i}.png", metrics=[m], confidence=confidence)
                body.append(f'<figure><img alt="{_e(m)}" src="{data_uri(png)}"><figcaption>{_e(m)}</figcaption>'
                            "</figure>")
        body.append("</div>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(f"castlab sweep {store.name}", "".join(body)))
    return path
