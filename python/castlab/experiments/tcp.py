"""TCP Reno/NewReno experiments (issue 3): tcp-fairness, tcp-formula."""

from castlab.experiments.common import Experiment

EXPERIMENTS: list[Experiment] = []
