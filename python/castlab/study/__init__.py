"""Studies: sweeps over a grid of parameters times seeds, the results store, aggregation.

``castlab.sweep``, ``castlab.results`` and ``castlab.aggregate`` are the entry points; the
heavy libraries (pandas, pyarrow, tqdm, dask) load only when they run.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from castlab.study.results import aggregate, results

__all__ = ["sweep", "results", "aggregate"]


def sweep(target: Any, grid: Optional[Mapping[str, Sequence[Any]]] = None,
          seeds: Union[str, int, Iterable[int]] = 1, *, store: Optional[Union[str, os.PathLike]] = None,
          jobs: Optional[int] = None, executor=None, dask: Optional[str] = None, quick: bool = False,
          progress: bool = True, rerun_failed: bool = True):
    """Run `target` (an experiment name, a scenario file or a Scenario) at every point of `grid`
    ({param: [values]}) times every seed (``"1-10"``, an int, or a list), and return one row per
    run as a DataFrame (the runs found in `store` included). See ``castlab.study.runner.run_sweep``
    for `jobs`, `executor` and `store`; `dask` is a scheduler address or ``"local"``."""
    import pandas as pd

    from castlab.seeds import parse_seeds
    from castlab.study.runner import run_sweep

    if isinstance(seeds, (str, int)) and not isinstance(seeds, bool):
        seeds = parse_seeds(str(seeds))
    if dask is not None and executor is not None:
        raise ValueError("give dask or executor, not both")
    if dask is not None:
        from castlab.study.cluster import dask_executor

        with dask_executor(dask, jobs) as ex:
            rep = run_sweep(target, grid, seeds, store=store, executor=ex, quick=quick, progress=progress,
                            rerun_failed=rerun_failed)
    else:
        rep = run_sweep(target, grid, seeds, store=store, jobs=jobs, executor=executor, quick=quick,
                        progress=progress, rerun_failed=rerun_failed)
    df = pd.DataFrame(rep.rows)
    df.attrs["params"] = rep.params
    df.attrs["metrics"] = rep.metrics
    df.attrs["skipped"] = rep.skipped
    df.attrs["ran"] = rep.ran
    df.attrs["failed"] = rep.failed
    return df
