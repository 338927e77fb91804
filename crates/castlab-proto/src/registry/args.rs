//! The arguments of roles, readers and functions: their defaults ([`Param`], `param!`), the
//! one checker of integer ranges ([`check`]), and [`Args`], the checked view of one call a
//! factory reads.

use castlab_core::config::{Config, Value};
use castlab_core::{AgentId, GroupId, Instant, NodeId};

use super::{BuildError, BuildResult, Host};

/// Named values in their order: config overrides or a call's arguments.
pub type Pairs = Vec<(String, Value)>;

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
    pub fn split_config<C: Config>(&self) -> (Pairs, Pairs) {
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
