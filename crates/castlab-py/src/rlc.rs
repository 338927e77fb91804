//! Python bindings for RLC (issue 13): Vicisano, Rizzo and Crowcroft, INFOCOM 1998, with the
//! Rainbow paper's set-up as the defaults (`config_defaults("rlc")`). The sender and the
//! receivers of a session must run with the same configuration (layers, rates, SP spacing).

use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::{GroupId, Instant};
use castlab_proto::rlc::{RlcConfig, RlcReceiver, RlcSender};

use crate::config::{build, cfg_err, config_dict};
use crate::{bad, err, Simulator};

impl Simulator {
    fn rlc_groups(&self, groups: &[i64]) -> PyResult<Vec<GroupId>> {
        if groups.is_empty() {
            return Err(bad("groups", "[]", "needs at least one layer"));
        }
        let gs = groups.iter().map(|&g| self.group("groups", g)).collect::<PyResult<Vec<GroupId>>>()?;
        for (i, g) in gs.iter().enumerate() {
            if gs[..i].contains(g) {
                return Err(bad("groups", g.0, "each layer needs its own group (duplicate)"));
            }
        }
        Ok(gs)
    }

    fn rlc(&self, a: i64) -> PyResult<&RlcReceiver> {
        let id = self.agent_id("agent", a)?;
        self.inner.agent::<RlcReceiver>(id).ok_or_else(|| bad("agent", a, "is not an RLC receiver"))
    }
}

#[pymethods]
impl Simulator {
    /// An RLC sender on `node`: layer m on `groups[m]` (one group per layer, `layers` of the
    /// config), data flow id `flow`, sending from `start` until `stop` seconds (None: for
    /// ever). Overrides: config_defaults("rlc"). Returns the agent id.
    #[pyo3(signature = (node, groups, flow, start=0.0, stop=None, **config))]
    fn add_rlc_sender(
        &mut self,
        node: &str,
        groups: Vec<i64>,
        flow: u32,
        start: f64,
        stop: Option<f64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let gs = self.rlc_groups(&groups)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let e = match stop {
            None => Instant::MAX,
            Some(x) => self.inner.check_start("stop", x).map_err(err)?,
        };
        let cfg: RlcConfig = build(config)?;
        let tx = RlcSender::try_new(cfg, &gs, flow, s, e).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(tx)).map(|a| a.0).map_err(err)
    }

    /// An RLC receiver on `node` for the session on `groups` with data flow id `flow`,
    /// starting at `start` seconds. Overrides: config_defaults("rlc"). Returns the agent id.
    /// `config`: the keyword overrides.
    #[pyo3(signature = (node, groups, flow, start=0.0, **config))]
    fn add_rlc_receiver(
        &mut self,
        node: &str,
        groups: Vec<i64>,
        flow: u32,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let gs = self.rlc_groups(&groups)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let cfg: RlcConfig = build(config)?;
        let rx = RlcReceiver::try_new(cfg, &gs, flow).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// An RLC receiver's records: `level_time_ns` and `level` (every level change),
    /// `received` and `lost` (packets per layer), `bytes`, `late`, `ignored` (losses in deaf
    /// periods), `sps_seen`, `join_ns`, `drop_ns`.
    /// `agent`: the receiver's agent id.
    fn rlc_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        rlc_records_dict(py, self.rlc(agent)?)
    }

    /// The configuration an RLC receiver runs with (durations in seconds).
    /// `agent`: the receiver's agent id.
    fn rlc_config<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        config_dict(py, self.rlc(agent)?.config())
    }
}

/// An RLC receiver's records as a dict (shared by the simulator and the real-network bindings).
pub(crate) fn rlc_records_dict<'py>(py: Python<'py>, r: &RlcReceiver) -> PyResult<Bound<'py, PyDict>> {
    let rec = r.records();
    let layers = r.config().layers as usize;
    let d = PyDict::new(py);
    d.set_item("level_time_ns", rec.levels.iter().map(|l| l.0.as_nanos()).collect::<Vec<u64>>())?;
    d.set_item("level", rec.levels.iter().map(|l| l.1).collect::<Vec<u32>>())?;
    d.set_item("received", rec.received[..layers].to_vec())?;
    d.set_item("lost", rec.lost[..layers].to_vec())?;
    d.set_item("bytes", rec.bytes)?;
    d.set_item("late", rec.late)?;
    d.set_item("ignored", rec.ignored)?;
    d.set_item("sps_seen", rec.sps_seen)?;
    d.set_item("join_ns", rec.joins.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>())?;
    d.set_item("drop_ns", rec.drops.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>())?;
    Ok(d)
}
