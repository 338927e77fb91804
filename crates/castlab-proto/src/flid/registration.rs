//! FLID-DL in the protocol registry ([`crate::registry`]). The sender and the receivers of a
//! session must run with the same configuration (groups, rates, slot): the scenario's receivers
//! start from their session's config.

use castlab_core::Value;

use super::{FlidConfig, FlidReceiver, FlidSender};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildResult, ConfigTable, Groups, Host, Hosts, NetFlag, NetGroups, NetOutput, NetRole,
    Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, SessionKind,
};

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h FlidReceiver> {
    agent_as::<FlidReceiver>(host, "agent", v, "is not a FLID-DL receiver").map(|x| x.1)
}

fn add_sender(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = FlidSender::try_new(a.config::<FlidConfig>()?, &gs, flow, s, e)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "groups")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let rx = FlidReceiver::try_new(a.config::<FlidConfig>()?, &gs, flow)?;
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

fn records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let n = r.config().levels() as usize;
    let mut d = Out::dict();
    d.set("level_time_ns", rec.levels.iter().map(|l| l.0.as_nanos()).collect::<Vec<u64>>());
    d.set("level", rec.levels.iter().map(|l| l.1).collect::<Vec<u32>>());
    d.set("received", rec.received[..n].to_vec());
    d.set("lost", rec.lost[..n].to_vec());
    d.set("bytes", rec.bytes);
    d.set("late", rec.late);
    d.set("straddling", rec.straddling);
    d.set("slots", rec.slots);
    d.set("loss_slots", rec.loss_slots);
    d.set("signalled_slots", rec.signalled_slots);
    d.set("increase_ns", rec.increases.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>());
    d.set("decrease_ns", rec.decreases.iter().map(|t| t.as_nanos()).collect::<Vec<u64>>());
    Ok(d)
}

fn sender_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = agent_as::<FlidSender>(host, "agent", v, "is not a FLID-DL sender")?.1;
    let mut d = Out::dict();
    d.set("sent", s.sent.clone());
    d.set("slots", s.slots);
    d.set("signals", s.signals.clone());
    Ok(d)
}

fn config<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::config(receiver(host, v)?.config()))
}

fn row<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let rec = r.records();
    let layers = r.config().levels() as usize;
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
    let layers = r.config().levels() as usize;
    let (got, lost) = (rec.received[..layers].iter().sum::<u64>(), rec.lost[..layers].iter().sum::<u64>());
    Ok(Out::Str(format!(
        "level={} rate={{rx}} received={got} lost={lost} loss={} increases={} decreases={} rejected={{rejected}}",
        rec.levels.last().map_or(0, |l| l.1),
        percent(lost, got),
        rec.increases.len(),
        rec.decreases.len()
    )))
}

fn net_source_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    agent_as::<FlidSender>(host, "agent", v, "is not a FLID-DL sender")?;
    Ok(Out::Str("sending={sent} sent={datagrams_sent}".into()))
}

pub static PROTOCOL: Protocol = Protocol {
    name: "flid",
    paper: "Byers, Horn, Luby, Mitzenmacher and Shaver, FLID-DL: Congestion Control for Layered Multicast \
(NGC 2000; IEEE JSAC 2002)",
    configs: &[ConfigTable::of::<FlidConfig>("flid")],
    roles: &[
        Role {
            name: "add_flid_sender",
            doc: "A FLID-DL sender on `node`: `groups[0]` carries the base layer, the other groups rotate \
through the dynamic layers (`layers` groups in all, of the config), data flow id `flow`, sending from \
`start` until `stop` seconds (None: for ever). Overrides: config_defaults(\"flid\"). Returns the agent \
id. `config`: the keyword overrides.",
            params: &[param!(node), param!(groups), param!(flow), param!(start = Float(0.0)), param!(stop = None)],
            config: Some("flid"),
            hosts: Hosts::SimAndNet,
            build: add_sender,
        },
        Role {
            name: "add_flid_receiver",
            doc: "A FLID-DL receiver on `node` for the session on `groups` with data flow id `flow`, \
starting at `start` seconds; it never sends. Overrides: config_defaults(\"flid\"). Returns the agent \
id. `config`: the keyword overrides.",
            params: &[param!(node), param!(groups), param!(flow), param!(start = Float(0.0))],
            config: Some("flid"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
    ],
    readers: &[
        Reader::of_agent(
            "flid_records",
            "A FLID-DL receiver's records: `level_time_ns` and `level` (every level change), `received` \
and `lost` (packets per layer index), `bytes`, `late`, `straddling` (lost across a slot boundary), `slots` (slot boundaries seen), `loss_slots`, \
`signalled_slots` (slots whose increase signal covered the level), `increase_ns`, `decrease_ns`. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            records,
        ),
        Reader::of_agent(
            "flid_sender_stats",
            "A FLID-DL sender's counts: `sent` (packets per layer index), `slots` (slots drawn), \
`signals` (slots whose signal was level L, index L-1). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_stats,
        ),
        Reader::of_agent(
            "flid_config",
            "The configuration a FLID-DL receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader::of_agent(
            "flid_net_status",
            "The status line of `castlab net flid-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "flid_net_source_status",
            "The status line of `castlab net flid-source` ({sent} and {datagrams_sent} for the driver). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            net_source_status,
        ),
        crate::flow_row!("flid_flow_row", "a FLID-DL receiver: received, lost, bytes, level", row, packet_size = None),
    ],
    sessions: &[SessionKind {
        kind: "flid",
        keys: &[ScenarioKey::STOP, ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::PerConfigLayer("flid"),
        role: "add_flid_sender",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "flid",
        sessions: &["flid"],
        keys: &[ScenarioKey::CONFIG],
        role: "add_flid_receiver",
        row: "flid_flow_row",
        windows_in_config: false,
        inherits_session_config: true,
    }],
    net_roles: &[
        NetRole {
            cli: "flid-source",
            help: "FLID-DL source (Byers et al.; dynamic layers, slots and increase signals from --config)",
            role: "add_flid_sender",
            source: true,
            groups: NetGroups::ConfigLayers("flid"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "flid_net_source_status",
            outputs: &[],
        },
        NetRole {
            cli: "flid-receiver",
            help: "FLID-DL receiver (joins at slot boundaries on increase signals, lets a layer fall on loss)",
            role: "add_flid_receiver",
            source: false,
            groups: NetGroups::ConfigLayers("flid"),
            flags: &[NetFlag::FLOW],
            defaults: &[],
            status: "flid_net_status",
            outputs: &[
                NetOutput::Levels,
                NetOutput::Columns {
                    reader: "flid_records",
                    file: "flid_level",
                    columns: &[("level_time_ns", "time_ns"), ("level", "level")],
                    rest: "flid_counts.json",
                },
            ],
        },
    ],
    ..Protocol::EMPTY
};
