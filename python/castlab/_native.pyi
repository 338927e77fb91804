# Hand-written stub for the Rust extension module castlab._native.
# tests/api/test_stub.py checks every name and parameter here against the compiled module.
import os
from typing import Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str
TCP_VARIANTS: tuple[str, ...]
"""The TCP variants `add_tcp_flow` and scenario files accept: reno, newreno, sack, cubic, bbr."""

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
        phase_overhead: float = 0.0,
    ) -> None:
        """A simulator with master seed `seed`. `join_latency`: added once to every graft (s);
        `leave_latency`: how long a node with no members waits before pruning (s);
        `queue_avg_weight`: the EWMA weight of every queue's averaged length;
        `phase_overhead`: phase randomisation, the largest random delay (s, at most 1) a packet
        waits at its sending agent before it enters the network, drawn uniformly per packet on
        the agent's own stream, the agent's packets kept in order (as ns-2's ``overhead_``,
        against the phase effects of Floyd and Jacobson 1992). 0, the default, is off.
        """
    @property
    def now(self) -> float:
        """Current simulated time, seconds."""
    @property
    def seed(self) -> int:
        """The master seed every entity's random stream derives from."""
    def add_node(self, name: str) -> int:
        """Add a node named `name`; returns its id. A duplicate name is a ValueError."""
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
        tbf_burst: int = 0,
        tbf_overhead: int = 14,
    ) -> tuple[int, int]:
        """A duplex link a <-> b of `rate_bps` bit/s and `delay` s each way, with an output queue
        per direction (`queue`: "droptail" with `queue_limit_pkts` waiting packets, or "red" with
        the red_* parameters, Floyd & Jacobson 1993), optional Bernoulli loss per direction and a
        routing `cost`. `tbf_burst` > 0: each direction a token bucket of that many bytes in place
        of serialisation, as Linux's tbf, charging a packet its size plus `tbf_overhead` bytes
        (the scenario keys of the same names, docs/guide.md). Returns the two channel ids
        (a->b, b->a).
        """
    def enable_pcap(self, a: str, b: str, path: Union[str, os.PathLike[str]], wire: str = "castlab", session: int = 1,
                    port_base: int = 47000) -> None:
        """Write every packet that leaves node `a` toward node `b` into the pcap file `path`, as the
        real mode would send it (ns-3's `EnablePcap`, one direction of a link): `wire` "castlab"
        (the envelope of session `session`) or "pgm" (RFC 3208; packets that are not PGM are left
        out). Node n is 10.0.0.0 + n + 1, group g 239.255.0.1 + g, castlab port p UDP port
        `port_base` + p (every PGM datagram and group on `port_base`); timestamps are simulated
        time. The file is complete when the simulator is dropped or the tap replaced.
        """
    def channel(self, a: str, b: str) -> int:
        """The channel id from node `a` to node `b`."""
    def add_group(self, source: str) -> int:
        """A source-specific multicast group rooted at node `source`."""
    def attach_layer_dropper(
        self,
        node: str,
        channel: int,
        layer: int,
        report_via: Optional[int] = None,
        report_every: float = 1.0,
    ) -> None:
        """Attach the example extension that drops one layer's data on one output channel of
        `node` (and optionally sends a report packet on `report_via` every `report_every` s).
        """
    def layer_dropper_count(self, node: str) -> int:
        """Packets the layer dropper on `node` has dropped."""
    def monitor_channel(self, channel: int, interval: float) -> None:
        """Sample a channel every `interval` seconds (queue length, average, bytes, drops)."""
    def run(self, until: float) -> None:
        """Run until ``until`` seconds (events at ``until`` included); may be called again.

        Runs in slices and raises ``KeyboardInterrupt`` on Ctrl-C between them; the results do
        not depend on the slicing. The GIL is released while each slice runs, so other Python
        threads run meanwhile; the simulator itself stays usable only from its own thread.
        """
    def channel_stats(self, channel: int) -> dict[str, object]:
        """A channel's counters (arrivals, enqueued, drops_forced, drops_early, marked, departures,
        bytes_departed, lost_random, delivered, ext_drops, drops_link_down), whether it is `up`,
        its set-up (from, to, rate_bps, delay) and the current queue_len and queue_avg.
        """
    def channel_series(self, channel: int) -> dict[str, npt.NDArray[np.generic]]:
        """The periodic samples of a monitored channel (`monitor_channel`): time_ns, qlen, qavg,
        bytes and drops per interval.
        """
    def node_stats(self, node: str) -> dict[str, int]:
        """A node's packet fates: ext_drops, ext_consumed (router extensions), delivered_local,
        no_listener, no_route, mc_unwanted.
        """
    def conservation(self) -> dict[str, object]:
        """Packet conservation over the run: every packet created is dropped, lost, consumed,
        delivered, queued, on the wire, in flight or waiting at its sender (`in_sender`, phase
        randomisation) or lost to a link that went down (`link_down`); `holds` says whether the
        books balance.
        """
    def engine_stats(self) -> dict[str, int]:
        """The engine's counters: events processed and packets forwarded (link transmissions)."""
    def level_timeline(self) -> dict[str, npt.NDArray[np.integer]]:
        """Every subscription-level change of every layered receiver: time_ns, agent, level."""
    def link_down(self, at: float, a: str, b: str) -> None:
        """Schedule the duplex link between nodes `a` and `b` (both directions) to go down at `at`
        seconds, as ns-2's ``rtmodel-at at down a b``: what it holds then is dropped and counted
        (``drops_link_down``), routes are recomputed and multicast trees re-grafted on the new
        reverse paths. Several links between `a` and `b`: the first one added.
        """
    def link_up(self, at: float, a: str, b: str) -> None:
        """Schedule the duplex link between nodes `a` and `b` to come back up at `at` seconds."""
    def node_down(self, at: float, node: str) -> None:
        """Schedule `node` to fail at `at` seconds: every link of it goes down (its agents keep
        running, cut off), as ns-2's ``rtmodel-at at down node``."""
    def node_up(self, at: float, node: str) -> None:
        """Schedule `node` to come back at `at` seconds, with every link of it that was not set
        down by itself."""
    def node_is_up(self, node: str) -> bool:
        """Whether `node` is up now."""
    def route(self, src: str, dst: str) -> Optional[list[str]]:
        """The path unicast packets take now from `src` to `dst`, as node names from `src` to
        `dst`; None when `dst` cannot be reached. Routes exist once the run has started."""
    def forwards(self, group: int, node: str, channel: int) -> bool:
        """Whether `node` currently forwards `group` on `channel`."""
    # --- tcp (crates/castlab-py/src/tcp.rs) ---
    def add_role(self, role: str, args: Optional[dict[str, object]] = None, config: Optional[dict[str, ConfigValue]] = None) -> object:
        """Build the registered role `role` (see `protocols()`) with its arguments `args` and
        config overrides `config`; returns what the role returns (an agent id, a count, None).
        `castlab.Simulator` names each role as a method."""
    def read(self, reader: str, target: object, args: Optional[dict[str, object]] = None) -> object:
        """Read the registered record or status `reader` of `target` (an agent id or a node
        name), with the reader's further arguments `args`."""

def worst_window_loss(times_ns: list[int], received: list[int], lost: list[int], window: float) -> float:
    """Worst-case windowed loss over an event process (McCanne et al. §4.2): `times_ns` sorted; at each
    event `received` packets arrived and `lost` were detected lost.
    """
def config_defaults(protocol: str) -> dict[str, ConfigValue]:
    """A protocol's default configuration (the paper's values; durations in seconds): exactly the
    keyword overrides its `add_*` methods accept."""
    ...
def protocols() -> list[dict[str, object]]:
    """The protocol registry as plain data: per protocol its name, paper, config tables, roles
    (name, doc, params as (name, default, required), config table, net), readers (name, doc,
    target, params, net), the scenario's session, receiver and router kinds, and its functions
    (name, doc, params, config table)."""
def call_function(function: str, args: Optional[dict[str, object]] = None, config: Optional[dict[str, ConfigValue]] = None) -> object:
    """Call the registered function `function` (see `protocols()`) with its arguments `args`
    and config overrides `config`; `castlab.functions` names each one."""

def transmission_ns(size_bytes: int, rate_bps: float) -> int:
    """Serialisation time in ns of `size_bytes` at `rate_bps` (the engine's rounding)."""
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
    ) -> None:
        """A real-network driver: castlab agents over UDP and IP multicast on this host (see
        docs/real-network.md).
        """
    @property
    def now(self) -> float:
        """Seconds since the driver was created."""
        ...
    def run(self, duration: float, status: Optional[object] = None, status_interval: float = 1.0) -> None:
        """Run `duration` s of wall clock; GIL released in <= 100 ms slices, signals checked
        between them, `status()` called every `status_interval` s."""
        ...
    def stats(self) -> dict[str, object]:
        """The driver's counters: datagrams sent and received, bytes, and drops by reason
        (malformed, foreign session, unauthenticated, bad MAC, wrong source, wrong size,
        misdirected).
        """
    def set_pcap(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write every datagram this driver sends and reads from now on into the pcap file `path`
        (synthetic IPv4/UDP headers around the bytes on the wire; Unix-epoch timestamps)."""
    def end_pgm_session(self) -> bool:
        """End a PGM-wire session: one SPM with OPT_FIN to the session's receivers. True when sent
        (false without the PGM wire, or before the session's first SPM)."""
    def shutdown(self, within: float = 0.5) -> None:
        """The shutdown step, once, before the process exits: every agent is told to stop and
        leaves the protocol's way; what it queued is sent (retried for at most `within` s past a
        full socket or the rate cap); every group still held is left. `run` raises afterwards."""
    @property
    def is_shut_down(self) -> bool:
        """Whether `shutdown` ran."""
    def flush_pcap(self) -> int:
        """Flush the pcap file; returns the number of datagrams written to it (0 without one)."""
    def joined(self, agent: int) -> list[int]:
        """The groups agent `agent` is a member of now."""
    def agents(self) -> list[int]:
        """The agent ids in the order added."""
    def level_timeline(self) -> dict[str, npt.NDArray[np.integer]]:
        """Every level change of the driver's layered receivers: time_ns, agent, level (wall-clock
        time since the driver started).
        """
    def rate_timeline(self) -> dict[str, npt.NDArray[np.generic]]:
        """Every rate change of the driver's rate-controlled sources: time_ns, agent, rate_bps."""
    def add_role(
        self,
        role: str,
        agent_id: int,
        node: int,
        port: int,
        args: Optional[dict[str, object]] = None,
        config: Optional[dict[str, ConfigValue]] = None,
    ) -> object:
        """Build the registered role `role` as agent `agent_id` on node `node`, UDP port base +
        `port` (see `protocols()`; `castlab.net` names each role as a method), with its further
        arguments `args` and config overrides `config`; returns what the role returns (an agent id)."""
    def read(self, reader: str, agent: int, args: Optional[dict[str, object]] = None) -> object:
        """Read the registered record or status `reader` of agent `agent`, with the reader's
        further arguments `args`."""

def net_default_config() -> dict[str, object]:
    """The real-network driver's default settings (Rust's NetConfig::default)."""
    ...

# --- the user-space router (crates/castlab-py/src/router.rs) ---
class NetRouter:
    """castlab-net's user-space multicast router in this process's network namespace: ARP,
    static routes, an IGMP querier, DropTail/RED queues drained at each link's rate and delay
    lines. Built from the router's command-line words; see docs/real-network.md."""

    def __init__(self, args: list[str], extension: Optional[str] = None,
                 options: Optional[dict[str, object]] = None) -> None:
        """Open the interfaces the words name; refuses (PermissionError) outside an `ip netns`
        namespace, with kernel forwarding on, or on an interface that is not a veth. With
        `extension`, host that registered router kind (its keys and config fields in `options`)
        on the router's node; it needs the session (`--session`)."""
    @property
    def extension(self) -> Optional[str]:
        """The hosted router kind, or None."""
    def extension_status(self) -> Optional[dict[str, object]]:
        """The hosted extension's status snapshot (its kind's registered status reader)."""
    @property
    def now(self) -> float:
        """Seconds since the router started."""
    def run(self, duration: float, status: Optional[object] = None, status_interval: float = 1.0) -> None:
        """Forward for `duration` seconds (or until a signal), calling `status()` periodically."""
    def shutdown(self, within: float = 1.0) -> dict[str, int]:
        """The way out: forward what is queued for at most `within` s, drop what waits for ARP,
        withdraw the memberships relayed upstream; returns queued, forwarded, left,
        held_dropped, withdrawn, took_ns, timed_out."""
    def stats(self) -> dict[str, object]:
        """Router-wide counters and `last_error`."""
    def ports(self, groups: bool = False) -> list[dict[str, object]]:
        """One dict of counters per interface, with its queue's backlog and average and the
        numbers of groups and sources with members; with `groups`, the groups themselves."""
    def stats_text(self) -> str:
        """The counters as text, like `tc -s qdisc`."""
    def set_realtime(self, priority: int) -> None:
        """Run the calling thread (the one that calls `run`) under SCHED_FIFO at `priority`
        (1-99). Raises OSError when refused (no CAP_SYS_NICE, or real-time throttling off)."""
    def set_extension_timing(self, on: bool) -> None:
        """With `on`, count the hosted extension's calls and the time inside them
        (`ext_*_calls`, `ext_*_ns` in `stats()`); without, stop counting."""
    def set_spin_us(self, us: int) -> None:
        """Wake `us` microseconds before each deadline and poll without sleeping until it (0:
        sleep until the deadline; at most 1000)."""
    def set_transit_timing(self, on: bool) -> None:
        """With `on`, time each forwarded frame's transit through the router (`transit` in
        `ports()`); without, stop timing."""

def net_offloads_off(name: str) -> None:
    """Switch off tx checksumming, SG, TSO, GSO and GRO on an interface of this namespace."""
    ...
