//! The measuring sink's readers (`add_sink` is its registry role, `castlab_proto::sink::registration`):
//! a sink made with `record="summary"` (the default) keeps counters and the online worst-case
//! windowed loss; `record="arrivals"` also keeps every arrival and gap. `sink_summary` reads the
//! same dict in either mode.

use pyo3::prelude::*;

use crate::error::Result;
use pyo3::types::PyDict;

use castlab_proto::{LayeredSink, Record};

use crate::{bad, Simulator};

/// The sink, if it keeps per-arrival rows.
pub(crate) fn recorded(s: &LayeredSink) -> Result<&LayeredSink> {
    match s.record() {
        Record::Arrivals => Ok(s),
        Record::Summary => {
            Err(bad("record", "summary", "the sink keeps no per-arrival rows: create it with record=\"arrivals\""))
        }
    }
}

#[pymethods]
impl Simulator {
    /// A sink's counters, the same whatever it records: received, lost, bytes, per-layer
    /// `layer_received` / `layer_lost` (lists here, index = layer; `castlab.Simulator`
    /// turns them into numpy arrays when they are read, so that a run that reads only
    /// counters never imports numpy), `first_arrival_ns` /
    /// `last_arrival_ns` (None before any), `record`, and `worst_window_loss`, a dict from each
    /// configured window (seconds) to the online worst-case loss.
    /// `agent`: the sink's agent id.
    fn sink_summary<'py>(&self, py: Python<'py>, agent: i64) -> Result<Bound<'py, PyDict>> {
        let k = self.sink(agent)?;
        let s = &k.summary;
        let d = PyDict::new(py);
        d.set_item("received", s.received)?;
        d.set_item("lost", s.lost)?;
        d.set_item("bytes", s.bytes)?;
        d.set_item("layer_received", &s.layer_received)?;
        d.set_item("layer_lost", &s.layer_lost)?;
        d.set_item("first_arrival_ns", s.first_arrival_ns)?;
        d.set_item("last_arrival_ns", s.last_arrival_ns)?;
        d.set_item(
            "record",
            match k.record() {
                Record::Summary => "summary",
                Record::Arrivals => "arrivals",
            },
        )?;
        let ww = PyDict::new(py);
        for w in k.windows_ns() {
            ww.set_item(w as f64 / 1e9, k.worst_window_loss(w).unwrap_or(f64::NAN))?;
        }
        d.set_item("worst_window_loss", ww)?;
        Ok(d)
    }
}
