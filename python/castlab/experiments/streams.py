"""The experiments' random streams (``castlab.streams`` has the mechanism and its rule), declared
once here; the layouts are frozen: they are the entropy each experiment used when its outputs
were recorded, so its CSVs stay the same bytes."""

from __future__ import annotations

from castlab.streams import SEED, SEED_INDEX_KIND, SEED_KIND, SEED_KIND_INDEX, STREAMS, Stream, declare, rng

__all__ = ["Stream", "rng", "STREAMS"]

declare(
    Stream("rlm-starts", 0x524C4D, SEED_KIND, "RLM receivers' start times (experiments/rlm)"),
    Stream("nlm-fig13-starts", 0x4E4C4D, SEED_INDEX_KIND, "NLM Fig. 13: receivers' joins, index = N sessions"),
    Stream("tcp-fairness-starts", 1, SEED, "tcp-fairness: the flows' start times"),
    Stream("rainbow-net", 2, SEED, "Rainbow scenarios: receivers' start times"),
    Stream("rainbow-sawtooth", 3, SEED, "Rainbow B-(i): the sawtooth model's phases"),
    Stream("rainbow-file", 4, SEED, "bcfs-file: the file's bytes"),
    Stream("lesbcc-fig5", 5, SEED, "LE-SBCC Fig. 5 scenario: start times"),
    Stream("lesbcc-markov", 6, SEED, "LE-SBCC Fig. 10: the Markov chain's Monte Carlo"),
    Stream("lesbcc-fig21", 7, SEED, "LE-SBCC Fig. 21 simulated: start times"),
    Stream("lesbcc-fig21-pick", 8, SEED, "LE-SBCC Fig. 21: which TCP flow the plot shows"),
    Stream("net-rlm-starts", 9, SEED, "net-rlm: receivers' start times"),
    Stream("net-lesbcc-pick", 10, SEED, "net-lesbcc-fig21: which TCP flow the plot shows"),
    Stream("plot-jitter", 11, SEED, "rlm-fig11: horizontal jitter of the plotted points (drawing only)"),
    Stream("tfmcc-starts", 0x54464D, SEED_KIND_INDEX, "tfmcc: the TCP flows' start times, index = set-up"),
    Stream("pgmcc-starts", 0x50474D, SEED_KIND_INDEX, "pgmcc: the TCP flows' start times, index = set-up"),
    Stream("webrc-starts", 0x574252, SEED_KIND_INDEX, "webrc: the TCP flows' start times, index = set-up"),
    Stream("flid-starts", 0x464C49, SEED_KIND_INDEX, "flid-dl: the TCP flows' start times, index = set-up"),
    Stream("tfmcc-scale-links", 0x544653, SEED_KIND_INDEX,
           "tfmcc-scale: the access links' rates, delays and losses, index = receivers"),
    Stream("baselines-starts", 0x42534C, SEED_KIND_INDEX, "baselines: the TCP flows' start times, index = set-up"),
)
