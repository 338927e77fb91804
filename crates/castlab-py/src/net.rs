//! Python bindings for the real-network driver (`castlab-net`): the same agents as the
//! simulator's on UDP sockets and the wall clock, and their records through the same
//! conversion functions the simulator bindings use, so `castlab.frames` and the experiments'
//! analysis read a real run as they read a simulated one.
//!
//! The layered CBR source and the measuring sink are here; every protocol's agents are built
//! through the registry (`add_role` and `read` in `registry.rs`), with configs as keyword
//! overrides of Rust's `Default` (the paper's values).
//!
//! `run` releases the GIL in slices of at most 100 ms and checks for signals between them, so
//! Ctrl-C (or SIGTERM turned into an exception by the caller) stops a run between two slices
//! and loses nothing: the records stay in the object.

use std::net::Ipv4Addr;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use castlab_core::{Addr, AgentId, Duration, GroupId, Instant, NodeId};
use castlab_net::{Driver, GroupEntry, NetConfig, SessionTable};

use crate::config::{apply, config_dict};
use crate::error::{Error, Result};
use crate::{arr_u64, bad, duration_s, level_timeline_dict, numpy_ready};

/// The longest the GIL stays released: the latency of Ctrl-C and of status callbacks.
const SLICE: Duration = Duration::from_millis(100);

/// The driver's settings: keyword overrides of `NetConfig`'s `Default` through the one config
/// mechanism, except the pre-shared `key` (bytes, or None).
fn net_config(d: Option<&Bound<'_, PyDict>>) -> Result<NetConfig> {
    let mut base = NetConfig::default();
    let Some(d) = d else { return apply(base, None) };
    let rest = d.copy()?;
    if let Some(k) = rest.get_item("key")? {
        rest.del_item("key")?;
        base.key = if k.is_none() {
            None
        } else {
            let b = k.cast::<PyBytes>().map_err(|_| bad("key", &k, "must be bytes or None"))?;
            Some(b.as_bytes().to_vec())
        };
    }
    apply(base, Some(&rest))
}

fn node_id(field: &str, n: i64) -> Result<NodeId> {
    u32::try_from(n).map(NodeId).map_err(|_| bad(field, n, "must be a node id >= 0"))
}

fn group_id(field: &str, g: i64) -> Result<GroupId> {
    u32::try_from(g).map(GroupId).map_err(|_| bad(field, g, "must be a group id >= 0"))
}

/// A real-network driver hosting castlab agents (see `castlab.net`).
#[pyclass(unsendable, subclass, module = "castlab._native")]
pub struct NetDriver {
    pub(crate) inner: Driver,
    /// Agent ids in the order added (the driver's index).
    pub(crate) ids: Vec<u32>,
}

impl NetDriver {
    pub(crate) fn index(&self, agent: i64) -> Result<usize> {
        u32::try_from(agent)
            .ok()
            .and_then(|a| self.ids.iter().position(|x| *x == a))
            .ok_or_else(|| bad("agent", agent, "no such agent in this driver"))
    }

    pub(crate) fn add(
        &mut self,
        agent_id: i64,
        node: i64,
        port: i64,
        agent: Box<dyn castlab_core::Agent + Send>,
    ) -> Result<u32> {
        let id = u32::try_from(agent_id).map_err(|_| Error::bad("agent_id", agent_id, "must be >= 0"))?;
        if self.ids.contains(&id) {
            return Err(Error::bad("agent_id", id, "is already in use in this driver"));
        }
        let port = u16::try_from(port)
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| Error::bad("port", port, "must be in 1..=65535"))?;
        let addr = Addr::new(node_id("node", node)?, port);
        self.inner.add_agent(AgentId(id), addr, agent)?;
        self.ids.push(id);
        Ok(id)
    }
}

#[pymethods]
impl NetDriver {
    /// `nodes`: (node id, IPv4 address) pairs; `groups`: (group id, multicast address, UDP
    /// port, source node id or None) tuples; `config`: overrides of the driver's settings
    /// (see `net_default_config()`; `key` is bytes).
    #[new]
    #[pyo3(signature = (nodes, groups, config=None))]
    fn new(
        nodes: Vec<(i64, String)>,
        groups: Vec<(i64, String, i64, Option<i64>)>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> Result<Self> {
        let cfg = net_config(config)?;
        let mut t = SessionTable::new();
        for (n, ip) in nodes {
            let ip: Ipv4Addr = ip.parse().map_err(|_| bad("nodes", &ip, "must be IPv4 addresses"))?;
            t.set_node(node_id("nodes", n)?, ip).map_err(|e| Error::Value(e.to_string()))?;
        }
        for (g, addr, port, source) in groups {
            let a: Ipv4Addr = addr.parse().map_err(|_| bad("groups", &addr, "must be IPv4 multicast addresses"))?;
            let udp_port = u16::try_from(port).map_err(|_| bad("groups", port, "UDP ports must be in 1..=65535"))?;
            let source = source.map(|s| node_id("groups", s)).transpose()?;
            t.set_group(group_id("groups", g)?, GroupEntry { addr: a, udp_port, source })
                .map_err(|e| Error::Value(e.to_string()))?;
        }
        let inner = Driver::new(cfg, t)?;
        Ok(NetDriver { inner, ids: Vec::new() })
    }

    /// Seconds since the driver was created (its time zero).
    #[getter]
    fn now(&self) -> f64 {
        self.inner.now().as_secs_f64()
    }

    /// Run for `duration` seconds of wall clock, with the GIL released in slices of at most
    /// 100 ms; between slices, signals are checked (Ctrl-C raises KeyboardInterrupt, the
    /// records stay) and `status()` is called every `status_interval` seconds.
    #[pyo3(signature = (duration, status=None, status_interval=1.0))]
    fn run(slf: &Bound<'_, Self>, duration: f64, status: Option<Py<PyAny>>, status_interval: f64) -> Result<()> {
        run_in_slices(slf, duration, status, status_interval)
    }

    /// The driver's counters: datagrams/bytes sent and received, delivered, drops by reason
    /// (malformed, foreign_session, unauthenticated, bad_mac, wrong_source, wrong_size,
    /// misdirected), not_joined, from_unlisted, no_route, rate-cap drops, send/receive/join
    /// errors, timer fires and lateness (late_mean_ns, late_max_ns), the receive buffer the
    /// kernel granted, and `last_error` (str or None).
    fn stats<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = crate::counters(py, &s.pairs())?;
        d.set_item("late_mean_ns", s.late_mean_ns())?;
        d.set_item("last_error", self.inner.last_error())?;
        Ok(d)
    }

    /// Write every datagram this driver sends and reads from now on into the pcap file `path`
    /// (synthetic IPv4/UDP headers around the bytes on the wire; Unix-epoch timestamps).
    fn set_pcap(&mut self, path: std::path::PathBuf) -> Result<()> {
        Ok(self.inner.set_pcap(&path)?)
    }

    /// End a PGM-wire session: one SPM with OPT_FIN to the session's receivers. True when sent
    /// (false without the PGM wire, or before the session's first SPM).
    fn end_pgm_session(&mut self) -> bool {
        self.inner.end_pgm_session()
    }

    /// The shutdown step, once, before the process exits: every agent is told to stop and ends
    /// its part the protocol's way (a receiver's leave report, its layers left top first, a
    /// PGM source's last SPM, with OPT_FIN on the PGM wire); what the step queued is sent, retried
    /// for at most `within` seconds when the socket is full or the rate cap has no room; every
    /// group still held is left. Afterwards `run` raises; the records stay readable. The
    /// counters `shutdown_agents`, `shutdown_sent`, `shutdown_unsent`, `shutdown_left_groups`
    /// say what it did.
    #[pyo3(signature = (within=0.5))]
    fn shutdown(&mut self, within: f64) -> Result<()> {
        let w = duration_s("within", within)?;
        self.inner.shutdown(std::time::Duration::from_nanos(w.as_nanos()));
        Ok(())
    }

    /// Whether `shutdown` ran.
    #[getter]
    fn is_shut_down(&self) -> bool {
        self.inner.is_shut_down()
    }

    /// Flush the pcap file; returns the number of datagrams written to it (0 without one).
    fn flush_pcap(&mut self) -> Result<u64> {
        Ok(self.inner.flush_pcap()?)
    }

    /// The groups agent `agent` is a member of now.
    fn joined(&self, agent: i64) -> Result<Vec<u32>> {
        let i = self.index(agent)?;
        Ok(self.inner.joined(i).iter().map(|g| g.0).collect())
    }

    /// The agent ids in the order added.
    fn agents(&self) -> Vec<u32> {
        self.ids.clone()
    }

    /// Subscription-level changes of every receiver: time_ns (driver time), agent, level.
    fn level_timeline<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let t = self.inner.timelines();
        level_timeline_dict(py, &t.level_time_ns, &t.level_agent, &t.level)
    }

    /// Sending-rate changes of every rate-controlled sender: time_ns, agent, rate_bps.
    fn rate_timeline<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let t = self.inner.timelines();
        numpy_ready(py)?;
        let d = PyDict::new(py);
        d.set_item("time_ns", arr_u64(py, &t.rate_time_ns))?;
        d.set_item("agent", numpy::PyArray1::from_slice(py, &t.rate_agent))?;
        d.set_item("rate_bps", numpy::PyArray1::from_slice(py, &t.rate_bps))?;
        Ok(d)
    }
}

/// The driver settings' defaults (the only place they are written is Rust's `Default`).
#[pyfunction]
fn net_default_config<'py>(py: Python<'py>) -> Result<Bound<'py, PyDict>> {
    let d = config_dict(py, &NetConfig::default())?;
    d.set_item("key", py.None())?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> Result<()> {
    m.add_class::<NetDriver>()?;
    m.add_function(wrap_pyfunction!(net_default_config, m)?)?;
    Ok(())
}

/// What the bindings run on the wall clock: the network driver and the user-space router.
pub(crate) trait WallClock {
    fn now(&self) -> Instant;
    /// Run until `until`, with the GIL released.
    fn run_detached(&mut self, py: Python<'_>, until: Instant) -> Result<()>;
}

impl WallClock for NetDriver {
    fn now(&self) -> Instant {
        self.inner.now()
    }
    fn run_detached(&mut self, py: Python<'_>, until: Instant) -> Result<()> {
        let inner = &mut self.inner;
        Ok(py.detach(|| inner.run_until(until))?)
    }
}

/// Run `slf` for `duration` seconds of wall clock, with the GIL released in slices of at most
/// `SLICE`; between slices, signals are checked (Ctrl-C raises KeyboardInterrupt, what was
/// recorded stays) and `status()` is called every `status_interval` seconds.
pub(crate) fn run_in_slices<T>(
    slf: &Bound<'_, T>,
    duration: f64,
    status: Option<Py<PyAny>>,
    status_interval: f64,
) -> Result<()>
where
    T: WallClock + pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::False>,
{
    let py = slf.py();
    let d = duration_s("duration", duration)?;
    let every = duration_s("status_interval", status_interval)?;
    if status.is_some() && every.is_zero() {
        return Err(bad("status_interval", status_interval, "must be positive"));
    }
    let start = slf.borrow().now();
    let end = start + d;
    let mut next_status = start + every;
    loop {
        // The borrow ends before the callback, which may read the driver.
        let now = {
            let mut me = slf.borrow_mut();
            let now = me.now();
            if now >= end {
                return Ok(());
            }
            let mut slice_end = end.min(now + SLICE);
            if status.is_some() {
                slice_end = slice_end.min(next_status);
            }
            me.run_detached(py, slice_end)?;
            me.now()
        };
        py.check_signals()?;
        if let Some(cb) = &status {
            if now >= next_status {
                cb.call0(py)?;
                next_status += every;
            }
        }
    }
}
