"""``castlab.Simulator``: the Rust simulator, bound to the thread that created it.

The engine is single-threaded (agents own plain, non-shared state), so the native class is
"unsendable": used from another thread, PyO3 would panic with a Rust backtrace and raise
``PanicException``, which is not an ``Exception``. This subclass checks the thread first and
raises a ``RuntimeError`` that says what to do instead. Every method and its documentation are
the native class's (``castlab/_native.pyi``), plus ``tcp_goodput_bps``, computed from them.
"""

from __future__ import annotations

import threading
from typing import Optional

from castlab import _native

_OWNER = "_castlab_owner_thread"


class Simulator(_native.Simulator):
    __doc__ = _native.Simulator.__doc__

    def __new__(cls, *args, **kwargs):
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
