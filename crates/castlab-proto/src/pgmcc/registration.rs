//! PGMCC in the protocol registry ([`crate::registry`]): the source and its receivers, their
//! records and status, the scenario's `pgmcc` sessions and receivers, and the `castlab net`
//! roles.

use castlab_core::Value;

use super::{PgmccConfig, PgmccReceiver, PgmccSender};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildResult, ConfigTable, Groups, Host, Hosts, NetFlag, NetGroups, NetOutput, NetRole,
    Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, SessionKind,
};

fn sender<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h PgmccSender> {
    agent_as::<PgmccSender>(host, "agent", v, "is not a PGMCC source").map(|x| x.1)
}

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h PgmccReceiver> {
    agent_as::<PgmccReceiver>(host, "agent", v, "is not a PGMCC receiver").map(|x| x.1)
}

fn add_source(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = PgmccSender::try_new(a.config::<PgmccConfig>()?, g, flow, s, e)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let rx = PgmccReceiver::try_new(a.config::<PgmccConfig>()?, g, flow)?;
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
    d.set("window", s.window());
    d.set("tokens", s.tokens());
    d.set("acker", s.acker().map(|a| host.node_label(a.node)));
    d.set("rto_s", s.rto().as_secs_f64());
    d.set("srtt_s", s.srtt_s());
    d.set("receivers", s.receivers().len());
    Ok(d)
}

fn receiver_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let mut d = Out::dict();
    d.set("is_acker", r.is_acker());
    d.set("loss_rate", r.loss_rate());
    d.set("pending_naks", r.pending_naks());
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
        "window={:.1} sending={{sent}} acker={} acks={} naks={} halvings={} timeouts={} rejected={{rejected}}",
        s.window(),
        s.acker().map_or_else(|| "none".to_string(), |a| host.node_label(a.node)),
        r.acks,
        r.naks,
        r.halvings,
        r.timeouts
    )))
}

fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    Ok(Out::Str(format!(
        "rate={{rx}} received={} lost={} loss={} p={:.4} acker={} naks={} acks={} rejected={{rejected}}",
        rec.received,
        rec.lost,
        percent(rec.lost, rec.received),
        r.loss_rate(),
        r.is_acker(),
        rec.naks_sent,
        rec.acks_sent
    )))
}

pub static PROTOCOL: Protocol = Protocol {
    name: "pgmcc",
    paper: "Rizzo, pgmcc: a TCP-friendly single-rate multicast congestion control scheme (SIGCOMM 2000); \
draft-ietf-rmt-bb-pgmcc-03",
    configs: &[ConfigTable::of::<PgmccConfig>("pgmcc")],
    roles: &[
        Role {
            name: "add_pgmcc_source",
            doc: "A PGMCC source (draft-ietf-rmt-bb-pgmcc §2.2-§3) on `node` multicasting session `flow` to \
`group` from `start` until `stop` seconds (None: for ever), as fast as its window allows: a TCP-like window \
clocked by the ACKs of one receiver, the acker, elected as the receiver of lowest TCP throughput. \
Overrides: config_defaults(\"pgmcc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
            ],
            config: Some("pgmcc"),
            hosts: Hosts::SimAndNet,
            build: add_source,
        },
        Role {
            name: "add_pgmcc_receiver",
            doc: "A PGMCC receiver (draft-ietf-rmt-bb-pgmcc §4) on `node` for session `flow` on `group`, \
joining at `start` seconds: it measures its loss rate, ACKs when named acker and NAKs its gaps to the \
source by unicast. Overrides: config_defaults(\"pgmcc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[param!(node), param!(group), param!(flow = Int(0)), param!(start = Float(0.0))],
            config: Some("pgmcc"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
    ],
    readers: &[
        Reader::of_agent(
            "pgmcc_source_records",
            "A PGMCC source's records (numpy arrays, times in ns): acker_time_ns/acker_receiver/acker_m (each \
acker change; receiver -1: none; M = 1/T of §2.4), fb_time_ns/fb_receiver/fb_loss/fb_rtt_s (each NAK), \
cut_time_ns/cut_window (each halving or timeout, W after it), the counters data_sent, rdata_sent, \
bytes_sent, ncf_sent, acks, acks_previous, naks, election_naks, halvings, timeouts, acker_drops, \
losses_seen, repairs_refused, ignored, and `receivers` (the nodes that the receiver columns index). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            sender_records,
        ),
        Reader::of_agent(
            "pgmcc_source_status",
            "A PGMCC source's state: window and tokens (packets), acker (its node, None: none), rto_s, srtt_s \
(None before an ACK from the current acker), receivers (how many were heard). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            sender_status,
        ),
        Reader::of_agent(
            "pgmcc_receiver_records",
            "A PGMCC receiver's records (numpy arrays, times in ns): nak_time_ns/nak_loss (each NAK and the \
loss rate it reported), the counters received, bytes, lost, rdata, repaired, naks_sent, election_naks, \
acks_sent, suppressed, given_up, ignored. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_records,
        ),
        Reader::of_agent(
            "pgmcc_receiver_status",
            "A PGMCC receiver's state: is_acker (named by the latest data packet), loss_rate (§2.6), \
pending_naks. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_status,
        ),
        Reader::of_agent(
            "pgmcc_config",
            "The configuration a PGMCC receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader::of_agent(
            "pgmcc_net_status",
            "The status line of `castlab net pgmcc-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "pgmcc_net_source_status",
            "The status line of `castlab net pgmcc-source` ({sent} and {rejected} for the driver). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            net_source_status,
        ),
        crate::flow_row!("pgmcc_flow_row", "a PGMCC receiver: received, lost, bytes", row, packet_size = None),
    ],
    sessions: &[SessionKind {
        kind: "pgmcc",
        keys: &[ScenarioKey::STOP, ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::One,
        role: "add_pgmcc_source",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "pgmcc",
        sessions: &["pgmcc"],
        keys: &[ScenarioKey::CONFIG],
        role: "add_pgmcc_receiver",
        row: "pgmcc_flow_row",
        windows_in_config: false,
        inherits_session_config: true,
    }],
    net_roles: &[
        NetRole {
            cli: "pgmcc-source",
            help: "PGMCC source (draft-ietf-rmt-bb-pgmcc; a TCP-like window clocked by the acker's ACKs)",
            role: "add_pgmcc_source",
            source: true,
            groups: NetGroups::One,
            flags: &[NetFlag::FLOW, NetFlag::WIRE],
            defaults: &[],
            status: "pgmcc_net_source_status",
            outputs: &[
                NetOutput::Rates,
                NetOutput::Prefixed { reader: "pgmcc_source_records", name: "pgmcc", tables: &[] },
                NetOutput::Json { reader: "pgmcc_source_status", file: "pgmcc_source.json" },
            ],
        },
        NetRole {
            cli: "pgmcc-receiver",
            help: "PGMCC receiver (loss filter, ACKs when acker, NAKs by unicast)",
            role: "add_pgmcc_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[NetFlag::FLOW, NetFlag::WIRE],
            defaults: &[],
            status: "pgmcc_net_status",
            outputs: &[NetOutput::Prefixed { reader: "pgmcc_receiver_records", name: "pgmcc_receiver", tables: &[] }],
        },
    ],
    ..Protocol::EMPTY
};
