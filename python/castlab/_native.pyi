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
    def run(self, until: float) -> None:
        """Run until ``until`` seconds (events at ``until`` included); may be called again.

        Runs in slices and raises ``KeyboardInterrupt`` on Ctrl-C between them; the results do
        not depend on the slicing. The GIL is held while it runs.
        """
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
    # --- nlm (crates/castlab-py/src/nlm.rs) ---
    def nlm_default_config(self) -> dict[str, float]:
        """Table 2's NLM parameters and castlab's documented choices (durations in seconds)."""
        ...
    def add_nlm_sender(
        self,
        node: str,
        group: int,
        rates_bps: list[float],
        packet_size: int = 1024,
        flow: int = 0,
        start: float = 0.0,
        stop: Optional[float] = None,
        jitter: bool = True,
        config: Optional[dict[str, float]] = None,
    ) -> int:
        """An NLM sender: every layer on `group` (rooted at `node`), SESS every ss_intvl."""
        ...
    def add_nlm_receiver(
        self,
        node: str,
        group: int,
        layers: int = 5,
        start: float = 0.0,
        bin: float = 1.0,
        config: Optional[dict[str, float]] = None,
    ) -> int:
        """An NLM receiver: DROP_REQ upstream when its loss rate exceeds loss_th."""
        ...
    def attach_lmr(
        self,
        node: str,
        config: Optional[dict[str, float]] = None,
        meter_channel: Optional[int] = None,
        meter_bin: float = 1.0,
        meter_layers: int = 8,
    ) -> None:
        """Make `node` an LMR; optionally meter one output channel (see `loss_meter`)."""
        ...
    def attach_loss_meter(self, node: str, channel: int, bin: float = 1.0, layers: int = 8) -> None:
        """A loss meter alone (plain DropTail router) on an output channel of `node`."""
        ...
    def loss_meter(self, node: str) -> dict[str, object]:
        """Per flow: 2-D arrays [bin, layer] of packets offered to the queue and dropped by it."""
        ...
    def lmr_records(self, node: str) -> dict[str, object]: ...
    def lmr_status(self, node: str) -> dict[str, object]: ...
    def nlm_sender_records(self, agent: int) -> dict[str, object]: ...
    def nlm_receiver_records(self, agent: int) -> dict[str, object]: ...
    # --- bcfs: BCFS, digital fountain, Rainbow, PGM over BCFS (crates/castlab-py/src/bcfs.rs) ---
    def add_bcf_routers(
        self,
        nodes: Optional[list[str]] = None,
        max_entries: int = 4096,
        refresh_interval: float = 1.0,
        link_lifetime: float = 5.0,
    ) -> int:
        """Attach a BCF router to each node (every node when None); returns how many."""
        ...
    def bcf_router_stats(self, node: str) -> dict[str, int]: ...
    def bcf_replies_per_channel(self, node: str) -> npt.NDArray[np.uint64]: ...
    def add_fountain_source(
        self,
        node: str,
        port: Optional[int] = None,
        packet_bytes: int = 512,
        flow: Optional[int] = None,
        file: Optional[bytes] = None,
        symbol_size: int = 448,
        start: float = 0.0,
    ) -> int:
        """A digital-fountain source (symbolic, or RaptorQ over `file`); returns the agent id."""
        ...
    def fountain_stats(self, source: int) -> dict[str, object]: ...
    def add_rainbow_receiver(
        self,
        node: str,
        source: int,
        start: float = 0.0,
        needed_packets: int = 2000,
        port: Optional[int] = None,
        flow: Optional[int] = None,
        request_bytes: int = 40,
        initial_window: int = 1,
        max_window: int = 1024,
        initial_rto: float = 1.0,
        min_rto: float = 0.2,
        max_rto: float = 10.0,
        hold_rtt_fraction: float = 0.5,
        reorder_threshold: int = 3,
    ) -> int:
        """A Rainbow receiver fetching from fountain agent `source`; returns the agent id."""
        ...
    def rainbow_records(self, agent: int) -> dict[str, object]:
        """Symbols received (rx_time_ns, rx_symbol), window changes (win_time_ns, win), counters."""
        ...
    def rainbow_decoded(self, agent: int) -> Optional[bytes]: ...
    def add_bcf_pgm_source(
        self,
        node: str,
        group: int,
        count: int,
        rate_bps: float,
        start: float = 0.0,
        port: Optional[int] = None,
        flow: Optional[int] = None,
        packet_bytes: int = 512,
        label_prefix: int = 20551,
    ) -> int: ...
    def add_bcf_pgm_receiver(
        self,
        node: str,
        source: int,
        start: float = 0.0,
        nak_timeout: float = 0.5,
        idle_timeout: float = 0.5,
    ) -> int: ...
    def bcf_pgm_stats(self, agent: int) -> dict[str, object]: ...
    # --- lesbcc (crates/castlab-py/src/lesbcc.rs) ---
    def add_lesbcc_source(
        self,
        node: str,
        group: int,
        flow: int = 0,
        start: float = 0.0,
        packet_bytes: int = 560,
        initial_rate_bps: float = 200e3,
        min_rate_bps: float = 4480.0,
        max_rate_bps: Optional[float] = None,
        initial_srtt: float = 0.2,
        li2le: bool = True,
        max_lprf: bool = True,
        atf: bool = True,
        silence: bool = True,
        policy: str = "aimd",
        total_packets: Optional[int] = None,
        tfrc_alpha: float = 0.95,
        tfrc_n: int = 8,
        rtt_prune_keep_one_in: int = 10,
        rtt_gain: float = 0.125,
    ) -> int:
        """An LE-SBCC multicast source (cascade of §2.1, AIMD or the TFRC module of §4) over the
        PGM-like transport of §5.1; returns the agent id."""
        ...
    def add_pgm_receiver(
        self,
        node: str,
        group: Optional[int] = None,
        flow: int = 0,
        port: Optional[int] = None,
        start: float = 0.0,
        nak_backoff_max: float = 0.1,
        nak_rpt_ivl: float = 0.5,
        nak_rdata_ivl: float = 1.0,
        ncf_suppression: bool = True,
    ) -> int:
        """A PGM receiver (receive window, NAK back-off, NCF suppression); returns the agent id."""
        ...
    def add_lesbcc_unicast(
        self,
        src: str,
        dst: str,
        flow: Optional[int] = None,
        port: Optional[int] = None,
        start: float = 0.0,
        packet_bytes: int = 560,
        initial_rate_bps: float = 200e3,
        min_rate_bps: float = 4480.0,
        max_rate_bps: Optional[float] = None,
        initial_srtt: float = 0.2,
        li2le: bool = True,
        max_lprf: bool = True,
        atf: bool = True,
        silence: bool = True,
        policy: str = "aimd",
        total_packets: Optional[int] = None,
        tfrc_alpha: float = 0.95,
        tfrc_n: int = 8,
        rtt_prune_keep_one_in: int = 10,
        rtt_gain: float = 0.125,
        nak_backoff_max: float = 0.1,
        nak_rpt_ivl: float = 0.5,
        nak_rdata_ivl: float = 1.0,
        ncf_suppression: bool = True,
    ) -> int:
        """A unicast LE-SBCC flow: PGM receiver on `dst` (agent id - 1), source on `src`."""
        ...
    def lesbcc_stats(self, agent: int) -> dict[str, object]: ...
    def lesbcc_trace(self, agent: int) -> dict[str, npt.NDArray[np.generic]]: ...
    def pgm_receiver_stats(self, agent: int) -> dict[str, object]: ...
    def attach_nak_aggregator(self, node: str, hold: float = 0.5) -> None: ...
    def nak_aggregator_stats(self, node: str) -> dict[str, int]: ...

def worst_window_loss(times_ns: list[int], received: list[int], lost: list[int], window: float) -> float: ...
def transmission_ns(size_bytes: int, rate_bps: float) -> int: ...
# --- lesbcc module functions (crates/castlab-py/src/lesbcc.rs) ---
def lesbcc_synthetic(
    classes: list[tuple[int, float, float]],
    packets: int = 6000,
    seed: int = 0,
    initial_rate_bps: float = 200e3,
    initial_srtt: float = 0.2,
    li2le: bool = True,
    max_lprf: bool = True,
    atf: bool = True,
    silence: bool = True,
    policy: str = "aimd",
) -> dict[str, object]:
    """The LE-SBCC cascade driven by synthetic LIs: classes of (count, loss, rtt_s) receivers."""
    ...
def tfrc_average_interval(intervals: list[int], s0: int, i: int = 1, n: int = 8, alpha: float = 0.95) -> Optional[float]:
    """ŝ_i of LE-SBCC §4.1 over loss intervals given newest first."""
    ...
