"""Every random draw castlab makes in Python (receivers' start times, the Markov chain's rounds, a
file's bytes, which TCP flow a plot shows, a scenario file's start ranges), each from a named
stream declared here.

The simulator gives every entity its own stream derived from (seed, kind, index)
(``Rng::stream`` in castlab-core), so adding an entity never shifts another's numbers. The
experiments' draws in Python follow the same rule through numpy: ``rng(seed, STREAM, *index)``,
where a stream names its kind and how (seed, kind, index) become numpy's seed entropy.

The layouts are frozen: they are the entropy each experiment used when its outputs were
recorded, so its CSVs stay the same bytes. Most streams predate this module and use the bare
seed (``SEED``): they share their numbers whenever two of them draw under the same seed, which
is harmless because no experiment draws from two of them. A new stream takes the layout
``SEED_KIND_INDEX``: entropy [seed, kind, *index], distinct for every (kind, index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Stream", "rng", "STREAMS"]

# How a stream's (seed, kind, index) become numpy's entropy.
SEED = "seed"  # seed alone (the kind is only a name)
SEED_KIND = "seed, kind"  # [seed, kind]
SEED_INDEX_KIND = "seed, index, kind"  # [seed, *index, kind]
SEED_KIND_INDEX = "seed, kind, index"  # [seed, kind, *index]: new streams


@dataclass(frozen=True)
class Stream:
    name: str
    kind: int
    layout: str
    what: str

    def entropy(self, seed: int, index: tuple[int, ...]):
        seed = int(seed)
        idx = [int(i) for i in index]
        if self.layout == SEED:
            if idx:
                raise ValueError(f"stream {self.name} takes no index")
            return seed
        if self.layout == SEED_KIND:
            if idx:
                raise ValueError(f"stream {self.name} takes no index")
            return [seed, self.kind]
        if self.layout == SEED_INDEX_KIND:
            return [seed, *idx, self.kind]
        if self.layout == SEED_KIND_INDEX:
            return [seed, self.kind, *idx]
        raise ValueError(f"stream {self.name}: unknown layout {self.layout!r}")


def _streams(*items: Stream) -> dict[str, Stream]:
    out: dict[str, Stream] = {}
    for s in items:
        if s.name in out or any(o.kind == s.kind for o in out.values()):
            raise ValueError(f"stream {s.name}: name or kind used twice")
        out[s.name] = s
    return out


STREAMS = _streams(
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
    Stream("scenario-starts", 0x5343454E, SEED_KIND_INDEX,
           "scenario files: a receiver's start drawn from its range, index = the receiver's position"),
)


def rng(seed: int, stream: str, *index: int) -> np.random.Generator:
    """The generator of `stream` (a name in STREAMS) under `seed`, for entity `index`."""
    try:
        s = STREAMS[stream]
    except KeyError:
        raise ValueError(f"unknown random stream {stream!r}; declare it in castlab.streams") from None
    return np.random.default_rng(s.entropy(seed, index))
