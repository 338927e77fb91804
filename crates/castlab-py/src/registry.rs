//! The protocol registry's face in Python: one generic way to build any registered role on
//! the simulator or the real-network driver (`add_role`), read any registered record or
//! status (`read`), and describe the table (`protocols()`), from which `castlab.Simulator`
//! and `castlab.net` make their named methods. Nothing here names a protocol.

use std::any::Any;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use castlab_core::config::{ConfigValue, Value};
use castlab_core::records::Column;
use castlab_core::{Addr, Agent, AgentId, ChannelId, GroupId, Instant, NodeId, RouterExtension};
use castlab_proto::registry::{self, Args, BuildError, BuildResult, Default_, Host, Hosts, Key, Out, Raw, Target};

use crate::config::to_value;
use crate::error::{Error, Result};
use crate::net::NetDriver;
use crate::{numpy_ready, Simulator};

/// Keyword arguments as (name, value) pairs.
pub(crate) fn pairs(d: Option<&Bound<'_, PyDict>>) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    if let Some(d) = d {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let v = to_value(&k, &v)?;
            out.push((k, v));
        }
    }
    Ok(out)
}

/// The call's arguments in the order of `params`, each present: given, or its default.
pub(crate) fn complete(params: &[registry::Param], mut given: Vec<(String, Value)>) -> Result<Vec<(String, Value)>> {
    if let Some((k, _)) = given.iter().find(|(k, _)| !params.iter().any(|p| p.name == k)) {
        return Err(Error::Type(format!("unexpected argument {k:?}")));
    }
    let mut out = Vec::with_capacity(params.len());
    for p in params {
        let v = match given.iter().position(|(k, _)| k == p.name) {
            Some(i) => given.swap_remove(i).1,
            None => p.default.value().ok_or_else(|| Error::Type(format!("missing argument {:?}", p.name)))?,
        };
        out.push((p.name.to_string(), v));
    }
    Ok(out)
}

/// An [`Out`] as a Python object: numpy arrays for columns, lists, tuples and dicts in order.
pub(crate) fn to_py<'py>(py: Python<'py>, o: &Out<'_>) -> PyResult<Bound<'py, PyAny>> {
    if matches!(o, Out::Col(_) | Out::Grid(..) | Out::U64s(_)) {
        numpy_ready(py)?;
    }
    Ok(match o {
        Out::None => py.None().into_bound(py),
        Out::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Out::U64(x) => x.into_pyobject(py)?.into_any(),
        Out::I64(x) => x.into_pyobject(py)?.into_any(),
        Out::F64(x) => x.into_pyobject(py)?.into_any(),
        Out::Str(s) => s.into_pyobject(py)?.into_any(),
        Out::Col(c) => match *c {
            Column::U8(v) => PyArray1::from_slice(py, v).into_any(),
            Column::U16(v) => PyArray1::from_slice(py, v).into_any(),
            Column::U32(v) => PyArray1::from_slice(py, v).into_any(),
            Column::U64(v) => PyArray1::from_slice(py, v).into_any(),
            Column::I64(v) => PyArray1::from_slice(py, v).into_any(),
            Column::F64(v) => PyArray1::from_slice(py, v).into_any(),
            Column::Bool(v) => PyArray1::from_slice(py, v).into_any(),
        },
        Out::Grid(v, cols) => PyArray1::from_slice(py, v).reshape([v.len() / (*cols).max(1), *cols])?.into_any(),
        Out::U64s(v) => PyArray1::from_slice(py, v).into_any(),
        Out::Bytes(b) => PyBytes::new(py, b).into_any(),
        Out::List(items) => {
            PyList::new(py, items.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
        Out::Tuple(items) => {
            PyTuple::new(py, items.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
        Out::Dict(items) => {
            let d = PyDict::new(py);
            for (k, v) in items {
                match k {
                    Key::Str(s) => d.set_item(*s, to_py(py, v)?)?,
                    Key::Int(i) => d.set_item(*i, to_py(py, v)?)?,
                    Key::F64(x) => d.set_item(*x, to_py(py, v)?)?,
                }
            }
            d.into_any()
        }
    })
}

// ----------------------------------------------------------------------------- the simulator

/// The simulator as a registry [`Host`]: nodes by name, times checked against its clock.
struct SimHost<'a>(&'a mut castlab_sim::Simulator);

pub(crate) fn id_u32(field: &'static str, v: &Value, what: &str) -> BuildResult<u32> {
    match v {
        Value::Int(i) => u32::try_from(*i).map_err(|_| BuildError::bad(field, i, what)),
        v => Err(BuildError::bad(field, Raw(v), what)),
    }
}

impl Host for SimHost<'_> {
    fn node(&self, field: &'static str, v: &Value) -> BuildResult<NodeId> {
        match v {
            Value::Str(s) => self.0.node_named(field, s).map_err(|e| BuildError::Host(e.to_string())),
            v => Err(BuildError::bad(field, v, "must be a node name")),
        }
    }
    fn node_label(&self, n: NodeId) -> String {
        self.0.node_name(n).to_string()
    }
    fn node_count(&self) -> usize {
        self.0.node_count()
    }
    fn group(&self, field: &'static str, v: &Value) -> BuildResult<GroupId> {
        let g = GroupId(id_u32(field, v, "must be a group id >= 0")?);
        self.0.check_group(field, g).map_err(|e| BuildError::Host(e.to_string()))?;
        Ok(g)
    }
    fn group_source(&self, g: GroupId) -> Option<NodeId> {
        self.0.group_source(g)
    }
    fn channel(&self, field: &'static str, v: &Value) -> BuildResult<ChannelId> {
        let c = ChannelId(id_u32(field, v, "must be a channel id >= 0")?);
        self.0.check_channel(field, c).map_err(|e| BuildError::Host(e.to_string()))?;
        Ok(c)
    }
    fn channel_from(&self, ch: ChannelId) -> Option<NodeId> {
        self.0.channel_info(ch).map(|i| i.0)
    }
    fn agent(&self, field: &'static str, v: &Value) -> BuildResult<(AgentId, &dyn Any)> {
        match v {
            Value::Int(a) => match u32::try_from(*a) {
                Ok(id) if (id as usize) < self.0.agent_count() => {
                    Ok((AgentId(id), self.0.agent_any(AgentId(id)).expect("checked")))
                }
                _ => Err(BuildError::bad(field, a, "no such agent")),
            },
            v => Err(BuildError::bad(field, Raw(v), "no such agent")),
        }
    }
    fn agent_addr(&self, a: AgentId) -> Option<Addr> {
        self.0.agent_addr(a)
    }
    fn agent_count(&self) -> usize {
        self.0.agent_count()
    }
    fn extension(&self, node: NodeId) -> Option<&dyn Any> {
        self.0.extension_any(node)
    }
    fn start(&self, field: &'static str, t: f64) -> BuildResult<Instant> {
        self.0.check_start(field, t).map_err(|e| BuildError::Host(e.to_string()))
    }
    fn time(&self, field: &'static str, t: f64) -> BuildResult<Instant> {
        Ok(Instant::from_value(field, &Value::Float(t))?)
    }
    fn now(&self) -> Instant {
        self.0.now()
    }
    fn add_agent(
        &mut self,
        node: NodeId,
        port: Option<u16>,
        start: Instant,
        agent: Box<dyn Agent + Send>,
    ) -> BuildResult<AgentId> {
        self.0.add_agent(node, port, start, agent).map_err(|e| BuildError::Host(e.to_string()))
    }
    fn add_local_agent(
        &mut self,
        node: NodeId,
        port: Option<u16>,
        start: Instant,
        agent: Box<dyn Agent>,
    ) -> BuildResult<AgentId> {
        self.0.add_agent(node, port, start, agent).map_err(|e| BuildError::Host(e.to_string()))
    }
    fn attach(&mut self, node: NodeId, ext: Box<dyn RouterExtension + Send>) -> BuildResult<()> {
        self.0.attach_extension(node, ext).map_err(|e| BuildError::Host(e.to_string()))
    }
}

fn no_such(kind: &str, name: &str) -> Error {
    Error::Value(format!("{kind}: no registered {kind} named {name:?}"))
}

/// A role's config overrides, refused when the role has no config to override.
fn overrides(r: &registry::Role, config: Option<&Bound<'_, PyDict>>) -> Result<Vec<(String, Value)>> {
    let cfg = pairs(config)?;
    if r.config.is_none() && !cfg.is_empty() {
        return Err(Error::Type(format!("{}: takes no config overrides (got {:?})", r.name, cfg[0].0)));
    }
    Ok(cfg)
}

/// A reader's target as a [`Value`], checked for its kind.
fn target_value(t: &Bound<'_, PyAny>) -> Result<Value> {
    to_value("target", t)
}

#[pymethods]
impl Simulator {
    /// Build the registered role `role` (see `castlab._native.protocols()`) with its
    /// arguments `args` and config overrides `config`; returns what the role returns (an
    /// agent id, a count, None). `castlab.Simulator` names each role as a method.
    #[pyo3(signature = (role, args=None, config=None))]
    fn add_role<'py>(
        &mut self,
        py: Python<'py>,
        role: &str,
        args: Option<&Bound<'py, PyDict>>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> Result<Bound<'py, PyAny>> {
        let r = registry::role(role).ok_or_else(|| no_such("role", role))?;
        if r.hosts == Hosts::Net {
            return Err(Error::Value(format!("role: {role} runs on the real network only")));
        }
        let vals = complete(r.params, pairs(args)?)?;
        let cfg = overrides(r, config)?;
        let out = (r.build)(&mut SimHost(&mut self.inner), &Args::new(&vals, &cfg))?;
        Ok(to_py(py, &out)?)
    }

    /// Read the registered record or status `reader` of `target` (an agent id or a node
    /// name), with the reader's further arguments `args`.
    #[pyo3(signature = (reader, target, args=None))]
    fn read<'py>(
        &mut self,
        py: Python<'py>,
        reader: &str,
        target: &Bound<'py, PyAny>,
        args: Option<&Bound<'py, PyDict>>,
    ) -> Result<Bound<'py, PyAny>> {
        let r = registry::reader(reader).ok_or_else(|| no_such("reader", reader))?;
        let vals = complete(r.params, pairs(args)?)?;
        let t = target_value(target)?;
        let host = SimHost(&mut self.inner);
        let out = (r.read)(&host, &t, &Args::new(&vals, &[]))?;
        Ok(to_py(py, &out)?)
    }
}

// ----------------------------------------------------------------------------- the network

/// The real-network driver as a registry [`Host`]: nodes and groups by id, one agent per
/// call, on the id and port the caller gave.
pub(crate) struct NetHost<'a> {
    pub(crate) drv: &'a mut NetDriver,
    pub(crate) agent_id: i64,
    pub(crate) port: i64,
    pub(crate) added: Option<u32>,
}

impl Host for NetHost<'_> {
    fn node(&self, field: &'static str, v: &Value) -> BuildResult<NodeId> {
        Ok(NodeId(id_u32(field, v, "must be a node id >= 0")?))
    }
    fn node_label(&self, n: NodeId) -> String {
        self.drv.inner.table().node(n).map_or_else(|| format!("node {}", n.0), |ip| ip.to_string())
    }
    fn node_count(&self) -> usize {
        0
    }
    fn group(&self, field: &'static str, v: &Value) -> BuildResult<GroupId> {
        let g = GroupId(id_u32(field, v, "must be a group id >= 0")?);
        if self.drv.inner.table().group(g).is_none() {
            return Err(BuildError::bad(field, g.0, "is not a group of the session table"));
        }
        Ok(g)
    }
    fn group_source(&self, g: GroupId) -> Option<NodeId> {
        self.drv.inner.table().group(g).and_then(|e| e.source)
    }
    fn channel(&self, field: &'static str, v: &Value) -> BuildResult<ChannelId> {
        Err(BuildError::bad(field, Raw(v), "the real network has no simulated channels"))
    }
    fn channel_from(&self, _: ChannelId) -> Option<NodeId> {
        None
    }
    fn agent(&self, field: &'static str, v: &Value) -> BuildResult<(AgentId, &dyn Any)> {
        let a = match v {
            Value::Int(a) => *a,
            v => return Err(BuildError::bad(field, Raw(v), "no such agent in this driver")),
        };
        let i = self.drv.index(a).map_err(|_| BuildError::bad(field, a, "no such agent in this driver"))?;
        Ok((AgentId(a as u32), self.drv.inner.agent_any(i).expect("indexed")))
    }
    fn agent_addr(&self, _: AgentId) -> Option<Addr> {
        None
    }
    fn agent_count(&self) -> usize {
        self.drv.ids.len()
    }
    fn extension(&self, _: NodeId) -> Option<&dyn Any> {
        None
    }
    fn start(&self, _: &'static str, _: f64) -> BuildResult<Instant> {
        Ok(self.drv.inner.now())
    }
    fn time(&self, field: &'static str, t: f64) -> BuildResult<Instant> {
        Ok(Instant::from_value(field, &Value::Float(t))?)
    }
    fn now(&self) -> Instant {
        self.drv.inner.now()
    }
    fn wall_clock(&self) -> bool {
        true
    }
    fn add_agent(
        &mut self,
        node: NodeId,
        _port: Option<u16>,
        _start: Instant,
        agent: Box<dyn Agent + Send>,
    ) -> BuildResult<AgentId> {
        if self.added.is_some() {
            return Err(BuildError::Host("a real-network role adds one agent per call".into()));
        }
        let id = self
            .drv
            .add(self.agent_id, i64::from(node.0), self.port, agent)
            .map_err(|e| BuildError::Host(e.to_string()))?;
        self.added = Some(id);
        Ok(AgentId(id))
    }
}

/// The parameters a role takes on the real network: the simulator's without `node`,
/// `start` and `port` (the driver's own `agent_id, node, port` come first).
pub(crate) fn net_params(params: &[registry::Param]) -> Vec<registry::Param> {
    params.iter().filter(|p| !matches!(p.name, "node" | "start" | "port")).copied().collect()
}

#[pymethods]
impl NetDriver {
    /// Build the registered role `role` as agent `agent_id` on node `node`, UDP port base +
    /// `port` (see `castlab._native.protocols()`; `castlab.net` names each role as a method),
    /// with its further arguments `args` and config overrides `config`; returns what the role
    /// returns (an agent id).
    #[pyo3(signature = (role, agent_id, node, port, args=None, config=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_role<'py>(
        &mut self,
        py: Python<'py>,
        role: &str,
        agent_id: i64,
        node: i64,
        port: i64,
        args: Option<&Bound<'py, PyDict>>,
        config: Option<&Bound<'py, PyDict>>,
    ) -> Result<Bound<'py, PyAny>> {
        let r = registry::role(role).ok_or_else(|| no_such("role", role))?;
        if r.hosts == Hosts::Sim {
            return Err(Error::Value(format!("role: {role} runs in the simulator only")));
        }
        let mut vals = complete(&net_params(r.params), pairs(args)?)?;
        vals.push(("node".into(), Value::Int(node)));
        vals.push(("start".into(), Value::Float(0.0)));
        let cfg = overrides(r, config)?;
        let mut host = NetHost { drv: self, agent_id, port, added: None };
        let out = (r.build)(&mut host, &Args::new(&vals, &cfg))?;
        Ok(to_py(py, &out)?)
    }

    /// Read the registered record or status `reader` of agent `agent`, with the reader's
    /// further arguments `args`.
    #[pyo3(signature = (reader, agent, args=None))]
    fn read<'py>(
        &mut self,
        py: Python<'py>,
        reader: &str,
        agent: i64,
        args: Option<&Bound<'py, PyDict>>,
    ) -> Result<Bound<'py, PyAny>> {
        let r = registry::reader(reader).ok_or_else(|| no_such("reader", reader))?;
        if r.hosts == Hosts::Sim {
            return Err(Error::Value(format!("reader: {reader} reads the simulator only")));
        }
        let vals = complete(r.params, pairs(args)?)?;
        let host = NetHost { drv: self, agent_id: 0, port: 0, added: None };
        let out = (r.read)(&host, &Value::Int(agent), &Args::new(&vals, &[]))?;
        Ok(to_py(py, &out)?)
    }
}

// ----------------------------------------------------------------------------- the table

fn default_py<'py>(py: Python<'py>, d: &Default_) -> PyResult<Bound<'py, PyAny>> {
    match d.value() {
        None => Ok(py.None().into_bound(py)),
        Some(v) => Ok(crate::config::value_to_py(py, &v)?),
    }
}

fn params_py<'py>(py: Python<'py>, ps: &[registry::Param]) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for p in ps {
        let t = PyTuple::new(
            py,
            [
                p.name.into_pyobject(py)?.into_any(),
                default_py(py, &p.default)?,
                (p.default == Default_::Required).into_pyobject(py)?.to_owned().into_any(),
            ],
        )?;
        l.append(t)?;
    }
    Ok(l)
}

fn keys_py<'py>(py: Python<'py>, ks: &[registry::ScenarioKey]) -> PyResult<Bound<'py, PyList>> {
    use registry::KeyKind;
    let l = PyList::empty(py);
    for k in ks {
        let d = PyDict::new(py);
        d.set_item("name", k.name)?;
        let (kind, lo, hi) = match k.kind {
            KeyKind::Time => ("time", None, None),
            KeyKind::PositiveTime => ("positive_time", None, None),
            KeyKind::Rate => ("rate", None, None),
            KeyKind::Int(lo, hi) => ("int", Some(lo), Some(hi)),
            KeyKind::Bool => ("bool", None, None),
            KeyKind::Flow => ("flow", None, None),
            KeyKind::Rates => ("rates", None, None),
            KeyKind::Config => ("config", None, None),
            KeyKind::Node => ("node", None, None),
            KeyKind::Choice(_) => ("choice", None, None),
            KeyKind::PortFrom(_) => ("port_from", None, None),
            KeyKind::Level => ("level", None, None),
            KeyKind::Schedule => ("schedule", None, None),
        };
        d.set_item("kind", kind)?;
        d.set_item("lo", lo)?;
        d.set_item("hi", hi)?;
        if let KeyKind::Choice(words) = k.kind {
            d.set_item("choices", words.to_vec())?;
        }
        if let KeyKind::PortFrom(base) = k.kind {
            d.set_item("base", base)?;
        }
        d.set_item("default", default_py(py, &k.default)?)?;
        d.set_item("required", k.default == Default_::Required)?;
        l.append(d)?;
    }
    Ok(l)
}

/// Call the registered function `function` (see `castlab._native.protocols()`) with its
/// arguments `args` and config overrides `config`; `castlab.functions` names each one.
#[pyfunction]
#[pyo3(signature = (function, args=None, config=None))]
pub(crate) fn call_function<'py>(
    py: Python<'py>,
    function: &str,
    args: Option<&Bound<'py, PyDict>>,
    config: Option<&Bound<'py, PyDict>>,
) -> Result<Bound<'py, PyAny>> {
    let f = registry::function(function).ok_or_else(|| no_such("function", function))?;
    let vals = complete(f.params, pairs(args)?)?;
    let cfg = pairs(config)?;
    if f.config.is_none() && !cfg.is_empty() {
        return Err(Error::Type(format!("{}: takes no config overrides (got {:?})", f.name, cfg[0].0)));
    }
    let out = (f.call)(&Args::new(&vals, &cfg))?;
    Ok(to_py(py, &out)?)
}

/// The registry as plain data: per protocol its name, paper, config tables, roles (name,
/// doc, params as (name, default, required), config table, net), readers (name, doc, target,
/// params, net), the scenario's session, receiver, router and flow kinds, and its functions (name,
/// doc, params, config table).
#[pyfunction]
pub(crate) fn protocols(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for p in castlab_proto::PROTOCOLS {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("paper", p.paper)?;
        d.set_item("configs", p.configs.iter().map(|c| c.name).collect::<Vec<_>>())?;
        let roles = PyList::empty(py);
        for r in p.roles {
            let e = PyDict::new(py);
            e.set_item("name", r.name)?;
            e.set_item("doc", r.doc)?;
            e.set_item("params", params_py(py, r.params)?)?;
            e.set_item("net_params", params_py(py, &net_params(r.params))?)?;
            e.set_item("config", r.config)?;
            e.set_item("net", r.hosts != Hosts::Sim)?;
            e.set_item("sim", r.hosts != Hosts::Net)?;
            roles.append(e)?;
        }
        d.set_item("roles", roles)?;
        let readers = PyList::empty(py);
        for r in p.readers {
            let e = PyDict::new(py);
            e.set_item("name", r.name)?;
            e.set_item("doc", r.doc)?;
            e.set_item(
                "target",
                match r.target {
                    Target::Agent(name) => name,
                    Target::Node => "node",
                },
            )?;
            e.set_item("params", params_py(py, r.params)?)?;
            e.set_item("net", r.hosts != Hosts::Sim)?;
            e.set_item("sim", r.hosts != Hosts::Net)?;
            readers.append(e)?;
        }
        d.set_item("readers", readers)?;
        let sessions = PyList::empty(py);
        for s in p.sessions {
            let e = PyDict::new(py);
            e.set_item("kind", s.kind)?;
            e.set_item("keys", keys_py(py, s.keys)?)?;
            let (g, table) = match s.groups {
                registry::Groups::PerRateAndControl => ("per_rate_and_control", None),
                registry::Groups::PerConfigLayer(t) => ("per_config_layer", Some(t)),
                registry::Groups::One => ("one", None),
                registry::Groups::None_ => ("none", None),
            };
            e.set_item("groups", g)?;
            e.set_item("layers_from", table)?;
            e.set_item("role", s.role)?;
            e.set_item("config", registry::role(s.role).and_then(|r| r.config))?;
            e.set_item("needs_router", s.needs_router)?;
            sessions.append(e)?;
        }
        d.set_item("sessions", sessions)?;
        let receivers = PyList::empty(py);
        for r in p.receivers {
            let e = PyDict::new(py);
            e.set_item("protocol", r.protocol)?;
            e.set_item("sessions", r.sessions.to_vec())?;
            e.set_item("keys", keys_py(py, r.keys)?)?;
            e.set_item("role", r.role)?;
            e.set_item("config", registry::role(r.role).and_then(|x| x.config))?;
            e.set_item("row", r.row)?;
            e.set_item("windows_in_config", r.windows_in_config)?;
            e.set_item("inherits_session_config", r.inherits_session_config)?;
            receivers.append(e)?;
        }
        d.set_item("receivers", receivers)?;
        let routers = PyList::empty(py);
        for r in p.routers {
            let e = PyDict::new(py);
            e.set_item("kind", r.kind)?;
            e.set_item("keys", keys_py(py, r.keys)?)?;
            e.set_item("many", r.many)?;
            e.set_item("role", r.role)?;
            e.set_item("status", r.status)?;
            e.set_item("config", registry::role(r.role).and_then(|x| x.config))?;
            routers.append(e)?;
        }
        d.set_item("routers", routers)?;
        let flows = PyList::empty(py);
        for f in p.flows {
            let e = PyDict::new(py);
            e.set_item("table", f.table)?;
            e.set_item("keys", keys_py(py, f.keys)?)?;
            e.set_item("role", f.role)?;
            e.set_item("config", registry::role(f.role).and_then(|x| x.config))?;
            e.set_item("sink", f.sink)?;
            e.set_item("row", f.row)?;
            flows.append(e)?;
        }
        d.set_item("flows", flows)?;
        let functions = PyList::empty(py);
        for f in p.functions {
            let e = PyDict::new(py);
            e.set_item("name", f.name)?;
            e.set_item("doc", f.doc)?;
            e.set_item("params", params_py(py, f.params)?)?;
            e.set_item("config", f.config)?;
            functions.append(e)?;
        }
        d.set_item("functions", functions)?;
        let net_roles = PyList::empty(py);
        for r in p.net_roles {
            let e = PyDict::new(py);
            e.set_item("cli", r.cli)?;
            e.set_item("help", r.help)?;
            e.set_item("role", r.role)?;
            e.set_item("source", r.source)?;
            let (g, control, table) = match r.groups {
                registry::NetGroups::Layers { control } => ("layers", control, None),
                registry::NetGroups::One => ("one", false, None),
                registry::NetGroups::ConfigLayers(t) => ("config_layers", false, Some(t)),
            };
            e.set_item("groups", g)?;
            e.set_item("control", control)?;
            e.set_item("layers_from", table)?;
            let flags = PyList::empty(py);
            for fl in r.flags {
                let x = PyDict::new(py);
                x.set_item("name", fl.name)?;
                match fl.kind {
                    registry::FlagKind::Int(d) => {
                        x.set_item("kind", "int")?;
                        x.set_item("default", d)?;
                        x.set_item("choices", py.None())?;
                    }
                    registry::FlagKind::Floats(d) => {
                        x.set_item("kind", "floats")?;
                        x.set_item("default", d.to_vec())?;
                        x.set_item("choices", py.None())?;
                    }
                    registry::FlagKind::Choice(c) => {
                        x.set_item("kind", "choice")?;
                        x.set_item("default", c[0])?;
                        x.set_item("choices", c.to_vec())?;
                    }
                }
                x.set_item("help", fl.help)?;
                x.set_item("config", fl.config)?;
                flags.append(x)?;
            }
            e.set_item("flags", flags)?;
            let defaults = PyDict::new(py);
            for (k, v) in r.defaults {
                defaults.set_item(*k, default_py(py, v)?)?;
            }
            e.set_item("defaults", defaults)?;
            e.set_item("status", r.status)?;
            let outs = PyList::empty(py);
            for o in r.outputs {
                let x = PyDict::new(py);
                match *o {
                    registry::NetOutput::Levels => x.set_item("kind", "levels")?,
                    registry::NetOutput::Rates => x.set_item("kind", "rates")?,
                    registry::NetOutput::Json { reader, file } => {
                        x.set_item("kind", "json")?;
                        x.set_item("reader", reader)?;
                        x.set_item("file", file)?;
                    }
                    registry::NetOutput::Prefixed { reader, name, tables } => {
                        x.set_item("kind", "prefixed")?;
                        x.set_item("reader", reader)?;
                        x.set_item("name", name)?;
                        let t = PyDict::new(py);
                        for (k, cols) in tables {
                            t.set_item(*k, cols.to_vec())?;
                        }
                        x.set_item("tables", t)?;
                    }
                    registry::NetOutput::Columns { reader, file, columns, rest } => {
                        x.set_item("kind", "columns")?;
                        x.set_item("reader", reader)?;
                        x.set_item("file", file)?;
                        x.set_item("columns", columns.to_vec())?;
                        x.set_item("rest", rest)?;
                    }
                }
                outs.append(x)?;
            }
            e.set_item("outputs", outs)?;
            net_roles.append(e)?;
        }
        d.set_item("net_roles", net_roles)?;
        out.append(d)?;
    }
    Ok(out)
}
