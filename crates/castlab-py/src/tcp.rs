//! Python bindings for the TCP sender's readers: traces and counters as numpy arrays and dicts.
//! `add_tcp_flow` is TCP's registry role (`castlab_proto::tcp::registration`); it adds the sink
//! first and the sender right after it, so a sender with agent id `a` always has its sink at
//! `a - 1` (checked when read).

use pyo3::prelude::*;

use crate::error::Result;
use pyo3::types::PyDict;

use castlab_core::{AgentId, Instant};
use castlab_proto::tcp::{TcpSender, TcpSink};

use crate::records;
use crate::{bad, Simulator};

impl Simulator {
    fn tcp_sender(&self, a: i64) -> Result<(AgentId, &TcpSender)> {
        let id = self.agent_id("agent", a)?;
        let s = self
            .inner
            .agent::<TcpSender>(id)
            .ok_or_else(|| bad("agent", a, "is not a TCP sender (add_tcp_flow returns one)"))?;
        Ok((id, s))
    }

    fn tcp_sink_of(&self, sender: AgentId) -> Option<(AgentId, &TcpSink)> {
        let id = AgentId(sender.0.checked_sub(1)?);
        self.inner.agent::<TcpSink>(id).map(|s| (id, s))
    }
}

fn opt_secs(t: Option<Instant>) -> Option<f64> {
    t.map(|t| t.as_secs_f64())
}

#[pymethods]
impl Simulator {
    /// Per-flow trace of a TCP sender (numpy arrays, times in ns since the start of the run):
    /// cc_time_ns/cwnd_bytes/ssthresh_bytes (a row whenever either changed), rtt_time_ns/rtt_ns/
    /// srtt_ns/rto_ns (one row per RTT sample), retx_time_ns/retx_seq/retx_kind (1 fast
    /// retransmit, 2 NewReno partial ACK, 3 timeout, 4 go-back-N after a timeout, 5 a hole
    /// chosen in SACK recovery),
    /// timeout_time_ns/timeout_rto_ns, ack_time_ns/acked_bytes (cumulative bytes acknowledged),
    /// for paced flows (bbr) tx_time_ns/tx_bytes (cumulative on-wire bytes sent, a row per
    /// segment), for bbr state_time_ns/state_code/pacing_rate_bps (a row per change of mode or
    /// gain-cycle phase: 0 STARTUP, 1 DRAIN, 2 PROBE_RTT, 8 + phase in PROBE_BW, 8 being the
    /// 5/4 phase and 9 the 3/4 one; the pacing rate then, bit/s),
    /// and the sink's rx_time_ns/rx_bytes (cumulative in-order bytes delivered).
    /// `agent`: the sender's agent id.
    fn tcp_trace<'py>(&self, py: Python<'py>, agent: i64) -> Result<Bound<'py, PyDict>> {
        let (id, s) = self.tcp_sender(agent)?;
        let d = records::table(py, &s.trace)?;
        let (_, sink) = self.tcp_sink_of(id).ok_or_else(|| bad("agent", agent, "has no TCP sink"))?;
        records::fill(py, &d, &sink.trace)?;
        Ok(d)
    }

    /// Counters and current state of a TCP sender and its sink (bytes, seconds).
    /// `agent`: the sender's agent id (what `add_tcp_flow` returned).
    fn tcp_stats<'py>(&self, py: Python<'py>, agent: i64) -> Result<Bound<'py, PyDict>> {
        let (id, s) = self.tcp_sender(agent)?;
        let (sink_id, sink) = self.tcp_sink_of(id).ok_or_else(|| bad("agent", agent, "has no TCP sink"))?;
        let d = PyDict::new(py);
        d.set_item("variant", s.controller().name())?;
        d.set_item("sink", sink_id.0)?;
        d.set_item("mss_bytes", s.config().mss_bytes)?;
        d.set_item("cwnd_bytes", s.cwnd())?;
        d.set_item("ssthresh_bytes", s.ssthresh())?;
        d.set_item("in_recovery", s.controller().in_recovery())?;
        d.set_item("srtt", s.rtt_estimator().srtt().map(|x| x.as_secs_f64()))?;
        d.set_item("rttvar", s.rtt_estimator().rttvar().as_secs_f64())?;
        d.set_item("rto", s.rtt_estimator().rto().as_secs_f64())?;
        d.set_item("snd_una", s.snd_una())?;
        d.set_item("snd_nxt", s.snd_nxt())?;
        d.set_item("snd_max", s.snd_max())?;
        d.set_item("completed_at", opt_secs(s.completed_at()))?;
        let st = s.stats;
        for (k, v) in [
            ("segments_sent", st.segments_sent),
            ("payload_bytes_sent", st.payload_bytes_sent),
            ("retransmissions", st.retransmissions),
            ("fast_retransmits", st.fast_retransmits),
            ("timeouts", st.timeouts),
            ("dup_acks", st.dup_acks),
            ("ignored", st.ignored),
        ] {
            d.set_item(k, v)?;
        }
        let ks = sink.stats;
        d.set_item("received_bytes", sink.received_bytes())?;
        d.set_item("fin_at", opt_secs(sink.fin_at()))?;
        for (k, v) in [
            ("sink_segments", ks.segments),
            ("sink_duplicates", ks.duplicates),
            ("sink_out_of_order", ks.out_of_order),
            ("sink_acks_sent", ks.acks_sent),
            ("sink_ignored", ks.ignored),
        ] {
            d.set_item(k, v)?;
        }
        Ok(d)
    }
}
