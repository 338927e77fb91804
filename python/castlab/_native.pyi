# Hand-written stub for the Rust extension module castlab._native.
# tests/test_stub.py checks every name and parameter here against the compiled module.
from typing import Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str

#: A configuration override: numbers (durations in seconds), flags, names ("aimd"), None, lists.
ConfigValue = Union[int, float, bool, str, None, list[float]]

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
        record: str = "summary",
        windows: list[float] = ...,
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
    def sink_summary(self, agent: int) -> dict[str, object]: ...
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
        start: float = 0.0,
        stop: Optional[float] = None,
        transfer_bytes: Optional[int] = None,
        port: Optional[int] = None,
        flow: Optional[int] = None,
        **config: ConfigValue,
    ) -> int:
        """A TCP Reno/NewReno sender on `src` and its sink on `dst`; returns the sender's agent id.
        Overrides: config_defaults("tcp") (`timestamps`: RTT samples from the timestamp echo,
        retransmissions included, RFC 7323 §4.1; False for strict Karn's rule, as ns-2's)."""
        ...
    def tcp_trace(self, agent: int) -> dict[str, npt.NDArray[np.integer]]:
        """cwnd/ssthresh changes, RTT samples, retransmissions, timeouts, cumulative acked and
        received bytes of a TCP sender (times in ns)."""
        ...
    def tcp_stats(self, agent: int) -> dict[str, object]: ...
    # --- rlm (crates/castlab-py/src/rlm.rs) ---
    def add_rlm_receiver(
        self, node: str, data_groups: list[int], control_group: int, start: float = 0.0, **config: ConfigValue
    ) -> int:
        """An RLM receiver (§3). Overrides: config_defaults("rlm") (the paper's §4 values). It
        keeps counters by default; ``windows=[1, 10, 100]`` computes those windows' worst-case
        loss online, ``record="arrivals"`` also keeps every arrival time (``arr_time_ns``)."""
        ...
    def rlm_records(self, agent: int) -> dict[str, object]: ...
    def rlm_status(self, agent: int) -> dict[str, object]: ...
    def rlm_config(self, agent: int) -> dict[str, object]: ...
    def rlm_worst_window_loss(self, agent: int, window: float) -> float:
        """Worst-case windowed loss (§4.1): online for a configured window, else from the
        recorded arrivals (``record="arrivals"``); the same number either way."""
        ...
    # --- rlc (crates/castlab-py/src/rlc.rs) ---
    def add_rlc_sender(
        self,
        node: str,
        groups: list[int],
        flow: int,
        start: float = 0.0,
        stop: float | None = None,
        **config: ConfigValue,
    ) -> int:
        """An RLC sender, one group per layer. Overrides: config_defaults("rlc")."""
        ...
    def add_rlc_receiver(
        self, node: str, groups: list[int], flow: int, start: float = 0.0, **config: ConfigValue
    ) -> int:
        """An RLC receiver. Overrides: config_defaults("rlc")."""
        ...
    def rlc_records(self, agent: int) -> dict[str, object]: ...
    def rlc_config(self, agent: int) -> dict[str, object]: ...
    # --- nlm (crates/castlab-py/src/nlm.rs) ---
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
        **config: ConfigValue,
    ) -> int:
        """An NLM sender: every layer on `group` (rooted at `node`), SESS every ss_intvl.
        Overrides: config_defaults("nlm") (Table 2)."""
        ...
    def add_nlm_receiver(
        self, node: str, group: int, layers: int = 5, start: float = 0.0, bin: float = 1.0, **config: ConfigValue
    ) -> int:
        """An NLM receiver: DROP_REQ upstream when its loss rate exceeds loss_th.
        Overrides: config_defaults("nlm")."""
        ...
    def attach_lmr(
        self,
        node: str,
        meter_channel: Optional[int] = None,
        meter_bin: float = 1.0,
        meter_layers: int = 8,
        **config: ConfigValue,
    ) -> None:
        """Make `node` an LMR; optionally meter one output channel (see `loss_meter`).
        Overrides: config_defaults("nlm")."""
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
    def add_bcf_routers(self, nodes: Optional[list[str]] = None, **config: ConfigValue) -> int:
        """Attach a BCF router to each node (every node when None); returns how many.
        Overrides: config_defaults("bcf")."""
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
        **config: ConfigValue,
    ) -> int:
        """A Rainbow receiver fetching from fountain agent `source`; returns the agent id.
        Overrides: config_defaults("rainbow")."""
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
        **config: ConfigValue,
    ) -> int:
        """A PGM-like source over BCFS. Overrides: config_defaults("bcf_pgm")."""
        ...
    def add_bcf_pgm_receiver(self, node: str, source: int, start: float = 0.0, **config: ConfigValue) -> int:
        """A PGM-like receiver over BCFS. Overrides of the source's settings: config_defaults("bcf_pgm")."""
        ...
    def bcf_pgm_stats(self, agent: int) -> dict[str, object]: ...
    # --- lesbcc (crates/castlab-py/src/lesbcc.rs) ---
    def add_lesbcc_source(self, node: str, group: int, flow: int = 0, start: float = 0.0, **config: ConfigValue) -> int:
        """An LE-SBCC multicast source (cascade of §2.1, AIMD or the TFRC module of §4) over the
        PGM-like transport of §5.1; returns the agent id. Overrides: config_defaults("lesbcc")."""
        ...
    def add_pgm_receiver(
        self,
        node: str,
        group: Optional[int] = None,
        flow: int = 0,
        port: Optional[int] = None,
        start: float = 0.0,
        **config: ConfigValue,
    ) -> int:
        """A PGM receiver (receive window, NAK back-off, NCF suppression); returns the agent id.
        Overrides: config_defaults("pgm")."""
        ...
    def add_lesbcc_unicast(
        self,
        src: str,
        dst: str,
        flow: Optional[int] = None,
        port: Optional[int] = None,
        start: float = 0.0,
        **config: ConfigValue,
    ) -> int:
        """A unicast LE-SBCC flow: a PGM receiver on `dst`, then the source on `src`; returns the
        source's id. Overrides: config_defaults("lesbcc") and config_defaults("pgm"), by name."""
        ...
    def lesbcc_stats(self, agent: int) -> dict[str, object]: ...
    def lesbcc_trace(self, agent: int) -> dict[str, npt.NDArray[np.generic]]: ...
    def pgm_receiver_stats(self, agent: int) -> dict[str, object]: ...
    def attach_nak_aggregator(self, node: str, hold: float = 0.5) -> None: ...
    def nak_aggregator_stats(self, node: str) -> dict[str, int]: ...

def worst_window_loss(times_ns: list[int], received: list[int], lost: list[int], window: float) -> float: ...
def config_defaults(protocol: str) -> dict[str, ConfigValue]:
    """A protocol's default configuration (the paper's values; durations in seconds): exactly the
    keyword overrides its `add_*` methods accept."""
    ...
def transmission_ns(size_bytes: int, rate_bps: float) -> int: ...
# --- lesbcc module functions (crates/castlab-py/src/lesbcc.rs) ---
def lesbcc_synthetic(
    classes: list[tuple[int, float, float]], packets: int = 6000, seed: int = 0, **config: ConfigValue
) -> dict[str, object]:
    """The LE-SBCC cascade driven by synthetic LIs: classes of (count, loss, rtt_s) receivers.
    Overrides: config_defaults("lesbcc")."""
    ...
def tfrc_average_interval(intervals: list[int], s0: int, i: int = 1, n: int = 8, alpha: float = 0.95) -> Optional[float]:
    """ŝ_i of LE-SBCC §4.1 over loss intervals given newest first."""
    ...

# --- real-network driver (crates/castlab-py/src/net.rs) ---
class NetDriver:
    """castlab's agents on UDP sockets and IP multicast, on the wall clock (castlab-net).
    Agents are named by the agent id given when adding them; records come back in the same
    dicts as the simulator's. See docs/real-network.md."""

    def __init__(
        self,
        nodes: list[tuple[int, str]],
        groups: list[tuple[int, str, int, Optional[int]]],
        config: Optional[dict[str, object]] = None,
    ) -> None: ...
    @property
    def now(self) -> float:
        """Seconds since the driver was created."""
        ...
    def add_layered_source(
        self,
        agent_id: int,
        node: int,
        port: int,
        groups: list[int],
        rates_bps: list[float],
        packet_size: int = 1000,
        flow: int = 0,
        jitter: bool = True,
        stop: Optional[float] = None,
    ) -> int: ...
    def add_rlc_source(
        self,
        agent_id: int,
        node: int,
        port: int,
        groups: list[int],
        flow: int = 0,
        stop: Optional[float] = None,
        **config: ConfigValue,
    ) -> int:
        """An RLC source on sockets. Overrides: config_defaults("rlc")."""
        ...
    def add_rlc_receiver(
        self, agent_id: int, node: int, port: int, groups: list[int], flow: int = 0, **config: ConfigValue
    ) -> int:
        """An RLC receiver on sockets. Overrides: config_defaults("rlc")."""
        ...
    def rlc_records(self, agent: int) -> dict[str, object]: ...
    def add_sink(
        self, agent_id: int, node: int, port: int, groups: list[int] = ..., schedule: list[tuple[float, int]] = ...
    ) -> int: ...
    def add_rlm_receiver(
        self,
        agent_id: int,
        node: int,
        port: int,
        data_groups: list[int],
        control_group: int,
        **config: ConfigValue,
    ) -> int:
        """An RLM receiver on sockets. Overrides: config_defaults("rlm")."""
        ...
    def add_lesbcc_source(
        self,
        agent_id: int,
        node: int,
        port: int,
        group: int,
        flow: int = 0,
        **config: ConfigValue,
    ) -> int:
        """An LE-SBCC source over the PGM-like transport. Overrides: config_defaults("lesbcc")."""
        ...
    def add_pgm_receiver(
        self,
        agent_id: int,
        node: int,
        port: int,
        group: Optional[int] = None,
        flow: int = 0,
        **config: ConfigValue,
    ) -> int:
        """A PGM receiver that NAKs its losses. Overrides: config_defaults("pgm")."""
        ...
    def run(self, duration: float, status: Optional[object] = None, status_interval: float = 1.0) -> None:
        """Run `duration` s of wall clock; GIL released in <= 100 ms slices, signals checked
        between them, `status()` called every `status_interval` s."""
        ...
    def stats(self) -> dict[str, object]: ...
    def joined(self, agent: int) -> list[int]: ...
    def agents(self) -> list[int]: ...
    def level_timeline(self) -> dict[str, npt.NDArray[np.integer]]: ...
    def rate_timeline(self) -> dict[str, npt.NDArray[np.generic]]: ...
    def source_sent(self, agent: int) -> list[int]: ...
    def sink_arrivals(self, agent: int) -> dict[str, npt.NDArray[np.integer]]: ...
    def sink_losses(self, agent: int) -> dict[str, npt.NDArray[np.integer]]: ...
    def sink_level(self, agent: int) -> int: ...
    def rlm_records(self, agent: int) -> dict[str, object]: ...
    def rlm_status(self, agent: int) -> dict[str, object]: ...
    def lesbcc_stats(self, agent: int) -> dict[str, object]: ...
    def lesbcc_trace(self, agent: int) -> dict[str, npt.NDArray[np.generic]]: ...
    def pgm_receiver_stats(self, agent: int) -> dict[str, object]: ...

def net_default_config() -> dict[str, object]:
    """The real-network driver's default settings (Rust's NetConfig::default)."""
    ...
