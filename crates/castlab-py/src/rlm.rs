//! Python bindings for the RLM receiver (issue 4): McCanne, Jacobson and Vetterli,
//! *Receiver-driven Layered Multicast* (SIGCOMM 1996), §3 and the metrics of §4.1.
//!
//! `add_rlm_receiver` takes every [`RlmConfig`] field as a keyword argument whose default is
//! the paper's value (§4) or, where the paper gives none, the choice documented on
//! [`RlmConfig`]; durations are in seconds. Every input is checked here or by
//! [`RlmConfig::validate`], and a bad one becomes a `ValueError` that names the field.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::GroupId;
use castlab_proto::rlm::{RlmConfig, RlmError, RlmReceiver, RlmRecords, RlmState};
use castlab_sim::metrics;

use crate::{arr_u64, bad, duration_s, err, positive_u32, Simulator};

pub(crate) fn rlm_err(e: RlmError) -> PyErr {
    match e {
        RlmError::Invalid { field, value, reason } => bad(field, value, reason),
        RlmError::NoLayers => bad("data_groups", "[]", "needs at least one layer"),
    }
}

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
    let d = PyDict::new(py);
    d.set_item("level_time_ns", arr_u64(py, &r.level_time_ns))?;
    d.set_item("level", PyArray1::from_slice(py, &r.level))?;
    d.set_item("exp_start_ns", arr_u64(py, &r.exp_start_ns))?;
    d.set_item("exp_level", PyArray1::from_slice(py, &r.exp_level))?;
    d.set_item("exp_outcome", PyArray1::from_slice(py, &r.exp_outcome))?;
    d.set_item("exp_end_ns", arr_u64(py, &r.exp_end_ns))?;
    d.set_item("exp_detect_ns", arr_u64(py, &r.exp_detect_ns))?;
    d.set_item("trans_time_ns", arr_u64(py, &r.trans_time_ns))?;
    d.set_item("trans_from", PyArray1::from_slice(py, &r.trans_from))?;
    d.set_item("trans_to", PyArray1::from_slice(py, &r.trans_to))?;
    d.set_item("trans_cause", PyArray1::from_slice(py, &r.trans_cause))?;
    d.set_item("loss_time_ns", arr_u64(py, &r.loss_time_ns))?;
    d.set_item("loss_layer", PyArray1::from_slice(py, &r.loss_layer))?;
    d.set_item("loss_count", arr_u64(py, &r.loss_count))?;
    d.set_item("arr_time_ns", arr_u64(py, &r.arr_time_ns))?;
    d.set_item("supp_time_ns", arr_u64(py, &r.supp_time_ns))?;
    d.set_item("supp_level", PyArray1::from_slice(py, &r.supp_level))?;
    d.set_item("shared_time_ns", arr_u64(py, &r.shared_time_ns))?;
    d.set_item("shared_level", PyArray1::from_slice(py, &r.shared_level))?;
    d.set_item("heard_time_ns", arr_u64(py, &r.heard_time_ns))?;
    d.set_item("heard_level", PyArray1::from_slice(py, &r.heard_level))?;
    d.set_item("received", r.received)?;
    d.set_item("lost", r.lost())?;
    d.set_item("control_sent", r.control_sent)?;
    d.set_item("ignored", r.ignored)?;
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
    /// override the protocol constants (defaults: the paper's §4 values). Returns the agent id.
    #[pyo3(signature = (node, data_groups, control_group, start=0.0, alpha=2.0, beta=0.6666666666666666, k1=1.0, k2=2.0,
        g1=0.25, g2=0.25, t_min=5.0, t_max=600.0, scale_t_max=true, detection_init=5.0, detection_dev_init=2.0,
        loss_gain=0.0625, loss_threshold=0.25, session_interval_min=5.0, session_bandwidth_bps=1600.0,
        member_timeout_intervals=5, control_size_bytes=40, record_arrivals=true))]
    #[allow(clippy::too_many_arguments)]
    fn add_rlm_receiver(
        &mut self,
        node: &str,
        data_groups: Vec<i64>,
        control_group: i64,
        start: f64,
        alpha: f64,
        beta: f64,
        k1: f64,
        k2: f64,
        g1: f64,
        g2: f64,
        t_min: f64,
        t_max: f64,
        scale_t_max: bool,
        detection_init: f64,
        detection_dev_init: f64,
        loss_gain: f64,
        loss_threshold: f64,
        session_interval_min: f64,
        session_bandwidth_bps: f64,
        member_timeout_intervals: i64,
        control_size_bytes: i64,
        record_arrivals: bool,
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
        let cfg = RlmConfig {
            alpha,
            beta,
            k1,
            k2,
            g1,
            g2,
            t_min: duration_s("t_min", t_min)?,
            t_max: duration_s("t_max", t_max)?,
            scale_t_max,
            detection_init: duration_s("detection_init", detection_init)?,
            detection_dev_init: duration_s("detection_dev_init", detection_dev_init)?,
            loss_gain,
            loss_threshold,
            session_interval_min: duration_s("session_interval_min", session_interval_min)?,
            session_bandwidth_bps,
            member_timeout_intervals: positive_u32("member_timeout_intervals", member_timeout_intervals)?,
            control_size_bytes: positive_u32("control_size_bytes", control_size_bytes)?,
            record_arrivals,
        };
        let rx = RlmReceiver::try_new(cfg, gs, ctl).map_err(rlm_err)?;
        self.inner.add_agent(n, None, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// A receiver's records as numpy arrays (times in ns): level changes (`level_time_ns`,
    /// `level`), own join-experiments (`exp_*`; outcome 0 running, 1 success, 2 failed;
    /// `exp_end_ns` is 2^64-1 while running), state transitions (`trans_*`; states 0 S, 1 H,
    /// 2 M, 3 D; causes 0 loss, 1 loss rate, 2 detection timer), losses (`loss_*`, one row per
    /// sequence gap), data arrivals (`arr_time_ns`), suppressed join-timers (`supp_*`),
    /// shared-learning backoffs (`shared_*`), heard announcements (`heard_*`), and the counts
    /// `received`, `lost`, `control_sent`, `ignored`.
    fn rlm_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        rlm_records_dict(py, &self.rlm(agent)?.records)
    }

    /// A receiver's current protocol state: `level`, `state` ("S", "H", "M" or "D"),
    /// `receivers_estimate`, `detection_mean` and `detection_dev` (s), `detection_window` (s),
    /// `t_max_effective` (s), `loss_rate`, `join_timer_means` (s, index k-1 for level k).
    fn rlm_status<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        rlm_status_dict(py, self.rlm(agent)?)
    }

    /// The configuration a receiver runs with (durations in seconds).
    fn rlm_config<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let c = self.rlm(agent)?.config();
        let d = PyDict::new(py);
        for (k, v) in [
            ("alpha", c.alpha),
            ("beta", c.beta),
            ("k1", c.k1),
            ("k2", c.k2),
            ("g1", c.g1),
            ("g2", c.g2),
            ("t_min", c.t_min.as_secs_f64()),
            ("t_max", c.t_max.as_secs_f64()),
            ("detection_init", c.detection_init.as_secs_f64()),
            ("detection_dev_init", c.detection_dev_init.as_secs_f64()),
            ("loss_gain", c.loss_gain),
            ("loss_threshold", c.loss_threshold),
            ("session_interval_min", c.session_interval_min.as_secs_f64()),
            ("session_bandwidth_bps", c.session_bandwidth_bps),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("scale_t_max", c.scale_t_max)?;
        d.set_item("member_timeout_intervals", c.member_timeout_intervals)?;
        d.set_item("control_size_bytes", c.control_size_bytes)?;
        d.set_item("record_arrivals", c.record_arrivals)?;
        Ok(d)
    }

    /// Worst-case loss rate of an RLM receiver over sliding windows of `window` seconds
    /// (§4.1/§4.3): the maximum over all window positions of lost / (lost + received),
    /// computed by `castlab_sim::metrics` over the receiver's whole arrival process. Needs
    /// the receiver to have been created with `record_arrivals=True`.
    fn rlm_worst_window_loss(&self, agent: i64, window: f64) -> PyResult<f64> {
        let r = self.rlm(agent)?;
        let w = duration_s("window", window)?;
        if w.is_zero() {
            return Err(bad("window", window, "must be positive"));
        }
        if !r.config().record_arrivals {
            return Err(bad("record_arrivals", false, "the receiver must record arrivals for the windowed loss"));
        }
        let rec = &r.records;
        let (t, received, lost) = metrics::arrival_process(&rec.arr_time_ns, &rec.loss_time_ns, &rec.loss_count);
        Ok(metrics::worst_window_loss(&t, &received, &lost, w.as_nanos()))
    }
}
