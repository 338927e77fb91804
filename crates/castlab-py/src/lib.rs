//! PyO3 bindings: conversions only. Errors become Python exceptions in one place
//! (`error.rs`), the bindings' own arguments are checked in `args.rs`, and every protocol is
//! built and read through the protocol registry (`registry.rs`).

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use crate::args::{bad, duration_s, err, nonneg_u64, positive_u32, time_s};
use crate::error::{Error, Result};
use castlab_core::{ChannelId, Duration, GroupId, NodeId};
use castlab_sim::metrics;
use castlab_sim::testext::LayerDropper;
use castlab_sim::{LinkConfig, QueueConfig, RedConfig, SimConfig, TokenBucket};

mod args;
mod config;
mod error;
mod net;
mod pcap;
mod registry;
mod router;

/// A dict of named counters.
pub(crate) fn counters<'py>(py: Python<'py>, pairs: &[(&str, u64)]) -> Result<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(*k, *v)?;
    }
    Ok(d)
}

pub(crate) fn arr_u64<'py>(py: Python<'py>, v: &[u64]) -> Bound<'py, PyArray1<u64>> {
    PyArray1::from_slice(py, v)
}

/// Loads NumPy's C API, once per process, with stop signals held; every function that makes
/// arrays calls it first. The numpy crate loads the API at the process's first array by running
/// Python (it reads numpy's version), and panics if that code raises. A stop signal arriving
/// there would: `castlab.stopping`'s handler raises `Stopped` wherever Python code runs. Inside
/// `stopping.deferred()` the signal waits for the load and is raised after it, as an exception
/// from the call that wanted the array. numpy itself is imported here, at the first array, not
/// at castlab's import: a run that reads only counters never imports it.
pub(crate) fn numpy_ready(py: Python<'_>) -> PyResult<()> {
    static READY: AtomicBool = AtomicBool::new(false);
    if READY.load(Ordering::Acquire) {
        return Ok(());
    }
    let held = py.import("castlab.stopping")?.call_method0("deferred")?;
    held.call_method0("__enter__")?;
    let _ = PyArray1::<u8>::zeros(py, 0, false);
    READY.store(true, Ordering::Release);
    held.call_method1("__exit__", (py.None(), py.None(), py.None()))?;
    Ok(())
}

/// Subscription-level changes as numpy arrays: time_ns, agent, level.
pub(crate) fn level_timeline_dict<'py>(
    py: Python<'py>,
    time_ns: &[u64],
    agent: &[u32],
    level: &[u32],
) -> Result<Bound<'py, PyDict>> {
    numpy_ready(py)?;
    let d = PyDict::new(py);
    d.set_item("time_ns", arr_u64(py, time_ns))?;
    d.set_item("agent", PyArray1::from_slice(py, agent))?;
    d.set_item("level", PyArray1::from_slice(py, level))?;
    Ok(d)
}

/// Carries `&mut castlab_sim::Simulator` into `Python::detach`, which asks for `Send` because
/// it cannot tell "releases the GIL" from "moves to another thread". The engine is not `Send`:
/// agents may share state through `Rc` (the fountain's `SharedStore`) and are boxed as
/// `dyn Agent` without a `Send` bound.
struct AssertSend<T>(T);

// SAFETY: `detach` runs its closure on the calling thread; it only releases the GIL around it.
// So the engine is used on the thread that owns it, the thread `unsendable` pins the pyclass to
// (PyO3 refuses a borrow from any other thread, and `castlab.Simulator` checks the thread
// first). Nothing else can reach the engine during the slice: `run` holds the pyclass's unique
// borrow (`&mut self`), so another thread is refused by the thread check and this one is busy
// in the closure; the `Rc`s inside the engine are therefore only touched by their own thread.
// The engine holds no Python objects (no `Py<T>` in castlab-sim, -proto or the agents the
// bindings add), so nothing in the closure needs the GIL.
unsafe impl<T> Send for AssertSend<T> {}

impl<T> AssertSend<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// The simulator (see `castlab.Simulator` for the documented Python face).
#[pyclass(unsendable, subclass, module = "castlab._native")]
pub struct Simulator {
    pub(crate) inner: castlab_sim::Simulator,
}

impl Simulator {
    pub(crate) fn node(&self, field: &'static str, name: &str) -> Result<NodeId> {
        self.inner.node_named(field, name).map_err(Error::from)
    }
    pub(crate) fn group(&self, field: &'static str, g: i64) -> Result<GroupId> {
        let id = u32::try_from(g).map_err(|_| bad(field, g, "must be a group id >= 0"))?;
        self.inner.check_group(field, GroupId(id))?;
        Ok(GroupId(id))
    }
    pub(crate) fn chan(&self, field: &'static str, ch: i64) -> Result<ChannelId> {
        let id = u32::try_from(ch).map_err(|_| bad(field, ch, "must be a channel id >= 0"))?;
        self.inner.check_channel(field, ChannelId(id))?;
        Ok(ChannelId(id))
    }
    fn link_state(&mut self, at: f64, a: &str, b: &str, up: bool) -> Result<()> {
        let t = time_s("at", at)?;
        let ch = self.channel(a, b)?;
        self.inner.schedule_link_state(t, ChannelId(ch), up).map_err(Error::from)
    }
    fn node_state(&mut self, at: f64, node: &str, up: bool) -> Result<()> {
        let t = time_s("at", at)?;
        let n = self.node("node", node)?;
        self.inner.schedule_node_state(t, n, up).map_err(Error::from)
    }
}

#[pymethods]
impl Simulator {
    #[new]
    #[pyo3(signature = (seed=0, join_latency=0.0, leave_latency=0.0, queue_avg_weight=0.002, phase_overhead=0.0))]
    fn new(
        seed: i64,
        join_latency: f64,
        leave_latency: f64,
        queue_avg_weight: f64,
        phase_overhead: f64,
    ) -> Result<Self> {
        let cfg = SimConfig {
            join_latency: duration_s("join_latency", join_latency)?,
            leave_latency: duration_s("leave_latency", leave_latency)?,
            queue_avg_weight,
            phase_overhead: duration_s("phase_overhead", phase_overhead)?,
        };
        let inner = castlab_sim::Simulator::with_config(nonneg_u64("seed", seed)?, cfg)?;
        Ok(Simulator { inner })
    }

    /// Current simulated time, seconds.
    #[getter]
    fn now(&self) -> f64 {
        self.inner.now().as_secs_f64()
    }

    /// The master seed every random stream of this simulator is derived from.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// Add a node called `name` (unique); returns its id.
    fn add_node(&mut self, name: &str) -> Result<u32> {
        self.inner.add_node(name).map(|n| n.0).map_err(Error::from)
    }

    /// Add a duplex link; returns the channel ids (a→b, b→a).
    /// `a`, `b`: node names; `rate_bps` bit/s and `delay` seconds each way; `queue`: "droptail"
    /// (`queue_limit_pkts` waiting packets) or "red" (`red_min_th`, `red_max_th` in packets,
    /// `red_max_p`, `red_w_q`, `red_gentle`, `red_mark` to mark instead of drop, `mean_pkt_bytes`
    /// for the idle-time decay; Floyd & Jacobson 1993); `loss_ab`, `loss_ba`: Bernoulli loss per
    /// direction; `cost`: the routing cost; `tbf_burst` > 0: each direction a token bucket of
    /// that many bytes in place of serialisation, charging each packet its size plus
    /// `tbf_overhead` bytes (Linux's tbf charges the frame: 14 bytes of Ethernet header).
    #[pyo3(signature = (a, b, rate_bps, delay, queue="droptail", queue_limit_pkts=50, loss_ab=0.0, loss_ba=0.0, cost=1,
        red_min_th=5.0, red_max_th=15.0, red_max_p=0.1, red_w_q=0.002, red_gentle=false, red_mark=false, mean_pkt_bytes=1000,
        tbf_burst=0, tbf_overhead=14))]
    #[allow(clippy::too_many_arguments)]
    fn add_link(
        &mut self,
        a: &str,
        b: &str,
        rate_bps: f64,
        delay: f64,
        queue: &str,
        queue_limit_pkts: i64,
        loss_ab: f64,
        loss_ba: f64,
        cost: i64,
        red_min_th: f64,
        red_max_th: f64,
        red_max_p: f64,
        red_w_q: f64,
        red_gentle: bool,
        red_mark: bool,
        mean_pkt_bytes: i64,
        tbf_burst: i64,
        tbf_overhead: i64,
    ) -> Result<(u32, u32)> {
        let na = self.node("a", a)?;
        let nb = self.node("b", b)?;
        let limit =
            usize::try_from(queue_limit_pkts).map_err(|_| bad("queue_limit_pkts", queue_limit_pkts, "must be >= 0"))?;
        let q = match queue {
            "droptail" => QueueConfig::DropTail { limit_pkts: limit },
            "red" => QueueConfig::Red(RedConfig {
                limit_pkts: limit,
                min_th: red_min_th,
                max_th: red_max_th,
                max_p: red_max_p,
                w_q: red_w_q,
                gentle: red_gentle,
                mark: red_mark,
                mean_pkt_bytes: positive_u32("mean_pkt_bytes", mean_pkt_bytes)?,
            }),
            other => return Err(bad("queue", format!("{other:?}"), "must be \"droptail\" or \"red\"")),
        };
        let bucket = match tbf_burst {
            0 => None,
            b => Some(TokenBucket {
                burst_bytes: positive_u32("tbf_burst", b)?,
                overhead_bytes: u32::try_from(tbf_overhead)
                    .map_err(|_| bad("tbf_overhead", tbf_overhead, "must be >= 0"))?,
            }),
        };
        let cfg = LinkConfig {
            rate_bps,
            delay_s: delay,
            queue: q,
            loss_ab,
            loss_ba,
            cost: nonneg_u64("cost", cost)?,
            bucket,
        };
        self.inner.add_link(na, nb, &cfg).map(|(x, y)| (x.0, y.0)).map_err(|e| {
            // RedConfig's fields arrive as the red_* keywords: name them as the caller wrote them
            let f = e.field();
            if matches!(f, "min_th" | "max_th" | "max_p" | "w_q") {
                Error::Value(format!("red_{e}"))
            } else {
                err(e)
            }
        })
    }

    /// Write every packet that leaves node `a` toward node `b` into the pcap file `path`, as the
    /// real mode would send it (ns-3's `EnablePcap`, one direction of a link): `wire` "castlab"
    /// (the envelope of session `session`) or "pgm" (RFC 3208; packets that are not PGM are left
    /// out). Node n is 10.0.0.0 + n + 1, group g 239.255.0.1 + g, castlab port p UDP port
    /// `port_base` + p (every PGM datagram and group on `port_base`); timestamps are simulated
    /// time. The file is complete when the simulator is dropped or the tap replaced.
    #[pyo3(signature = (a, b, path, wire="castlab", session=1, port_base=47000))]
    fn enable_pcap(
        &mut self,
        a: &str,
        b: &str,
        path: std::path::PathBuf,
        wire: &str,
        session: u32,
        port_base: u16,
    ) -> Result<()> {
        let ch = self.channel(a, b)?;
        let w = match wire {
            "castlab" => pcap::Wire::Castlab(castlab_net::Envelope::new(session, None)),
            "pgm" => {
                let id = session.to_be_bytes();
                pcap::Wire::Pgm { gsi: [b'c', b'l', id[0], id[1], id[2], id[3]] }
            }
            _ => return Err(bad("wire", wire, "must be \"castlab\" or \"pgm\"")),
        };
        let tap = pcap::PcapTap::create(&path, w, port_base)
            .map_err(|e| Error::Os(format!("path: {}: {e}", path.display())))?;
        self.inner.set_link_tap(ChannelId(ch), Box::new(tap));
        Ok(())
    }

    /// The channel id from node `a` to node `b`.
    fn channel(&self, a: &str, b: &str) -> Result<u32> {
        let na = self.node("a", a)?;
        let nb = self.node("b", b)?;
        self.inner.channel_between(na, nb).map(|c| c.0).ok_or_else(|| bad("b", b, "is not linked from a"))
    }

    /// A source-specific multicast group rooted at node `source`.
    fn add_group(&mut self, source: &str) -> Result<u32> {
        let n = self.node("source", source)?;
        self.inner.add_group(n).map(|g| g.0).map_err(Error::from)
    }

    /// Attach the example extension that drops one layer's data on one output channel of
    /// `node` (and optionally sends a report packet on `report_via` every `report_every` s).
    #[pyo3(signature = (node, channel, layer, report_via=None, report_every=1.0))]
    fn attach_layer_dropper(
        &mut self,
        node: &str,
        channel: i64,
        layer: i64,
        report_via: Option<i64>,
        report_every: f64,
    ) -> Result<()> {
        let n = self.node("node", node)?;
        let ch = self.chan("channel", channel)?;
        let layer = u8::try_from(layer).map_err(|_| bad("layer", layer, "must be in 0..=255"))?;
        let mut d = LayerDropper::new(ch, layer);
        if let Some(v) = report_via {
            let via = self.chan("report_via", v)?;
            let every = duration_s("report_every", report_every)?;
            if every.is_zero() {
                return Err(bad("report_every", report_every, "must be positive"));
            }
            d = d.with_reports(via, every);
        }
        self.inner.attach_extension(n, Box::new(d)).map_err(Error::from)
    }

    /// Packets the layer dropper on `node` has dropped.
    fn layer_dropper_count(&self, node: &str) -> Result<u64> {
        let n = self.node("node", node)?;
        self.inner
            .extension::<LayerDropper>(n)
            .map(|d| d.dropped)
            .ok_or_else(|| bad("node", node, "has no layer dropper"))
    }

    /// Sample a channel every `interval` seconds (queue length, average, bytes, drops).
    fn monitor_channel(&mut self, channel: i64, interval: f64) -> Result<()> {
        let ch = self.chan("channel", channel)?;
        let d = duration_s("interval", interval)?;
        self.inner.monitor_channel(ch, d).map_err(Error::from)
    }

    /// Run until `until` seconds. May be called repeatedly with growing times.
    fn run(&mut self, py: Python<'_>, until: f64) -> Result<()> {
        let t = time_s("until", until)?;
        // Run in slices of simulated time so Ctrl-C (SIGINT) is seen between them;
        // the slice adapts to keep each one near 50 ms of wall time. Slicing does not change
        // results: `run(t)` handles every event at or before `t` and nothing after it.
        let end = t.as_nanos();
        let mut step: u64 = 10_000_000; // 10 ms simulated to start (our choice)
        loop {
            let now = self.inner.now().as_nanos();
            let next = now.saturating_add(step).min(end);
            let started = std::time::Instant::now();
            let engine = AssertSend(&mut self.inner);
            // The GIL is released for the slice, so other Python threads run meanwhile
            // it is taken back before the signal check.
            py.detach(move || {
                // A method call moves the whole wrapper in (destructuring would capture only
                // the field, which is not `Send`).
                // slices leave classes as they are (settled once, at the end or on Ctrl-C)
                engine.into_inner().advance(castlab_core::Instant::from_nanos(next))
            })?;
            if next >= end {
                self.inner.settle();
                return Ok(());
            }
            if let Err(e) = py.check_signals() {
                self.inner.settle();
                return Err(e.into());
            }
            let wall = started.elapsed().as_secs_f64();
            if wall < 0.025 {
                step = step.saturating_mul(2);
            } else if wall > 0.1 && step > 1_000 {
                step /= 2;
            }
        }
    }

    /// The counters of channel `channel` (arrivals, enqueued, drops_forced, drops_early, marked,
    /// departures, bytes_departed, lost_random, delivered, ext_drops, drops_link_down), whether
    /// it is `up`, its set-up (from, to, rate_bps, delay) and the current queue_len and queue_avg.
    fn channel_stats<'py>(&self, py: Python<'py>, channel: i64) -> Result<Bound<'py, PyDict>> {
        let ch = self.chan("channel", channel)?;
        let s = self.inner.channel_stats(ch).expect("checked");
        let (from, to, rate, delay) = self.inner.channel_info(ch).expect("checked");
        let d = counters(
            py,
            &[
                ("arrivals", s.arrivals),
                ("enqueued", s.enqueued),
                ("drops_forced", s.drops_forced),
                ("drops_early", s.drops_early),
                ("marked", s.marked),
                ("departures", s.departures),
                ("bytes_departed", s.bytes_departed),
                ("lost_random", s.lost_random),
                ("delivered", s.delivered),
                ("ext_drops", s.ext_drops),
                ("drops_link_down", s.drops_link_down),
            ],
        )?;
        d.set_item("up", self.inner.channel_up(ch))?;
        d.set_item("from", self.inner.node_name(from))?;
        d.set_item("to", self.inner.node_name(to))?;
        d.set_item("rate_bps", rate)?;
        d.set_item("delay", delay.as_secs_f64())?;
        d.set_item("queue_len", self.inner.queue_len(ch).expect("checked"))?;
        d.set_item("queue_avg", self.inner.queue_avg(ch).expect("checked"))?;
        Ok(d)
    }

    /// Samples of a monitored channel: time_ns, qlen, qavg, bytes (cumulative), drops (cumulative).
    fn channel_series<'py>(&self, py: Python<'py>, channel: i64) -> Result<Bound<'py, PyDict>> {
        let ch = self.chan("channel", channel)?;
        let s = self.inner.channel_series(ch).ok_or_else(|| bad("channel", channel, "is not monitored"))?;
        numpy_ready(py)?;
        let d = PyDict::new(py);
        d.set_item("time_ns", arr_u64(py, &s.time_ns))?;
        d.set_item("qlen", PyArray1::from_slice(py, &s.qlen))?;
        d.set_item("qavg", PyArray1::from_slice(py, &s.qavg))?;
        d.set_item("bytes", arr_u64(py, &s.bytes))?;
        d.set_item("drops", arr_u64(py, &s.drops))?;
        Ok(d)
    }

    /// The packet fates at `node`: ext_drops, ext_consumed (router extensions), delivered_local,
    /// no_listener, no_route, mc_unwanted.
    fn node_stats<'py>(&self, py: Python<'py>, node: &str) -> Result<Bound<'py, PyDict>> {
        let n = self.node("node", node)?;
        let s = self.inner.node_stats(n).expect("checked");
        counters(
            py,
            &[
                ("ext_drops", s.ext_drops),
                ("ext_consumed", s.ext_consumed),
                ("delivered_local", s.delivered_local),
                ("no_listener", s.no_listener),
                ("no_route", s.no_route),
                ("mc_unwanted", s.mc_unwanted),
            ],
        )
    }

    /// Global packet accounting; `holds` is computed: created == sum of the fates.
    fn conservation<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let c = self.inner.conservation();
        let d = counters(
            py,
            &[
                ("created", c.created),
                ("queue_drops", c.queue_drops),
                ("lost_random", c.lost_random),
                ("link_down", c.link_down),
                ("ext_drops", c.ext_drops),
                ("ext_consumed", c.ext_consumed),
                ("delivered_local", c.delivered_local),
                ("no_listener", c.no_listener),
                ("no_route", c.no_route),
                ("mc_unwanted", c.mc_unwanted),
                ("in_queues", c.in_queues),
                ("in_transmission", c.in_transmission),
                ("in_flight", c.in_flight),
                ("in_sender", c.in_sender),
            ],
        )?;
        d.set_item("holds", c.holds())?;
        Ok(d)
    }

    /// Events processed and packets serialised so far.
    fn engine_stats<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let s = self.inner.engine_stats();
        counters(py, &[("events", s.events), ("forwarded", s.forwarded)])
    }

    /// Subscription-level changes of every receiver: time_ns, agent, level.
    fn level_timeline<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let t = self.inner.timelines();
        level_timeline_dict(py, &t.level_time_ns, &t.level_agent, &t.level)
    }

    /// Schedule the duplex link between nodes `a` and `b` (both directions) to go down at `at`
    /// seconds, as ns-2's `rtmodel-at at down a b`: what it holds then is dropped and counted
    /// (`drops_link_down`), routes are recomputed and multicast trees re-grafted on the new
    /// reverse paths. Several links between `a` and `b`: the first one added.
    fn link_down(&mut self, at: f64, a: &str, b: &str) -> Result<()> {
        self.link_state(at, a, b, false)
    }

    /// Schedule the duplex link between nodes `a` and `b` to come back up at `at` seconds.
    fn link_up(&mut self, at: f64, a: &str, b: &str) -> Result<()> {
        self.link_state(at, a, b, true)
    }

    /// Schedule node `node` to fail at `at` seconds: every link of it goes down (its agents
    /// keep running, cut off), as ns-2's `rtmodel-at at down node`.
    fn node_down(&mut self, at: f64, node: &str) -> Result<()> {
        self.node_state(at, node, false)
    }

    /// Schedule node `node` to come back at `at` seconds, with every link of it that was not
    /// set down by itself.
    fn node_up(&mut self, at: f64, node: &str) -> Result<()> {
        self.node_state(at, node, true)
    }

    /// Whether node `node` is up now.
    fn node_is_up(&self, node: &str) -> Result<bool> {
        let n = self.node("node", node)?;
        Ok(self.inner.node_up(n))
    }

    /// The path unicast packets take now from node `src` to node `dst`, as node names from `src`
    /// to `dst`; None when `dst` cannot be reached. Routes exist once the run has started.
    fn route(&self, src: &str, dst: &str) -> Result<Option<Vec<String>>> {
        let (mut n, d) = (self.node("src", src)?, self.node("dst", dst)?);
        let mut path = vec![self.inner.node_name(n).to_string()];
        while n != d {
            let Some(ch) = self.inner.route_next(n, d) else { return Ok(None) };
            n = self.inner.channel_info(ch).expect("a routed channel exists").1;
            path.push(self.inner.node_name(n).to_string());
            if path.len() > self.inner.node_count() {
                return Ok(None); // a loop cannot happen on shortest paths; never hang on one
            }
        }
        Ok(Some(path))
    }

    /// Whether `node` currently forwards `group` on `channel`.
    fn forwards(&self, group: i64, node: &str, channel: i64) -> Result<bool> {
        let g = self.group("group", group)?;
        let n = self.node("node", node)?;
        let ch = self.chan("channel", channel)?;
        Ok(self.inner.forwards(g, n, ch))
    }
}

/// Worst-case windowed loss over an event process (McCanne et al. §4.2): `times_ns` sorted; at each
/// event `received` packets arrived and `lost` were detected lost.
/// `window`: the window length in seconds.
#[pyfunction]
fn worst_window_loss(times_ns: Vec<u64>, received: Vec<u64>, lost: Vec<u64>, window: f64) -> Result<f64> {
    if times_ns.len() != received.len() || times_ns.len() != lost.len() {
        return Err(bad("received", received.len(), "times_ns, received and lost must have equal lengths"));
    }
    if times_ns.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("times_ns", "unsorted", "must be sorted"));
    }
    let w = duration_s("window", window)?;
    if w.is_zero() {
        return Err(bad("window", window, "must be positive"));
    }
    Ok(metrics::worst_window_loss(&times_ns, &received, &lost, w.as_nanos()))
}

/// Serialisation time in ns of `size_bytes` at `rate_bps` (the engine's rounding).
#[pyfunction]
fn transmission_ns(size_bytes: i64, rate_bps: f64) -> Result<u64> {
    let s = positive_u32("size_bytes", size_bytes)?;
    if !(rate_bps.is_finite() && rate_bps >= 1.0) {
        return Err(bad("rate_bps", rate_bps, "must be at least 1 bit/s"));
    }
    Ok(Duration::transmission(s, rate_bps.round() as u64).as_nanos())
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulator>()?;
    m.add_function(wrap_pyfunction!(worst_window_loss, m)?)?;
    m.add_function(wrap_pyfunction!(transmission_ns, m)?)?;
    m.add_function(wrap_pyfunction!(config::config_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(registry::protocols, m)?)?;
    m.add_function(wrap_pyfunction!(registry::call_function, m)?)?;
    net::register(m)?;
    router::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // the TCP variants add_tcp_flow and scenario files accept, in one place
    let variants: Vec<&str> = castlab_proto::tcp::CcAlgorithm::ALL.iter().map(|(n, _)| *n).collect();
    m.add("TCP_VARIANTS", pyo3::types::PyTuple::new(m.py(), variants)?)?;
    Ok(())
}
