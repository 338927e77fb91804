//! Python bindings for RLC (Vicisano, Rizzo, Crowcroft, INFOCOM 1998), the layered baseline of
//! the Rainbow paper's §IV-B. Settings are keyword overrides of `RlcConfig`
//! (`config_defaults("rlc")`), as for every protocol.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::GroupId;
use castlab_proto::rlc::{RlcConfig, RlcReceiver, RlcSource};

use crate::config::{build, cfg_err, config_dict};
use crate::{bad, err, records, u32_field, Simulator};

impl Simulator {
    fn rlc(&self, a: i64) -> PyResult<&RlcReceiver> {
        let id = self.agent_id("agent", a)?;
        self.inner.agent::<RlcReceiver>(id).ok_or_else(|| bad("agent", a, "is not an RLC receiver"))
    }
    fn rlc_groups(&self, field: &'static str, groups: &[i64]) -> PyResult<Vec<GroupId>> {
        groups.iter().map(|&g| self.group(field, g)).collect()
    }
}

#[pymethods]
impl Simulator {
    /// An RLC source on `node`: layer i on `groups[i]` (one group per layer, rooted at `node`),
    /// SPs and burst tests as configured. Overrides: config_defaults("rlc"). Returns the agent id.
    #[pyo3(signature = (node, groups, flow=0, start=0.0, stop=None, **config))]
    fn add_rlc_source(
        &mut self,
        node: &str,
        groups: Vec<i64>,
        flow: i64,
        start: f64,
        stop: Option<f64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let gs = self.rlc_groups("groups", &groups)?;
        if gs.iter().any(|&g| self.inner.group_source(g) != Some(n)) {
            return Err(bad("groups", format!("{groups:?}"), "every group must be rooted at node"));
        }
        let (s, e) = self.start_stop(start, stop)?;
        let cfg: RlcConfig = build(config)?;
        let src = RlcSource::try_new(cfg, &gs, u32_field("flow", flow)?, s, e).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(src)).map(|a| a.0).map_err(err)
    }

    /// An RLC receiver on `node` of the layers on `groups`, from `start`. Overrides:
    /// config_defaults("rlc") (they must match the source's layers and SP timing). Returns the
    /// agent id.
    #[pyo3(signature = (node, groups, start=0.0, **config))]
    fn add_rlc_receiver(
        &mut self,
        node: &str,
        groups: Vec<i64>,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let gs = self.rlc_groups("groups", &groups)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let cfg: RlcConfig = build(config)?;
        let rx = RlcReceiver::try_new(cfg, gs).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// An RLC receiver's records: level changes (`level_time_ns`, `level`), losses after the
    /// reorder timeout (`loss_*`), and counts (`received`, `lost`, `late`, `joins`, `drops`,
    /// `deaf_losses`, `ignored`).
    fn rlc_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        records::table(py, &self.rlc(agent)?.records)
    }

    /// The configuration an RLC receiver runs with (durations in seconds).
    fn rlc_config<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        config_dict(py, self.rlc(agent)?.config())
    }
}
