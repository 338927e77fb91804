//! WEBRC in the protocol registry ([`crate::registry`]): the sender and its receivers, their
//! records and status, the scenario's `webrc` sessions and receivers, and the `castlab net`
//! roles. The sender and the receivers of a session run with the same configuration (the
//! RFC's session description, §3.2.1): the scenario's receivers start from their session's.

use castlab_core::Value;

use super::{WebrcConfig, WebrcReceiver, WebrcSender};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildResult, ConfigTable, Groups, Host, Hosts, NetFlag, NetGroups, NetOutput, NetRole,
    Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, SessionKind,
};

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h WebrcReceiver> {
    agent_as::<WebrcReceiver>(host, "agent", v, "is not a WEBRC receiver").map(|x| x.1)
}

fn sender<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h WebrcSender> {
    agent_as::<WebrcSender>(host, "agent", v, "is not a WEBRC sender").map(|x| x.1)
}

fn add_sender(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = WebrcSender::try_new(a.config::<WebrcConfig>()?, &gs, flow, s, e)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let rx = WebrcReceiver::try_new(a.config::<WebrcConfig>()?, &gs, flow)?;
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

fn receiver_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::table(receiver(host, v)?.records()))
}

fn sender_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::table(sender(host, v)?.records()))
}

fn receiver_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let mut d = Out::dict();
    d.set("nwc", r.nwc());
    d.set("trate", r.trate());
    d.set("arr", r.arr());
    d.set("trr", r.trr());
    d.set("artt_s", r.artt());
    d.set("lossp", r.lossp());
    d.set("ssr", r.ssr());
    d.set("slow_start", r.in_slow_start());
    d.set("joining", r.is_joining());
    d.set("left_session", r.left_session());
    Ok(d)
}

fn config<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::config(receiver(host, v)?.config()))
}

fn row<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let mut d = Out::dict();
    d.set("received", rec.received);
    d.set("lost", rec.lost);
    d.set("bytes", rec.bytes);
    d.set("level", r.nwc());
    Ok(d)
}

/// The `castlab net` status lines.
fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    Ok(Out::Str(format!(
        "nwc={} rate={{rx}} received={} lost={} loss={} trate={:.1} artt={:.3} slow_start={} rejected={{rejected}}",
        r.nwc(),
        rec.received,
        rec.lost,
        percent(rec.lost, rec.received),
        r.trate(),
        r.artt().unwrap_or(f64::NAN),
        r.in_slow_start()
    )))
}

fn net_source_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    sender(host, v)?;
    Ok(Out::Str("sending={sent} sent={datagrams_sent}".into()))
}

pub static PROTOCOL: Protocol = Protocol {
    name: "webrc",
    paper: "Luby and Goyal, Wave and Equation Based Rate Control (WEBRC) Building Block (RFC 3738, 2004)",
    configs: &[ConfigTable::of::<WebrcConfig>("webrc")],
    roles: &[
        Role {
            name: "add_webrc_source",
            doc: "A WEBRC sender (RFC 3738 §3.1) on `node`: wave channel CN on `groups[CN]` for CN < T and \
the base channel on the last group (`layers` = T + 1 groups), session `flow`, sending from `start` until \
`stop` seconds (None: for ever); it never reads feedback. Overrides: config_defaults(\"webrc\"). Returns the \
agent id. \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(groups),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
            ],
            config: Some("webrc"),
            hosts: Hosts::SimAndNet,
            build: add_sender,
        },
        Role {
            name: "add_webrc_receiver",
            doc: "A WEBRC receiver (RFC 3738 §3.2) on `node` for the session on `groups` with flow id `flow`, \
starting at `start` seconds: it joins the base channel, then wave channels as its equation-based target \
rate (ARTT, LOSSP) allows; it never sends. Overrides: config_defaults(\"webrc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[param!(node), param!(groups), param!(flow = Int(0)), param!(start = Float(0.0))],
            config: Some("webrc"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
    ],
    readers: &[
        Reader::of_agent(
            "webrc_receiver_records",
            "A WEBRC receiver's records (numpy arrays, times in ns, rates in packets/s): per epoch \
epoch_time_ns, epoch_nwc, epoch_trate, epoch_arr, epoch_trr, epoch_rr, epoch_artt, epoch_lossp (NaN in \
start-up), epoch_ssr (inf in start-up); per MRTT measurement mrtt_time_ns, mrtt_first_minus_join, mrtt, \
mrtt_artt; per wave join join_time_ns, join_cn; loss_event_ns; the counters received, bytes, lost, late, \
leaves, join_timeouts, slot_changes, slow_start_end_s, left_session, ignored. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_records,
        ),
        Reader::of_agent(
            "webrc_source_records",
            "A WEBRC sender's records: sent_per_channel (by CN, the base channel last), sent, bytes. \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_records,
        ),
        Reader::of_agent(
            "webrc_receiver_status",
            "A WEBRC receiver's state: nwc, trate, arr, trr (packets/s), artt_s, lossp, ssr, slow_start, \
joining, left_session. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_status,
        ),
        Reader::of_agent(
            "webrc_config",
            "The configuration a WEBRC receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader::of_agent(
            "webrc_net_status",
            "The status line of `castlab net webrc-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "webrc_net_source_status",
            "The status line of `castlab net webrc-source` ({sent} and {datagrams_sent} for the driver). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            net_source_status,
        ),
        crate::flow_row!(
            "webrc_flow_row",
            "a WEBRC receiver: received, lost, bytes, level (NWC)",
            row,
            packet_size = None
        ),
    ],
    sessions: &[SessionKind {
        kind: "webrc",
        keys: &[ScenarioKey::STOP, ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::PerConfigLayer("webrc"),
        role: "add_webrc_source",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "webrc",
        sessions: &["webrc"],
        keys: &[ScenarioKey::CONFIG],
        role: "add_webrc_receiver",
        row: "webrc_flow_row",
        windows_in_config: false,
        inherits_session_config: true,
    }],
    net_roles: &[
        NetRole {
            cli: "webrc-source",
            help: "WEBRC source (RFC 3738; base and wave channels, `layers` groups from --config)",
            role: "add_webrc_source",
            source: true,
            groups: NetGroups::ConfigLayers("webrc"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "webrc_net_source_status",
            outputs: &[NetOutput::Json { reader: "webrc_source_records", file: "webrc_source.json" }],
        },
        NetRole {
            cli: "webrc-receiver",
            help: "WEBRC receiver (joins waves up to its equation-based target rate; never sends)",
            role: "add_webrc_receiver",
            source: false,
            groups: NetGroups::ConfigLayers("webrc"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "webrc_net_status",
            outputs: &[
                NetOutput::Levels,
                NetOutput::Prefixed { reader: "webrc_receiver_records", name: "webrc_receiver", tables: &[] },
            ],
        },
    ],
    ..Protocol::EMPTY
};
