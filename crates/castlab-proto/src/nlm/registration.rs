//! NLM in the protocol registry ([`crate::registry`]): its config, its sender, receiver,
//! LMR and loss meter, their records and status, and the scenario's `nlm` sessions,
//! receivers and `lmr` routers.

use castlab_core::{ChannelId, Duration, Value};

use super::{AddVerdict, LcurCause, Lmr, NlmConfig, NlmReceiver, NlmRouter, NlmSender, ReqEvent};
use crate::param;
use crate::registry::{
    agent_as, extension_as, percent, Args, BuildError, BuildResult, ConfigTable, Default_, FlagKind, Groups, Host,
    Hosts, Key, KeyKind, NetFlag, NetGroups, NetOutput, NetRole, Out, Protocol, Raw, Reader, ReceiverKind, Role,
    RouterKind, ScenarioKey, SessionKind, Target,
};

fn router<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h NlmRouter> {
    extension_as::<NlmRouter>(host, "node", v, "has no NLM router")
}

fn lmr<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h Lmr> {
    router(host, v)?
        .core()
        .ok_or_else(|| BuildError::bad("node", Raw(v), "has no LMR (a loss meter only, or the run has not started)"))
}

fn add_sender(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    if host.group_source(g) != Some(n) {
        return Err(BuildError::bad("group", Raw(a.get("group")), "must be a group whose source is this node"));
    }
    let rates = a.f64s("rates_bps")?;
    let size = a.positive_u32("packet_size")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let tx = NlmSender::try_new(a.config::<NlmConfig>()?, g, &rates, size, flow, s, e, a.bool("jitter")?)?;
    Ok(host.add_agent(n, None, s, Box::new(tx))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let l = a.int("layers")?;
    let layers = usize::try_from(l).map_err(|_| BuildError::bad("layers", l, "must be 1..255"))?;
    let s = a.start(host, "start")?;
    let b = a.duration("bin")?;
    let rx = NlmReceiver::try_new(a.config::<NlmConfig>()?, g, layers, b)?;
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

/// A meter's channel (an output channel of `node`), bin and layers.
fn meter_args(host: &dyn Host, a: &Args<'_>, names: [&str; 3]) -> BuildResult<(ChannelId, Duration, usize)> {
    let n = a.node(host, "node")?;
    let ch = host.channel("meter_channel", a.get(names[0]))?;
    if host.channel_from(ch) != Some(n) {
        return Err(BuildError::bad("meter_channel", Raw(a.get(names[0])), "must be an output channel of the node"));
    }
    let b = a.f64(names[1])?;
    let bin = castlab_core::ConfigValue::from_value("meter_bin", &Value::Float(b))?;
    let bin: Duration = bin;
    if bin.is_zero() {
        return Err(BuildError::bad("meter_bin", b, "must be positive"));
    }
    let layers = a.int(names[2])?;
    if !(1..=64).contains(&layers) {
        return Err(BuildError::bad("meter_layers", layers, "must be 1..64"));
    }
    Ok((ch, bin, layers as usize))
}

fn attach_lmr(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let mut r = NlmRouter::lmr(a.config::<NlmConfig>()?)?;
    if !a.is_none("meter_channel") {
        let (c, b, l) = meter_args(host, a, ["meter_channel", "meter_bin", "meter_layers"])?;
        r = r.with_meter(c, b, l);
    }
    host.attach(n, Box::new(r))?;
    Ok(Out::None)
}

fn attach_loss_meter(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let (c, b, l) = meter_args(host, a, ["channel", "bin", "layers"])?;
    host.attach(n, Box::new(NlmRouter::meter_only(c, b, l)))?;
    Ok(Out::None)
}

fn loss_meter<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (ch, m) = router(host, v)?.meter().ok_or_else(|| BuildError::bad("node", Raw(v), "has no loss meter"))?;
    let mut d = Out::dict();
    d.set("bin_s", m.bin().as_secs_f64());
    d.set("channel", ch.0);
    let l = m.layers();
    let mut flows = Vec::new();
    for (i, f) in m.flows.iter().enumerate() {
        let mut e = Out::dict();
        e.set("passed", Out::Grid(&m.passed[i], l));
        e.set("dropped", Out::Grid(&m.dropped[i], l));
        flows.push((Key::Int(u64::from(*f)), e));
    }
    d.set("flows", Out::Dict(flows));
    Ok(d)
}

fn lmr_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let mut d = Out::table(&lmr(host, v)?.records);
    // the codes' names, indexed by code: names["lcur_cause"][code] and so on
    let mut names = Out::dict();
    names.set("lcur_cause", Out::names(LcurCause::NAMES));
    names.set("req_event", Out::names(ReqEvent::NAMES));
    names.set("intvl_reason", Out::names(AddVerdict::NAMES));
    d.set("names", names);
    Ok(d)
}

fn lmr_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let l = lmr(host, v)?;
    let mut d = Out::dict();
    let mut ifs = Vec::new();
    for j in 0..l.interfaces() {
        let mut e = Out::dict();
        e.set("channel", l.channel(j).0);
        e.set("qlen", l.qlen(j));
        e.set("add_intvl", l.add_intvl(j).as_secs_f64());
        e.set("filtered", l.filtered(j));
        ifs.push(e);
    }
    d.set("interfaces", Out::List(ifs));
    let mut ss = Vec::new();
    for g in l.sessions() {
        let mut e = Out::dict();
        e.set("group", g.0);
        e.set("prev", l.prev(g).map_or(Out::None, |a| Out::Tuple(vec![a.node.0.into(), a.port.into()])));
        e.set("l_max", l.l_max(g));
        let mut lc = Vec::new();
        for j in 0..l.interfaces() {
            let x = l.l_cur(j, g);
            if x > 0 {
                lc.push((Key::Int(u64::from(l.channel(j).0)), Out::from(x)));
            }
        }
        e.set("l_cur", Out::Dict(lc));
        ss.push(e);
    }
    d.set("sessions", Out::List(ss));
    d.set("config", Out::config(l.config()));
    Ok(d)
}

fn sender_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, s) = agent_as::<NlmSender>(host, "agent", v, "is not an NLM sender")?;
    Ok(Out::table(&s.records))
}

fn nlm_receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h NlmReceiver> {
    agent_as::<NlmReceiver>(host, "agent", v, "is not an NLM receiver").map(|x| x.1)
}

fn receiver_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let rx = nlm_receiver(host, v)?;
    let r = &rx.records;
    let mut d = Out::dict();
    d.set("bin_s", r.bin.as_secs_f64());
    d.set("received", Out::Grid(&r.bin_received, rx.layers()));
    d.set("lost", Out::Grid(&r.bin_lost, rx.layers()));
    d.set("over_time_ns", Out::Col((&r.over_time_ns).into()));
    d.set("over_loss", Out::Col((&r.over_loss).into()));
    d.set("req_time_ns", Out::Col((&r.req_time_ns).into()));
    d.set("req_level", Out::Col((&r.req_level).into()));
    d.set("req_to", Out::Col((&r.req_to).into()));
    d.set("req_copies", r.req_copies);
    d.set("total_received", r.received);
    d.set("total_lost", r.lost);
    d.set("sess_received", r.sess_received);
    d.set("upstream", rx.upstream().map_or(Out::None, |a| Out::Tuple(vec![a.node.0.into(), a.port.into()])));
    Ok(d)
}

/// `castlab net nlm-sender`'s status line.
fn sender_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, s) = agent_as::<NlmSender>(host, "agent", v, "is not an NLM sender")?;
    let r = &s.records;
    Ok(Out::Str(format!(
        "level={}/{} sending={{sent}} data={} withheld={} sess={} requests={} rejected={{rejected}}",
        s.level(),
        s.layers(),
        r.data_sent,
        r.data_withheld,
        r.sess_sent,
        r.req_time_ns.len()
    )))
}

/// `castlab net nlm-receiver`'s status line.
fn receiver_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let rx = nlm_receiver(host, v)?;
    let r = &rx.records;
    Ok(Out::Str(format!(
        "rate={{rx}} received={} lost={} loss={} sess={} drop_reqs={} rejected={{rejected}}",
        r.received,
        r.lost,
        percent(r.lost, r.received),
        r.sess_received,
        r.req_time_ns.len()
    )))
}

/// The flow-table row: totals, and per-bin totals over the layers to compute the worst
/// windowed loss from.
fn row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let rx = nlm_receiver(host, v)?;
    let r = &rx.records;
    let l = rx.layers();
    let per_bin = |v: &[u32]| v.chunks(l).map(|c| c.iter().map(|&x| u64::from(x)).sum()).collect::<Vec<u64>>();
    let mut d = Out::dict();
    d.set("received", r.received);
    d.set("lost", r.lost);
    d.set("bytes", r.received * a.int("packet_size")? as u64);
    d.set("bin_s", r.bin.as_secs_f64());
    d.set("bin_received", per_bin(&r.bin_received));
    d.set("bin_lost", per_bin(&r.bin_lost));
    Ok(d)
}

pub static PROTOCOL: Protocol = Protocol {
    name: "nlm",
    paper: "Nakauchi, Morikawa and Aoyama, Network-supported Rate Control Mechanism for Multicast Streaming Media",
    configs: &[ConfigTable::of::<NlmConfig>("nlm")],
    roles: &[
        Role {
            name: "add_nlm_sender",
            doc: "An NLM sender on `node` (§3.1): layer m at `rates_bps[m]`, every layer on `group` (whose \
source must be `node`), SESS every ss_intvl. Overrides: config_defaults(\"nlm\"). Returns the agent id. \
`packet_size` bytes; `flow`: the flow id; from `start` to `stop` seconds (None: the end of the run); `jitter`: \
random send times; `config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(rates_bps),
                param!(packet_size = Int(1024)),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
                param!(jitter = Bool(true)),
            ],
            config: Some("nlm"),
            hosts: Hosts::SimAndNet,
            build: add_sender,
        },
        Role {
            name: "add_nlm_receiver",
            doc: "An NLM receiver on `node` joining `group` at `start` (§3.4: DROP_REQ upstream when its loss \
rate over all layers exceeds loss_th); counts arrivals and losses per layer in bins of `bin` seconds. \
Overrides: config_defaults(\"nlm\"). Returns the agent id. \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(layers = Int(5)),
                param!(start = Float(0.0)),
                param!(bin = Float(1.0)),
            ],
            config: Some("nlm"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
        Role {
            name: "attach_lmr",
            doc: "Make `node` an LMR (§3.2). With `meter_channel`, also count per flow and layer the data \
packets offered to that output channel's queue after the filters, and those its DropTail queue dropped, in \
bins of `meter_bin` seconds. Overrides: config_defaults(\"nlm\"). \
`meter_layers`: how many layers the meter counts; `config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(meter_channel = None),
                param!(meter_bin = Float(1.0)),
                param!(meter_layers = Int(8)),
            ],
            config: Some("nlm"),
            hosts: Hosts::Sim,
            build: attach_lmr,
        },
        Role {
            name: "attach_loss_meter",
            doc: "A loss meter alone (no LMR) on `channel`, an output channel of `node`: measures a plain \
DropTail router the way `attach_lmr` measures an LMR. \
Counts in bins of `bin` seconds for `layers` layers.",
            params: &[param!(node), param!(channel), param!(bin = Float(1.0)), param!(layers = Int(8))],
            config: None,
            hosts: Hosts::Sim,
            build: attach_loss_meter,
        },
    ],
    readers: &[
        Reader {
            name: "loss_meter",
            doc: "A meter's counts: `bin_s`, `channel`, and `flows`: {flow: {\"passed\", \"dropped\"}} with 2-D \
arrays [bin, layer] (packets offered to the queue after the filters / dropped by it). \
`node`: the node the meter is attached to.",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: loss_meter,
        },
        Reader {
            name: "lmr_records",
            doc: "An LMR's records as numpy arrays (times in ns, interfaces as channel ids): L_cur changes \
(`lcur_*`; causes 0 DROP, 1 ADD, 2 DROP_REQ, 3 ADD_REQ, 4 SESS, 5 registration), requests (`req_*`; events \
0 generated, 1 repeated, 2 received and forwarded, 3 received and discarded; kinds 2 DROP_REQ, 3 ADD_REQ), \
DROP/ADD decisions (`dec_*`; kind 2 DROP, 3 ADD), add_intvl updates (`intvl_*`; reasons 0 success, \
1 congestion, 2 DROP_REQ, 3 no SESS), `sess_processed`, and `names`: each code's names. \
`node`: the LMR's node name.",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: lmr_records,
        },
        Reader {
            name: "lmr_status",
            doc: "An LMR's current state: `interfaces` (list of dicts: channel, qlen, add_intvl (s), filtered) \
and `sessions` (list of dicts: group, prev (node, port) or None, l_max, l_cur: {channel: L_cur} for the \
interfaces where the session is registered), and its `config`. \
`node`: the LMR's node name.",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: lmr_status,
        },
        Reader::of_agent(
            "nlm_sender_records",
            "A sender's records: its L_cur changes (`level_time_ns`, `level`, `level_cause`), requests \
received (`req_*`), and counts `sess_sent`, `data_sent`, `data_withheld`. \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_records,
        ),
        Reader::of_agent(
            "nlm_receiver_records",
            "A receiver's records: `bin_s`, `received` and `lost` as 2-D arrays [bin, layer] (loss from \
sequence gaps), windows over loss_th (`over_time_ns`, `over_loss`), DROP_REQs it generated (`req_time_ns`, \
`req_level`, `req_to`), and totals. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_records,
        ),
        Reader::of_agent(
            "nlm_sender_net_status",
            "The status line of `castlab net nlm-sender` ({sent} and {rejected} for the driver). \
`agent`: the sender's agent id.",
            Hosts::SimAndNet,
            sender_net_status,
        ),
        Reader::of_agent(
            "nlm_receiver_net_status",
            "The status line of `castlab net nlm-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_net_status,
        ),
        crate::flow_row!("nlm_flow_row", "an NLM receiver: received, lost, bytes, and per-bin totals", row),
    ],
    sessions: &[SessionKind {
        kind: "nlm",
        keys: &[
            ScenarioKey { name: "rates", kind: KeyKind::Rates, default: Default_::Required },
            ScenarioKey { name: "packet_size", kind: KeyKind::Int(1, 65535), default: Default_::Int(1024) },
            ScenarioKey { name: "jitter", kind: KeyKind::Bool, default: Default_::Bool(true) },
            ScenarioKey::STOP,
            ScenarioKey::FLOW,
            ScenarioKey::CONFIG,
        ],
        groups: Groups::One,
        role: "add_nlm_sender",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "nlm",
        sessions: &["nlm"],
        keys: &[
            ScenarioKey::CONFIG,
            ScenarioKey { name: "layers", kind: KeyKind::Int(1, 32), default: Default_::None },
            ScenarioKey { name: "bin", kind: KeyKind::PositiveTime, default: Default_::Float(1.0) },
        ],
        role: "add_nlm_receiver",
        row: "nlm_flow_row",
        windows_in_config: false,
        inherits_session_config: false,
    }],
    routers: &[RouterKind {
        kind: "lmr",
        keys: &[ScenarioKey::CONFIG],
        many: false,
        role: "attach_lmr",
        status: "lmr_status",
    }],
    net_roles: &[
        NetRole {
            cli: "nlm-sender",
            help: "NLM sender: every layer on one group, SESS every ss_intvl (§3.1, §3.5)",
            role: "add_nlm_sender",
            source: true,
            groups: NetGroups::One,
            flags: &[
                NetFlag {
                    name: "rates_bps",
                    // §4.1: five layers of 100, 100, 200, 400 and 800 kb/s
                    kind: FlagKind::Floats(&[100e3, 100e3, 200e3, 400e3, 800e3]),
                    help: "the layers' rates, bit/s, comma-separated (default §4.1's 100,100,200,400,800 kb/s)",
                    config: false,
                },
                NetFlag { name: "packet_size", kind: FlagKind::Int(1024), help: "bytes (default 1024)", config: false },
                NetFlag { name: "flow", kind: FlagKind::Int(1), help: "the session's data flow id", config: false },
            ],
            defaults: &[],
            status: "nlm_sender_net_status",
            outputs: &[NetOutput::Prefixed { reader: "nlm_sender_records", name: "nlm_sender", tables: &[] }],
        },
        NetRole {
            cli: "nlm-receiver",
            help: "NLM receiver: DROP_REQ upstream when its loss over all layers exceeds loss_th (§3.4)",
            role: "add_nlm_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[NetFlag {
                name: "layers",
                kind: FlagKind::Int(5),
                help: "the sender's number of layers (default 5, §4.1)",
                config: false,
            }],
            defaults: &[],
            status: "nlm_receiver_net_status",
            outputs: &[NetOutput::Json { reader: "nlm_receiver_records", file: "nlm_receiver.json" }],
        },
    ],
    ..Protocol::EMPTY
};
