//! The CBR sources as registry roles (simulator only): `add_layered_source` and `add_cbr`
//! are made from these, as every protocol's roles are. They take no config table. In a
//! scenario, the layered source is the `layered` session (measured by `sink` receivers) and
//! `add_cbr` the `[[cbr]]` table's flows, each with a sink on its `dst`.

use castlab_core::{Addr, Dest};

use super::{CbrSource, CbrStream};
use crate::param;
use castlab_core::config::Value;

use crate::registry::{
    agent_as, Args, BuildError, BuildResult, Default_, FlowKind, Groups, Host, Hosts, KeyKind, Out, Protocol, Reader,
    Role, ScenarioKey, SessionKind,
};

fn add_layered_source(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let groups = a.list("groups")?;
    let rates_bps = a.f64s("rates_bps")?;
    if groups.is_empty() {
        return Err(BuildError::bad("groups", "[]", "needs at least one layer"));
    }
    if groups.len() != rates_bps.len() {
        return Err(BuildError::bad("rates_bps", rates_bps.len(), "needs one rate per group"));
    }
    if groups.len() > 255 {
        return Err(BuildError::bad("groups", groups.len(), "at most 255 layers"));
    }
    let gs = groups.iter().map(|g| host.group("groups", g)).collect::<BuildResult<Vec<_>>>()?;
    for &r in &rates_bps {
        if !(r.is_finite() && r > 0.0) {
            return Err(BuildError::bad("rates_bps", r, "every rate must be positive and finite"));
        }
    }
    let size = a.positive_u32("packet_size")?;
    // On the wall clock, a packet interval under 10 us is no real-time source: the loop
    // would spend its time queueing packets that the driver's rate cap then drops.
    let max_rate = f64::from(size) * 8.0 * 1e5;
    if let Some(r) = rates_bps.iter().find(|r| host.wall_clock() && **r > max_rate) {
        return Err(BuildError::bad("rates_bps", r, "more than 100,000 packets/s on one layer"));
    }
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let src = CbrSource::try_layered(&gs, &rates_bps, size, flow, s, e, a.bool("jitter")?)?;
    Ok(host.add_agent(n, None, s, Box::new(src))?.0.into())
}

fn add_cbr(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let d = a.node(host, "dst")?;
    let port = a.u16("dst_port")?;
    let rate_bps = a.f64("rate_bps")?;
    let size = a.positive_u32("packet_size")?;
    castlab_core::config::check::packet_rate("rate_bps", rate_bps, size)?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let st = CbrStream::new(Dest::Unicast(Addr::new(d, port)), rate_bps, 0);
    let src = CbrSource::try_new(vec![st], size, flow, s, e, a.bool("jitter")?)?;
    Ok(host.add_agent(n, None, s, Box::new(src))?.0.into())
}

fn source_sent<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, s) = agent_as::<CbrSource>(host, "agent", v, "is not a layered source")?;
    Ok(s.streams().iter().map(|st| st.sent()).collect::<Vec<u64>>().into())
}

pub static PROTOCOL: Protocol = Protocol {
    name: "cbr",
    paper: "constant-bit-rate sources; layered as McCanne et al. (SIGCOMM 1996) §4",
    roles: &[
        Role {
            name: "add_layered_source",
            doc: "A layered CBR source (McCanne et al. §4 law): layer m at rates_bps[m] on groups[m].\n\
`node`: where it runs; `packet_size` bytes; `flow`: the flow id its packets carry; from\n\
`start` to `stop` seconds (None: the end of the run); `jitter`: McCanne et al. §4's random\n\
send times. On the real network, at most 100,000 packets/s per layer, until `stop` in\n\
driver time.",
            params: &[
                param!(node),
                param!(groups),
                param!(rates_bps),
                param!(packet_size = Int(1000)),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
                param!(jitter = Bool(true)),
            ],
            config: None,
            hosts: Hosts::SimAndNet,
            build: add_layered_source,
        },
        Role {
            name: "add_cbr",
            doc: "A unicast CBR source to (dst, dst_port); jitter as McCanne et al. §4 when `jitter`.\n\
`node`: where it runs; `rate_bps` bit/s in `packet_size`-byte packets, flow id `flow`, from\n\
`start` to `stop` seconds (None: the end of the run).",
            params: &[
                param!(node),
                param!(dst),
                param!(dst_port),
                param!(rate_bps),
                param!(packet_size = Int(1000)),
                param!(flow = Int(0)),
                param!(start = Float(0.0)),
                param!(stop = None),
                param!(jitter = Bool(false)),
            ],
            config: None,
            hosts: Hosts::Sim,
            build: add_cbr,
        },
    ],
    readers: &[Reader::of_agent(
        "source_sent",
        "Packets sent so far by a CBR source, per layer (per stream). `agent`: the source's agent id.",
        Hosts::SimAndNet,
        source_sent,
    )],
    sessions: &[SessionKind {
        kind: "layered",
        keys: &[
            ScenarioKey { name: "rates", kind: KeyKind::Rates, default: Default_::Required },
            ScenarioKey { name: "packet_size", kind: KeyKind::Int(1, 65535), default: Default_::Int(1000) },
            ScenarioKey { name: "jitter", kind: KeyKind::Bool, default: Default_::Bool(true) },
            ScenarioKey::STOP,
        ],
        groups: Groups::PerRateAndControl,
        role: "add_layered_source",
        needs_router: None,
    }],
    flows: &[FlowKind {
        table: "cbr",
        keys: &[
            ScenarioKey { name: "src", kind: KeyKind::Node, default: Default_::Required },
            ScenarioKey { name: "dst", kind: KeyKind::Node, default: Default_::Required },
            ScenarioKey { name: "rate", kind: KeyKind::Rate, default: Default_::Required },
            ScenarioKey { name: "packet_size", kind: KeyKind::Int(1, 65535), default: Default_::Int(1000) },
            ScenarioKey { name: "start", kind: KeyKind::Time, default: Default_::Float(0.0) },
            ScenarioKey::STOP,
            ScenarioKey { name: "jitter", kind: KeyKind::Bool, default: Default_::Bool(false) },
            // each entry its own port unless told: 6000 + its index
            ScenarioKey { name: "port", kind: KeyKind::PortFrom(6000), default: Default_::None },
        ],
        role: "add_cbr",
        sink: Some("add_sink"),
        row: "sink_flow_row",
    }],
    ..Protocol::EMPTY
};
