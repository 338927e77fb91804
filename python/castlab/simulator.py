"""``castlab.Simulator``: the Rust simulator, bound to the thread that created it.

The engine is single-threaded (agents own plain, non-shared state), so the native class is
"unsendable": used from another thread, PyO3 would panic with a Rust backtrace and raise
``PanicException``, which is not an ``Exception``. This subclass checks the thread first and
raises a ``RuntimeError`` that says what to do instead. The engine's methods and their
documentation are the native class's (``castlab/_native.pyi``), plus ``tcp_goodput_bps``,
computed from them; each protocol's roles and readers, the CBR sources' and the sink's
included, are methods made from the protocol registry (``castlab._registry``; their
generated stub is ``castlab/_registered.pyi``). ``sink_summary`` wraps the registry's: its
per-layer columns become numpy arrays only when read, so that numpy is imported only then.

Phase randomisation (``phase_overhead``, see the native class) is off unless asked for. A
simulator built without the argument takes the process's default, the environment variable
``CASTLAB_PHASE_OVERHEAD`` (seconds; ``castlab reproduce --phase-overhead`` sets it), so that an
experiment whose code never names it, and the worker processes of its seed loop, can be run
with it on.
"""

from __future__ import annotations

import os
import threading
from typing import Optional

from castlab import _native, _registry

_OWNER = "_castlab_owner_thread"
PHASE_ENV = "CASTLAB_PHASE_OVERHEAD"
# position of `phase_overhead` among the native constructor's arguments
_PHASE_POS = 4


def default_phase_overhead() -> float:
    """The process's default ``phase_overhead`` in seconds: ``CASTLAB_PHASE_OVERHEAD``, or 0."""
    raw = os.environ.get(PHASE_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        v = float(raw)
    except ValueError:
        raise ValueError(f"{PHASE_ENV}={raw!r}: not a number of seconds") from None
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{PHASE_ENV}={raw!r}: must be in [0, 1] s")
    return v


class _ArraysOnRead(dict):
    """A dict whose list-valued `columns` become numpy arrays (uint64) when first read.

    numpy's import is most of a short run's start-up: results that carry small columns hand
    them over as lists, and numpy is imported only when one is read."""

    __slots__ = ("_columns",)

    def __init__(self, d: dict, columns: tuple[str, ...]):
        super().__init__(d)
        self._columns = columns

    def __getitem__(self, key):
        v = dict.__getitem__(self, key)
        if key in self._columns and isinstance(v, list):
            import numpy as np

            v = np.asarray(v, dtype=np.uint64)
            dict.__setitem__(self, key, v)
        return v

    def get(self, key, default=None):
        return self[key] if key in self else default

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]

    def copy(self):
        return dict(self.items())

    def __reduce__(self):
        return (dict, (dict(self.items()),))


class Simulator(_native.Simulator):
    __doc__ = _native.Simulator.__doc__

    def __new__(cls, *args, **kwargs):
        if len(args) <= _PHASE_POS and "phase_overhead" not in kwargs:
            kwargs["phase_overhead"] = default_phase_overhead()
        self = super().__new__(cls, *args, **kwargs)
        object.__setattr__(self, _OWNER, threading.get_ident())
        return self

    def __getattribute__(self, name: str):
        owner = object.__getattribute__(self, _OWNER)
        if threading.get_ident() != owner:
            raise RuntimeError(
                f"castlab.Simulator.{name}: a simulator belongs to the thread that created it "
                f"(thread {owner}); build and run one simulator per thread or per process "
                "(castlab's sweeps use processes)"
            )
        return object.__getattribute__(self, name)

    def sink_summary(self, agent: int) -> dict:
        return _ArraysOnRead(self.read("sink_summary", agent), ("layer_received", "layer_lost"))

    def tcp_goodput_bps(self, agent: int, start: float = 0.0, end: Optional[float] = None) -> float:
        """Goodput of the TCP flow `agent` in bit/s: the bytes its sink delivered in order
        (``tcp_stats(agent)["received_bytes"]``, retransmitted copies counted once) times 8,
        over [`start`, `end`]. `start`: when the flow started (the ``start`` given to
        ``add_tcp_flow``; 0 by default). `end`: the transfer's completion (``completed_at``)
        when it has completed, else the simulator's current time (``now``)."""
        st = self.tcp_stats(agent)
        if end is None:
            end = st["completed_at"] if st["completed_at"] is not None else self.now
        if end <= start:
            raise ValueError(f"tcp_goodput_bps: the interval [{start}, {end}] s is empty (start after the end?)")
        return 8.0 * st["received_bytes"] / (end - start)


_registry.install(Simulator, net=False)
