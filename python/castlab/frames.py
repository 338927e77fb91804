"""pandas views of the simulator's columnar records."""

from __future__ import annotations

import pandas as pd

from castlab._native import Simulator


def _frame(cols: dict) -> pd.DataFrame:
    df = pd.DataFrame(cols)
    if "time_ns" in df:
        df.insert(0, "time_s", df["time_ns"].to_numpy() / 1e9)
    return df


def arrivals_frame(sim: Simulator, agent: int) -> pd.DataFrame:
    """Every packet a sink received: time_s, time_ns, flow, layer, seq, size."""
    return _frame(sim.sink_arrivals(agent))


def losses_frame(sim: Simulator, agent: int) -> pd.DataFrame:
    """Every sequence gap a sink detected: time_s, time_ns, flow, layer, count."""
    return _frame(sim.sink_losses(agent))


def series_frame(sim: Simulator, channel: int) -> pd.DataFrame:
    """Samples of a monitored channel, with the throughput (bit/s) over each sample interval."""
    df = _frame(sim.channel_series(channel))
    dt = df["time_s"].diff()
    df["throughput_bps"] = (df["bytes"].diff() * 8 / dt).fillna(0.0)
    return df


def level_frame(sim: Simulator) -> pd.DataFrame:
    """Subscription-level changes of all receivers: time_s, time_ns, agent, level."""
    return _frame(sim.level_timeline())
