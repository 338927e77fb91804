//! The cascade's offline models as module functions: LE-SBCC's source cascade driven with
//! synthetic loss indications (§3.1.4) and the TFRC average loss interval (§4.1). The agents
//! themselves are built through the protocol registry (`registry.rs`).

use pyo3::prelude::*;

use crate::error::Result;
use pyo3::types::PyDict;

use castlab_proto::lesbcc::{run_synthetic, LesbccConfig, LossHistory, ReceiverClass};

use crate::config::apply;
use crate::{arr_u64, bad, counters, nonneg_u64, positive_duration, positive_u32};

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
) -> Result<Bound<'py, PyDict>> {
    let cfg: LesbccConfig = apply(LesbccConfig::default(), config)?;
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
fn tfrc_average_interval(intervals: Vec<i64>, s0: i64, i: i64, n: i64, alpha: f64) -> Result<Option<f64>> {
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> Result<()> {
    m.add_function(wrap_pyfunction!(lesbcc_synthetic, m)?)?;
    m.add_function(wrap_pyfunction!(tfrc_average_interval, m)?)?;
    Ok(())
}
