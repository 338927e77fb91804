//! Python bindings for LE-SBCC (issue 6): Thapliyal et al., *LE-SBCC: Loss-Event Oriented
//! Source-based Multicast Congestion Control*, with its PGM-like transport (§5.1) and NAK
//! aggregation in routers (§3.3).
//!
//! Keyword overrides of `LesbccConfig` and `PgmReceiverConfig` fields, whose defaults are the
//! paper's values or the choices documented there (`config_defaults("lesbcc")`, `("pgm")`);
//! durations are in seconds. Every input is checked here or by the configs' `validate`, and a
//! bad one is a `ValueError` that names the field.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use castlab_core::Config;
use castlab_core::{Addr, AgentId, Dest, GroupId};
use castlab_proto::lesbcc::{run_synthetic, LesbccConfig, LesbccSource, LossHistory, ReceiverClass};
use castlab_proto::pgm::{NakAggregator, PgmReceiver, PgmReceiverConfig};

use crate::config::{build, cfg_err};
use crate::{arr_u64, bad, counters, err, nonneg_u64, positive_duration, positive_u32, u32_field, Simulator};

/// Split keyword overrides between the source's [`LesbccConfig`] and the receiver's
/// [`PgmReceiverConfig`] (their field names are disjoint), for `add_lesbcc_unicast`.
fn split_overrides<'py>(
    py: Python<'py>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let (src, rcv) = (PyDict::new(py), PyDict::new(py));
    if let Some(d) = config {
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            if <PgmReceiverConfig as Config>::FIELDS.contains(&key.as_str()) {
                rcv.set_item(k, v)?;
            } else {
                src.set_item(k, v)?;
            }
        }
    }
    Ok((src, rcv))
}

/// Counters and state of an LE-SBCC source (shared by the simulator and the real-network
/// bindings); `names` are the receivers in the cascade's order.
pub(crate) fn lesbcc_stats_dict<'py>(
    py: Python<'py>,
    s: &LesbccSource,
    names: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let c = s.cascade();
    let st = s.stats;
    let cs = c.stats;
    let d = counters(
        py,
        &[
            ("odata_sent", st.odata_sent),
            ("rdata_sent", st.rdata_sent),
            ("ncf_sent", st.ncf_sent),
            ("spm_sent", st.spm_sent),
            ("bytes_sent", st.bytes_sent),
            ("naks_out_of_window", st.naks_out_of_window),
            ("naks_repair_pending", st.naks_repair_pending),
            ("ignored", st.ignored),
            ("lis", cs.lis),
            ("les", cs.les),
            ("lprf_passed", cs.lprf_passed),
            ("rate_reductions", cs.rate_reductions),
            ("rate_increases", cs.rate_increases),
            ("rtt_samples", cs.rtt_samples),
            ("rtt_pruned", cs.rtt_pruned),
            ("lprf_decays", cs.lprf_decays),
            ("lead", s.lead()),
        ],
    )?;
    d.set_item("rate_bps", c.rate_bps())?;
    d.set_item("srtt", c.srtt())?;
    d.set_item("sigma", c.sigma())?;
    d.set_item("s_hat", c.s_hat())?;
    d.set_item("receivers", names)?;
    d.set_item("lprf_counts", PyArray1::from_slice(py, c.lprf.counts()))?;
    Ok(d)
}

/// Records of an LE-SBCC source as numpy arrays (shared like [`lesbcc_stats_dict`]).
pub(crate) fn lesbcc_trace_dict<'py>(py: Python<'py>, s: &LesbccSource) -> PyResult<Bound<'py, PyDict>> {
    crate::records::table(py, &s.cascade().records)
}

/// Counters of a PGM receiver (shared like [`lesbcc_stats_dict`]).
pub(crate) fn pgm_receiver_stats_dict<'py>(py: Python<'py>, r: &PgmReceiver) -> PyResult<Bound<'py, PyDict>> {
    let s = r.stats;
    let d = counters(
        py,
        &[
            ("odata", s.odata),
            ("rdata", s.rdata),
            ("ncf", s.ncf),
            ("spm", s.spm),
            ("duplicates", s.duplicates),
            ("unique", s.unique),
            ("gaps", s.gaps),
            ("repaired", s.repaired),
            ("naks_sent", s.naks_sent),
            ("naks_suppressed_ncf", s.naks_suppressed_ncf),
            ("naks_cancelled_repair", s.naks_cancelled_repair),
            ("unrecoverable", s.unrecoverable),
            ("ignored", s.ignored),
            ("rx_trail", r.rx_trail()),
            ("lead", r.lead()),
        ],
    )?;
    d.set_item("complete", r.is_complete())?;
    d.set_item("complete_at", r.complete_at.map(|t| t.as_secs_f64()))?;
    Ok(d)
}

impl Simulator {
    fn lesbcc(&self, a: i64) -> PyResult<(AgentId, &LesbccSource)> {
        let id = self.agent_id("agent", a)?;
        let s = self.inner.agent::<LesbccSource>(id).ok_or_else(|| bad("agent", a, "is not an LE-SBCC source"))?;
        Ok((id, s))
    }
    fn pgm_receiver(&self, a: i64) -> PyResult<&PgmReceiver> {
        let id = self.agent_id("agent", a)?;
        self.inner.agent::<PgmReceiver>(id).ok_or_else(|| bad("agent", a, "is not a PGM receiver"))
    }
}

#[pymethods]
impl Simulator {
    /// An LE-SBCC multicast source on `node` sending session `flow` to `group` (§2, §5.1).
    /// Returns the agent id.
    /// `start`: seconds at which it sends; `config`: the keyword overrides
    /// (`config_defaults("lesbcc")`).
    #[pyo3(signature = (node, group, flow=0, start=0.0, **config))]
    fn add_lesbcc_source(
        &mut self,
        node: &str,
        group: i64,
        flow: i64,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let g = self.group("group", group)?;
        let flow = u32_field("flow", flow)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let cfg: LesbccConfig = build(config)?;
        let src = LesbccSource::try_new(Dest::Group(g), flow, cfg).map_err(cfg_err)?;
        self.inner.add_agent(n, None, s, Box::new(src)).map(|a| a.0).map_err(err)
    }

    /// A PGM receiver of session `flow` on `node`: joins `group`, or (group None) listens for a
    /// unicast session on `port`. Returns the agent id.
    /// `start`: seconds at which it joins; `config`: the keyword overrides
    /// (`config_defaults("pgm")`).
    #[pyo3(signature = (node, group=None, flow=0, port=None, start=0.0, **config))]
    fn add_pgm_receiver(
        &mut self,
        node: &str,
        group: Option<i64>,
        flow: i64,
        port: Option<i64>,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let g: Option<GroupId> = group.map(|g| self.group("group", g)).transpose()?;
        let flow = u32_field("flow", flow)?;
        let port = self.port(port)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let cfg: PgmReceiverConfig = build(config)?;
        let rx = PgmReceiver::try_new(g, flow, cfg).map_err(cfg_err)?;
        self.inner.add_agent(n, port, s, Box::new(rx)).map(|a| a.0).map_err(err)
    }

    /// A unicast LE-SBCC flow (the background flows of Fig. 5): a PGM receiver on `dst` and
    /// the source on `src`, added in that order, so the receiver of source `a` is `a - 1`.
    /// Returns the source's agent id.
    /// Keyword overrides go to the source's configuration (`config_defaults("lesbcc")`) or the
    /// receiver's (`config_defaults("pgm")`), by name.
    /// `port`: the receiver's port (None: the next free one); `start` seconds; `config`: the
    /// keyword overrides.
    #[pyo3(signature = (src, dst, flow=None, port=None, start=0.0, **config))]
    #[allow(clippy::too_many_arguments)]
    fn add_lesbcc_unicast(
        &mut self,
        py: Python<'_>,
        src: &str,
        dst: &str,
        flow: Option<i64>,
        port: Option<i64>,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let ns = self.node("src", src)?;
        let nd = self.node("dst", dst)?;
        let port = self.port(port)?;
        let s = self.inner.check_start("start", start).map_err(err)?;
        let (src_over, rcv_over) = split_overrides(py, config)?;
        let cfg: LesbccConfig = build(Some(&src_over))?;
        let rcfg: PgmReceiverConfig = build(Some(&rcv_over))?;
        let sender_id = self.inner.agent_count() as u64 + 1;
        let flow = match flow {
            None => u32::try_from(sender_id).map_err(|_| bad("flow", sender_id, "too many agents"))?,
            Some(f) => u32_field("flow", f)?,
        };
        let now = self.inner.now();
        let rx = PgmReceiver::try_new(None, flow, rcfg).map_err(cfg_err)?;
        let rx = self.inner.add_agent(nd, port, now, Box::new(rx)).map_err(err)?;
        let addr: Addr = self.inner.agent_addr(rx).expect("just added");
        let tx = LesbccSource::try_new(Dest::Unicast(addr), flow, cfg).map_err(cfg_err)?;
        let id = self.inner.add_agent(ns, None, s, Box::new(tx)).map_err(err)?;
        Ok(id.0)
    }

    /// Counters and state of an LE-SBCC source: transport (odata_sent, rdata_sent, ncf_sent...),
    /// cascade (lis, les, lprf_passed, rate_reductions...), rate_bps, srtt, sigma, and
    /// `receivers` (the node names in the order the cascade numbers them) with `les_per_receiver`
    /// counts X_i of Max-LPRF (after decay).
    /// `agent`: the source's agent id.
    fn lesbcc_stats<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let (_, s) = self.lesbcc(agent)?;
        let names: Vec<String> = s.receiver_addrs().iter().map(|a| self.inner.node_name(a.node).to_string()).collect();
        lesbcc_stats_dict(py, s, names)
    }

    /// Records of an LE-SBCC source (numpy arrays, times in ns): rate_time_ns/rate_bps (each
    /// change), rtt_time_ns/rtt_sample_s/srtt_s/sigma_s/rtt_used (each sample offered),
    /// li_time_ns/li_receiver/li_outcome (each LI; outcome 0 LI2LE, 1 Max-LPRF, 2 ATF,
    /// 3 reduction).
    /// `agent`: the source's agent id.
    fn lesbcc_trace<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        lesbcc_trace_dict(py, self.lesbcc(agent)?.1)
    }

    /// Counters of a PGM receiver, and whether it holds all data the source announced.
    /// `agent`: the receiver's agent id.
    fn pgm_receiver_stats<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        pgm_receiver_stats_dict(py, self.pgm_receiver(agent)?)
    }

    /// Attach PGM-style NAK aggregation (§3.3) to router `node`: the first NAK per (session,
    /// sequence number) goes on toward the source and opens a NAK elimination interval of
    /// `hold` seconds in which later NAKs for it are consumed, also those that crossed the
    /// repair (PGM's NAK_ELIM_IVL; kept shorter than the receivers' NAK_RDATA_IVL).
    #[pyo3(signature = (node, hold=0.5))]
    fn attach_nak_aggregator(&mut self, node: &str, hold: f64) -> PyResult<()> {
        let n = self.node("node", node)?;
        let h = positive_duration("hold", hold)?;
        self.inner.attach_extension(n, Box::new(NakAggregator::new(h))).map_err(err)
    }

    /// The counters of the NAK aggregator on `node` (LI aggregation, LE-SBCC §3.3): NAKs forwarded
    /// and suppressed (also after a repair), repairs seen.
    fn nak_aggregator_stats<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyDict>> {
        let n = self.node("node", node)?;
        let a = self.inner.extension::<NakAggregator>(n).ok_or_else(|| bad("node", node, "has no NAK aggregator"))?;
        counters(
            py,
            &[
                ("naks_forwarded", a.stats.naks_forwarded),
                ("naks_suppressed", a.stats.naks_suppressed),
                ("naks_suppressed_after_repair", a.stats.naks_suppressed_after_repair),
                ("repairs_seen", a.stats.repairs_seen),
            ],
        )
    }
}

/// Drive the LE-SBCC source cascade with synthetic LI streams (§3.1.4, Fig. 11-12): classes
/// of receivers given as (count, loss probability, RTT seconds); `packets` sent at the
/// cascade's rate; each loss at each receiver is one LI after that receiver's RTT.
/// `seed`: the random stream's seed; `config`: the keyword overrides of the source
/// (`config_defaults("lesbcc")`).
#[pyfunction]
#[pyo3(signature = (classes, packets=6000, seed=0, **config))]
fn lesbcc_synthetic<'py>(
    py: Python<'py>,
    classes: Vec<(i64, f64, f64)>,
    packets: i64,
    seed: i64,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg: LesbccConfig = build(config)?;
    if classes.is_empty() {
        return Err(bad("classes", "[]", "needs at least one class of receivers"));
    }
    let mut cl = Vec::with_capacity(classes.len());
    let mut total = 0usize;
    for &(count, loss, rtt) in &classes {
        let count = usize::try_from(count).map_err(|_| bad("classes", count, "counts must be >= 0"))?;
        if !(0.0..=1.0).contains(&loss) {
            return Err(bad("classes", loss, "loss probabilities must be in [0, 1]"));
        }
        let rtt = positive_duration("classes", rtt)?;
        total += count;
        cl.push(ReceiverClass { count, loss, rtt });
    }
    if total == 0 || total > 10_000_000 {
        return Err(bad("classes", total, "total receivers must be in 1..=10,000,000"));
    }
    let packets = nonneg_u64("packets", packets)?;
    if packets == 0 {
        return Err(bad("packets", 0, "must be positive"));
    }
    let seed = nonneg_u64("seed", seed)?;
    let r = run_synthetic(&cfg, &cl, packets, seed);
    let s = r.stats;
    let d = counters(
        py,
        &[
            ("lis", s.lis),
            ("les", s.les),
            ("lprf_passed", s.lprf_passed),
            ("rate_reductions", s.rate_reductions),
            ("rate_increases", s.rate_increases),
            ("rtt_samples", s.rtt_samples),
            ("packets", r.packets),
        ],
    )?;
    d.set_item("duration_s", r.duration_s)?;
    d.set_item("final_srtt_s", r.final_srtt_s)?;
    d.set_item("mean_rate_bps", r.mean_rate_bps)?;
    d.set_item("les_per_receiver", arr_u64(py, &r.les_per_receiver))?;
    d.set_item("passed_per_receiver", arr_u64(py, &r.passed_per_receiver))?;
    Ok(d)
}

/// The TFRC average loss interval ŝ_i of LE-SBCC §4.1: `intervals` newest first (s_1, s_2,
/// ...), `s0` the packets since the last LE, weights all 1 (n of them), discount `alpha`.
/// `i`: the i of ŝ_i (§4.1).
#[pyfunction]
#[pyo3(signature = (intervals, s0, i=1, n=8, alpha=0.95))]
fn tfrc_average_interval(intervals: Vec<i64>, s0: i64, i: i64, n: i64, alpha: f64) -> PyResult<Option<f64>> {
    let n = positive_u32("n", n)? as usize;
    if !(0.0..=1.0).contains(&alpha) {
        return Err(bad("alpha", alpha, "must be in [0, 1]"));
    }
    let i = usize::try_from(i).map_err(|_| bad("i", i, "must be >= 0"))?;
    let mut h = LossHistory::new(vec![1.0; n], alpha, intervals.len().max(n) + 1);
    for &s in intervals.iter().rev() {
        h.push_interval(nonneg_u64("intervals", s)?);
    }
    h.set_s0(nonneg_u64("s0", s0)?);
    Ok(h.average(i))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lesbcc_synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_average_interval, m)?)?;
    Ok(())
}
