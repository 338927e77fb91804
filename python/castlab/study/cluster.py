"""Dask as an executor: ``local`` starts a ``distributed.LocalCluster`` on this machine, any
other text is a scheduler address (``tcp://host:8786``). Runs are submitted through
``Client.get_executor()``, a ``concurrent.futures`` executor, so the runner treats Dask like
any other pool. Install with ``pip install castlab[dask]``."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, Optional


@contextlib.contextmanager
def dask_executor(address: str, jobs: Optional[int] = None) -> Iterator:
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise ValueError("--dask needs the dask extra: pip install 'castlab[dask]'") from e
    if not isinstance(address, str) or not address:
        raise ValueError(f"dask: expected 'local' or a scheduler address, got {address!r}")
    if address == "local":
        # one single-threaded worker process per job: the simulator holds the GIL while it runs
        n = jobs or os.cpu_count() or 1
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            yield client.get_executor(pure=False)
    else:
        if jobs is not None:
            raise ValueError("--jobs does not apply to an existing Dask cluster (its workers are set where it runs)")
        with Client(address) as client:
            yield client.get_executor(pure=False)
