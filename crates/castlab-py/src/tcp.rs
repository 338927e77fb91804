//! Python bindings for the TCP agents: one call creates a sender (Reno, NewReno, SACK, CUBIC
//! or BBR) and its sink; traces and counters come back as numpy arrays and dicts.
//!
//! `add_tcp_flow` adds the sink first and the sender right after it, so a sender with agent id
//! `a` always has its sink at `a - 1` (checked when read). Everything is validated before
//! either agent is added: a `ValueError` naming the field leaves the scenario untouched.

use pyo3::prelude::*;

use crate::error::Result;
use pyo3::types::PyDict;

use castlab_core::{Addr, AgentId, Instant};
use castlab_proto::tcp::{CcAlgorithm, TcpConfig, TcpSender, TcpSink, Transfer};

use crate::config::apply;
use crate::records;
use crate::{bad, nonneg_u64, u32_field, Simulator};

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
    /// A one-way TCP transfer from node `src` to node `dst` (ns-2 `Agent/TCP` + `TCPSink`
    /// style): adds the sink on `dst` (bound to `port`, or the next free port) and the sender on
    /// `src`; returns the sender's agent id. Sizes in bytes, times in seconds.
    /// Keyword arguments override fields of the TCP configuration (`config_defaults("tcp")`).
    /// `variant` (one of `TCP_VARIANTS`): "newreno", "reno" or "sack" (RFC 2018 SACK at both
    /// ends with RFC 6675 loss recovery, as ns-2's Agent/TCP/Sack1 with TCPSink/Sack1), from
    /// `config_defaults("tcp")`; "cubic" (RFC 9438 with Linux's HyStart) or "bbr" (BBR v1 as
    /// Linux's tcp_bbr.c, paced), from Linux's settings (MSS 1448, 52 header bytes, initial
    /// window 10, receive window 3 MiB, RTO 200 ms..120 s, delayed ACKs after 40 ms, SACK);
    /// from `start` to `stop` seconds (None: the end of the run);
    /// `transfer_bytes`: the transfer's size (None: unbounded); `flow`: the flow id (None: the next
    /// free one); `config`: the keyword overrides.
    #[pyo3(signature = (src, dst, variant="newreno", start=0.0, stop=None, transfer_bytes=None, port=None, flow=None,
        **config))]
    #[allow(clippy::too_many_arguments)]
    fn add_tcp_flow(
        &mut self,
        src: &str,
        dst: &str,
        variant: &str,
        start: f64,
        stop: Option<f64>,
        transfer_bytes: Option<i64>,
        port: Option<i64>,
        flow: Option<i64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> Result<u32> {
        let ns = self.node("src", src)?;
        let nd = self.node("dst", dst)?;
        if ns == nd {
            // A flow to its own node never leaves it; it used to spin at t = 0.
            return Err(bad("dst", dst, "must be another node than src"));
        }
        let Some(algo) = CcAlgorithm::from_name(variant) else {
            let names: Vec<String> = CcAlgorithm::ALL.iter().map(|(n, _)| format!("{n:?}")).collect();
            return Err(bad("variant", format!("{variant:?}"), &format!("must be one of {}", names.join(", "))));
        };
        let (s, e) = self.start_stop(start, stop)?;
        let transfer = match transfer_bytes {
            None => Transfer::Bulk,
            Some(n) => {
                let n = nonneg_u64("transfer_bytes", n)?;
                if n == 0 {
                    return Err(bad("transfer_bytes", n, "must be positive (None for a bulk transfer)"));
                }
                Transfer::Bytes(n)
            }
        };
        let mut cfg: TcpConfig = apply(algo.default_config(), config)?;
        cfg.transfer = transfer;
        // RFC 2018 SACK is negotiated by both ends: the variant turns it on at sender and sink
        cfg.sack = algo.uses_sack();
        cfg.start = s;
        cfg.stop = e;
        let port = self.port(port)?;
        // The sink is added first, so the sender's id is the next one after it.
        let sender_id = self.inner.agent_count() as u64 + 1;
        let flow = match flow {
            None => u32::try_from(sender_id).map_err(|_| bad("flow", sender_id, "too many agents"))?,
            Some(f) => u32_field("flow", f)?,
        };
        // The sink listens from now on (the sender may start later); a port already in use is
        // the only failure left, and it happens before anything is added.
        let now = self.inner.now();
        let sink = self.inner.add_agent(nd, port, now, Box::new(TcpSink::new(cfg.clone())))?;
        let addr: Addr = self.inner.agent_addr(sink).expect("just added");
        let tx = TcpSender::new(addr, flow, cfg.clone(), algo.build(&cfg));
        let id = self.inner.add_agent(ns, None, s, Box::new(tx))?;
        debug_assert_eq!(id.0, sink.0 + 1);
        Ok(id.0)
    }

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
