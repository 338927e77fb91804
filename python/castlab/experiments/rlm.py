"""RLM experiments (issue 4): rlm-fig8 ... rlm-fig13, rlm-red."""

from castlab.experiments.common import Experiment

EXPERIMENTS: list[Experiment] = []
