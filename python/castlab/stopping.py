"""How a long-running real-network process (a host role, the user-space router) stops on a
signal: SIGTERM raises :class:`Stopped` naming it, SIGINT raises ``KeyboardInterrupt`` even
when the process inherited it ignored (started in the background), and both handlers are put
back afterwards. The process catches both between two slices of its run and writes its
records.

A leaf module (the standard library only).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Stopped", "stop_on_signals"]


class Stopped(Exception):
    """A signal asked the process to stop; the message is the signal's name (``SIGTERM``)."""


def _raise_stopped(signum, frame):
    raise Stopped(signal.Signals(signum).name)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Stopped` and SIGINT ``KeyboardInterrupt``."""
    old_term = signal.signal(signal.SIGTERM, _raise_stopped)
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
