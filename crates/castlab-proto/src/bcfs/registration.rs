//! BCFS and Rainbow in the protocol registry ([`crate::registry`]): the BCF router, the
//! digital fountain, the Rainbow receiver and PGM over BCFS, their counters and records, and
//! the scenario's `fountain` and `bcf_pgm` sessions, their receivers and `bcf` routers.

use castlab_core::{Addr, NodeId, Value};

use super::bcf_pgm::{BcfPgmConfig, BcfPgmReceiver, BcfPgmSource};
use super::fountain::{seeded_file, FountainError, FountainMode, FountainSource, SymbolStore, WireFile};
use super::rainbow::{RainbowConfig, RainbowReceiver};
use super::{BcfConfig, BcfRouter};
use crate::param;
use crate::registry::{
    agent_as, extension_as, Args, BuildError, BuildResult, ConfigTable, Default_, FlagKind, Groups, Host, Hosts,
    KeyKind, NetFlag, NetGroups, NetOutput, NetRole, Out, Protocol, Raw, Reader, ReceiverKind, Role, RouterKind,
    ScenarioKey, SessionKind, Target,
};

fn fountain<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<(castlab_core::AgentId, &'h FountainSource)> {
    agent_as::<FountainSource>(host, "source", v, "is not a fountain source")
}

fn rainbow<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h RainbowReceiver> {
    agent_as::<RainbowReceiver>(host, "agent", v, "is not a Rainbow receiver").map(|x| x.1)
}

fn bcf_router<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h BcfRouter> {
    extension_as::<BcfRouter>(host, "node", v, "has no BCF router")
}

/// Every node is checked before any router is attached: a bad list attaches nothing.
fn add_routers(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let cfg: BcfConfig = a.config()?;
    let ids: Vec<NodeId> = if a.is_none("nodes") {
        (0..host.node_count() as u32).map(NodeId).collect()
    } else {
        a.list("nodes")?.iter().map(|n| host.node("nodes", n)).collect::<BuildResult<_>>()?
    };
    for (i, &n) in ids.iter().enumerate() {
        if ids[..i].contains(&n) {
            return Err(BuildError::bad("nodes", host.node_label(n), "is listed twice"));
        }
        if host.extension(n).is_some() {
            return Err(BuildError::bad("nodes", host.node_label(n), "already has a router extension"));
        }
    }
    for &n in &ids {
        host.attach(n, Box::new(BcfRouter::new(cfg.clone())))?;
    }
    Ok(ids.len().into())
}

fn add_fountain(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let size = a.positive_u32("packet_bytes")?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let store = match a.bytes("file")? {
        None => None,
        Some(f) => {
            let t = a.u32("symbol_size")?;
            let s = SymbolStore::encode(f, t).map_err(|e| BuildError::Host(e.to_string()))?;
            Some(s.shared())
        }
    };
    let src = FountainSource::new(flow, size, store);
    Ok(host.add_local_agent(n, port, at, Box::new(src))?.0.into())
}

fn add_rainbow(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let (sid, src) = fountain(host, a.get("source"))?;
    let src_addr = host.agent_addr(sid).expect("agent exists");
    let mode = match src.store() {
        Some(st) => FountainMode::Real { store: st.clone() },
        None => FountainMode::Symbolic { needed: a.positive_u32("needed_packets")? },
    };
    let cfg: RainbowConfig = a.config()?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let r = RainbowReceiver::new(cfg, Addr::new(src_addr.node, src_addr.port), flow, mode);
    Ok(host.add_local_agent(n, port, at, Box::new(r))?.0.into())
}

/// The file of a real-network session: `file_bytes` bytes from `file_seed` ([`seeded_file`]),
/// `symbol_size`-byte symbols. The source encodes it; a receiver takes from the same words
/// only the transmission information and what the file should be (to check what it decoded).
fn net_file_words(a: &Args<'_>) -> BuildResult<(Vec<u8>, u32)> {
    let bytes = a.positive_u32("file_bytes")?;
    let seed = a.int("file_seed")?;
    Ok((seeded_file(bytes as usize, seed as u64), a.u32("symbol_size")?))
}

fn file_error(a: &Args<'_>, e: FountainError) -> BuildError {
    match e {
        FountainError::SymbolSize(t) => BuildError::bad("symbol_size", t, &e.to_string()),
        _ => BuildError::bad("file_bytes", a.get("file_bytes"), &e.to_string()),
    }
}

fn net_store(a: &Args<'_>) -> BuildResult<SymbolStore> {
    let (file, t) = net_file_words(a)?;
    SymbolStore::encode(&file, t).map_err(|e| file_error(a, e))
}

fn net_file(a: &Args<'_>) -> BuildResult<WireFile> {
    let (file, t) = net_file_words(a)?;
    WireFile::new(file, t).map_err(|e| file_error(a, e))
}

fn add_net_fountain(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let size = a.positive_u32("packet_bytes")?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let store = net_store(a)?.shared();
    let src = FountainSource::new(flow, size, Some(store)).replying_to_requesters();
    Ok(host.add_agent(n, port, at, Box::new(src))?.0.into())
}

fn add_net_rainbow(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let src_node = a.node(host, "source_node")?;
    let src_port = a.int("source_port")?;
    let src_port =
        u16::try_from(src_port).map_err(|_| BuildError::bad("source_port", src_port, "must be a port 0..=65535"))?;
    let mode = FountainMode::Wire { file: net_file(a)? };
    let cfg: RainbowConfig = a.config()?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let r = RainbowReceiver::new(cfg, Addr::new(src_node, src_port), flow, mode);
    Ok(host.add_agent(n, port, at, Box::new(r))?.0.into())
}

fn fountain_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, s) = fountain(host, v)?;
    Ok(Out::Str(format!(
        "sending={{sent}} requests={} refreshes={} raised={} symbols={} rejected={{rejected}}",
        s.requests, s.refreshes, s.raised, s.sent
    )))
}

fn rainbow_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = rainbow(host, v)?;
    Ok(Out::Str(format!(
        "rate={{rx}} symbols={}/{} window={} losses={} done={} rejected={{rejected}}",
        r.sink.distinct(),
        r.sink.needed(),
        r.window(),
        r.rec.loss_events,
        match r.rec.done_at {
            Some(t) => format!("{:.2}s", t.as_secs_f64()),
            None => "no".into(),
        }
    )))
}

/// A PGM source on `node` sending `group` at `rate_bps`, config `base` with the overrides;
/// `net`: its repairs go to the NAK's sender (the real network, [`BcfPgmSource::replying_to_requesters`]).
fn build_pgm_source(host: &mut dyn Host, a: &Args<'_>, base: BcfPgmConfig, net: bool) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    if host.group_source(g) != Some(n) {
        return Err(BuildError::bad("group", Raw(a.get("group")), "is not rooted at node"));
    }
    let rate_bps = a.f64("rate_bps")?;
    if !(rate_bps.is_finite() && rate_bps > 0.0) {
        return Err(BuildError::bad("rate_bps", rate_bps, "must be a finite rate > 0"));
    }
    let cfg = a.config_over(base)?;
    castlab_core::config::check::packet_rate("rate_bps", rate_bps, cfg.packet_bytes)?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let src = BcfPgmSource::new(cfg, g, rate_bps, flow);
    let src = if net { src.replying_to_requesters() } else { src };
    Ok(host.add_agent(n, port, at, Box::new(src))?.0.into())
}

fn add_pgm_source(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let base = BcfPgmConfig { count: a.positive_u32("count")?, ..BcfPgmConfig::default() };
    build_pgm_source(host, a, base, false)
}

fn add_pgm_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let (sid, src) = agent_as::<BcfPgmSource>(host, "source", a.get("source"), "is not a PGM source")?;
    let cfg = a.config_over(src.cfg.clone())?;
    let group = src.group();
    let addr = host.agent_addr(sid).expect("agent exists");
    let flow = src.host.flow;
    let at = a.start(host, "start")?;
    let r = BcfPgmReceiver::new(cfg, addr, group, flow);
    Ok(host.add_agent(n, None, at, Box::new(r))?.0.into())
}

/// The real network's PGM source over BCFS: its repairs go to the NAK's sender, since the
/// source's host runs no BCF router.
fn add_net_pgm_source(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    build_pgm_source(host, a, BcfPgmConfig::default(), true)
}

/// The real network's PGM receiver over BCFS: NAKs to the source at (`source_node`,
/// `source_port`), whose session words (`count`, `packet_bytes`...) it must share.
fn add_net_pgm_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let src_node = a.node(host, "source_node")?;
    let src_port = a.int("source_port")?;
    let src_port =
        u16::try_from(src_port).map_err(|_| BuildError::bad("source_port", src_port, "must be a port 0..=65535"))?;
    let g = a.group(host, "group")?;
    let cfg: BcfPgmConfig = a.config()?;
    let port = a.port("port")?;
    let flow = a.flow_or_next(host, "flow")?;
    let at = a.start(host, "start")?;
    let r = BcfPgmReceiver::new(cfg, Addr::new(src_node, src_port), g, flow);
    Ok(host.add_agent(n, port, at, Box::new(r))?.0.into())
}

fn pgm_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, any) = host.agent("agent", v)?;
    if let Some(s) = any.downcast_ref::<BcfPgmSource>() {
        return Ok(Out::Str(format!(
            "sending={{sent}} data={} naks={} repairs={} rejected={{rejected}}",
            s.data_sent, s.naks_seen, s.repairs_sent
        )));
    }
    let r =
        any.downcast_ref::<BcfPgmReceiver>().ok_or_else(|| BuildError::bad("agent", Raw(v), "is not a PGM agent"))?;
    Ok(Out::Str(format!(
        "rate={{rx}} data={} naks={} repairs={} unrequested={} complete={} rejected={{rejected}}",
        r.rec.data_received,
        r.rec.naks_sent,
        r.rec.repairs_received,
        r.rec.repairs_unrequested,
        r.complete()
    )))
}

fn router_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = bcf_router(host, v)?;
    let s = r.table.stats;
    let mut d = Out::counters(&[
        ("requests", s.requests),
        ("requests_forwarded", s.requests_forwarded),
        ("requests_suppressed", s.requests_suppressed),
        ("refreshes_sent", s.refreshes_sent),
        ("levels_raised", s.levels_raised),
        ("entries_created", s.entries_created),
        ("replies", s.replies),
        ("reply_copies", s.reply_copies),
        ("replies_without_state", s.replies_without_state),
        ("links_torn_down", s.links_torn_down),
        ("links_aged", s.links_aged),
        ("entries_evicted", s.entries_evicted),
        ("peak_entries", s.peak_entries),
        ("entries", r.table.len() as u64),
        ("local_deliveries", r.local_deliveries),
    ]);
    d.set("replies_per_channel", Out::Col((&r.replies_per_channel).into()));
    Ok(d)
}

fn replies_per_channel<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::Col((&bcf_router(host, v)?.replies_per_channel).into()))
}

fn fountain_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, s) = fountain(host, v)?;
    let mut d =
        Out::counters(&[("sent", s.sent), ("requests", s.requests), ("refreshes", s.refreshes), ("raised", s.raised)]);
    d.set("block_symbols", s.store().map(|st| st.borrow().block_symbols()));
    d.set("symbol_size", s.store().map(|st| st.borrow().symbol_size()));
    Ok(d)
}

fn rainbow_records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = rainbow(host, v)?;
    let rec = &r.rec;
    let mut d = Out::table(rec);
    d.set("received", rec.rx_symbol.len() as u64);
    d.set("distinct", r.sink.distinct() as u64);
    d.set("needed", r.sink.needed() as u64);
    d.set("duplicates", r.sink.duplicates);
    // the real network: symbols whose packet came without well-formed symbol bytes
    d.set("without_bytes", r.sink.without_bytes);
    d.set("decode_attempts", r.sink.decode_attempts as u64);
    d.set("window", r.window() as u64);
    d.set("done", r.done());
    d.set("start_s", rec.started_at.map(|t| t.as_secs_f64()));
    d.set("done_s", rec.done_at.map(|t| t.as_secs_f64()));
    d.set("srtt_s", r.srtt().map(|t| t.as_secs_f64()));
    d.set("matches_source", r.sink.matches_source());
    Ok(d)
}

fn rainbow_decoded<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(rainbow(host, v)?.sink.decoded().map_or(Out::None, Out::Bytes))
}

fn pgm_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let (id, any) = host.agent("agent", v)?;
    let _ = id;
    if let Some(s) = any.downcast_ref::<BcfPgmSource>() {
        return Ok(Out::counters(&[
            ("data_sent", s.data_sent),
            ("naks_seen", s.naks_seen),
            ("repairs_sent", s.repairs_sent),
        ]));
    }
    let r =
        any.downcast_ref::<BcfPgmReceiver>().ok_or_else(|| BuildError::bad("agent", Raw(v), "is not a PGM agent"))?;
    let mut d = Out::counters(&[
        ("data_received", r.rec.data_received),
        ("naks_sent", r.rec.naks_sent),
        ("repairs_received", r.rec.repairs_received),
        ("repairs_unrequested", r.rec.repairs_unrequested),
        ("duplicates", r.rec.duplicates),
    ]);
    d.set("complete", r.complete());
    d.set("done_s", r.rec.done_at.map(|t| t.as_secs_f64()));
    Ok(d)
}

/// The flow-table row of a Rainbow receiver: symbols received, the time it finished.
fn rainbow_row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = rainbow(host, v)?;
    let got = r.rec.rx_symbol.len() as u64;
    let mut d = Out::dict();
    d.set("received", got);
    d.set("lost", 0u64);
    d.set("bytes", got * a.int("packet_size")? as u64);
    d.set("level", Out::None);
    d.set("end_s", r.rec.done_at.map(|t| t.as_secs_f64()));
    Ok(d)
}

/// The flow-table row of a PGM receiver over BCFS: originals received against the source's
/// originals sent, bytes with repairs, the time it finished.
fn pgm_row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, r) = agent_as::<BcfPgmReceiver>(host, "agent", v, "is not a PGM agent")?;
    let (_, s) = agent_as::<BcfPgmSource>(host, "source", a.get("source"), "is not a PGM source")?;
    let got = r.rec.data_received;
    let mut d = Out::dict();
    d.set("received", got);
    d.set("lost", s.data_sent.saturating_sub(got));
    d.set("sent", s.data_sent);
    d.set("bytes", (got + r.rec.repairs_received) * a.int("packet_size")? as u64);
    d.set("level", Out::None);
    d.set("end_s", r.rec.done_at.map(|t| t.as_secs_f64()));
    Ok(d)
}

pub static PROTOCOL: Protocol = Protocol {
    name: "rainbow",
    paper: "Yano and McCanne, The Breadcrumb Forwarding Service and the Digital Fountain Rainbow (UCB/CSD 99-1068)",
    configs: &[
        ConfigTable::of::<BcfConfig>("bcf"),
        ConfigTable::of::<RainbowConfig>("rainbow"),
        ConfigTable::of::<BcfPgmConfig>("bcf_pgm"),
    ],
    roles: &[
        Role {
            name: "add_bcf_routers",
            doc: "Attach a BCF router (§II-B) to each node in `nodes` (every node when None): breadcrumb state \
per (source, label), bounded by `max_entries` with LRU reclamation; a suppressed request whose entry is older \
than `refresh_interval` goes up as a marked null request; links not refreshed within `link_lifetime` age \
out. Every node on a BCF path (hosts included) needs one. Returns the number attached. Keyword arguments \
override config_defaults(\"bcf\"). Every node is checked before any router is attached: a bad list attaches \
nothing. \
`config`: the keyword overrides.",
            params: &[param!(nodes = None)],
            config: Some("bcf"),
            hosts: Hosts::Sim,
            build: add_routers,
        },
        Role {
            name: "add_fountain_source",
            doc: "A digital-fountain source on `node` (§III-A, §III-B): each BCF request is answered by a fresh \
symbol at the request's level. Symbolic mode when `file` is None; with `file` (bytes) the real mode: RFC 6330 \
RaptorQ, one source block of `symbol_size`-byte symbols. Returns the agent id. \
`port`, `flow`: its port and flow id (None: the next free ones); `packet_bytes`: the size of a symbolic packet; \
`start`: seconds at which it answers.",
            params: &[
                param!(node),
                param!(port = None),
                param!(packet_bytes = Int(512)),
                param!(flow = None),
                param!(file = None),
                param!(symbol_size = Int(448)),
                param!(start = Float(0.0)),
            ],
            config: None,
            hosts: Hosts::Sim,
            build: add_fountain,
        },
        Role {
            name: "add_rainbow_receiver",
            doc: "A Rainbow receiver on `node` (§III-C) fetching from the fountain agent `source`. It is done \
after `needed_packets` distinct symbols (symbolic source) or once its RaptorQ decoder succeeds (real source; \
`needed_packets` is then ignored). Returns the agent id. Keyword arguments override \
config_defaults(\"rainbow\"). \
`start` seconds; `port`, `flow`: its port and flow id (None: the next free ones); `config`: the keyword \
overrides.",
            params: &[
                param!(node),
                param!(source),
                param!(start = Float(0.0)),
                param!(needed_packets = Int(2000)),
                param!(port = None),
                param!(flow = None),
            ],
            config: Some("rainbow"),
            hosts: Hosts::Sim,
            build: add_rainbow,
        },
        Role {
            name: "add_bcf_pgm_source",
            doc: "A PGM-like source over BCFS (§II-B.3): `count` original packets multicast to `group` at \
`rate_bps`; NAKs (BCF requests) answered with repairs (BCF replies). Returns the agent id. Keyword arguments \
override config_defaults(\"bcf_pgm\"). \
`node`: where the source runs; `start` seconds; `port`, `flow`: its port and flow id (None: the next free ones); \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(count),
                param!(rate_bps),
                param!(start = Float(0.0)),
                param!(port = None),
                param!(flow = None),
            ],
            config: Some("bcf_pgm"),
            hosts: Hosts::Sim,
            build: add_pgm_source,
        },
        Role {
            name: "add_bcf_pgm_receiver",
            doc: "A PGM-like receiver over BCFS on `node`: joins `group`, NAKs gaps of the PGM agent `source`'s \
stream. Returns the agent id. Keyword arguments override the source's config (config_defaults(\"bcf_pgm\"), \
e.g. `nak_timeout`, `idle_timeout`). \
`start`: seconds at which it joins; `config`: the keyword overrides.",
            params: &[param!(node), param!(source), param!(start = Float(0.0))],
            config: Some("bcf_pgm"),
            hosts: Hosts::Sim,
            build: add_pgm_receiver,
        },
        Role {
            name: "add_bcf_pgm_net_source",
            doc: "A PGM-like source over BCFS on `node` for the real network (§II-B.3): `count` original packets \
multicast to `group` at `rate_bps`; each NAK (a BCF request) is answered with the lost packet as a BCF reply \
addressed to the NAK's sender, so that unicast routing takes it to the first BCF router (the source's host \
has none), which copies it down the breadcrumbs. Returns the agent id. Keyword arguments override \
config_defaults(\"bcf_pgm\"). \
`port`, `flow`: its port and flow id (None: the next free ones); `start`: seconds at which it sends; \
`config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(rate_bps = Int(256_000)),
                param!(start = Float(0.0)),
                param!(port = None),
                param!(flow = None),
            ],
            config: Some("bcf_pgm"),
            hosts: Hosts::SimAndNet,
            build: add_net_pgm_source,
        },
        Role {
            name: "add_bcf_pgm_net_receiver",
            doc: "A PGM-like receiver over BCFS on `node` for the real network: joins `group` and NAKs each gap \
of the source at (`source_node`, `source_port`) as a BCF request toward it, one level higher on each \
`nak_timeout`. Returns the agent id. Keyword arguments override config_defaults(\"bcf_pgm\"), and must match \
the source's (`count`, `packet_bytes`, `label_prefix`). \
`start` seconds; `port`, `flow`: its port and flow id (None: the next free ones); `config`: the keyword \
overrides.",
            params: &[
                param!(node),
                param!(group),
                param!(source_node = Int(0)),
                param!(source_port = Int(1)),
                param!(start = Float(0.0)),
                param!(port = None),
                param!(flow = None),
            ],
            config: Some("bcf_pgm"),
            hosts: Hosts::SimAndNet,
            build: add_net_pgm_receiver,
        },
        Role {
            name: "add_fountain_net_source",
            doc:
                "A digital-fountain source on `node` for the real network (§III-A, §III-B), RFC 6330 RaptorQ over the \
file of `file_bytes` bytes drawn from `file_seed` (every process of the session takes the file's length \
and symbol size from the same words). Each reply carries its symbol: RFC 6330's FEC Payload ID and the \
symbol's bytes, inside the reply's `packet_bytes` when they fit (416-byte symbols fill a 512-byte reply \
without a session key). \
Each BCF request is answered by a fresh symbol addressed to the request's sender, so that unicast \
routing takes it to the first BCF router (the source's host has none). Returns the agent id. \
`port`, `flow`: its port and flow id (None: the next free ones); `packet_bytes`: a reply's size on the wire; \
`symbol_size`: bytes per symbol; `start`: seconds at which it answers.",
            params: &[
                param!(node),
                param!(port = None),
                param!(packet_bytes = Int(512)),
                param!(flow = None),
                param!(file_bytes = Int(100_000)),
                param!(file_seed = Int(1)),
                param!(symbol_size = Int(416)),
                param!(start = Float(0.0)),
            ],
            config: None,
            hosts: Hosts::Net,
            build: add_net_fountain,
        },
        Role {
            name: "add_rainbow_net_receiver",
            doc: "A Rainbow receiver on `node` (§III-C) for the real network, fetching from the fountain source at \
(`source_node`, `source_port`) the file of `file_bytes` bytes from `file_seed` in `symbol_size`-byte \
symbols (the source's words); done once its RaptorQ decoder succeeds on the symbol bytes its packets \
carried (it has no encoder; the file made from the words only says whether it decoded the very file). Returns \
the agent id. Keyword arguments override config_defaults(\"rainbow\"). \
`start` seconds; `port`, `flow`: its port and flow id (None: the next free ones); `config`: the keyword \
overrides.",
            params: &[
                param!(node),
                param!(source_node = Int(0)),
                param!(source_port = Int(1)),
                param!(file_bytes = Int(100_000)),
                param!(file_seed = Int(1)),
                param!(symbol_size = Int(416)),
                param!(start = Float(0.0)),
                param!(port = None),
                param!(flow = None),
            ],
            config: Some("rainbow"),
            hosts: Hosts::Net,
            build: add_net_rainbow,
        },
    ],
    readers: &[
        Reader {
            name: "fountain_net_status",
            doc: "A fountain source's status line on the real network. `source`: its agent id.",
            target: Target::Agent("source"),
            params: &[],
            hosts: Hosts::SimAndNet,
            read: fountain_net_status,
        },
        Reader {
            name: "rainbow_net_status",
            doc: "A Rainbow receiver's status line on the real network. `agent`: its agent id.",
            target: Target::Agent("agent"),
            params: &[],
            hosts: Hosts::SimAndNet,
            read: rainbow_net_status,
        },
        Reader {
            name: "bcf_router_stats",
            doc: "Counters of the BCF router on `node`; `replies_per_channel`: the reply copies it sent down each \
channel, indexed by channel id.",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: router_stats,
        },
        Reader {
            name: "bcf_replies_per_channel",
            doc: "Reply copies the BCF router on `node` sent down each channel, indexed by channel id.",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: replies_per_channel,
        },
        Reader {
            name: "fountain_stats",
            doc: "Counters of a fountain source; `block_symbols` is K in the real mode (None symbolic).",
            target: Target::Agent("source"),
            params: &[],
            hosts: Hosts::SimAndNet,
            read: fountain_stats,
        },
        Reader::of_agent(
            "rainbow_records",
            "A Rainbow receiver's records: every symbol received until completion (time ns, symbol id), \
the window after each change, and counters (`done_s`, `start_s` in seconds). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            rainbow_records,
        ),
        Reader::of_agent(
            "rainbow_decoded",
            "The file a real-mode Rainbow receiver decoded (None before it is done, or symbolic). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            rainbow_decoded,
        ),
        Reader::of_agent(
            "bcf_pgm_stats",
            "Counters of a PGM source or receiver over BCFS. \
`agent`: the source's or receiver's agent id.",
            Hosts::SimAndNet,
            pgm_stats,
        ),
        Reader::of_agent(
            "bcf_pgm_net_status",
            "The status line of `castlab net bcf-pgm-source` or `bcf-pgm-receiver` ({sent}, {rx} and {rejected} \
for the driver). `agent`: its agent id.",
            Hosts::SimAndNet,
            pgm_net_status,
        ),
        crate::flow_row!("rainbow_flow_row", "a Rainbow receiver", rainbow_row),
        Reader {
            name: "bcf_pgm_flow_row",
            doc: "The scenario flow table's row of a PGM receiver over BCFS. \
`agent`: the receiver's agent id.; `source`: the PGM source's agent id. `packet_size`: the session's packet size \
in bytes; `windows`: the scenario's loss windows (seconds); the windows are not used.",
            target: Target::Agent("agent"),
            params: &[param!(packet_size), param!(source), param!(windows = [])],
            hosts: Hosts::Sim,
            read: pgm_row,
        },
    ],
    sessions: &[
        SessionKind {
            kind: "fountain",
            keys: &[ScenarioKey { name: "packet_bytes", kind: KeyKind::Int(1, 65535), default: Default_::Int(512) }],
            groups: Groups::None_,
            role: "add_fountain_source",
            needs_router: Some("bcf"),
        },
        SessionKind {
            kind: "bcf_pgm",
            keys: &[
                ScenarioKey { name: "rate", kind: KeyKind::Rate, default: Default_::Required },
                ScenarioKey { name: "count", kind: KeyKind::Int(1, u32::MAX as i64), default: Default_::Int(1000) },
                ScenarioKey::FLOW,
                ScenarioKey::CONFIG,
            ],
            groups: Groups::One,
            role: "add_bcf_pgm_source",
            needs_router: Some("bcf"),
        },
    ],
    receivers: &[
        ReceiverKind {
            protocol: "rainbow",
            sessions: &["fountain"],
            keys: &[
                ScenarioKey::CONFIG,
                ScenarioKey {
                    name: "needed_packets",
                    kind: KeyKind::Int(1, u32::MAX as i64),
                    default: Default_::Int(2000),
                },
            ],
            role: "add_rainbow_receiver",
            row: "rainbow_flow_row",
            windows_in_config: false,
            inherits_session_config: false,
        },
        ReceiverKind {
            protocol: "bcf_pgm",
            sessions: &["bcf_pgm"],
            keys: &[ScenarioKey::CONFIG],
            role: "add_bcf_pgm_receiver",
            row: "bcf_pgm_flow_row",
            windows_in_config: false,
            inherits_session_config: false,
        },
    ],
    routers: &[RouterKind {
        kind: "bcf",
        keys: &[ScenarioKey::CONFIG],
        many: true,
        role: "add_bcf_routers",
        status: "bcf_router_stats",
    }],
    net_roles: &[
        NetRole {
            cli: "rainbow-source",
            help: "digital-fountain source answering Rainbow's BCF requests (Yano and McCanne §III)",
            role: "add_fountain_net_source",
            source: true,
            groups: NetGroups::One,
            flags: &[FLOW, FILE_BYTES, FILE_SEED, SYMBOL_SIZE, PACKET_BYTES],
            defaults: &[],
            status: "fountain_net_status",
            outputs: &[NetOutput::Json { reader: "fountain_stats", file: "fountain_stats.json" }],
        },
        NetRole {
            cli: "bcf-pgm-source",
            help: "PGM-like source over BCFS: NAKs answered as BCF replies (Yano and McCanne §II-B.3)",
            role: "add_bcf_pgm_net_source",
            source: true,
            groups: NetGroups::One,
            flags: &[FLOW, PGM_COUNT, PGM_RATE],
            defaults: &[],
            status: "bcf_pgm_net_status",
            outputs: &[NetOutput::Json { reader: "bcf_pgm_stats", file: "bcf_pgm_stats.json" }],
        },
        NetRole {
            cli: "bcf-pgm-receiver",
            help: "PGM-like receiver over BCFS: NAKs its gaps as BCF requests (Yano and McCanne §II-B.3)",
            role: "add_bcf_pgm_net_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[FLOW, PGM_COUNT],
            defaults: &[],
            status: "bcf_pgm_net_status",
            outputs: &[NetOutput::Json { reader: "bcf_pgm_stats", file: "bcf_pgm_stats.json" }],
        },
        NetRole {
            cli: "rainbow-receiver",
            help: "Rainbow receiver fetching a RaptorQ-coded file over BCFS (Yano and McCanne §III-C)",
            role: "add_rainbow_net_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[FLOW, FILE_BYTES, FILE_SEED, SYMBOL_SIZE],
            defaults: &[],
            status: "rainbow_net_status",
            outputs: &[NetOutput::Prefixed { reader: "rainbow_records", name: "rainbow", tables: &[] }],
        },
    ],
    ..Protocol::EMPTY
};

const FLOW: NetFlag = NetFlag { name: "flow", kind: FlagKind::Int(1), help: "flow id", config: false };
const PGM_COUNT: NetFlag = NetFlag {
    name: "count",
    kind: FlagKind::Int(1000),
    help: "original packets in the session (the same on the source and every receiver)",
    config: true,
};
const PGM_RATE: NetFlag =
    NetFlag { name: "rate_bps", kind: FlagKind::Int(256_000), help: "sending rate, bit/s", config: false };
const FILE_BYTES: NetFlag = NetFlag {
    name: "file_bytes",
    kind: FlagKind::Int(100_000),
    help: "size of the file, bytes (the same on every process of the session)",
    config: false,
};
const FILE_SEED: NetFlag = NetFlag {
    name: "file_seed",
    kind: FlagKind::Int(1),
    help: "seed of the file's bytes (the same on every process of the session)",
    config: false,
};
const SYMBOL_SIZE: NetFlag = NetFlag {
    name: "symbol_size",
    kind: FlagKind::Int(416),
    help: "bytes per RaptorQ symbol, a multiple of 8 (the same on every process; 416 with its FEC Payload ID \
and castlab's headers fill a 512-byte reply)",
    config: false,
};
const PACKET_BYTES: NetFlag = NetFlag {
    name: "packet_bytes",
    kind: FlagKind::Int(512),
    help: "a reply's size on the wire, bytes",
    config: false,
};
