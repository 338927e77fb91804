//! TCP's registry role: `add_tcp_flow`, one call that adds a sink and its sender, every
//! variant of [`CcAlgorithm::ALL`] chosen by name; the sender's readers, `tcp_trace` and
//! `tcp_stats`; and the scenario's `[[tcp]]` table with its flow-table row.
//!
//! The sink is added first and the sender right after it, so a sender with agent id `a` has
//! its sink at `a - 1` (the readers check it). Everything is validated before either agent is
//! added: an error naming the field leaves the host untouched.

use castlab_core::config::Value;
use castlab_core::{AgentId, Instant};

use super::{CcAlgorithm, TcpConfig, TcpSender, TcpSink, Transfer};
use crate::registry::{
    agent_as, Args, BuildError, BuildResult, ConfigTable, Default_, FlowKind, Host, Hosts, KeyKind, Out, Protocol, Raw,
    Reader, Role, ScenarioKey,
};
use crate::{flow_row, param};

fn add_tcp_flow(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let ns = a.node(host, "src")?;
    let nd = a.node(host, "dst")?;
    if ns == nd {
        // a flow to its own node never leaves it
        return Err(BuildError::bad("dst", Raw(a.get("dst")), "must be another node than src"));
    }
    let variant = a.str("variant")?;
    let Some(algo) = CcAlgorithm::from_name(variant) else {
        let names: Vec<String> = CcAlgorithm::ALL.iter().map(|(n, _)| format!("{n:?}")).collect();
        return Err(BuildError::bad(
            "variant",
            format!("{variant:?}"),
            &format!("must be one of {}", names.join(", ")),
        ));
    };
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let transfer = match a.get("transfer_bytes") {
        Value::None => Transfer::Bulk,
        _ => {
            let n = a.u64("transfer_bytes")?;
            if n == 0 {
                return Err(BuildError::bad("transfer_bytes", n, "must be positive (None for a bulk transfer)"));
            }
            Transfer::Bytes(n)
        }
    };
    let mut cfg = a.config_over(algo.default_config())?;
    cfg.transfer = transfer;
    // RFC 2018 SACK is negotiated by both ends: the variant turns it on at sender and sink
    cfg.sack = algo.uses_sack();
    if cfg.rack && !cfg.sack {
        // RFC 8985 §2: RACK-TLP reads SACK blocks; the sender's scoreboard is the SACK one
        return Err(BuildError::bad("rack", true, "needs SACK: the \"sack\", \"cubic\" or \"bbr\" variant"));
    }
    cfg.start = s;
    cfg.stop = e;
    let port = a.port("port")?;
    // The sink is added first, so the sender's id is the next one after it.
    let sender_id = host.agent_count() as u64 + 1;
    let flow = match a.get("flow") {
        Value::None => u32::try_from(sender_id).map_err(|_| BuildError::bad("flow", sender_id, "too many agents"))?,
        _ => a.u32("flow")?,
    };
    // The sink listens from now on (the sender may start later); a port already in use is the
    // only failure left, and it happens before anything is added.
    let now = host.now();
    let sink = host.add_agent(nd, port, now, Box::new(TcpSink::new(cfg.clone())))?;
    let addr = host.agent_addr(sink).ok_or_else(|| BuildError::Host("the TCP sink has no address".into()))?;
    let tx = TcpSender::new(addr, flow, cfg.clone(), algo.build(&cfg));
    // the controller is a `dyn CongestionControl` (not `Send`): a simulator agent
    let id = host.add_local_agent(ns, None, s, Box::new(tx))?;
    debug_assert_eq!(id.0, sink.0 + 1);
    Ok(id.0.into())
}

static ROLES: &[Role] = &[Role {
    name: "add_tcp_flow",
    doc: "A one-way TCP transfer from node `src` to node `dst` (ns-2 `Agent/TCP` + `TCPSink`\n\
style): adds the sink on `dst` (bound to `port`, or the next free port) and the sender on\n\
`src`; returns the sender's agent id. Sizes in bytes, times in seconds.\n\
Keyword arguments override fields of the TCP configuration (`config_defaults(\"tcp\")`).\n\
`variant` (one of `TCP_VARIANTS`): \"newreno\", \"reno\" or \"sack\" (RFC 2018 SACK at both\n\
ends with RFC 6675 loss recovery, as ns-2's Agent/TCP/Sack1 with TCPSink/Sack1), from\n\
`config_defaults(\"tcp\")`; \"cubic\" (RFC 9438 with Linux's HyStart) or \"bbr\" (BBR v1 as\n\
Linux's tcp_bbr.c, paced), from Linux's settings (MSS 1448, 52 header bytes, initial\n\
window 10, receive window 3 MiB, RTO 200 ms..120 s, delayed ACKs after 40 ms, SACK,\n\
RACK-TLP loss detection, RFC 8985: `rack=False, tlp=False` for RFC 6675's DupThresh);\n\
from `start` to `stop` seconds (None: the end of the run);\n\
`transfer_bytes`: the transfer's size (None: unbounded); `flow`: the flow id (None: the next\n\
free one); `config`: the keyword overrides, fields of `config_defaults(\"tcp\")` (`timestamps`:\n\
RTT samples from the timestamp echo, retransmissions included, RFC 7323 §4.1; False for strict\n\
Karn's rule, as ns-2's; `limited_transmit`: RFC 3042, on by default as in ns-2, False for 1990s\n\
Reno).",
    params: &[
        param!(src),
        param!(dst),
        param!(variant = Str("newreno")),
        param!(start = Float(0.0)),
        param!(stop = None),
        param!(transfer_bytes = None),
        param!(port = None),
        param!(flow = None),
    ],
    config: Some("tcp"),
    hosts: Hosts::Sim,
    build: add_tcp_flow,
}];

/// The sender `v` and its sink (the agent added just before it).
fn sender_and_sink<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<(&'h TcpSender, AgentId, &'h TcpSink)> {
    let (id, s) = agent_as::<TcpSender>(host, "agent", v, "is not a TCP sender (add_tcp_flow returns one)")?;
    let no_sink = || BuildError::bad("agent", Raw(v), "has no TCP sink");
    let sink_id = AgentId(id.0.checked_sub(1).ok_or_else(no_sink)?);
    let (_, any) = host.agent("agent", &Value::Int(i64::from(sink_id.0)))?;
    let sink = any.downcast_ref::<TcpSink>().ok_or_else(no_sink)?;
    Ok((s, sink_id, sink))
}

fn tcp_trace<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (s, _, sink) = sender_and_sink(host, v)?;
    let mut d = Out::table(&s.trace);
    d.fill(&sink.trace);
    Ok(d)
}

fn secs(t: Option<Instant>) -> Out<'static> {
    t.map(|t| t.as_secs_f64()).into()
}

fn tcp_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (s, sink_id, sink) = sender_and_sink(host, v)?;
    let mut d = Out::dict();
    d.set("variant", s.controller().name());
    d.set("sink", sink_id.0);
    d.set("mss_bytes", s.config().mss_bytes);
    d.set("cwnd_bytes", s.cwnd());
    d.set("ssthresh_bytes", s.ssthresh());
    d.set("in_recovery", s.controller().in_recovery());
    d.set("srtt", s.rtt_estimator().srtt().map(|x| x.as_secs_f64()));
    d.set("rttvar", s.rtt_estimator().rttvar().as_secs_f64());
    d.set("rto", s.rtt_estimator().rto().as_secs_f64());
    d.set("snd_una", s.snd_una());
    d.set("snd_nxt", s.snd_nxt());
    d.set("snd_max", s.snd_max());
    d.set("completed_at", secs(s.completed_at()));
    let st = s.stats;
    for (k, v) in [
        ("segments_sent", st.segments_sent),
        ("payload_bytes_sent", st.payload_bytes_sent),
        ("retransmissions", st.retransmissions),
        ("fast_retransmits", st.fast_retransmits),
        ("timeouts", st.timeouts),
        ("dup_acks", st.dup_acks),
        ("tlp_probes", st.tlp_probes),
        ("tlp_recoveries", st.tlp_recoveries),
        ("rack_losses", st.rack_losses),
        ("ignored", st.ignored),
    ] {
        d.set(k, v);
    }
    let ks = sink.stats;
    d.set("received_bytes", sink.received_bytes());
    d.set("fin_at", secs(sink.fin_at()));
    for (k, v) in [
        ("sink_segments", ks.segments),
        ("sink_duplicates", ks.duplicates),
        ("sink_out_of_order", ks.out_of_order),
        ("sink_acks_sent", ks.acks_sent),
        ("sink_ignored", ks.ignored),
    ] {
        d.set(k, v);
    }
    Ok(d)
}

/// The scenario flow table's row of a TCP flow: segments the sink counted as received, those
/// sent and not counted as lost (in flight at the end included), and no level.
fn tcp_flow_row<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (s, _, sink) = sender_and_sink(host, v)?;
    let (sent, got) = (s.stats.segments_sent, sink.stats.segments);
    let mut d = Out::dict();
    d.set("received", got);
    d.set("lost", sent.saturating_sub(got));
    d.set("bytes", sink.received_bytes());
    d.set("sent", sent);
    d.set("level", Out::None);
    Ok(d)
}

/// `[[tcp]]`: one `add_tcp_flow` per entry.
static FLOWS: &[FlowKind] = &[FlowKind {
    table: "tcp",
    keys: &[
        ScenarioKey { name: "src", kind: KeyKind::Node, default: Default_::Required },
        ScenarioKey { name: "dst", kind: KeyKind::Node, default: Default_::Required },
        ScenarioKey { name: "variant", kind: KeyKind::Choice(&CcAlgorithm::NAMES), default: Default_::Str("newreno") },
        ScenarioKey { name: "start", kind: KeyKind::Time, default: Default_::Float(0.0) },
        ScenarioKey::STOP,
        ScenarioKey { name: "transfer_bytes", kind: KeyKind::Int(1, i64::MAX), default: Default_::None },
        ScenarioKey::CONFIG,
    ],
    role: "add_tcp_flow",
    sink: None,
    row: "tcp_flow_row",
}];

static READERS: &[Reader] = &[
    Reader::of_agent(
        "tcp_trace",
        "Per-flow trace of a TCP sender (numpy arrays, times in ns since the start of the run):\n\
cc_time_ns/cwnd_bytes/ssthresh_bytes (a row whenever either changed), rtt_time_ns/rtt_ns/\n\
srtt_ns/rto_ns (one row per RTT sample), retx_time_ns/retx_seq/retx_kind (1 fast\n\
retransmit, 2 NewReno partial ACK, 3 timeout, 4 go-back-N after a timeout, 5 a hole\n\
chosen in SACK recovery, 6 a tail loss probe resending the last segment, RFC 8985),\n\
timeout_time_ns/timeout_rto_ns, ack_time_ns/acked_bytes (cumulative bytes acknowledged),\n\
for paced flows (bbr) tx_time_ns/tx_bytes (cumulative on-wire bytes sent, a row per\n\
segment), for bbr state_time_ns/state_code/pacing_rate_bps (a row per change of mode or\n\
gain-cycle phase: 0 STARTUP, 1 DRAIN, 2 PROBE_RTT, 8 + phase in PROBE_BW, 8 being the\n\
5/4 phase and 9 the 3/4 one; the pacing rate then, bit/s; model_bw_bps/min_rtt_ns: the\n\
bottleneck bandwidth estimate, bit/s, and minimum RTT, ns, then),\n\
and the sink's rx_time_ns/rx_bytes (cumulative in-order bytes delivered).\n\
`agent`: the sender's agent id.",
        Hosts::Sim,
        tcp_trace,
    ),
    Reader::of_agent(
        "tcp_stats",
        "Counters and current state of a TCP sender and its sink (bytes, seconds).\n\
`agent`: the sender's agent id (what `add_tcp_flow` returned).",
        Hosts::Sim,
        tcp_stats,
    ),
    flow_row!("tcp_flow_row", "a TCP flow (its sender)", tcp_flow_row, packet_size = None),
];

/// TCP in the protocol registry: its config table, `add_tcp_flow` (which pairs a sender with
/// its sink), the sender's readers and the scenario's `[[tcp]]` table.
pub static PROTOCOL: Protocol = Protocol {
    name: "tcp",
    paper: "RFC 5681 (Reno), RFC 6582 (NewReno), RFC 6675 (SACK), RFC 9438 (CUBIC), BBR v1 (Linux tcp_bbr.c), ns-2 style agents",
    configs: &[ConfigTable::of::<TcpConfig>("tcp")],
    roles: ROLES,
    readers: READERS,
    flows: FLOWS,
    ..Protocol::EMPTY
};
