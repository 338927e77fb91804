"""Stopping a command: SIGINT, SIGTERM and SIGHUP all take the Ctrl-C path.

``kill``, ``timeout``, a batch scheduler's cancel and systemd send SIGTERM; a terminal that
closes sends SIGHUP; Ctrl-C sends SIGINT. Inside ``handled()`` each of them raises
:class:`Stopped`, a ``KeyboardInterrupt``, in the main thread, so one code path (the one Ctrl-C
always took: stop the workers, keep what finished, say what was kept) serves all three, and
``exit_code()`` gives the shell's convention for the signal that came, 128 + its number (130,
143, 129).

Only the first signal raises: a second one while the command is stopping (Ctrl-C pressed
twice, ``timeout`` and a scheduler both sending) is recorded and otherwise ignored, so that it
cannot cut the clean-up short. Inside ``deferred()`` (a file being moved into place, a store row
being renamed) a signal is held until the block ends, so that nothing is left half written.

Python runs a handler wherever the main thread is. Where that is a weakref callback or a
``__del__`` (a figure being closed, a dictionary of weak keys being cleaned), it prints the
exception as "ignored" and carries on; ``handled()`` then delivers the stop again, so that it
reaches the command instead of being lost.

A leaf module: it imports nothing from castlab.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import _thread
from typing import Iterator, Optional

__all__ = ["SIGNALS", "Stopped", "handled", "handler", "deferred", "holding", "hold", "received", "exit_code",
           "what", "exit_now", "stop_on_signals"]

#: The signals a long command stops on.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived (``signum``); a ``KeyboardInterrupt``, so the code written for
    Ctrl-C handles it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


_received: Optional[int] = None  # the first stop signal of this process, once one came
_raised = False  # whether Stopped was raised for it
_defer_depth = 0
_handled_depth = 0  # handled() blocks open
_unraisable_before = None  # sys.unraisablehook outside the outermost handled() block
_in_hook = False  # _unraisable is running: a stop there waits for its next delivery

#: How long after a stop was lost in a callback it is delivered again.
AGAIN_AFTER_S = 0.005


def handler(signum, frame) -> None:
    """The handler ``handled()`` installs. Installed on its own (a testbed's block in a library
    call, a pool worker), it raises :class:`Stopped` for every signal outside ``deferred()``."""
    global _received, _raised
    if _handled_depth == 0:
        _received, _raised = int(signum), False
    elif _received is None:
        _received = int(signum)
    if _raised or _defer_depth > 0 or _in_hook:
        return
    _raised = True
    raise Stopped(_received)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Run the block with SIGINT, SIGTERM and SIGHUP raising :class:`Stopped`; the previous
    handlers come back when it ends. Outside the main thread (where Python cannot set
    handlers) the block runs unchanged."""
    global _received, _raised, _handled_depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _unraisable_before
    _received, _raised = None, False
    old = {s: signal.signal(s, handler) for s in SIGNALS}
    if _handled_depth == 0:
        _unraisable_before = sys.unraisablehook
        sys.unraisablehook = _unraisable
    _handled_depth += 1
    try:
        yield
    finally:
        _handled_depth -= 1
        if _handled_depth == 0:
            sys.unraisablehook = _unraisable_before
            _unraisable_before = None
        for s, h in old.items():
            signal.signal(s, h)


def _unraisable(unraisable) -> None:
    """``sys.unraisablehook`` inside ``handled()``: a :class:`Stopped` that Python could not
    raise (the handler ran inside a weakref callback or a ``__del__``, which Python ends by
    printing the exception and carrying on) is delivered again to the main thread, from another
    thread and a moment later, so that the handler runs after the callback has returned.
    Everything else goes to the hook that was there before."""
    global _raised, _in_hook
    stop = unraisable.exc_value
    if not (isinstance(stop, Stopped) and _handled_depth > 0):
        (_unraisable_before or sys.__unraisablehook__)(unraisable)
        return
    _raised = False  # the stop did not reach the command: the next delivery raises it
    # not threading.Thread: its start() waits for the thread, and the handler would run (and
    # be lost again) in that wait
    _in_hook = True
    try:
        _thread.start_new_thread(_deliver_again, (stop.signum,))
    finally:
        _in_hook = False


def _deliver_again(signum: int) -> None:
    # a real signal (not _thread.interrupt_main) so that a main thread blocked in a system call
    # wakes up; after a pause for the callback to return, and if it lands in another one it is
    # delivered again from there
    time.sleep(AGAIN_AFTER_S)
    if _handled_depth > 0 and not _raised:
        signal.pthread_kill(threading.main_thread().ident, signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold a stop signal that arrives inside the block until the block has ended. Only the
    main thread, where signal handlers run, holds one; elsewhere the block runs unchanged."""
    global _defer_depth, _raised
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _defer_depth += 1
    try:
        yield
    finally:
        _defer_depth -= 1
    if _defer_depth == 0 and _received is not None and not _raised:
        _raised = True
        raise Stopped(_received)


def holding() -> bool:
    """Whether this thread is inside ``deferred()``, where a stop waits for the block's end."""
    return _defer_depth > 0 and threading.current_thread() is threading.main_thread()


def hold(signum: int) -> None:
    """Record the stop signal `signum` for the ``deferred()`` block open now to raise at its end,
    as ``handler`` does: for a process whose own handler decides what a signal means (a pool
    worker)."""
    global _received, _raised
    _received, _raised = int(signum), False


def received() -> Optional[int]:
    """The stop signal this process received inside ``handled()``, or None."""
    return _received


def exit_code(signum: Optional[int] = None) -> int:
    """128 + the signal's number (SIGINT 130, SIGTERM 143, SIGHUP 129): the received signal's,
    130 when none was recorded (a KeyboardInterrupt raised some other way)."""
    s = signum if signum is not None else _received
    return 128 + int(s if s is not None else signal.SIGINT)


def what(signum: Optional[int] = None) -> str:
    """The stop signal in words, for the line that says what was kept."""
    s = signum if signum is not None else _received
    if s is None or s == signal.SIGINT:
        return "Ctrl-C (SIGINT)"
    return signal.Signals(s).name


def exit_now(code: int) -> None:
    """End the process with `code` once its exit handlers have run and its output is flushed,
    without tearing down the interpreter's modules one by one (up to a second with pandas and
    pyarrow loaded on a loaded machine: time a stopped command does not have). For a program
    that is done, never for a library call."""
    import atexit

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is not None:
        run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def stop_on_signals() -> contextlib.AbstractContextManager:
    """``handled()`` for a long-running real-network process (a host role, the user-space
    router): it catches :class:`Stopped` between two slices of its run, names the signal
    (``str(e)``: ``SIGTERM``) and writes its records."""
    return handled()
