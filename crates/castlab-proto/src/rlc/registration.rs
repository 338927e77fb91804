//! RLC in the protocol registry ([`crate::registry`]). The sender and the receivers of a
//! session must run with the same configuration (layers, rates, SP spacing): the scenario's
//! receivers start from their session's config.

use castlab_core::Value;

use super::{RlcConfig, RlcReceiver, RlcSender};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildResult, ConfigTable, Groups, Host, Hosts, NetFlag, NetGroups, NetOutput, NetRole,
    Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, SessionKind,
};

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h RlcReceiver> {
    agent_as::<RlcReceiver>(host, "agent", v, "is not an RLC receiver").map(|x| x.1)
}

fn add_sender(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = RlcSender::try_new(a.config::<RlcConfig>()?, &gs, flow, s, e)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let rx = RlcReceiver::try_new(a.config::<RlcConfig>()?, &gs, flow)?;
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

fn records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let layers = r.config().layers as usize;
    let mut d = Out::dict();
    d.set("level_time_ns", rec.levels.iter().map(|l| l.0.as_nanos()).collect::<Vec<u64>>());
    d.set("level", rec.levels.iter().map(|l| l.1).collect::<Vec<u32>>());
    d.set("received", rec.received[..layers].to_vec());
    d.set("lost", rec.lost[..layers].to_vec());
    d.set("bytes", rec.bytes);
    d.set("late", rec.late);
    d.set("ignored", rec.ignored);
    d.set("sps_seen", rec.sps_seen);
    d.set("join_ns", rec.joins.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>());
    d.set("drop_ns", rec.drops.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>());
    Ok(d)
}

fn config<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::config(receiver(host, v)?.config()))
}

fn row<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let layers = r.config().layers as usize;
    let mut d = Out::dict();
    d.set("received", rec.received[..layers].iter().sum::<u64>());
    d.set("lost", rec.lost[..layers].iter().sum::<u64>());
    d.set("bytes", rec.bytes);
    d.set("level", rec.levels.last().map(|l| l.1));
    Ok(d)
}

/// The `castlab net` status lines.
fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let layers = r.config().layers as usize;
    let (got, lost) = (rec.received[..layers].iter().sum::<u64>(), rec.lost[..layers].iter().sum::<u64>());
    Ok(Out::Str(format!(
        "level={} rate={{rx}} received={got} lost={lost} loss={} joins={} drops={} rejected={{rejected}}",
        rec.levels.last().map_or(0, |l| l.1),
        percent(lost, got),
        rec.joins.len(),
        rec.drops.len()
    )))
}

fn net_source_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    agent_as::<RlcSender>(host, "agent", v, "is not an RLC sender")?;
    Ok(Out::Str("sending={sent} sent={datagrams_sent}".into()))
}

pub static PROTOCOL: Protocol = Protocol {
    name: "rlc",
    paper:
        "Vicisano, Rizzo and Crowcroft, TCP-like congestion control for layered multicast data transfer (INFOCOM 1998)",
    configs: &[ConfigTable::of::<RlcConfig>("rlc")],
    roles: &[
        Role {
            name: "add_rlc_sender",
            doc: "An RLC sender on `node`: layer m on `groups[m]` (one group per layer, `layers` of the \
config), data flow id `flow`, sending from `start` until `stop` seconds (None: for ever). Overrides: \
config_defaults(\"rlc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[param!(node), param!(groups), param!(flow), param!(start = Float(0.0)), param!(stop = None)],
            config: Some("rlc"),
            hosts: Hosts::SimAndNet,
            build: add_sender,
        },
        Role {
            name: "add_rlc_receiver",
            doc: "An RLC receiver on `node` for the session on `groups` with data flow id `flow`, starting \
at `start` seconds. Overrides: config_defaults(\"rlc\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[param!(node), param!(groups), param!(flow), param!(start = Float(0.0))],
            config: Some("rlc"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
    ],
    readers: &[
        Reader::of_agent(
            "rlc_records",
            "An RLC receiver's records: `level_time_ns` and `level` (every level change), `received` \
and `lost` (packets per layer), `bytes`, `late`, `ignored` (losses in deaf periods), `sps_seen`, `join_ns`, \
`drop_ns`. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            records,
        ),
        Reader::of_agent(
            "rlc_config",
            "The configuration an RLC receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader::of_agent(
            "rlc_net_status",
            "The status line of `castlab net rlc-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "rlc_net_source_status",
            "The status line of `castlab net rlc-source` ({sent} and {datagrams_sent} for the driver). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            net_source_status,
        ),
        crate::flow_row!("rlc_flow_row", "an RLC receiver: received, lost, bytes, level", row, packet_size = None),
    ],
    sessions: &[SessionKind {
        kind: "rlc",
        keys: &[ScenarioKey::STOP, ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::PerConfigLayer("rlc"),
        role: "add_rlc_sender",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "rlc",
        sessions: &["rlc"],
        keys: &[ScenarioKey::CONFIG],
        role: "add_rlc_receiver",
        row: "rlc_flow_row",
        windows_in_config: false,
        inherits_session_config: true,
    }],
    net_roles: &[
        NetRole {
            cli: "rlc-source",
            help: "RLC source (Vicisano et al.; layers and SPs from --config)",
            role: "add_rlc_sender",
            source: true,
            groups: NetGroups::ConfigLayers("rlc"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "rlc_net_source_status",
            outputs: &[],
        },
        NetRole {
            cli: "rlc-receiver",
            help: "RLC receiver (joins at SPs, drops on loss, deaf period)",
            role: "add_rlc_receiver",
            source: false,
            groups: NetGroups::ConfigLayers("rlc"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "rlc_net_status",
            outputs: &[
                NetOutput::Levels,
                NetOutput::Columns {
                    reader: "rlc_records",
                    file: "rlc_level",
                    columns: &[("level_time_ns", "time_ns"), ("level", "level")],
                    rest: "rlc_counts.json",
                },
            ],
        },
    ],
    ..Protocol::EMPTY
};
