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
//! - what a scenario needs to know ([`SessionKind`], [`ReceiverKind`], [`FlowKind`],
//!   [`RouterKind`]): which roles a session of this kind builds and which receivers it takes,
//!   the flow tables and router kinds, with their scenario keys;
//! - its `castlab net` roles ([`NetRole`]) and functions ([`Function`]).
//!
//! By concern: [`args`] (parameters, their defaults and the checked [`Args`] a factory
//! reads), [`outputs`] (the [`Out`] tree readers answer), [`scenario`] (the scenario schema's
//! session, receiver, flow and router kinds and their keys) and [`net`] (the `castlab net`
//! roles and their flags); this module holds the [`Host`], the roles, readers and functions,
//! and the [`Protocol`] that lists them.
//!
//! The table itself is [`crate::PROTOCOLS`]; registering a protocol is one line there.

use castlab_core::config::{Config, ConfigError, Value};
use castlab_core::{Addr, Agent, AgentId, ChannelId, GroupId, Instant, NodeId, RouterExtension};
use core::any::Any;

pub mod args;
pub mod net;
pub mod outputs;
pub mod scenario;

pub use args::*;
pub use net::*;
pub use outputs::*;
pub use scenario::*;

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
