//! What the scenario schema knows of a protocol: its session, receiver, flow and router
//! kinds, the keys each takes ([`ScenarioKey`], checked by [`KeyKind`]), the flow table's row
//! readers (`flow_row!`), and router kinds built by name (`castlab net router --extension`).

use castlab_core::config::Value;
use castlab_core::NodeId;

use super::{config_table, role, Args, BuildError, BuildResult, Default_, Host, Out, Raw, Role};

/// The reader of a receiver's row in the scenario's flow table (simulator only):
/// `flow_row!("x_flow_row", "an X receiver: what the row holds", read)`, with the arguments
/// every row reader takes (`agent`, `packet_size`, `windows`) and their documentation; a row
/// that does not need the packet size ends with `, packet_size = None`.
#[macro_export]
macro_rules! flow_row {
    ($name:literal, $what:literal, $read:expr) => {
        $crate::flow_row!(@ $name, $what, $read, $crate::param!(packet_size))
    };
    ($name:literal, $what:literal, $read:expr, packet_size = None) => {
        $crate::flow_row!(@ $name, $what, $read, $crate::param!(packet_size = None))
    };
    (@ $name:literal, $what:literal, $read:expr, $size:expr) => {
        $crate::registry::Reader {
            name: $name,
            doc: concat!(
                "The scenario flow table's row of ",
                $what,
                ". `agent`: the agent whose row it is. `packet_size`: the session's packet size in bytes; \
`windows`: the scenario's loss windows (seconds), for a row that computes its worst loss per window."
            ),
            target: $crate::registry::Target::Agent("agent"),
            params: &[$size, $crate::param!(windows = [])],
            hosts: $crate::registry::Hosts::Sim,
            read: $read,
        }
    };
}

/// A scenario key of a session or receiver: its name and default (None: optional, no default;
/// Required: must be given). The scenario reader checks types by the default's kind and the
/// `kind` below.
#[derive(Clone, Copy, Debug)]
pub struct ScenarioKey {
    pub name: &'static str,
    pub kind: KeyKind,
    pub default: Default_,
}

impl ScenarioKey {
    /// `config`: the protocol's config overrides.
    pub const CONFIG: ScenarioKey = ScenarioKey { name: "config", kind: KeyKind::Config, default: Default_::None };
    /// `stop`: when a session stops (None: the end of the run).
    pub const STOP: ScenarioKey = ScenarioKey { name: "stop", kind: KeyKind::Time, default: Default_::None };
    /// `flow`: the session's flow id (None: the next free one).
    pub const FLOW: ScenarioKey = ScenarioKey { name: "flow", kind: KeyKind::Flow, default: Default_::None };
}

/// How the scenario reader checks and converts a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A time ("5s" or seconds); `stop` may be None.
    Time,
    /// A positive time.
    PositiveTime,
    /// A rate ("1Mb/s" or bit/s).
    Rate,
    /// An integer within bounds.
    Int(i64, i64),
    Bool,
    /// The flow id: defaults to the session's index + 1.
    Flow,
    /// Layer rates: `rates = [...]` or `layers` with `base_rate` doubling per layer.
    Rates,
    /// Overrides of the role's config table.
    Config,
    /// A node of the scenario, by name.
    Node,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A UDP port in 1..=65535, by default this base plus the entry's index.
    PortFrom(i64),
    /// A subscription level in 0..=the session's layer count. An entry that also has a
    /// [`KeyKind::Schedule`] key takes exactly one of the two: a level is joined at the entry's
    /// start and kept.
    Level,
    /// Subscription levels over time: `[[time, level], ...]`, each level as [`KeyKind::Level`].
    Schedule,
}

/// How a session's groups are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Groups {
    /// One group per layer rate, the session's `groups`; then a control group kept apart
    /// (`control_group` of the roles that take it).
    PerRateAndControl,
    /// One per layer, `layers` of the config table.
    PerConfigLayer(&'static str),
    /// One group for every layer.
    One,
    /// None (the protocol answers requests by unicast).
    None_,
}

/// A session kind of the scenario schema: its source role and keys. The first session kind
/// registered ([`crate::PROTOCOLS`]' order) is the kind of a session that names none. The scenario calls the
/// role with `node` (the session's source), its groups under the role's own parameter name
/// (`groups` for a list, `group` for one), and each key by name (`rates` as `rates_bps`,
/// `rate` as `rate_bps`, `config` as the overrides).
pub struct SessionKind {
    pub kind: &'static str,
    pub keys: &'static [ScenarioKey],
    pub groups: Groups,
    pub role: &'static str,
    /// A router kind this session needs somewhere in the scenario (e.g. a forwarding service).
    pub needs_router: Option<&'static str>,
}

/// A receiver protocol of the scenario schema: the sessions it joins, its keys, its role and
/// the reader of its flow-table row. The scenario calls the role with `node`, `start`, the
/// session's groups (`groups`/`data_groups` a list, `group` the first), `control_group`,
/// `source` (the source's agent id) and `flow` where the role has such parameters, and each
/// key by name.
pub struct ReceiverKind {
    pub protocol: &'static str,
    /// Session kinds it joins; the first receiver listed for a kind is its default.
    pub sessions: &'static [&'static str],
    pub keys: &'static [ScenarioKey],
    pub role: &'static str,
    /// A reader taking (agent, packet_size, windows) that returns received, lost and bytes,
    /// and optionally level (else the last level the agent reported), planned_level (the level
    /// shown when the agent reported none), sent, end_s (when it finished), worst (per window)
    /// or bins (time_ns, received, lost) to compute it from.
    pub row: &'static str,
    /// The scenario's loss windows go into its config's `windows` (else into the role's
    /// `windows` argument, where it takes one).
    pub windows_in_config: bool,
    /// Its config starts from the session's config (sender and receivers must agree).
    pub inherits_session_config: bool,
}

/// A table of point-to-point flows of the scenario schema (`[[tcp]]`, `[[cbr]]`): each entry
/// runs from node `src` to node `dst`, and its name shares one namespace with the receivers
/// (they are the rows of the flow table). The scenario calls `role` with each key by name,
/// where the role has no parameter of that name `src` as `node`, `port` as `dst_port` and
/// `rate` as `rate_bps`, and `config` as the overrides. With a `sink`, that role is built
/// first on `dst` (as `node`, with the entry's keys it takes by name and the scenario's
/// `windows`), and the row is read from it; else from the agent `role` returns.
pub struct FlowKind {
    /// The table's name, and the `kind` of its rows.
    pub table: &'static str,
    pub keys: &'static [ScenarioKey],
    pub role: &'static str,
    pub sink: Option<&'static str>,
    /// A reader taking (agent, packet_size, windows) that returns what a receiver's row
    /// reader does ([`ReceiverKind::row`]).
    pub row: &'static str,
}

/// A router kind: what the scenario schema's `routers` and `castlab net router --extension`
/// build, through the same role, into the simulator or the user-space router.
pub struct RouterKind {
    pub kind: &'static str,
    pub keys: &'static [ScenarioKey],
    /// `nodes` (a list, None for all) instead of `node`.
    pub many: bool,
    pub role: &'static str,
    /// The reader (target: the node) giving the extension's status snapshot: its counters,
    /// what the user-space router writes beside its own.
    pub status: &'static str,
}

/// The router kind `kind` of any registered protocol.
pub fn router_kind(kind: &str) -> Option<&'static RouterKind> {
    crate::PROTOCOLS.iter().flat_map(|p| p.routers.iter()).find(|r| r.kind == kind)
}

/// Every registered router kind's name, in the table's order.
pub fn router_kinds() -> Vec<&'static str> {
    crate::PROTOCOLS.iter().flat_map(|p| p.routers.iter()).map(|r| r.kind).collect()
}

/// Build router kind `kind` on `node` of `host` from `options` as a command line gives them
/// (`castlab net router --extension KIND key=value...`): a key of the kind (`hold`) is the
/// role's argument, any other a field of its config table. The role is the scenario's, so
/// the simulator and the user-space router build the same extension from the same words.
/// Unknown kinds and keys are errors that list what is known.
pub fn build_router_kind(
    host: &mut dyn Host,
    kind: &str,
    node: NodeId,
    options: &[(String, Value)],
) -> BuildResult<Out<'static>> {
    let (role, args, config) = router_kind_args(kind, node, options)?;
    (role.build)(host, &Args::new(&args, &config))
}

/// Arguments and config overrides of a role.
pub type RoleCall = (&'static Role, Vec<(String, Value)>, Vec<(String, Value)>);

/// [`build_router_kind`]'s first half: the kind's role, its arguments and the config
/// overrides, every key checked by name (the values are checked when the role builds).
pub fn router_kind_args(kind: &str, node: NodeId, options: &[(String, Value)]) -> BuildResult<RoleCall> {
    let rk = router_kind(kind).ok_or_else(|| {
        BuildError::bad("extension", kind, &format!("unknown router kind; known: {}", router_kinds().join(", ")))
    })?;
    let role =
        role(rk.role).ok_or_else(|| BuildError::Host(format!("{kind}: its role {} is not registered", rk.role)))?;
    let table = role.config.and_then(config_table);
    let keys: Vec<&str> = rk.keys.iter().filter(|k| k.kind != KeyKind::Config).map(|k| k.name).collect();
    let mut vals: Vec<(String, Value)> = Vec::new();
    let mut config: Vec<(String, Value)> = Vec::new();
    for (k, v) in options {
        if vals.iter().chain(config.iter()).any(|(x, _)| x == k) {
            return Err(BuildError::bad(k, Raw(v), "given twice"));
        }
        if keys.contains(&k.as_str()) && role.params.iter().any(|p| p.name == k) {
            vals.push((k.clone(), v.clone()));
        } else if table.is_some_and(|t| t.fields.contains(&k.as_str())) {
            config.push((k.clone(), v.clone()));
        } else {
            let mut known: Vec<&str> = keys.clone();
            known.extend(table.map_or(&[][..], |t| t.fields).iter().copied());
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            return Err(BuildError::bad(k, Raw(v), &format!("not a key of router kind {kind}; known: {known}")));
        }
    }
    let mut args = Vec::with_capacity(role.params.len());
    for p in role.params {
        let v = match p.name {
            "node" => Value::Int(node.0.into()),
            "nodes" if rk.many => Value::List(vec![Value::Int(node.0.into())]),
            name => match vals.iter().position(|(k, _)| k == name) {
                Some(i) => vals.swap_remove(i).1,
                None => match p.default.value() {
                    Some(d) => d,
                    None => return Err(BuildError::bad(name, "nothing", &format!("router kind {kind} needs it"))),
                },
            },
        };
        args.push((p.name.to_string(), v));
    }
    Ok((role, args, config))
}
