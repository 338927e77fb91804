//! Python bindings for NLM (issue 5): Nakauchi, Morikawa and Aoyama, *Network-supported Rate
//! Control Mechanism for Multicast Streaming Media*, §3-§4.
//!
//! Every NLM entry point takes keyword overrides of [`NlmConfig`] fields (durations in
//! seconds); `config_defaults("nlm")` lists them with Table 2's values and our documented
//! choices. An unknown key, or a bad value, is a `ValueError` that names the field.

use numpy::{PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::Duration;
use castlab_proto::nlm::NlmRouter;
use castlab_proto::nlm::{AddVerdict, LcurCause, Lmr, NlmConfig, NlmReceiver, NlmSender, ReqEvent};

use crate::config::{build, cfg_err, config_dict};
use crate::records;
use crate::{arr_u64, bad, duration_s, err, positive_u32, u32_field, Simulator};

impl Simulator {
    fn lmr_core(&self, node: &str) -> PyResult<&Lmr> {
        let n = self.node("node", node)?;
        let r = self.inner.extension::<NlmRouter>(n).ok_or_else(|| bad("node", node, "has no NLM router"))?;
        r.core().ok_or_else(|| bad("node", node, "has no LMR (a loss meter only, or the run has not started)"))
    }
}

#[pymethods]
impl Simulator {
    /// An NLM sender on `node` (§3.1): layer m at `rates_bps[m]`, every layer on `group` (whose
    /// source must be `node`), SESS every ss_intvl. Returns the agent id.
    /// `packet_size` bytes; `flow`: the flow id; from `start` to `stop` seconds (None: the end of
    /// the run); `jitter`: random send times; `config`: the keyword overrides
    /// (`config_defaults("nlm")`).
    #[pyo3(signature = (node, group, rates_bps, packet_size=1024, flow=0, start=0.0, stop=None, jitter=true, **config))]
    #[allow(clippy::too_many_arguments)]
    fn add_nlm_sender(
        &mut self,
        node: &str,
        group: i64,
        rates_bps: Vec<f64>,
        packet_size: i64,
        flow: i64,
        start: f64,
        stop: Option<f64>,
        jitter: bool,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let g = self.group("group", group)?;
        if self.inner.group_source(g) != Some(n) {
            return Err(bad("group", group, "must be a group whose source is this node"));
        }
        let size = positive_u32("packet_size", packet_size)?;
        let flow = u32_field("flow", flow)?;
        let (s, e) = self.start_stop(start, stop)?;
        let cfg: NlmConfig = build(config)?;
        let tx = NlmSender::try_new(cfg, g, &rates_bps, size, flow, s, e, jitter).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(tx)).map(|a| a.0).map_err(err)
    }

    /// An NLM receiver on `node` joining `group` at `start` (§3.4: DROP_REQ upstream when its
    /// loss rate over all layers exceeds loss_th); counts arrivals and losses per layer in bins
    /// of `bin` seconds. Returns the agent id.
    /// `config`: the keyword overrides (`config_defaults("nlm")`).
    #[pyo3(signature = (node, group, layers=5, start=0.0, bin=1.0, **config))]
    fn add_nlm_receiver(
        &mut self,
        node: &str,
        group: i64,
        layers: i64,
        start: f64,
        bin: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let g = self.group("group", group)?;
        let layers = usize::try_from(layers).map_err(|_| bad("layers", layers, "must be 1..255"))?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let b = duration_s("bin", bin)?;
        let cfg: NlmConfig = build(config)?;
        let rx = NlmReceiver::try_new(cfg, g, layers, b).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// Make `node` an LMR (§3.2). With `meter_channel`, also count per flow and layer the data
    /// packets offered to that output channel's queue after the filters, and those its DropTail
    /// queue dropped, in bins of `meter_bin` seconds.
    /// `meter_layers`: how many layers the meter counts; `config`: the keyword overrides
    /// (`config_defaults("lmr")`).
    #[pyo3(signature = (node, meter_channel=None, meter_bin=1.0, meter_layers=8, **config))]
    fn attach_lmr(
        &mut self,
        node: &str,
        meter_channel: Option<i64>,
        meter_bin: f64,
        meter_layers: i64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let n = self.node("node", node)?;
        let cfg: NlmConfig = build(config)?;
        let mut r = NlmRouter::lmr(cfg).map_err(cfg_err)?;
        if let Some(ch) = meter_channel {
            let (c, b, l) = self.meter_args(node, ch, meter_bin, meter_layers)?;
            r = r.with_meter(c, b, l);
        }
        self.inner.attach_extension(n, Box::new(r)).map_err(err)
    }

    /// A loss meter alone (no LMR) on `channel`, an output channel of `node`: measures a plain
    /// DropTail router the way `attach_lmr` measures an LMR (for RLM on the same set-up).
    /// Counts in bins of `bin` seconds for `layers` layers.
    #[pyo3(signature = (node, channel, bin=1.0, layers=8))]
    fn attach_loss_meter(&mut self, node: &str, channel: i64, bin: f64, layers: i64) -> PyResult<()> {
        let n = self.node("node", node)?;
        let (c, b, l) = self.meter_args(node, channel, bin, layers)?;
        self.inner.attach_extension(n, Box::new(NlmRouter::meter_only(c, b, l))).map_err(err)
    }

    /// A meter's counts: `bin_s`, `channel`, and `flows`: {flow: {"passed", "dropped"}} with
    /// 2-D arrays [bin, layer] (packets offered to the queue after the filters / dropped by it).
    /// `node`: the node the meter is attached to.
    fn loss_meter<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyDict>> {
        let n = self.node("node", node)?;
        let r = self.inner.extension::<NlmRouter>(n).ok_or_else(|| bad("node", node, "has no NLM router"))?;
        let (ch, m) = r.meter().ok_or_else(|| bad("node", node, "has no loss meter"))?;
        let d = PyDict::new(py);
        d.set_item("bin_s", m.bin().as_secs_f64())?;
        d.set_item("channel", ch.0)?;
        let flows = PyDict::new(py);
        let l = m.layers();
        for (i, f) in m.flows.iter().enumerate() {
            let e = PyDict::new(py);
            for (k, v) in [("passed", &m.passed[i]), ("dropped", &m.dropped[i])] {
                e.set_item(k, grid(py, v, l)?)?;
            }
            flows.set_item(*f, e)?;
        }
        d.set_item("flows", flows)?;
        Ok(d)
    }

    /// An LMR's records as numpy arrays (times in ns, interfaces as channel ids): L_cur changes
    /// (`lcur_*`; causes 0 DROP, 1 ADD, 2 DROP_REQ, 3 ADD_REQ, 4 SESS, 5 registration),
    /// requests (`req_*`; events 0 generated, 1 repeated, 2 received and forwarded, 3 received
    /// and discarded; kinds 2 DROP_REQ, 3 ADD_REQ), DROP/ADD decisions (`dec_*`; kind 2 DROP,
    /// 3 ADD), add_intvl updates (`intvl_*`; reasons 0 success, 1 congestion, 2 DROP_REQ,
    /// 3 no SESS), and `sess_processed`.
    /// `node`: the LMR's node name.
    fn lmr_records<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyDict>> {
        let d = records::table(py, &self.lmr_core(node)?.records)?;
        // the codes' names, indexed by code: names["lcur_cause"][code] and so on
        let names = PyDict::new(py);
        names.set_item("lcur_cause", LcurCause::NAMES)?;
        names.set_item("req_event", ReqEvent::NAMES)?;
        names.set_item("intvl_reason", AddVerdict::NAMES)?;
        d.set_item("names", names)?;
        Ok(d)
    }

    /// An LMR's current state: `interfaces` (list of dicts: channel, qlen, add_intvl (s),
    /// filtered) and `sessions` (list of dicts: group, prev (node, port) or None, l_max,
    /// l_cur: {channel: L_cur} for the interfaces where the session is registered).
    fn lmr_status<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyDict>> {
        let l = self.lmr_core(node)?;
        let d = PyDict::new(py);
        let ifs = pyo3::types::PyList::empty(py);
        for j in 0..l.interfaces() {
            let e = PyDict::new(py);
            e.set_item("channel", l.channel(j).0)?;
            e.set_item("qlen", l.qlen(j))?;
            e.set_item("add_intvl", l.add_intvl(j).as_secs_f64())?;
            e.set_item("filtered", l.filtered(j))?;
            ifs.append(e)?;
        }
        d.set_item("interfaces", ifs)?;
        let ss = pyo3::types::PyList::empty(py);
        for g in l.sessions() {
            let e = PyDict::new(py);
            e.set_item("group", g.0)?;
            e.set_item("prev", l.prev(g).map(|a| (a.node.0, a.port)))?;
            e.set_item("l_max", l.l_max(g))?;
            let lc = PyDict::new(py);
            for j in 0..l.interfaces() {
                let v = l.l_cur(j, g);
                if v > 0 {
                    lc.set_item(l.channel(j).0, v)?;
                }
            }
            e.set_item("l_cur", lc)?;
            ss.append(e)?;
        }
        d.set_item("sessions", ss)?;
        d.set_item("config", config_dict(py, l.config())?)?;
        Ok(d)
    }

    /// A sender's records: its L_cur changes (`level_time_ns`, `level`, `level_cause`),
    /// requests received (`req_*`), and counts `sess_sent`, `data_sent`, `data_withheld`.
    /// `agent`: the sender's agent id.
    fn nlm_sender_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let id = self.agent_id("agent", agent)?;
        let s = self.inner.agent::<NlmSender>(id).ok_or_else(|| bad("agent", agent, "is not an NLM sender"))?;
        records::table(py, &s.records)
    }

    /// A receiver's records: `bin_s`, `received` and `lost` as 2-D arrays [bin, layer] (loss
    /// from sequence gaps), windows over loss_th (`over_time_ns`, `over_loss`), DROP_REQs it
    /// generated (`req_time_ns`, `req_level`, `req_to`), and totals.
    /// `agent`: the receiver's agent id.
    fn nlm_receiver_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let id = self.agent_id("agent", agent)?;
        let rx = self.inner.agent::<NlmReceiver>(id).ok_or_else(|| bad("agent", agent, "is not an NLM receiver"))?;
        let r = &rx.records;
        let d = PyDict::new(py);
        let shape = |v: &[u32]| grid(py, v, rx.layers());
        d.set_item("bin_s", r.bin.as_secs_f64())?;
        d.set_item("received", shape(&r.bin_received)?)?;
        d.set_item("lost", shape(&r.bin_lost)?)?;
        d.set_item("over_time_ns", arr_u64(py, &r.over_time_ns))?;
        d.set_item("over_loss", PyArray1::from_slice(py, &r.over_loss))?;
        d.set_item("req_time_ns", arr_u64(py, &r.req_time_ns))?;
        d.set_item("req_level", PyArray1::from_slice(py, &r.req_level))?;
        d.set_item("req_to", PyArray1::from_slice(py, &r.req_to))?;
        d.set_item("req_copies", r.req_copies)?;
        d.set_item("total_received", r.received)?;
        d.set_item("total_lost", r.lost)?;
        d.set_item("sess_received", r.sess_received)?;
        d.set_item("upstream", rx.upstream().map(|a| (a.node.0, a.port)))?;
        Ok(d)
    }
}

/// A flat `[bin * layers + layer]` table as a 2-D array [bin, layer].
fn grid<'py>(py: Python<'py>, v: &[u32], layers: usize) -> PyResult<Bound<'py, PyArray2<u32>>> {
    PyArray1::from_slice(py, v).reshape([v.len() / layers, layers])
}

impl Simulator {
    fn meter_args(
        &self,
        node: &str,
        channel: i64,
        bin: f64,
        layers: i64,
    ) -> PyResult<(castlab_core::ChannelId, Duration, usize)> {
        let n = self.node("node", node)?;
        let ch = self.chan("meter_channel", channel)?;
        match self.inner.channel_info(ch) {
            Some((from, ..)) if from == n => {}
            _ => return Err(bad("meter_channel", channel, "must be an output channel of the node")),
        }
        let b = duration_s("meter_bin", bin)?;
        if b.is_zero() {
            return Err(bad("meter_bin", bin, "must be positive"));
        }
        if !(1..=64).contains(&layers) {
            return Err(bad("meter_layers", layers, "must be 1..64"));
        }
        Ok((ch, b, layers as usize))
    }
}
