"""Matplotlib set-up shared by the experiments: headless, paper-like, PNG + SVG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def figure(width: float = 5.0, height: float = 3.6):
    fig, ax = plt.subplots(figsize=(width, height), dpi=120)
    ax.grid(True, alpha=0.3)
    return fig, ax


def save(fig, out: Path, stem: str) -> list[str]:
    fig.tight_layout()
    names = [f"{stem}.png", f"{stem}.svg"]
    for n in names:
        fig.savefig(out / n)
    plt.close(fig)
    return names
