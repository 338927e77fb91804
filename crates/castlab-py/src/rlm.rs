//! Python bindings for the RLM receiver (issue 4): McCanne, Jacobson and Vetterli,
//! *Receiver-driven Layered Multicast* (SIGCOMM 1996), §3 and the metrics of §4.1.
//!
//! `add_rlm_receiver` takes any [`RlmConfig`] field as a keyword override of its `Default` (the
//! paper's §4 values, or the choice documented on the field); durations are in seconds. Every
//! input is checked here or by [`RlmConfig::validate`], and a bad one becomes a `ValueError`
//! that names the field.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::GroupId;
use castlab_proto::rlm::{Cause, Outcome, Record, RlmConfig, RlmReceiver, RlmRecords, RlmState};
use castlab_sim::metrics;

use crate::config::{build, cfg_err, config_dict};
use crate::records;
use crate::{bad, duration_s, err, Simulator};

fn state_name(s: RlmState) -> &'static str {
    match s {
        RlmState::Steady => "S",
        RlmState::Hysteresis => "H",
        RlmState::Measurement => "M",
        RlmState::Drop => "D",
    }
}

/// An RLM receiver's records as numpy arrays (shared by the simulator and the real-network
/// bindings; see `Simulator.rlm_records`).
pub(crate) fn rlm_records_dict<'py>(py: Python<'py>, r: &RlmRecords) -> PyResult<Bound<'py, PyDict>> {
    let d = records::table(py, r)?;
    // the codes' names, indexed by code: names["trans_cause"][code] and so on
    let names = PyDict::new(py);
    names.set_item("trans_from", RlmState::NAMES)?;
    names.set_item("trans_to", RlmState::NAMES)?;
    names.set_item("trans_cause", Cause::NAMES)?;
    names.set_item("exp_outcome", Outcome::NAMES)?;
    d.set_item("names", names)?;
    Ok(d)
}

/// An RLM receiver's current protocol state (shared like [`rlm_records_dict`]).
pub(crate) fn rlm_status_dict<'py>(py: Python<'py>, r: &RlmReceiver) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let (td, sd) = r.detection_estimate();
    d.set_item("level", r.level())?;
    d.set_item("layers", r.layers())?;
    d.set_item("state", state_name(r.state()))?;
    d.set_item("receivers_estimate", r.receivers_estimate())?;
    d.set_item("detection_mean", td.as_secs_f64())?;
    d.set_item("detection_dev", sd.as_secs_f64())?;
    d.set_item("detection_window", r.detection_window().as_secs_f64())?;
    d.set_item("t_max_effective", r.t_max_effective().as_secs_f64())?;
    d.set_item("loss_rate", r.loss_rate())?;
    let means: Vec<f64> = (1..=r.layers()).map(|k| r.join_timer_mean(k).as_secs_f64()).collect();
    d.set_item("join_timer_means", means)?;
    Ok(d)
}

impl Simulator {
    pub(crate) fn rlm(&self, a: i64) -> PyResult<&RlmReceiver> {
        let id = self.agent_id("agent", a)?;
        self.inner.agent::<RlmReceiver>(id).ok_or_else(|| bad("agent", a, "is not an RLM receiver"))
    }
}

#[pymethods]
impl Simulator {
    /// An RLM receiver on `node` (§3): layer m on `data_groups[m]`, join announcements and
    /// session messages on `control_group`, starting at `start` seconds. Keyword arguments
    /// override fields of the protocol's configuration (`config_defaults("rlm")`: the paper's
    /// §4 values). Returns the agent id.
    /// `config`: the keyword overrides.
    #[pyo3(signature = (node, data_groups, control_group, start=0.0, **config))]
    fn add_rlm_receiver(
        &mut self,
        node: &str,
        data_groups: Vec<i64>,
        control_group: i64,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        if data_groups.is_empty() {
            return Err(bad("data_groups", "[]", "needs at least one layer"));
        }
        if data_groups.len() > 255 {
            return Err(bad("data_groups", data_groups.len(), "at most 255 layers"));
        }
        let gs = data_groups.iter().map(|&g| self.group("data_groups", g)).collect::<PyResult<Vec<GroupId>>>()?;
        for (i, g) in gs.iter().enumerate() {
            if gs[..i].contains(g) {
                return Err(bad("data_groups", g.0, "each layer needs its own group (duplicate)"));
            }
        }
        let ctl = self.group("control_group", control_group)?;
        if gs.contains(&ctl) {
            return Err(bad("control_group", control_group, "must not be one of the data groups"));
        }
        let s = self.inner.check_start("start", start).map_err(err)?;
        let cfg: RlmConfig = build(config)?;
        let rx = RlmReceiver::try_new(cfg, gs, ctl).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// A receiver's records as numpy arrays (times in ns): level changes (`level_time_ns`,
    /// `level`), own join-experiments (`exp_*`; outcome 0 running, 1 success, 2 failed;
    /// `exp_end_ns` is 2^64-1 while running), state transitions (`trans_*`; states 0 S, 1 H,
    /// 2 M, 3 D; causes 0 loss, 1 loss rate, 2 detection timer), losses (`loss_*`, one row per
    /// sequence gap), data arrivals (`arr_time_ns`), suppressed join-timers (`supp_*`),
    /// shared-learning backoffs (`shared_*`), heard announcements (`heard_*`), and the counts
    /// `received`, `lost`, `control_sent`, `ignored`.
    /// `agent`: the receiver's agent id.
    fn rlm_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        rlm_records_dict(py, &self.rlm(agent)?.records)
    }

    /// A receiver's current protocol state: `level`, `state` ("S", "H", "M" or "D"),
    /// `receivers_estimate`, `detection_mean` and `detection_dev` (s), `detection_window` (s),
    /// `t_max_effective` (s), `loss_rate`, `join_timer_means` (s, index k-1 for level k).
    /// `agent`: the receiver's agent id.
    fn rlm_status<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        rlm_status_dict(py, self.rlm(agent)?)
    }

    /// The configuration a receiver runs with (durations in seconds).
    /// `agent`: the receiver's agent id.
    fn rlm_config<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        config_dict(py, self.rlm(agent)?.config())
    }

    /// Worst-case loss rate of an RLM receiver over sliding windows of `window` seconds
    /// (§4.1/§4.3): the maximum over all window positions of lost / (lost + received). For a
    /// window in the receiver's `windows` it is the value computed online while it ran; else
    /// it is computed by `castlab_sim::metrics` from the recorded arrivals, which needs
    /// `record="arrivals"`. Both give the same number to the last bit.
    /// `agent`: the receiver's agent id.
    fn rlm_worst_window_loss(&self, agent: i64, window: f64) -> PyResult<f64> {
        let r = self.rlm(agent)?;
        let w = duration_s("window", window)?;
        if w.is_zero() {
            return Err(bad("window", window, "must be positive"));
        }
        if let Some(v) = r.worst_window_loss(w.as_nanos()) {
            return Ok(v);
        }
        if r.config().record != Record::Arrivals {
            return Err(bad(
                "window",
                window,
                "is not one of the receiver's `windows` and it keeps no arrivals: create it with windows=[...] or record=\"arrivals\"",
            ));
        }
        let rec = &r.records;
        let (t, received, lost) = metrics::arrival_process(&rec.arr_time_ns, &rec.loss_time_ns, &rec.loss_count);
        Ok(metrics::worst_window_loss(&t, &received, &lost, w.as_nanos()))
    }
}
