"""Every figure or table castlab reproduces, by name."""

from __future__ import annotations

from castlab.experiments.common import Experiment
from castlab.experiments import baselines, engine, flid, lesbcc, nlm, pgmcc, rainbow, rlm, tcp, tfmcc, webrc

REGISTRY: dict[str, Experiment] = {
    e.name: e
    for e in [*engine.EXPERIMENTS, *tcp.EXPERIMENTS, *rlm.EXPERIMENTS, *nlm.EXPERIMENTS, *lesbcc.EXPERIMENTS,
              *rainbow.EXPERIMENTS, *tfmcc.EXPERIMENTS, *pgmcc.EXPERIMENTS, *webrc.EXPERIMENTS,
              *flid.EXPERIMENTS, *baselines.EXPERIMENTS]
}

__all__ = ["REGISTRY", "Experiment"]
