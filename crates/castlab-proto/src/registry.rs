//! The protocol registry: each protocol describes itself once, beside its code, and every
//! driver (the simulator bindings, the real-network bindings, the scenario builder, the
//! `castlab net` roles) dispatches through the table instead of naming it.
//!
//! A [`Protocol`] lists
//! - its configuration tables ([`ConfigTable`]: a name and the `Config` type's defaults, the
//!   one place the paper's values are written);
//! - its roles ([`Role`]): an agent or router extension and the factory that builds it from
//!   arguments and config overrides, as quinn's `ControllerFactory` builds a controller. A
//!   factory validates everything before it adds anything, through the [`Host`] it is given
//!   (the simulator or the real-network driver), so a bad call leaves the host untouched;
//! - its readers ([`Reader`]): records (through `records_table!`) and status snapshots as an
//!   [`Out`] tree that the bindings turn into Python objects in one generic function;
//! - what a scenario needs to know ([`SessionKind`], [`ReceiverKind`]): which roles a session
//!   of this kind builds and which receivers it takes, with their scenario keys.
//!
//! The table itself is [`crate::PROTOCOLS`]; registering a protocol is one line there.

use core::any::Any;

use castlab_core::config::{Config, ConfigError, Value};
use castlab_core::records::{Column, Scalar, Table};
use castlab_core::{Addr, Agent, AgentId, ChannelId, GroupId, Instant, NodeId, RouterExtension};

/// Why a role could not be built or a reader could not answer. The message starts with the
/// field, as every error at the Python boundary does.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The host's own error (an unknown node, a port in use), already worded for the user.
    #[error("{0}")]
    Host(String),
}

impl BuildError {
    /// `field: reason (got value)`, the form of every argument error.
    pub fn bad(field: &str, value: impl core::fmt::Display, reason: &str) -> Self {
        BuildError::Config(ConfigError::new(field, value, reason))
    }
}

pub type BuildResult<T> = Result<T, BuildError>;

/// What a factory may ask of the simulator or the real-network driver it builds into.
/// Nodes, groups, channels and agents arrive as the caller wrote them ([`Value`]s: a node is a
/// name in the simulator and an id on the real network) and are resolved here.
pub trait Host {
    fn node(&self, field: &'static str, v: &Value) -> BuildResult<NodeId>;
    /// How records name a node (its name in the simulator, its address on the network).
    fn node_label(&self, n: NodeId) -> String;
    fn node_count(&self) -> usize;
    fn group(&self, field: &'static str, v: &Value) -> BuildResult<GroupId>;
    fn group_source(&self, g: GroupId) -> Option<NodeId>;
    fn channel(&self, field: &'static str, v: &Value) -> BuildResult<ChannelId>;
    /// The node a channel leaves from.
    fn channel_from(&self, ch: ChannelId) -> Option<NodeId>;
    /// An agent already added, as `Any` to downcast.
    fn agent(&self, field: &'static str, v: &Value) -> BuildResult<(AgentId, &dyn Any)>;
    fn agent_addr(&self, a: AgentId) -> Option<Addr>;
    fn agent_count(&self) -> usize;
    /// The router extension on `node`, if any.
    fn extension(&self, node: NodeId) -> Option<&dyn Any>;
    /// A start time in seconds, checked against the host's clock.
    fn start(&self, field: &'static str, t: f64) -> BuildResult<Instant>;
    /// A later time in seconds (a stop time), checked as [`Host::start`].
    fn time(&self, field: &'static str, t: f64) -> BuildResult<Instant>;
    fn now(&self) -> Instant;
    /// Whether the host runs on the wall clock (the real network), where a source must stay
    /// within what a real-time loop can send.
    fn wall_clock(&self) -> bool {
        false
    }
    /// Add an agent that may move to another thread (every host takes these).
    fn add_agent(
        &mut self,
        node: NodeId,
        port: Option<u16>,
        start: Instant,
        agent: Box<dyn Agent + Send>,
    ) -> BuildResult<AgentId>;
    /// Add an agent that shares state with others on its thread (the simulator only).
    fn add_local_agent(
        &mut self,
        node: NodeId,
        port: Option<u16>,
        start: Instant,
        agent: Box<dyn Agent>,
    ) -> BuildResult<AgentId> {
        let _ = (node, port, start, agent);
        Err(BuildError::Host("this role shares state between agents and runs in the simulator only".into()))
    }
    /// Attach a router extension to `node`: the simulator's node, or the user-space router
    /// (castlab-net's `Router`, which may run on its own thread: hence `Send`). A host that
    /// forwards nothing (the real network's agent driver) refuses.
    fn attach(&mut self, node: NodeId, ext: Box<dyn RouterExtension + Send>) -> BuildResult<()> {
        let _ = (node, ext);
        Err(BuildError::Host(
            "router extensions run in the simulator or the user-space router (castlab net router --extension)".into(),
        ))
    }
}

/// A default of a role's or a reader's argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Default_ {
    /// The caller must give it.
    Required,
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'static str),
    EmptyList,
}

impl Default_ {
    pub fn value(&self) -> Option<Value> {
        Some(match *self {
            Default_::Required => return None,
            Default_::None => Value::None,
            Default_::Bool(b) => Value::Bool(b),
            Default_::Int(i) => Value::Int(i),
            Default_::Float(x) => Value::Float(x),
            Default_::Str(s) => Value::Str(s.into()),
            Default_::EmptyList => Value::List(Vec::new()),
        })
    }
}

/// One argument, in the caller's order.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub default: Default_,
}

/// `param!(name)` (required) or `param!(name = default)`.
#[macro_export]
macro_rules! param {
    ($n:ident) => {
        $crate::registry::Param { name: stringify!($n), default: $crate::registry::Default_::Required }
    };
    ($n:ident = None) => {
        $crate::registry::Param { name: stringify!($n), default: $crate::registry::Default_::None }
    };
    ($n:ident = [] ) => {
        $crate::registry::Param { name: stringify!($n), default: $crate::registry::Default_::EmptyList }
    };
    ($n:ident = $kind:ident($v:expr)) => {
        $crate::registry::Param { name: stringify!($n), default: $crate::registry::Default_::$kind($v) }
    };
}

/// The range checks of integer arguments, the one place their messages are written: every
/// user-facing integer arrives as `i64` (Python's `int`), and a value out of range is an
/// error naming the field rather than a wrapped or truncated number. [`Args`] and the
/// bindings' own arguments (the engine's, outside any registration) both check through here.
pub mod check {
    use super::{BuildError, BuildResult};

    /// A non-negative 64-bit integer.
    pub fn u64(field: &str, v: i64) -> BuildResult<u64> {
        u64::try_from(v).map_err(|_| BuildError::bad(field, v, "must be >= 0"))
    }

    /// An unsigned 32-bit integer (a flow id, a size in bytes).
    pub fn u32(field: &str, v: i64) -> BuildResult<u32> {
        u32::try_from(v).map_err(|_| BuildError::bad(field, v, "must be in 0..2^32"))
    }

    /// A 32-bit integer of at least 1.
    pub fn positive_u32(field: &str, v: i64) -> BuildResult<u32> {
        match u32::try_from(v) {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(BuildError::bad(field, v, "must be a positive 32-bit integer")),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn bounds_and_messages() {
            assert_eq!(u64("seed", 0).ok(), Some(0));
            assert_eq!(u64("seed", i64::MAX).ok(), Some(i64::MAX as u64));
            assert_eq!(
                u64("seed", -1).map_err(|e| e.to_string()).err().as_deref(),
                Some("seed: must be >= 0 (got -1)")
            );
            assert_eq!(u32("flow", 4_294_967_295).ok(), Some(u32::MAX));
            assert_eq!(
                u32("flow", 4_294_967_296).map_err(|e| e.to_string()).err().as_deref(),
                Some("flow: must be in 0..2^32 (got 4294967296)")
            );
            assert_eq!(
                u32("flow", -1).map_err(|e| e.to_string()).err().as_deref(),
                Some("flow: must be in 0..2^32 (got -1)")
            );
            assert_eq!(positive_u32("n", 1).ok(), Some(1));
            assert_eq!(positive_u32("n", 4_294_967_295).ok(), Some(u32::MAX));
            for bad in [0, -3, 4_294_967_296] {
                assert_eq!(
                    positive_u32("n", bad).map_err(|e| e.to_string()).err(),
                    Some(format!("n: must be a positive 32-bit integer (got {bad})"))
                );
            }
        }
    }
}

/// The arguments of one call, every parameter present (the bindings fill the defaults).
pub struct Args<'a> {
    vals: &'a [(String, Value)],
    config: &'a [(String, Value)],
}

const NONE: Value = Value::None;

impl<'a> Args<'a> {
    pub fn new(vals: &'a [(String, Value)], config: &'a [(String, Value)]) -> Self {
        Args { vals, config }
    }
    /// The argument `name` (None when the role has no such parameter).
    pub fn get(&self, name: &str) -> &'a Value {
        self.vals.iter().find(|(k, _)| k == name).map_or(&NONE, |(_, v)| v)
    }
    pub fn is_none(&self, name: &str) -> bool {
        matches!(self.get(name), Value::None)
    }
    pub fn int(&self, name: &str) -> BuildResult<i64> {
        match self.get(name) {
            Value::Int(i) => Ok(*i),
            v => Err(BuildError::bad(name, v, "must be an integer")),
        }
    }
    pub fn opt_int(&self, name: &str) -> BuildResult<Option<i64>> {
        if self.is_none(name) {
            Ok(None)
        } else {
            self.int(name).map(Some)
        }
    }
    pub fn f64(&self, name: &str) -> BuildResult<f64> {
        match self.get(name) {
            Value::Float(x) => Ok(*x),
            Value::Int(i) => Ok(*i as f64),
            v => Err(BuildError::bad(name, v, "must be a number")),
        }
    }
    pub fn opt_f64(&self, name: &str) -> BuildResult<Option<f64>> {
        if self.is_none(name) {
            Ok(None)
        } else {
            self.f64(name).map(Some)
        }
    }
    pub fn bool(&self, name: &str) -> BuildResult<bool> {
        match self.get(name) {
            Value::Bool(b) => Ok(*b),
            v => Err(BuildError::bad(name, v, "must be true or false")),
        }
    }
    pub fn str(&self, name: &str) -> BuildResult<&'a str> {
        match self.get(name) {
            Value::Str(s) => Ok(s),
            v => Err(BuildError::bad(name, v, "must be a string")),
        }
    }
    pub fn list(&self, name: &str) -> BuildResult<&'a [Value]> {
        match self.get(name) {
            Value::List(v) => Ok(v),
            v => Err(BuildError::bad(name, v, "must be a list")),
        }
    }
    pub fn f64s(&self, name: &str) -> BuildResult<Vec<f64>> {
        self.list(name)?
            .iter()
            .map(|v| match v {
                Value::Float(x) => Ok(*x),
                Value::Int(i) => Ok(*i as f64),
                v => Err(BuildError::bad(name, v, "must be numbers")),
            })
            .collect()
    }
    pub fn bytes(&self, name: &str) -> BuildResult<Option<&'a [u8]>> {
        match self.get(name) {
            Value::None => Ok(None),
            Value::Bytes(b) => Ok(Some(b)),
            v => Err(BuildError::bad(name, v, "must be bytes or None")),
        }
    }
    /// A non-negative integer argument (a count, a seed), or an error naming it.
    pub fn u64(&self, name: &str) -> BuildResult<u64> {
        check::u64(name, self.int(name)?)
    }
    /// An unsigned 32-bit argument (a flow id, a size), or an error naming it.
    pub fn u32(&self, name: &str) -> BuildResult<u32> {
        check::u32(name, self.int(name)?)
    }
    pub fn positive_u32(&self, name: &str) -> BuildResult<u32> {
        check::positive_u32(name, self.int(name)?)
    }
    /// A UDP port (a required integer in 0..=65535), or an error naming it.
    pub fn u16(&self, name: &str) -> BuildResult<u16> {
        let v = self.int(name)?;
        u16::try_from(v).map_err(|_| BuildError::bad(name, v, "must be in 0..=65535"))
    }
    /// A duration in seconds (finite, >= 0).
    pub fn duration(&self, name: &str) -> BuildResult<castlab_core::Duration> {
        use castlab_core::ConfigValue;
        Ok(castlab_core::Duration::from_value(name, &Value::Float(self.f64(name)?))?)
    }
    pub fn positive_duration(&self, name: &str) -> BuildResult<castlab_core::Duration> {
        let d = self.duration(name)?;
        if d.is_zero() {
            return Err(BuildError::bad(name, self.f64(name)?, "must be positive"));
        }
        Ok(d)
    }
    /// An optional UDP port of the agent.
    pub fn port(&self, name: &str) -> BuildResult<Option<u16>> {
        self.opt_int(name)?
            .map(|p| u16::try_from(p).map_err(|_| BuildError::bad(name, p, "must be in 0..=65535")))
            .transpose()
    }
    /// The role's configuration: `C::default()` (the paper's values) with the overrides.
    pub fn config<C: Config>(&self) -> BuildResult<C> {
        self.config_over(C::default())
    }
    /// `base` with the overrides applied, checked.
    pub fn config_over<C: Config>(&self, mut base: C) -> BuildResult<C> {
        for (k, v) in self.config {
            base.set(k, v)?;
        }
        base.check()?;
        Ok(base)
    }
    /// The overrides, split: those that are fields of `C` and the rest.
    pub fn split_config<C: Config>(&self) -> (Vec<(String, Value)>, Vec<(String, Value)>) {
        self.config.iter().cloned().partition(|(k, _)| C::FIELDS.contains(&k.as_str()))
    }
    pub fn overrides(&self) -> &'a [(String, Value)] {
        self.config
    }
    /// The node argument `name`, resolved by the host.
    pub fn node(&self, host: &dyn Host, name: &'static str) -> BuildResult<NodeId> {
        host.node(name, self.get(name))
    }
    pub fn group(&self, host: &dyn Host, name: &'static str) -> BuildResult<GroupId> {
        host.group(name, self.get(name))
    }
    pub fn opt_group(&self, host: &dyn Host, name: &'static str) -> BuildResult<Option<GroupId>> {
        if self.is_none(name) {
            Ok(None)
        } else {
            self.group(host, name).map(Some)
        }
    }
    /// A list of groups, one per layer: at least one, at most 255, no duplicate.
    pub fn layer_groups(&self, host: &dyn Host, name: &'static str) -> BuildResult<Vec<GroupId>> {
        let items = self.list(name)?;
        if items.is_empty() {
            return Err(BuildError::bad(name, "[]", "needs at least one layer"));
        }
        if items.len() > 255 {
            return Err(BuildError::bad(name, items.len(), "at most 255 layers"));
        }
        let mut out: Vec<GroupId> = Vec::with_capacity(items.len());
        for v in items {
            let g = host.group(name, v)?;
            if out.contains(&g) {
                return Err(BuildError::bad(name, g.0, "each layer needs its own group (duplicate)"));
            }
            out.push(g);
        }
        Ok(out)
    }
    /// The start time (the host's clock checks it).
    pub fn start(&self, host: &dyn Host, name: &'static str) -> BuildResult<Instant> {
        host.start(name, self.f64(name)?)
    }
    /// An optional stop time, not before `start`; None is for ever.
    pub fn stop(&self, host: &dyn Host, name: &'static str, start: Instant) -> BuildResult<Instant> {
        match self.opt_f64(name)? {
            None => Ok(Instant::MAX),
            Some(x) => {
                let e = host.time(name, x)?;
                if e < start {
                    return Err(BuildError::bad(name, x, "must not be before start"));
                }
                Ok(e)
            }
        }
    }
    /// A flow id, or by default one past the number of agents (unique in a scenario).
    pub fn flow_or_next(&self, host: &dyn Host, name: &str) -> BuildResult<u32> {
        match self.opt_int(name)? {
            Some(_) => self.u32(name),
            None => Ok(host.agent_count() as u32 + 1),
        }
    }
}

/// A value as the caller wrote it (a string without quotes), for messages.
pub struct Raw<'a>(pub &'a Value);

impl core::fmt::Display for Raw<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Value::Str(s) => f.write_str(s),
            v => v.fmt(f),
        }
    }
}

/// Downcast an agent argument to `T`, or `field: what (got value)`.
pub fn agent_as<'h, T: 'static>(
    host: &'h dyn Host,
    field: &'static str,
    v: &Value,
    what: &str,
) -> BuildResult<(AgentId, &'h T)> {
    let (id, a) = host.agent(field, v)?;
    a.downcast_ref::<T>().map(|t| (id, t)).ok_or_else(|| BuildError::bad(field, Raw(v), what))
}

/// The extension of type `T` on the node argument, or `field: what (got value)`.
pub fn extension_as<'h, T: 'static>(
    host: &'h dyn Host,
    field: &'static str,
    v: &Value,
    what: &str,
) -> BuildResult<&'h T> {
    let n = host.node(field, v)?;
    host.extension(n).and_then(|e| e.downcast_ref::<T>()).ok_or_else(|| BuildError::bad(field, Raw(v), what))
}

/// A key of an [`Out::Dict`].
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    Str(&'static str),
    Int(u64),
    /// A number (a window in seconds).
    F64(f64),
}

impl From<&'static str> for Key {
    fn from(s: &'static str) -> Self {
        Key::Str(s)
    }
}

/// A reader's answer, as the bindings hand it to Python: numbers, strings, numpy arrays
/// (`Col`, `Grid`), plain lists, tuples and dicts in the order written.
#[derive(Clone, Debug, PartialEq)]
pub enum Out<'a> {
    None,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    /// A numpy array, copied from the records.
    Col(Column<'a>),
    /// A numpy array [rows, cols] of a flat row-major table.
    Grid(&'a [u32], usize),
    /// A numpy array the answer owns (a [`Function`]'s result, which borrows nothing).
    U64s(Vec<u64>),
    Bytes(&'a [u8]),
    List(Vec<Out<'a>>),
    Tuple(Vec<Out<'a>>),
    Dict(Vec<(Key, Out<'a>)>),
}

impl<'a> Out<'a> {
    /// An empty dict, to fill with [`Out::set`].
    pub fn dict() -> Self {
        Out::Dict(Vec::new())
    }
    /// Add (or, for a dict, append) `key: value`.
    pub fn set(&mut self, key: impl Into<Key>, value: impl Into<Out<'a>>) {
        if let Out::Dict(v) = self {
            v.push((key.into(), value.into()));
        }
    }
    /// A dict of named counters.
    pub fn counters(pairs: &[(&'static str, u64)]) -> Self {
        Out::Dict(pairs.iter().map(|(k, v)| (Key::Str(k), Out::U64(*v))).collect())
    }
    /// A records table: its columns as numpy arrays, then its scalars.
    pub fn table(t: &'a impl Table) -> Self {
        let mut d = Out::dict();
        d.fill(t);
        d
    }
    /// Append a table's columns and scalars.
    pub fn fill(&mut self, t: &'a impl Table) {
        for (k, c) in t.columns() {
            self.set(k, Out::Col(c));
        }
        for (k, s) in t.scalars() {
            self.set(k, s);
        }
    }
    /// A configuration as a dict of field -> value (durations in seconds).
    pub fn config(c: &impl Config) -> Self {
        Out::Dict(c.values().into_iter().map(|(k, v)| (Key::Str(k), Out::value(v))).collect())
    }
    /// A config value.
    pub fn value(v: Value) -> Self {
        match v {
            Value::None => Out::None,
            Value::Bool(b) => Out::Bool(b),
            Value::Int(i) => Out::I64(i),
            Value::Float(x) => Out::F64(x),
            Value::Str(s) => Out::Str(s),
            Value::List(items) => Out::List(items.into_iter().map(Out::value).collect()),
            Value::Bytes(b) => Out::List(b.into_iter().map(Out::from).collect()),
        }
    }
    /// A list of names (a code's names, indexed by code).
    pub fn names(names: &[&str]) -> Self {
        Out::List(names.iter().map(|s| Out::Str((*s).to_string())).collect())
    }
}

macro_rules! out_from {
    ($($t:ty => |$x:ident| $e:expr),* $(,)?) => {$(
        impl<'a> From<$t> for Out<'a> {
            fn from($x: $t) -> Self {
                $e
            }
        }
    )*};
}
out_from!(
    bool => |x| Out::Bool(x),
    u8 => |x| Out::U64(x.into()),
    u16 => |x| Out::U64(x.into()),
    u32 => |x| Out::U64(x.into()),
    u64 => |x| Out::U64(x),
    usize => |x| Out::U64(x as u64),
    i64 => |x| Out::I64(x),
    f64 => |x| Out::F64(x),
    String => |x| Out::Str(x),
    &str => |x| Out::Str(x.to_string()),
    Vec<u32> => |x| Out::List(x.into_iter().map(Out::from).collect()),
    Vec<u64> => |x| Out::List(x.into_iter().map(Out::from).collect()),
    Vec<f64> => |x| Out::List(x.into_iter().map(Out::from).collect()),
    Vec<String> => |x| Out::List(x.into_iter().map(Out::from).collect()),
    Scalar => |s| match s {
        Scalar::U64(x) => Out::U64(x),
        Scalar::F64(x) => Out::F64(x),
        Scalar::Bool(x) => Out::Bool(x),
        Scalar::OptF64(x) => x.map_or(Out::None, Out::F64),
    },
);

impl<'a, T: Into<Out<'a>>> From<Option<T>> for Out<'a> {
    fn from(x: Option<T>) -> Self {
        x.map_or(Out::None, Into::into)
    }
}

impl<'a> From<Column<'a>> for Out<'a> {
    fn from(c: Column<'a>) -> Self {
        Out::Col(c)
    }
}

/// A factory: builds the role's agents or extensions into the host and returns what the
/// caller gets back (an agent id, a count, None).
pub type Build = fn(&mut dyn Host, &Args<'_>) -> BuildResult<Out<'static>>;

/// A reader: a record or status of the target (an agent id or a node).
pub type Read = for<'h> fn(&'h dyn Host, &Value, &Args<'_>) -> BuildResult<Out<'h>>;

/// Where a role runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hosts {
    /// The simulator only.
    Sim,
    /// The simulator and the real-network driver.
    SimAndNet,
    /// The real-network driver only: the role needs what only real packets carry (application
    /// bytes, [`castlab_core::Agent::handle_payload`]).
    Net,
}

/// One way to add a protocol's agents or extensions. `name` is the method the drivers show
/// (`add_..._receiver`); `params` are the simulator's, in order (the node first); on the real
/// network `agent_id, node, port` replace `node`, and `start` and `port` are dropped.
pub struct Role {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    /// The config table whose fields `**config` overrides (None: the role takes none).
    pub config: Option<&'static str>,
    pub hosts: Hosts,
    pub build: Build,
}

/// What a reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// An agent id (argument `agent`, or `source` where the doc says so).
    Agent(&'static str),
    /// A node (argument `node`): its router extension.
    Node,
}

/// One record or status reader. `name` is the method the drivers show.
pub struct Reader {
    pub name: &'static str,
    pub doc: &'static str,
    pub target: Target,
    /// Arguments after the target.
    pub params: &'static [Param],
    pub hosts: Hosts,
    pub read: Read,
}

/// A function's body: computes its answer from its arguments alone.
pub type Call = fn(&Args<'_>) -> BuildResult<Out<'static>>;

/// A function of the protocol that needs no simulator or network (an offline model, a
/// formula of the paper): the bindings show it as a module function `castlab._native.<name>`
/// with these parameters (and `**config` when `config` names a table).
pub struct Function {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    /// The config table whose fields `**config` overrides (None: the function takes none).
    pub config: Option<&'static str>,
    pub call: Call,
}

impl Reader {
    /// A reader of one agent (argument `agent`) that takes no other argument.
    pub const fn of_agent(name: &'static str, doc: &'static str, hosts: Hosts, read: Read) -> Reader {
        Reader { name, doc, target: Target::Agent("agent"), params: &[], hosts, read }
    }
}

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
                ". `agent`: the receiver's agent id. `packet_size`: the session's packet size in bytes; \
`windows`: the scenario's loss windows (seconds); the windows are not used."
            ),
            target: $crate::registry::Target::Agent("agent"),
            params: &[$size, $crate::param!(windows = [])],
            hosts: $crate::registry::Hosts::Sim,
            read: $read,
        }
    };
}

/// A named configuration table: `config_defaults(name)` shows it.
pub struct ConfigTable {
    pub name: &'static str,
    pub fields: &'static [&'static str],
    pub defaults: fn() -> Vec<(&'static str, Value)>,
}

impl ConfigTable {
    pub const fn of<C: Config>(name: &'static str) -> Self {
        ConfigTable { name, fields: C::FIELDS, defaults: defaults_of::<C> }
    }
}

fn defaults_of<C: Config>() -> Vec<(&'static str, Value)> {
    C::default().values()
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

/// How a `castlab net` role lays out its groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetGroups {
    /// Groups 0..layers-1 (`--layers`), and with `control` an any-source group `layers`.
    Layers { control: bool },
    /// Group 0.
    One,
    /// `layers` of the config table (the role's `--config layers=N` or its default).
    ConfigLayers(&'static str),
}

/// A flag of a `castlab net` role beyond the session's.
#[derive(Clone, Copy, Debug)]
pub struct NetFlag {
    pub name: &'static str,
    /// The integer default, or the choices (the first is the default).
    pub kind: FlagKind,
    pub help: &'static str,
    /// The value goes into the config overrides (else it is the role's argument).
    pub config: bool,
}

impl NetFlag {
    /// `--flow`: the session's data flow id (1 by default).
    pub const FLOW: NetFlag =
        NetFlag { name: "flow", kind: FlagKind::Int(1), help: "the session's data flow id", config: false };
}

#[derive(Clone, Copy, Debug)]
pub enum FlagKind {
    Int(i64),
    Choice(&'static [&'static str]),
    /// A comma-separated list of numbers (`--rates_bps 100e3,200e3`), this by default.
    Floats(&'static [f64]),
}

/// What a `castlab net` role writes into `--out` after its run.
#[derive(Clone, Copy, Debug)]
pub enum NetOutput {
    /// The driver's level timeline, as `levels`.
    Levels,
    /// The driver's rate timeline, as `rates`.
    Rates,
    /// A reader's answer as JSON in `file`.
    Json { reader: &'static str, file: &'static str },
    /// A reader's records split into tables `<name>_<table>` (by column prefix, or as listed)
    /// and its scalars in `<name>_counts.json`.
    Prefixed { reader: &'static str, name: &'static str, tables: &'static [(&'static str, &'static [&'static str])] },
    /// Columns of a reader's answer as the table `file` (`time_ns` first, named by the part
    /// after the first `_`... as written here), the rest as JSON in `rest`.
    Columns {
        reader: &'static str,
        file: &'static str,
        columns: &'static [(&'static str, &'static str)],
        rest: &'static str,
    },
}

/// A role of `castlab net`: one process hosting one registered role on the real network.
pub struct NetRole {
    /// The command (`castlab net <cli>`).
    pub cli: &'static str,
    pub help: &'static str,
    pub role: &'static str,
    /// It runs on the source host (node 0).
    pub source: bool,
    pub groups: NetGroups,
    pub flags: &'static [NetFlag],
    /// Config overrides the role applies unless the command line sets them.
    pub defaults: &'static [(&'static str, Default_)],
    /// A reader giving the status line, with `{rx}`, `{sent}` (bit/s measured by the driver)
    /// and `{rejected}` left for the driver to fill.
    pub status: &'static str,
    pub outputs: &'static [NetOutput],
}

/// A loss rate as a percentage with two decimals, as the status lines print it ("nan%" when
/// nothing arrived or was lost: no rate, not a rate of 0).
pub fn percent(lost: u64, received: u64) -> String {
    if lost + received == 0 {
        return "nan%".into();
    }
    format!("{:.2}%", 100.0 * lost as f64 / (lost + received) as f64)
}

/// A protocol: its name and everything the drivers need, written once beside its code.
pub struct Protocol {
    pub name: &'static str,
    /// The paper, for listings.
    pub paper: &'static str,
    pub configs: &'static [ConfigTable],
    pub roles: &'static [Role],
    pub readers: &'static [Reader],
    pub sessions: &'static [SessionKind],
    pub receivers: &'static [ReceiverKind],
    pub routers: &'static [RouterKind],
    pub flows: &'static [FlowKind],
    pub net_roles: &'static [NetRole],
    pub functions: &'static [Function],
}

impl Protocol {
    /// Nothing registered: a protocol's static ends with `..Protocol::EMPTY` and lists only
    /// what it has.
    pub const EMPTY: Protocol = Protocol {
        name: "",
        paper: "",
        configs: &[],
        roles: &[],
        readers: &[],
        sessions: &[],
        receivers: &[],
        routers: &[],
        flows: &[],
        net_roles: &[],
        functions: &[],
    };
}

/// The config table `name` of any registered protocol.
pub fn config_table(name: &str) -> Option<&'static ConfigTable> {
    crate::PROTOCOLS.iter().flat_map(|p| p.configs.iter()).find(|c| c.name == name)
}

/// The role `name` of any registered protocol.
pub fn role(name: &str) -> Option<&'static Role> {
    crate::PROTOCOLS.iter().flat_map(|p| p.roles.iter()).find(|r| r.name == name)
}

/// The reader `name` of any registered protocol.
pub fn reader(name: &str) -> Option<&'static Reader> {
    crate::PROTOCOLS.iter().flat_map(|p| p.readers.iter()).find(|r| r.name == name)
}

/// The function `name` of any registered protocol.
pub fn function(name: &str) -> Option<&'static Function> {
    crate::PROTOCOLS.iter().flat_map(|p| p.functions.iter()).find(|f| f.name == name)
}

#[cfg(test)]
mod tests;
