//! TFMCC in the protocol registry ([`crate::registry`]): the sender and its receivers, their
//! records and status, the scenario's `tfmcc` sessions and receivers, and the `castlab net`
//! roles. The receivers of a session start from its config (the packet size enters their
//! rate).

use castlab_core::Value;

use super::{TfmccConfig, TfmccReceiver, TfmccSender};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildResult, ConfigTable, Default_, Groups, Host, Hosts, KeyKind, NetFlag, NetGroups,
    NetOutput, NetRole, Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, SessionKind,
};

fn sender<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h TfmccSender> {
    agent_as::<TfmccSender>(host, "agent", v, "is not a TFMCC sender").map(|x| x.1)
}

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h TfmccReceiver> {
    agent_as::<TfmccReceiver>(host, "agent", v, "is not a TFMCC receiver").map(|x| x.1)
}

fn add_sender(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = TfmccSender::try_new(a.config::<TfmccConfig>()?, g, flow, s, e)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let mut rx = TfmccReceiver::try_new(a.config::<TfmccConfig>()?, g, flow)?;
    let leave = a.stop(host, "leave", s)?;
    if leave != castlab_core::Instant::MAX {
        rx = rx.leaving_at(leave);
    }
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

fn sender_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = sender(host, v)?;
    let mut d = Out::table(s.records());
    d.set("receivers", s.receivers().iter().map(|a| host.node_label(a.node)).collect::<Vec<String>>());
    Ok(d)
}

fn receiver_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::table(receiver(host, v)?.records()))
}

fn sender_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = sender(host, v)?;
    let mut d = Out::dict();
    d.set("rate_bps", s.rate_bps());
    d.set("r_max_s", s.r_max().as_secs_f64());
    d.set("slowstart", s.in_slowstart());
    d.set("clr", s.clr().map(|a| host.node_label(a.node)));
    d.set("feedback_round", s.feedback_round());
    let supp = s.suppression_bps();
    d.set("suppression_bps", supp.is_finite().then_some(supp));
    d.set("receivers", s.receivers().len());
    Ok(d)
}

fn receiver_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let mut d = Out::dict();
    d.set("is_clr", r.is_clr());
    d.set("have_loss", r.have_loss());
    d.set("loss_event_rate", r.loss_event_rate());
    d.set("rtt_s", r.rtt().map(|x| x.as_secs_f64()));
    d.set("current_rtt_s", r.current_rtt().as_secs_f64());
    d.set("loss_intervals", r.loss_history().intervals().to_vec());
    Ok(d)
}

fn config<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::config(receiver(host, v)?.config()))
}

fn row<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let rec = receiver(host, v)?.records();
    let mut d = Out::dict();
    d.set("received", rec.received);
    d.set("lost", rec.lost);
    d.set("bytes", rec.bytes);
    d.set("level", Out::None);
    Ok(d)
}

/// The `castlab net` status lines.
fn net_source_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = sender(host, v)?;
    let r = s.records();
    Ok(Out::Str(format!(
        "rate={:.1} kb/s sending={{sent}} r_max={:.0} ms round={} reports={} slowstart={} rejected={{rejected}}",
        s.rate_bps() / 1e3,
        s.r_max().as_secs_f64() * 1e3,
        s.feedback_round(),
        r.fb_time_ns.len(),
        s.in_slowstart()
    )))
}

fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    Ok(Out::Str(format!(
        "rate={{rx}} received={} lost={} loss={} p={:.4} rtt={:.1} ms clr={} reports={} rejected={{rejected}}",
        rec.received,
        rec.lost,
        percent(rec.lost, rec.received),
        r.loss_event_rate(),
        r.current_rtt().as_secs_f64() * 1e3,
        r.is_clr(),
        rec.report_time_ns.len()
    )))
}

pub static PROTOCOL: Protocol = Protocol {
    name: "tfmcc",
    paper: "Widmer and Handley, TCP-Friendly Multicast Congestion Control (TFMCC): Protocol Specification (RFC 4654)",
    configs: &[ConfigTable::of::<TfmccConfig>("tfmcc")],
    roles: &[
        Role {
            name: "add_tfmcc_sender",
            doc: "A TFMCC sender (RFC 4654 §3) on `node` multicasting session `flow` to `group` from `start` \
until `stop` seconds (None: for ever), at the rate of its slowest receiver. Overrides: \
config_defaults(\"tfmcc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
            ],
            config: Some("tfmcc"),
            hosts: Hosts::SimAndNet,
            build: add_sender,
        },
        Role {
            name: "add_tfmcc_receiver",
            doc: "A TFMCC receiver (RFC 4654 §4) on `node` for session `flow` on `group`, joining at `start` \
seconds; it reports to the sender by unicast. It leaves the session at `leave` seconds (None: never; \
as the CLR it first reports with receiver_leave set, §3.3 case 3; `castlab net tfmcc-receiver` leaves when \
it stops: at the end of its --duration or on a signal). Overrides: config_defaults(\"tfmcc\") (the sender's packet \
size, as its rate depends on it). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(leave = None),
            ],
            config: Some("tfmcc"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
    ],
    readers: &[
        Reader::of_agent(
            "tfmcc_sender_records",
            "A TFMCC sender's records (numpy arrays, times in ns): rate_time_ns/rate_bps (each change), \
fb_time_ns/fb_receiver/fb_rate_bps/fb_loss_event_rate/fb_rtt_s/fb_round/fb_from_clr (each report), \
clr_time_ns/clr_receiver (each CLR change), round_time_ns/round_rmax_s (each feedback round's end), the \
counters data_sent, bytes_sent, halvings, slowstart_end_s, ignored, leave_reports, clr_leaves (reports \
with receiver_leave set, from any receiver and from the CLR), and `receivers` (the nodes that fb_receiver \
and clr_receiver index). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_records,
        ),
        Reader::of_agent(
            "tfmcc_sender_status",
            "A TFMCC sender's state: rate_bps, r_max_s, slowstart, clr (its node), feedback_round, \
suppression_bps (None at the start of a round), receivers (how many reported). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_status,
        ),
        Reader::of_agent(
            "tfmcc_receiver_records",
            "A TFMCC receiver's records (numpy arrays, times in ns): report_time_ns/report_rate_bps/\
report_loss_event_rate/report_rtt_s/report_clr (each report sent), rtt_time_ns/rtt_sample_s/rtt_s (each RTT \
measurement), and the counters received, bytes, lost, loss_events, suppressed, ignored, left_s (when it \
left, None: never) and leave_reported (it told the sender, as the CLR). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_records,
        ),
        Reader::of_agent(
            "tfmcc_receiver_status",
            "A TFMCC receiver's state: is_clr, have_loss, loss_event_rate, rtt_s (None before a \
measurement), current_rtt_s, loss_intervals (packets, most recent first). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_status,
        ),
        Reader::of_agent(
            "tfmcc_config",
            "The configuration a TFMCC receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader::of_agent(
            "tfmcc_net_status",
            "The status line of `castlab net tfmcc-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "tfmcc_net_source_status",
            "The status line of `castlab net tfmcc-source` ({sent} and {rejected} for the driver). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            net_source_status,
        ),
        crate::flow_row!("tfmcc_flow_row", "a TFMCC receiver: received, lost, bytes", row, packet_size = None),
    ],
    sessions: &[SessionKind {
        kind: "tfmcc",
        keys: &[ScenarioKey::STOP, ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::One,
        role: "add_tfmcc_sender",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "tfmcc",
        sessions: &["tfmcc"],
        keys: &[ScenarioKey::CONFIG, ScenarioKey { name: "leave", kind: KeyKind::Time, default: Default_::None }],
        role: "add_tfmcc_receiver",
        row: "tfmcc_flow_row",
        windows_in_config: false,
        inherits_session_config: true,
    }],
    net_roles: &[
        NetRole {
            cli: "tfmcc-source",
            help: "TFMCC sender (RFC 4654; the rate of its slowest receiver)",
            role: "add_tfmcc_sender",
            source: true,
            groups: NetGroups::One,
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "tfmcc_net_source_status",
            outputs: &[
                NetOutput::Rates,
                NetOutput::Prefixed { reader: "tfmcc_sender_records", name: "tfmcc", tables: &[] },
                NetOutput::Json { reader: "tfmcc_sender_status", file: "tfmcc_sender.json" },
            ],
        },
        NetRole {
            cli: "tfmcc-receiver",
            help: "TFMCC receiver (loss event rate, RTT, biased feedback timers; reports by unicast)",
            role: "add_tfmcc_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "tfmcc_net_status",
            outputs: &[NetOutput::Prefixed { reader: "tfmcc_receiver_records", name: "tfmcc_receiver", tables: &[] }],
        },
    ],
    ..Protocol::EMPTY
};
