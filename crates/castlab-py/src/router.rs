//! Python binding of the user-space router (`castlab_net::Router`): built from the same
//! command-line words as the Rust side parses (`RouterConfig::from_args`), so that the
//! `castlab net router` role, the testbed and a by-hand run share one format and one parser.
//!
//! `run` releases the GIL in slices of at most 100 ms and checks for signals between them,
//! as `NetDriver.run` does. Hosting extensions from Python is not offered yet: the router
//! forwards, queues and delays; extensions are hosted from Rust (`Router::set_extension`).

use pyo3::exceptions::{PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use castlab_core::Duration;
use castlab_net::router::sys;
use castlab_net::{Router, RouterConfig, RouterError};

use crate::{bad, duration_s};

/// The longest the GIL stays released: the latency of Ctrl-C and of status callbacks.
const SLICE: Duration = Duration::from_millis(100);

fn router_err(e: RouterError) -> PyErr {
    match e {
        RouterError::Config(c) => PyValueError::new_err(c.to_string()),
        r @ RouterError::Refused(_) => PyPermissionError::new_err(r.to_string()),
        io @ RouterError::Io { .. } => PyOSError::new_err(io.to_string()),
    }
}

/// The user-space multicast router of castlab-net, in this process's network namespace.
#[pyclass(name = "NetRouter", unsendable, module = "castlab._native")]
pub struct NetRouter {
    inner: Router,
}

#[pymethods]
impl NetRouter {
    /// `args`: the router's words (`--iface NAME,ADDR/LEN[,rate=R][,delay=D][,queue=Q][,lan]`,
    /// `--route DST/LEN,via=GW`, `--seed N`, the IGMP timers...; docs/real-network.md).
    #[new]
    fn new(args: Vec<String>) -> PyResult<Self> {
        let (cfg, rest) = RouterConfig::from_args(&args).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if let Some(w) = rest.first() {
            return Err(bad("router argument", w, "unknown (see docs/real-network.md)"));
        }
        Ok(NetRouter { inner: Router::new(cfg).map_err(router_err)? })
    }

    /// Seconds since the router started.
    #[getter]
    fn now(&self) -> f64 {
        self.inner.now().as_secs_f64()
    }

    /// Forward for `duration` seconds of wall clock (or until a signal), calling `status()`
    /// every `status_interval` seconds if given.
    #[pyo3(signature = (duration, status=None, status_interval=1.0))]
    fn run(slf: &Bound<'_, Self>, duration: f64, status: Option<Py<PyAny>>, status_interval: f64) -> PyResult<()> {
        let py = slf.py();
        let d = duration_s("duration", duration)?;
        let every = duration_s("status_interval", status_interval)?;
        if status.is_some() && every.is_zero() {
            return Err(bad("status_interval", status_interval, "must be positive"));
        }
        let start = slf.borrow().inner.now();
        let end = start + d;
        let mut next_status = start + every;
        loop {
            let now = {
                let mut me = slf.borrow_mut();
                let now = me.inner.now();
                if now >= end {
                    return Ok(());
                }
                let mut slice_end = end.min(now + SLICE);
                if status.is_some() {
                    slice_end = slice_end.min(next_status);
                }
                let inner = &mut me.inner;
                py.detach(|| inner.run_until(slice_end)).map_err(router_err)?;
                inner.now()
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

    /// Router-wide counters (frames refused by reason, forwarding, ARP, IGMP, envelope
    /// rejections, extension), and `last_error` (str or None).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = crate::counters(py, &self.inner.stats().pairs())?;
        d.set_item("last_error", self.inner.last_error())?;
        Ok(d)
    }

    /// One dict per interface: `name`, the queue's `backlog` and `avg` (packets), the counters
    /// (arrivals, enqueued, marked, drops by cause, departures, tx, lateness), and `groups`
    /// with members as (group, any_source, n_sources).
    fn ports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for i in 0..self.inner.port_count() {
            let d = crate::counters(py, &self.inner.port_stats(i).pairs())?;
            d.set_item("name", self.inner.port_name(i))?;
            d.set_item("backlog", self.inner.queue_len(i))?;
            d.set_item("avg", self.inner.queue_avg(i))?;
            let g: Vec<(String, bool, usize)> =
                self.inner.members(i).into_iter().map(|(a, any, n)| (a.to_string(), any, n)).collect();
            d.set_item("groups", g)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The counters as text, one `tc -s qdisc`-like paragraph per interface and a router line.
    fn stats_text(&self) -> String {
        self.inner.stats_text()
    }
}

/// Switch off tx checksumming, scatter-gather, TSO, GSO and GRO on interface `name` of this
/// process's network namespace (what lets the router's AF_PACKET sockets see whole frames).
#[pyfunction]
fn net_offloads_off(name: &str) -> PyResult<()> {
    sys::offloads_off(name).map_err(|e| PyOSError::new_err(format!("{name}: {e}")))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NetRouter>()?;
    m.add_function(wrap_pyfunction!(net_offloads_off, m)?)?;
    Ok(())
}
