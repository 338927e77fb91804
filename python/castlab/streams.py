"""Every random draw castlab makes in Python (receivers' start times, the Markov chain's rounds, a
file's bytes, which TCP flow a plot shows, a scenario file's start ranges), each from a named
stream declared through ``declare``: the experiments' streams in
``castlab.experiments.streams``, the scenario files' here.

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

__all__ = ["Stream", "rng", "declare", "STREAMS", "SEED", "SEED_KIND", "SEED_INDEX_KIND", "SEED_KIND_INDEX"]

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


STREAMS: dict[str, Stream] = {}


def declare(*items: Stream) -> None:
    """Add streams to STREAMS: a name or kind already declared is an error."""
    new = _streams(*STREAMS.values(), *items)
    STREAMS.clear()
    STREAMS.update(new)


declare(Stream("scenario-starts", 0x5343454E, SEED_KIND_INDEX,
               "scenario files: a receiver's start drawn from its range, index = the receiver's position"),
        Stream("testbed-flood", 0x464C4F44, SEED_KIND_INDEX,
               "castlab.testbed.flood: the hostile frames' kinds, bits and bytes"))


def rng(seed: int, stream: str, *index: int) -> np.random.Generator:
    """The generator of `stream` (a name in STREAMS) under `seed`, for entity `index`."""
    try:
        s = STREAMS[stream]
    except KeyError:
        raise ValueError(f"unknown random stream {stream!r}; declare it (castlab.streams.declare)") from None
    return np.random.default_rng(s.entropy(seed, index))
