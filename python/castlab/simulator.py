"""``castlab.Simulator``: the Rust simulator, bound to the thread that created it.

The engine is single-threaded (agents own plain, non-shared state), so the native class is
"unsendable": used from another thread, PyO3 would panic with a Rust backtrace and raise
``PanicException``, which is not an ``Exception``. This subclass checks the thread first and
raises a ``RuntimeError`` that says what to do instead. The engine's methods and their
documentation are the native class's (``castlab/_native.pyi``); each protocol's roles and
readers are methods made from the protocol registry (``castlab._registry``).
"""

from __future__ import annotations

import threading

from castlab import _native, _registry

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


_registry.install(Simulator, net=False)
