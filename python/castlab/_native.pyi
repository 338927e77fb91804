# Hand-written stub for the Rust extension module castlab._native.
# tests/test_stub.py checks every name and parameter here against the compiled module.
from typing import Optional

import numpy as np
import numpy.typing as npt

__version__: str

class Simulator:
    """The deterministic packet-level simulator. A run is a pure function of scenario and seed."""

    def __init__(
        self,
        seed: int = 0,
        join_latency: float = 0.0,
        leave_latency: float = 0.0,
        queue_avg_weight: float = 0.002,
    ) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def seed(self) -> int: ...
    def add_node(self, name: str) -> int: ...
    def add_link(
        self,
        a: str,
        b: str,
        rate_bps: float,
        delay: float,
        queue: str = "droptail",
        queue_limit_pkts: int = 50,
        loss_ab: float = 0.0,
        loss_ba: float = 0.0,
        cost: int = 1,
        red_min_th: float = 5.0,
        red_max_th: float = 15.0,
        red_max_p: float = 0.1,
        red_w_q: float = 0.002,
        red_gentle: bool = False,
        red_mark: bool = False,
        mean_pkt_bytes: int = 1000,
    ) -> tuple[int, int]: ...
    def channel(self, a: str, b: str) -> int: ...
    def add_group(self, source: str) -> int: ...
    def add_layered_source(
        self,
        node: str,
        groups: list[int],
        rates_bps: list[float],
        packet_size: int = 1000,
        flow: int = 0,
        start: float = 0.0,
        stop: Optional[float] = None,
        jitter: bool = True,
    ) -> int: ...
    def add_cbr(
        self,
        node: str,
        dst: str,
        dst_port: int,
        rate_bps: float,
        packet_size: int = 1000,
        flow: int = 0,
        start: float = 0.0,
        stop: Optional[float] = None,
        jitter: bool = False,
    ) -> int: ...
    def add_sink(
        self,
        node: str,
        groups: list[int] = ...,
        schedule: list[tuple[float, int]] = ...,
        port: Optional[int] = None,
        start: float = 0.0,
    ) -> int: ...
    def attach_layer_dropper(
        self,
        node: str,
        channel: int,
        layer: int,
        report_via: Optional[int] = None,
        report_every: float = 1.0,
    ) -> None: ...
    def layer_dropper_count(self, node: str) -> int: ...
    def monitor_channel(self, channel: int, interval: float) -> None: ...
    def run(self, until: float) -> None: ...
    def sink_arrivals(self, agent: int) -> dict[str, npt.NDArray[np.integer]]: ...
    def sink_losses(self, agent: int) -> dict[str, npt.NDArray[np.integer]]: ...
    def sink_worst_window_loss(self, agent: int, window: float) -> float: ...
    def channel_stats(self, channel: int) -> dict[str, object]: ...
    def channel_series(self, channel: int) -> dict[str, npt.NDArray[np.generic]]: ...
    def node_stats(self, node: str) -> dict[str, int]: ...
    def conservation(self) -> dict[str, object]: ...
    def engine_stats(self) -> dict[str, int]: ...
    def level_timeline(self) -> dict[str, npt.NDArray[np.integer]]: ...
    def forwards(self, group: int, node: str, channel: int) -> bool: ...
    # --- tcp (crates/castlab-py/src/tcp.rs) ---
    def add_tcp_flow(
        self,
        src: str,
        dst: str,
        variant: str = "newreno",
        mss_bytes: int = 1000,
        start: float = 0.0,
        stop: Optional[float] = None,
        delayed_ack: bool = False,
        min_rto: float = 1.0,
        initial_window_segs: int = 2,
        rwnd_bytes: Optional[int] = None,
        transfer_bytes: Optional[int] = None,
        port: Optional[int] = None,
        flow: Optional[int] = None,
        header_bytes: int = 40,
        initial_ssthresh_bytes: Optional[int] = None,
        initial_rto: float = 1.0,
        max_rto: float = 60.0,
        dupack_threshold: int = 3,
        delayed_ack_timeout: float = 0.2,
        timestamps: bool = True,
    ) -> int:
        """A TCP Reno/NewReno sender on `src` and its sink on `dst`; returns the sender's agent id.
        `timestamps`: RTT samples from the timestamp echo, retransmissions included (RFC 7323
        §4.1); False for strict Karn's rule, as ns-2's default agents."""
        ...
    def tcp_trace(self, agent: int) -> dict[str, npt.NDArray[np.integer]]:
        """cwnd/ssthresh changes, RTT samples, retransmissions, timeouts, cumulative acked and
        received bytes of a TCP sender (times in ns)."""
        ...
    def tcp_stats(self, agent: int) -> dict[str, object]: ...
    # --- rlm (crates/castlab-py/src/rlm.rs) ---
    def add_rlm_receiver(
        self,
        node: str,
        data_groups: list[int],
        control_group: int,
        start: float = 0.0,
        alpha: float = 2.0,
        beta: float = 0.6666666666666666,
        k1: float = 1.0,
        k2: float = 2.0,
        g1: float = 0.25,
        g2: float = 0.25,
        t_min: float = 5.0,
        t_max: float = 600.0,
        scale_t_max: bool = True,
        detection_init: float = 5.0,
        detection_dev_init: float = 2.0,
        loss_gain: float = 0.0625,
        loss_threshold: float = 0.25,
        session_interval_min: float = 5.0,
        session_bandwidth_bps: float = 1600.0,
        member_timeout_intervals: int = 5,
        control_size_bytes: int = 40,
        record_arrivals: bool = True,
    ) -> int: ...
    def rlm_records(self, agent: int) -> dict[str, object]: ...
    def rlm_status(self, agent: int) -> dict[str, object]: ...
    def rlm_config(self, agent: int) -> dict[str, object]: ...
    def rlm_worst_window_loss(self, agent: int, window: float) -> float: ...

def worst_window_loss(times_ns: list[int], received: list[int], lost: list[int], window: float) -> float: ...
def transmission_ns(size_bytes: int, rate_bps: float) -> int: ...
