"""A cache of runs that several experiments repeat, keyed by the run's full parameters.

Some experiments rerun another's runs exactly: lesbcc-fig7's full cascade is lesbcc-fig6's
56 ms runs, lesbcc-fig20's AIMD runs are lesbcc-fig13's case (b), lesbcc-fig14's DropTail runs
are lesbcc-fig13's case (a). A run is a pure function of its function and arguments (and the
process's phase randomisation), so the second experiment can load the first one's result
instead of simulating it again: its outputs are the same bytes.

The cache is on only when ``CASTLAB_RUN_CACHE`` names a folder. ``castlab reproduce --all``
sets it to a fresh temporary folder for the length of the command and removes it afterwards, so
a cached run never outlives the code that made it; a single ``castlab reproduce NAME`` runs
everything itself unless the variable is set by hand (then the folder is the user's to clear
when the code changes).

The key is the function's module and name, every argument bound to its parameter with the
defaults filled in (``fig5_run(s, policy="aimd")`` and ``fig5_run(s)`` are one run), and the
phase overhead. Entries are pickles written to a temporary name and renamed, so experiments
running at once in several processes never read half an entry; two that miss at the same time
both run and write the same bytes.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
from pathlib import Path
from typing import Any, Callable

__all__ = ["RUN_CACHE_ENV", "cached", "run_key"]

RUN_CACHE_ENV = "CASTLAB_RUN_CACHE"


def run_key(fn: Callable[..., Any], *args: Any, **kw: Any) -> str:
    """The cache key of ``fn(*args, **kw)``: a hash of the function's name, its bound arguments
    with defaults applied (in parameter order) and the phase overhead."""
    from castlab.simulator import default_phase_overhead

    bound = inspect.signature(fn).bind(*args, **kw)
    bound.apply_defaults()
    text = repr((fn.__module__, fn.__qualname__, _canonical(dict(bound.arguments)), default_phase_overhead()))
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(v: Any) -> Any:
    """Dicts with sorted keys (a keyword dict's order must not change the key), tuples for lists."""
    if isinstance(v, dict):
        return tuple(sorted((str(k), _canonical(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_canonical(x) for x in v)
    return v


def cached(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)``, loaded from the run cache when it holds the same run (see the module)."""
    folder = os.environ.get(RUN_CACHE_ENV, "").strip()
    if not folder:
        return fn(*args, **kw)
    path = Path(folder) / f"{run_key(fn, *args, **kw)}.pkl"
    try:
        return pickle.loads(path.read_bytes())
    except (FileNotFoundError, EOFError, pickle.UnpicklingError):
        pass
    result = fn(*args, **kw)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, path)
    return result
