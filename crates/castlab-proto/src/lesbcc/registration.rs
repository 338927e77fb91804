//! LE-SBCC in the protocol registry ([`crate::registry`]): the source's and the PGM
//! receiver's configs, the source, the receiver, the unicast pair of Fig. 5, NAK aggregation
//! in routers (§3.3), their counters and traces, the scenario's `lesbcc` sessions, `pgm`
//! receivers and `nak_aggregator` routers, and the offline models (the cascade on synthetic
//! LIs, §3.1.4; TFRC's average loss interval, §4.1).

use castlab_core::{Addr, ConfigValue, Dest, Value};

use super::pgm_transport::{NakAggregator, PgmReceiver, PgmReceiverConfig};
use super::{run_synthetic, LesbccConfig, LesbccSource, ReceiverClass, SourceLossHistory};
use crate::param;
use crate::registry::{
    agent_as, extension_as, percent, Args, BuildError, BuildResult, ConfigTable, Default_, FlagKind, Function, Groups,
    Host, Hosts, KeyKind, NetFlag, NetGroups, NetOutput, NetRole, Out, Protocol, Raw, Reader, ReceiverKind, Role,
    RouterKind, ScenarioKey, SessionKind, Target,
};

fn source<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h LesbccSource> {
    agent_as::<LesbccSource>(host, "agent", v, "is not an LE-SBCC source").map(|x| x.1)
}

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h PgmReceiver> {
    agent_as::<PgmReceiver>(host, "agent", v, "is not a PGM receiver").map(|x| x.1)
}

fn add_source(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.group(host, "group")?;
    let flow = a.u32("flow")?;
    let s = a.start(host, "start")?;
    let src = LesbccSource::try_new(Dest::Group(g), flow, a.config::<LesbccConfig>()?)?;
    Ok(host.add_agent(n, None, s, Box::new(src))?.0.into())
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let g = a.opt_group(host, "group")?;
    let flow = a.u32("flow")?;
    let port = a.port("port")?;
    let s = a.start(host, "start")?;
    let rx = PgmReceiver::try_new(g, flow, a.config::<PgmReceiverConfig>()?)?;
    Ok(host.add_agent(n, port, s, Box::new(rx))?.0.into())
}

/// A PGM receiver on `dst`, then the source on `src` sending to it: the receiver of source
/// `a` is `a - 1`. Overrides go to whichever config has the field.
fn add_unicast(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let ns = a.node(host, "src")?;
    let nd = a.node(host, "dst")?;
    let port = a.port("port")?;
    let s = a.start(host, "start")?;
    let (rcv, src) = a.split_config::<PgmReceiverConfig>();
    let cfg: LesbccConfig = Args::new(&[], &src).config()?;
    let rcfg: PgmReceiverConfig = Args::new(&[], &rcv).config()?;
    let sender_id = host.agent_count() as u64 + 1;
    let flow = match a.opt_int("flow")? {
        None => u32::try_from(sender_id).map_err(|_| BuildError::bad("flow", sender_id, "too many agents"))?,
        Some(_) => a.u32("flow")?,
    };
    let now = host.now();
    let rx = PgmReceiver::try_new(None, flow, rcfg)?;
    let rx = host.add_agent(nd, port, now, Box::new(rx))?;
    let addr: Addr = host.agent_addr(rx).expect("just added");
    let tx = LesbccSource::try_new(Dest::Unicast(addr), flow, cfg)?;
    Ok(host.add_agent(ns, None, s, Box::new(tx))?.0.into())
}

fn attach_aggregator(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let h = a.positive_duration("hold")?;
    host.attach(n, Box::new(NakAggregator::new(h)))?;
    Ok(Out::None)
}

/// Counters and state of a source; `receivers` named as the host names nodes.
fn stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = source(host, v)?;
    let c = s.cascade();
    let st = s.stats;
    let cs = c.stats;
    let mut d = Out::counters(&[
        ("odata_sent", st.odata_sent),
        ("rdata_sent", st.rdata_sent),
        ("ncf_sent", st.ncf_sent),
        ("spm_sent", st.spm_sent),
        ("bytes_sent", st.bytes_sent),
        ("naks_out_of_window", st.naks_out_of_window),
        ("naks_repair_pending", st.naks_repair_pending),
        ("ignored", st.ignored),
        ("lis", cs.lis),
        ("les", cs.les),
        ("lprf_passed", cs.lprf_passed),
        ("rate_reductions", cs.rate_reductions),
        ("rate_increases", cs.rate_increases),
        ("rtt_samples", cs.rtt_samples),
        ("rtt_pruned", cs.rtt_pruned),
        ("rtt_ambiguous", cs.rtt_ambiguous),
        ("lprf_decays", cs.lprf_decays),
        ("lead", s.lead()),
    ]);
    d.set("rate_bps", c.rate_bps());
    d.set("srtt", c.srtt());
    d.set("sigma", c.sigma());
    d.set("s_hat", c.s_hat());
    d.set("receivers", s.receiver_addrs().iter().map(|a| host.node_label(a.node)).collect::<Vec<String>>());
    d.set("lprf_counts", Out::Col(c.lprf.counts().into()));
    Ok(d)
}

fn trace<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::table(&source(host, v)?.cascade().records))
}

fn receiver_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let s = r.stats;
    let mut d = Out::counters(&[
        ("odata", s.odata),
        ("rdata", s.rdata),
        ("ncf", s.ncf),
        ("spm", s.spm),
        ("duplicates", s.duplicates),
        ("unique", s.unique),
        ("gaps", s.gaps),
        ("repaired", s.repaired),
        ("naks_sent", s.naks_sent),
        ("naks_suppressed_ncf", s.naks_suppressed_ncf),
        ("naks_cancelled_repair", s.naks_cancelled_repair),
        ("unrecoverable", s.unrecoverable),
        ("ignored", s.ignored),
        ("source_restarts", s.source_restarts),
        ("rx_trail", r.rx_trail()),
        ("lead", r.lead()),
    ]);
    d.set("complete", r.is_complete());
    d.set("complete_at", r.complete_at.map(|t| t.as_secs_f64()));
    Ok(d)
}

fn aggregator_stats<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let a = extension_as::<NakAggregator>(host, "node", v, "has no NAK aggregator")?;
    Ok(Out::counters(&[
        ("naks_forwarded", a.stats.naks_forwarded),
        ("naks_suppressed", a.stats.naks_suppressed),
        ("naks_suppressed_after_repair", a.stats.naks_suppressed_after_repair),
        ("repairs_seen", a.stats.repairs_seen),
    ]))
}

/// The flow-table row: original packets received, gaps found, bytes with repairs, and the
/// source's lead as what was sent.
fn row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let s = r.stats;
    let mut d = Out::dict();
    d.set("received", s.odata);
    d.set("lost", s.gaps);
    d.set("bytes", (s.odata + s.rdata) * a.int("packet_size")? as u64);
    d.set("level", Out::None);
    d.set("sent", r.lead());
    Ok(d)
}

/// The `castlab net` status lines.
fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = source(host, v)?;
    let c = s.cascade();
    Ok(Out::Str(format!(
        "policy={} rate={} sending={{sent}} odata={} rdata={} lis={} les={} receivers={} rejected={{rejected}}",
        c.config().policy.to_value().to_string().trim_matches('"'),
        rate_text(c.rate_bps()),
        s.stats.odata_sent,
        s.stats.rdata_sent,
        c.stats.lis,
        c.stats.les,
        s.receiver_addrs().len()
    )))
}

/// The loss is the share of original transmissions found missing (a gap is one sequence number).
fn pgm_net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let s = receiver(host, v)?.stats;
    Ok(Out::Str(format!(
        "rate={{rx}} unique={} odata={} rdata={} gaps={} loss={} naks={} repaired={} unrecoverable={} rejected={{rejected}}",
        s.unique,
        s.odata,
        s.rdata,
        s.gaps,
        percent(s.gaps, s.odata),
        s.naks_sent,
        s.repaired,
        s.unrecoverable
    )))
}

/// A rate as the status lines print it.
fn rate_text(bps: f64) -> String {
    if bps >= 1e6 {
        format!("{:.2} Mb/s", bps / 1e6)
    } else {
        format!("{:.1} kb/s", bps / 1e3)
    }
}

/// One class of `classes` of [`synthetic`]: `(count, loss, rtt_s)`.
fn receiver_class(v: &Value) -> BuildResult<ReceiverClass> {
    use castlab_core::Duration;
    let bad = |why| BuildError::bad("classes", Raw(v), why);
    let [count, loss, rtt] = match v {
        Value::List(items) => {
            <&[Value; 3]>::try_from(items.as_slice()).map_err(|_| bad("each class is (count, loss, rtt_s)"))?
        }
        _ => return Err(bad("each class is (count, loss, rtt_s)")),
    };
    let count = match count {
        Value::Int(c) => usize::try_from(*c).map_err(|_| bad("counts must be >= 0"))?,
        _ => return Err(bad("counts must be integers")),
    };
    let num = |x: &Value| match x {
        Value::Float(f) => Some(*f),
        Value::Int(i) => Some(*i as f64),
        _ => None,
    };
    let loss =
        num(loss).filter(|p| (0.0..=1.0).contains(p)).ok_or_else(|| bad("loss probabilities must be in [0, 1]"))?;
    let rtt = Duration::from_value("classes", &Value::Float(num(rtt).ok_or_else(|| bad("rtts must be numbers"))?))?;
    if rtt.is_zero() {
        return Err(bad("rtts must be positive"));
    }
    Ok(ReceiverClass { count, loss, rtt })
}

/// The cascade driven with synthetic LIs ([`run_synthetic`], §3.1.4, Figs 11-12).
fn synthetic(a: &Args<'_>) -> BuildResult<Out<'static>> {
    let cfg = a.config::<LesbccConfig>()?;
    let classes = a.list("classes")?;
    if classes.is_empty() {
        return Err(BuildError::bad("classes", "[]", "needs at least one class of receivers"));
    }
    let classes = classes.iter().map(receiver_class).collect::<BuildResult<Vec<_>>>()?;
    let total: usize = classes.iter().map(|c| c.count).sum();
    if total == 0 || total > 10_000_000 {
        return Err(BuildError::bad("classes", total, "total receivers must be in 1..=10,000,000"));
    }
    let packets = a.u64("packets")?;
    if packets == 0 {
        return Err(BuildError::bad("packets", 0, "must be positive"));
    }
    let r = run_synthetic(&cfg, &classes, packets, a.u64("seed")?);
    let s = r.stats;
    let mut d = Out::counters(&[
        ("lis", s.lis),
        ("les", s.les),
        ("lprf_passed", s.lprf_passed),
        ("rate_reductions", s.rate_reductions),
        ("rate_increases", s.rate_increases),
        ("rtt_samples", s.rtt_samples),
        ("packets", r.packets),
    ]);
    d.set("duration_s", r.duration_s);
    d.set("final_srtt_s", r.final_srtt_s);
    d.set("mean_rate_bps", r.mean_rate_bps);
    d.set("les_per_receiver", Out::U64s(r.les_per_receiver));
    d.set("passed_per_receiver", Out::U64s(r.passed_per_receiver));
    Ok(d)
}

/// TFRC's average loss interval ŝ_i (§4.1) over intervals given newest first.
fn tfrc_average_interval(a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.positive_u32("n")? as usize;
    let alpha = a.f64("alpha")?;
    if !(0.0..=1.0).contains(&alpha) {
        return Err(BuildError::bad("alpha", alpha, "must be in [0, 1]"));
    }
    let i = usize::try_from(a.int("i")?).map_err(|_| BuildError::bad("i", a.get("i"), "must be >= 0"))?;
    let intervals = a.list("intervals")?;
    let mut h = SourceLossHistory::new(vec![1.0; n], alpha, intervals.len().max(n) + 1);
    for v in intervals.iter().rev() {
        match v {
            Value::Int(s) if *s >= 0 => h.push_interval(*s as u64),
            v => return Err(BuildError::bad("intervals", Raw(v), "must be integers >= 0")),
        }
    }
    h.set_s0(a.u64("s0")?);
    Ok(h.average(i).into())
}

pub static PROTOCOL: Protocol = Protocol {
    name: "lesbcc",
    paper: "Thapliyal et al., LE-SBCC: Loss-Event Oriented Source-based Multicast Congestion Control",
    configs: &[ConfigTable::of::<LesbccConfig>("lesbcc"), ConfigTable::of::<PgmReceiverConfig>("pgm")],
    roles: &[
        Role {
            name: "add_lesbcc_source",
            doc: "An LE-SBCC multicast source on `node` sending session `flow` to `group` (§2, §5.1). \
Overrides: config_defaults(\"lesbcc\") (`policy=\"tfrc\"` for the §4 module; durations in seconds). Returns \
the agent id. \
`start`: seconds at which it sends; `config`: the keyword overrides.",
            params: &[param!(node), param!(group), param!(flow = Int(0)), param!(start = Float(0.0))],
            config: Some("lesbcc"),
            hosts: Hosts::SimAndNet,
            build: add_source,
        },
        Role {
            name: "add_pgm_receiver",
            doc: "A PGM receiver of session `flow` on `node` that NAKs its losses (§5.1): joins `group`, or \
(group None) listens for a unicast session on `port`. Overrides: config_defaults(\"pgm\"). Returns the \
agent id. \
`start`: seconds at which it joins; `config`: the keyword overrides.",
            params: &[
                param!(node),
                param!(group = None),
                param!(flow = Int(0)),
                param!(port = None),
                param!(start = Float(0.0)),
            ],
            config: Some("pgm"),
            hosts: Hosts::SimAndNet,
            build: add_receiver,
        },
        Role {
            name: "add_lesbcc_unicast",
            doc: "A unicast LE-SBCC flow (the background flows of Fig. 5): a PGM receiver on `dst` and the \
source on `src`, added in that order, so the receiver of source `a` is `a - 1`. Returns the source's agent \
id. Keyword overrides go to the source's configuration (config_defaults(\"lesbcc\")) or the receiver's \
(config_defaults(\"pgm\")), by name. \
`flow`: the session's flow id (None: one past the number of agents); `port`: the receiver's port (None: the next \
free one); `start` seconds; `config`: the keyword overrides.",
            params: &[param!(src), param!(dst), param!(flow = None), param!(port = None), param!(start = Float(0.0))],
            config: Some("lesbcc"),
            hosts: Hosts::Sim,
            build: add_unicast,
        },
        Role {
            name: "attach_nak_aggregator",
            doc: "Attach PGM-style NAK aggregation (§3.3) to router `node`: the first NAK per (session, \
sequence number) goes on toward the source and opens a NAK elimination interval of `hold` seconds in which \
later NAKs for it are consumed, also those that crossed the repair (PGM's NAK_ELIM_IVL; kept shorter than \
the receivers' NAK_RDATA_IVL).",
            params: &[param!(node), param!(hold = Float(0.5))],
            config: None,
            hosts: Hosts::Sim,
            build: attach_aggregator,
        },
    ],
    readers: &[
        Reader::of_agent(
            "lesbcc_stats",
            "Counters and state of an LE-SBCC source: transport (odata_sent, rdata_sent, ncf_sent...), \
cascade (lis, les, lprf_passed, rate_reductions...), rate_bps, srtt, sigma, and `receivers` (the nodes in \
the order the cascade numbers them: names in the simulator, addresses on the network) with `lprf_counts`, \
the counts X_i of Max-LPRF (after decay). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            stats,
        ),
        Reader::of_agent(
            "lesbcc_trace",
            "Records of an LE-SBCC source (numpy arrays, times in ns): rate_time_ns/rate_bps (each \
change), rtt_time_ns/rtt_sample_s/srtt_s/sigma_s/rtt_used (each sample offered), \
li_time_ns/li_receiver/li_outcome (each LI; outcome 0 LI2LE, 1 Max-LPRF, 2 ATF, 3 reduction). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            trace,
        ),
        Reader::of_agent(
            "pgm_receiver_stats",
            "Counters of a PGM receiver, and whether it holds all data the source announced. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            receiver_stats,
        ),
        Reader {
            name: "nak_aggregator_stats",
            doc: "Counters of the NAK aggregator on `node`. \
NAKs forwarded and suppressed (also after a repair), repairs seen (LE-SBCC §3.3).",
            target: Target::Node,
            params: &[],
            hosts: Hosts::Sim,
            read: aggregator_stats,
        },
        Reader::of_agent(
            "lesbcc_net_status",
            "The status line of `castlab net lesbcc-source` ({sent} and {rejected} for the driver). \
`agent`: the source's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader::of_agent(
            "pgm_net_status",
            "The status line of `castlab net pgm-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            pgm_net_status,
        ),
        crate::flow_row!("pgm_flow_row", "a PGM receiver", row),
    ],
    sessions: &[SessionKind {
        kind: "lesbcc",
        keys: &[ScenarioKey::FLOW, ScenarioKey::CONFIG],
        groups: Groups::One,
        role: "add_lesbcc_source",
        needs_router: None,
    }],
    receivers: &[ReceiverKind {
        protocol: "pgm",
        sessions: &["lesbcc"],
        keys: &[ScenarioKey::CONFIG],
        role: "add_pgm_receiver",
        row: "pgm_flow_row",
        windows_in_config: false,
        inherits_session_config: false,
    }],
    routers: &[RouterKind {
        kind: "nak_aggregator",
        keys: &[ScenarioKey { name: "hold", kind: KeyKind::PositiveTime, default: Default_::Float(0.5) }],
        many: false,
        role: "attach_nak_aggregator",
        status: "nak_aggregator_stats",
    }],
    flows: &[],
    net_roles: &[
        NetRole {
            cli: "lesbcc-source",
            help: "LE-SBCC source over the PGM-like transport",
            role: "add_lesbcc_source",
            source: true,
            groups: NetGroups::One,
            flags: &[
                NetFlag {
                    name: "policy",
                    kind: FlagKind::Choice(&["aimd", "tfrc"]),
                    help: "rate control (§2 AIMD or §4 TFRC)",
                    config: true,
                },
                NetFlag::FLOW,
                NetFlag::WIRE,
            ],
            defaults: &[],
            status: "lesbcc_net_status",
            outputs: &[
                NetOutput::Prefixed {
                    reader: "lesbcc_trace",
                    name: "lesbcc",
                    tables: &[("rtt", &["rtt_time_ns", "rtt_sample_s", "srtt_s", "sigma_s", "rtt_used"])],
                },
                NetOutput::Rates,
                NetOutput::Json { reader: "lesbcc_stats", file: "lesbcc_stats.json" },
            ],
        },
        NetRole {
            cli: "pgm-receiver",
            help: "PGM receiver that NAKs its losses (LE-SBCC §5.1)",
            role: "add_pgm_receiver",
            source: false,
            groups: NetGroups::One,
            flags: &[NetFlag::FLOW, NetFlag::WIRE],
            defaults: &[],
            status: "pgm_net_status",
            outputs: &[NetOutput::Json { reader: "pgm_receiver_stats", file: "pgm_receiver_stats.json" }],
        },
    ],
    functions: &[
        Function {
            name: "lesbcc_synthetic",
            doc: "The LE-SBCC source cascade driven with synthetic LI streams (§3.1.4, Figs 11-12), without a \
network: `classes` of receivers given as (count, loss probability, RTT seconds); `packets` sent at the \
cascade's rate; each loss at each receiver is one LI after that receiver's RTT. `seed`: the random stream's \
seed; `config`: the keyword overrides of the source (config_defaults(\"lesbcc\")). Returns the cascade's \
counters, `duration_s`, `final_srtt_s`, `mean_rate_bps` and per receiver `les_per_receiver` and \
`passed_per_receiver`.",
            params: &[param!(classes), param!(packets = Int(6000)), param!(seed = Int(0))],
            config: Some("lesbcc"),
            call: synthetic,
        },
        Function {
            name: "tfrc_average_interval",
            doc: "The TFRC average loss interval ŝ_i of LE-SBCC §4.1: `intervals` newest first (s_1, s_2, \
...), `s0` the packets since the last LE, weights all 1 (`n` of them), discount `alpha`; `i`: the i of ŝ_i. \
None when there is no interval yet.",
            params: &[
                param!(intervals),
                param!(s0),
                param!(i = Int(1)),
                param!(n = Int(8)),
                param!(alpha = Float(0.95)),
            ],
            config: None,
            call: tfrc_average_interval,
        },
    ],
};
