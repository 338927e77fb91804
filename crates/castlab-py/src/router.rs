//! Python binding of the user-space router (`castlab_net::Router`): built from the same
//! command-line words as the Rust side parses (`RouterConfig::from_args`), so that the
//! `castlab net router` role, the testbed and a by-hand run share one format and one parser.
//!
//! `run` releases the GIL in slices of at most 100 ms and checks for signals between them,
//! as `NetDriver.run` does.
//!
//! A router kind of the protocol registry (`lmr`, `nak_aggregator`, `bcf`...) is hosted by
//! name: the registry's factory builds it into [`RouterHost`], the same call the simulator's
//! scenario makes, and its status reader reads it back. Nothing here names a protocol.

use std::any::Any;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use castlab_core::config::{ConfigValue, Value};
use castlab_core::{Addr, Agent, AgentId, ChannelId, GroupId, Instant, NodeId, RouterExtension};
use castlab_net::router::sys;
use castlab_net::{Router, RouterConfig};
use castlab_proto::registry::{self, Args, BuildError, BuildResult, Host, Raw};

use crate::bad;
use crate::error::{Error, Result};
use crate::net::{run_in_slices, WallClock};
use crate::registry::{complete, id_u32, pairs, to_py};

/// The user-space router as a registry [`Host`]: one node (the router's `--node`), its
/// interfaces as channels (interface i is channel i, as the router's `NetView` shows them),
/// the groups and nodes of its session table; it hosts one extension and no agents.
struct RouterHost<'a>(&'a mut Router);

impl Host for RouterHost<'_> {
    fn node(&self, field: &'static str, v: &Value) -> BuildResult<NodeId> {
        let n = NodeId(id_u32(field, v, "must be a node id >= 0")?);
        if n != self.0.config().node {
            return Err(BuildError::bad(field, n.0, "is not this router's node (its --node)"));
        }
        Ok(n)
    }
    fn node_label(&self, n: NodeId) -> String {
        let ip = self.0.config().session.as_ref().and_then(|s| s.table.node(n));
        ip.map_or_else(|| format!("node {}", n.0), |ip| ip.to_string())
    }
    fn node_count(&self) -> usize {
        0
    }
    fn group(&self, field: &'static str, v: &Value) -> BuildResult<GroupId> {
        let g = GroupId(id_u32(field, v, "must be a group id >= 0")?);
        if self.group_entry(g).is_none() {
            return Err(BuildError::bad(field, g.0, "is not a group of the router's session table"));
        }
        Ok(g)
    }
    fn group_source(&self, g: GroupId) -> Option<NodeId> {
        self.group_entry(g).and_then(|e| e.source)
    }
    fn channel(&self, field: &'static str, v: &Value) -> BuildResult<ChannelId> {
        let c = id_u32(field, v, "must be an interface index >= 0")?;
        if c as usize >= self.0.port_count() {
            return Err(BuildError::bad(field, c, "is not one of the router's interfaces (0-based, --iface order)"));
        }
        Ok(ChannelId(c))
    }
    fn channel_from(&self, ch: ChannelId) -> Option<NodeId> {
        ((ch.0 as usize) < self.0.port_count()).then_some(self.0.config().node)
    }
    fn agent(&self, field: &'static str, v: &Value) -> BuildResult<(AgentId, &dyn Any)> {
        Err(BuildError::bad(field, Raw(v), "the router hosts no agents"))
    }
    fn agent_addr(&self, _: AgentId) -> Option<Addr> {
        None
    }
    fn agent_count(&self) -> usize {
        0
    }
    fn extension(&self, node: NodeId) -> Option<&dyn Any> {
        if node == self.0.config().node {
            self.0.extension_any()
        } else {
            None
        }
    }
    fn start(&self, _: &'static str, _: f64) -> BuildResult<Instant> {
        Ok(self.0.now())
    }
    fn time(&self, field: &'static str, t: f64) -> BuildResult<Instant> {
        Ok(Instant::from_value(field, &Value::Float(t))?)
    }
    fn now(&self) -> Instant {
        self.0.now()
    }
    fn add_agent(&mut self, _: NodeId, _: Option<u16>, _: Instant, _: Box<dyn Agent + Send>) -> BuildResult<AgentId> {
        Err(BuildError::Host("the router hosts router extensions, not agents (castlab net ROLE hosts agents)".into()))
    }
    fn attach(&mut self, node: NodeId, ext: Box<dyn RouterExtension + Send>) -> BuildResult<()> {
        if node != self.0.config().node {
            return Err(BuildError::bad("node", node.0, "is not this router's node (its --node)"));
        }
        self.0.set_extension(ext).map_err(|e| BuildError::Host(e.to_string()))
    }
}

impl RouterHost<'_> {
    fn group_entry(&self, g: GroupId) -> Option<castlab_net::GroupEntry> {
        self.0.config().session.as_ref().and_then(|s| s.table.group(g))
    }
}

/// The user-space multicast router of castlab-net, in this process's network namespace.
#[pyclass(name = "NetRouter", unsendable, module = "castlab._native")]
pub struct NetRouter {
    inner: Router,
    /// The hosted router kind, if any.
    kind: Option<&'static registry::RouterKind>,
}

#[pymethods]
impl NetRouter {
    /// `args`: the router's words (`--iface NAME,ADDR/LEN[,rate=R][,delay=D][,queue=Q][,lan]`,
    /// `--route DST/LEN,via=GW`, `--seed N`, the IGMP timers, the session...;
    /// docs/real-network.md). `extension`: a registered router kind to host on the router's
    /// node, built by the registry's factory with `options` (the kind's keys and its config
    /// table's fields); it needs the session (`--session`).
    #[new]
    #[pyo3(signature = (args, extension=None, options=None))]
    fn new(args: Vec<String>, extension: Option<&str>, options: Option<&Bound<'_, PyDict>>) -> Result<Self> {
        let (cfg, rest) = RouterConfig::from_args(&args).map_err(|e| Error::Value(e.to_string()))?;
        if let Some(w) = rest.first() {
            return Err(bad("router argument", w, "unknown (see docs/real-network.md)"));
        }
        let opts = pairs(options)?;
        let kind = match extension {
            None if !opts.is_empty() => {
                return Err(Error::Value(format!("{}: an option without --extension", opts[0].0)));
            }
            None => None,
            Some(k) => {
                // the kind and the keys are checked before the sockets open
                registry::router_kind_args(k, cfg.node, &opts)?;
                let rk = registry::router_kind(k).expect("checked");
                if cfg.session.is_none() {
                    return Err(bad("extension", k, "needs the session whose packets it sees (--session)"));
                }
                Some(rk)
            }
        };
        let node = cfg.node;
        let mut inner = Router::new(cfg)?;
        if let Some(rk) = kind {
            registry::build_router_kind(&mut RouterHost(&mut inner), rk.kind, node, &opts)?;
        }
        Ok(NetRouter { inner, kind })
    }

    /// The hosted router kind's name, or None.
    #[getter]
    fn extension(&self) -> Option<&'static str> {
        self.kind.map(|k| k.kind)
    }

    /// The hosted extension's status snapshot, read by its router kind's registered status
    /// reader (the simulator's, unchanged), or None without an extension.
    fn extension_status<'py>(&mut self, py: Python<'py>) -> Result<Option<Bound<'py, PyAny>>> {
        let Some(rk) = self.kind else { return Ok(None) };
        let r = registry::reader(rk.status)
            .ok_or_else(|| Error::Value(format!("{}: its status reader {} is not registered", rk.kind, rk.status)))?;
        let vals = complete(r.params, Vec::new())?;
        let node = Value::Int(self.inner.config().node.0.into());
        let host = RouterHost(&mut self.inner);
        let out = (r.read)(&host, &node, &Args::new(&vals, &[]))?;
        Ok(Some(to_py(py, &out)?))
    }

    /// Seconds since the router started.
    #[getter]
    fn now(&self) -> f64 {
        self.inner.now().as_secs_f64()
    }

    /// Forward for `duration` seconds of wall clock (or until a signal), calling `status()`
    /// every `status_interval` seconds if given.
    #[pyo3(signature = (duration, status=None, status_interval=1.0))]
    fn run(slf: &Bound<'_, Self>, duration: f64, status: Option<Py<PyAny>>, status_interval: f64) -> Result<()> {
        run_in_slices(slf, duration, status, status_interval)
    }

    /// The way out, once the run has ended: forward what is queued, being serialised or in a
    /// delay line (reading no more frames; at the links' rates and delays) for at most `within`
    /// seconds, drop what waits for a neighbour's address, and withdraw every membership
    /// relayed to a neighbour router (a BLOCK or TO_IN{} each). The router changes nothing
    /// on its interfaces (no promiscuous mode, sysctl, qdisc or offload), so that is all there
    /// is to restore. Returns queued, forwarded, left, held_dropped, withdrawn, took_ns and
    /// timed_out (0 or 1).
    #[pyo3(signature = (within=1.0))]
    fn shutdown<'py>(&mut self, py: Python<'py>, within: f64) -> Result<Bound<'py, PyDict>> {
        let w = crate::duration_s("within", within)?;
        let inner = &mut self.inner;
        let r = py.detach(|| inner.shutdown(w));
        crate::counters(py, &r.pairs())
    }

    /// Router-wide counters (frames refused by reason, forwarding, ARP, IGMP, envelope
    /// rejections, extension), and `last_error` (str or None).
    fn stats<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let d = crate::counters(py, &self.inner.stats().pairs())?;
        d.set_item("last_error", self.inner.last_error())?;
        Ok(d)
    }

    /// One dict per interface: `name`, the queue's `backlog` and `avg` (packets), the counters
    /// (arrivals, enqueued, marked, drops by cause, departures, tx, lateness), the numbers of
    /// groups with members and of source-specific memberships (`igmp_groups`,
    /// `igmp_sources`), and with `groups=True` the groups themselves as (group, any_source,
    /// n_sources), at most the router's `--igmp-max-groups` of them.
    #[pyo3(signature = (groups=false))]
    fn ports<'py>(&self, py: Python<'py>, groups: bool) -> Result<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for i in 0..self.inner.port_count() {
            let d = crate::counters(py, &self.inner.port_stats(i).pairs())?;
            d.set_item("name", self.inner.port_name(i))?;
            d.set_item("backlog", self.inner.queue_len(i))?;
            d.set_item("avg", self.inner.queue_avg(i))?;
            let (ng, ns) = self.inner.member_counts(i);
            d.set_item("igmp_groups", ng)?;
            d.set_item("igmp_sources", ns)?;
            if groups {
                let g: Vec<(String, bool, usize)> =
                    self.inner.members(i).into_iter().map(|(a, any, n)| (a.to_string(), any, n)).collect();
                d.set_item("groups", g)?;
            }
            if let (Some(h), Some(l)) = (self.inner.transit(i), self.inner.transit_late(i)) {
                let t = PyDict::new(py);
                t.set_item("frames", h.count())?;
                t.set_item("p50_ns", h.quantile(0.5))?;
                t.set_item("p99_ns", h.quantile(0.99))?;
                t.set_item("max_ns", h.max())?;
                t.set_item("late_p50_ns", l.quantile(0.5))?;
                t.set_item("late_p99_ns", l.quantile(0.99))?;
                d.set_item("transit", t)?;
            }
            out.append(d)?;
        }
        Ok(out)
    }

    /// The counters as text, one `tc -s qdisc`-like paragraph per interface and a router line.
    fn stats_text(&self) -> String {
        self.inner.stats_text()
    }

    /// Run the calling thread (the one that calls `run`) under SCHED_FIFO at `priority`
    /// (1-99). Raises OSError when refused (no CAP_SYS_NICE, or real-time throttling off).
    fn set_realtime(&self, priority: i32) -> Result<()> {
        if !(1..=99).contains(&priority) {
            return Err(bad("realtime priority", priority, "must be 1-99"));
        }
        sys::set_realtime(priority).map_err(|e| Error::Os(format!("SCHED_FIFO {priority}: {e}")))
    }

    /// With `on`, count the hosted extension's calls and the time inside them (`ext_*_calls`,
    /// `ext_*_ns` in `stats()`); without, stop counting.
    fn set_extension_timing(&mut self, on: bool) {
        self.inner.set_extension_timing(on);
    }

    /// Wake `us` microseconds before each deadline and poll without sleeping until it (0: sleep
    /// until the deadline; at most 1000).
    fn set_spin_us(&mut self, us: u64) {
        self.inner.set_spin(us.min(1000) * 1000);
    }

    /// With `on`, time each forwarded frame's transit through the router (`transit` in
    /// `ports()`); without, stop timing.
    fn set_transit_timing(&mut self, on: bool) -> Result<()> {
        Ok(self.inner.set_transit_timing(on)?)
    }
}

/// Switch off tx checksumming, scatter-gather, TSO, GSO and GRO on interface `name` of this
/// process's network namespace (what lets the router's AF_PACKET sockets see whole frames).
#[pyfunction]
fn net_offloads_off(name: &str) -> Result<()> {
    sys::offloads_off(name).map_err(|e| Error::Os(format!("{name}: {e}")))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NetRouter>()?;
    m.add_function(wrap_pyfunction!(net_offloads_off, m)?)?;
    Ok(())
}

impl WallClock for NetRouter {
    fn now(&self) -> Instant {
        self.inner.now()
    }
    fn run_detached(&mut self, py: Python<'_>, until: Instant) -> Result<()> {
        let inner = &mut self.inner;
        Ok(py.detach(|| inner.run_until(until))?)
    }
}
