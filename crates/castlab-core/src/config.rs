//! One way for a protocol's configuration to cross any boundary (Python, a scenario file, the
//! command line): by field name, checked in Rust.
//!
//! Each protocol keeps one `Config` struct whose `Default` is the paper's table (the only place
//! a paper constant is written, as ns-3's attribute system keeps defaults in one place). The
//! [`config_fields!`](crate::config_fields) macro lists the struct's fields once and implements
//! [`Config`] for it: [`Config::set`] assigns a field from a [`Value`] by name,
//! [`Config::get`] reads it back (so bindings and docs show the defaults without typing them
//! again), and [`Config::from_overrides`] starts from `Default`, applies named overrides and
//! validates. Every error is a [`ConfigError`] that names the field.

use crate::time::{Duration, Instant};

/// A bad configuration value, or an unknown field: always names the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {reason} (got {value})")]
pub struct ConfigError {
    /// The field (as the user spells it: the struct's field name, or a binding's argument).
    pub field: String,
    /// The offending value, as text.
    pub value: String,
    /// What is wrong, e.g. "must be in (0, 1]".
    pub reason: String,
}

impl ConfigError {
    pub fn new(field: impl Into<String>, value: impl core::fmt::Display, reason: impl Into<String>) -> Self {
        ConfigError { field: field.into(), value: value.to_string(), reason: reason.into() }
    }
}

/// A dynamically typed value for a config field. Durations and instants are seconds.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    /// Raw bytes (a file to send); no config field takes them, a role's argument may.
    Bytes(Vec<u8>),
}

impl core::fmt::Display for Value {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Value::None => write!(f, "None"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write!(f, "<{} bytes>", b.len()),
            Value::List(v) => {
                write!(f, "[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "]")
            }
        }
    }
}

/// A type a config field may have.
pub trait ConfigValue: Sized {
    /// What the field takes, for error messages and generated docs ("float", "seconds"...).
    const KIND: &'static str;
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError>;
    fn to_value(&self) -> Value;
}

fn expected(field: &str, v: &Value, what: &str) -> ConfigError {
    ConfigError::new(field, v, format!("must be {what}"))
}

impl ConfigValue for f64 {
    const KIND: &'static str = "float";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        let x = match v {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            _ => return Err(expected(field, v, "a number")),
        };
        if x.is_nan() {
            return Err(expected(field, v, "a number (not NaN)"));
        }
        Ok(x)
    }
    fn to_value(&self) -> Value {
        Value::Float(*self)
    }
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl ConfigValue for $t {
            const KIND: &'static str = "int";
            fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
                match v {
                    Value::Int(i) => <$t>::try_from(*i).map_err(|_| {
                        ConfigError::new(field, i, format!("must be an integer in {}..={}", <$t>::MIN, <$t>::MAX))
                    }),
                    _ => Err(expected(field, v, "an integer")),
                }
            }
            fn to_value(&self) -> Value {
                Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
    )*};
}
int_value!(u8, u16, u32, u64, usize, i64);

impl ConfigValue for bool {
    const KIND: &'static str = "bool";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Bool(b) => Ok(*b),
            _ => Err(expected(field, v, "true or false")),
        }
    }
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
}

/// Seconds: finite and at least 0, at most [`Duration::MAX`].
fn seconds(field: &str, v: &Value) -> Result<f64, ConfigError> {
    let s = match v {
        Value::Float(x) => *x,
        Value::Int(i) => *i as f64,
        _ => return Err(expected(field, v, "a number of seconds")),
    };
    if !s.is_finite() || s < 0.0 {
        return Err(expected(field, v, "a finite number of seconds >= 0"));
    }
    if s > Duration::MAX.as_secs_f64() {
        return Err(ConfigError::new(field, s, format!("must be at most {:.0} s", Duration::MAX.as_secs_f64())));
    }
    Ok(s)
}

impl ConfigValue for Duration {
    const KIND: &'static str = "seconds";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        seconds(field, v).map(Duration::from_secs_f64)
    }
    fn to_value(&self) -> Value {
        Value::Float(self.as_secs_f64())
    }
}

impl ConfigValue for Instant {
    const KIND: &'static str = "seconds";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        seconds(field, v).map(Instant::from_secs_f64)
    }
    fn to_value(&self) -> Value {
        Value::Float(self.as_secs_f64())
    }
}

impl ConfigValue for std::net::Ipv4Addr {
    const KIND: &'static str = "IPv4 address";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::Str(s) => s.parse().map_err(|_| expected(field, v, "an IPv4 address such as \"127.0.0.1\"")),
            _ => Err(expected(field, v, "an IPv4 address such as \"127.0.0.1\"")),
        }
    }
    fn to_value(&self) -> Value {
        Value::Str(self.to_string())
    }
}

impl<T: ConfigValue> ConfigValue for Option<T> {
    const KIND: &'static str = "optional";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::None => Ok(None),
            other => T::from_value(field, other).map(Some),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            None => Value::None,
            Some(x) => x.to_value(),
        }
    }
}

impl<T: ConfigValue> ConfigValue for Vec<T> {
    const KIND: &'static str = "list";
    fn from_value(field: &str, v: &Value) -> Result<Self, ConfigError> {
        match v {
            Value::List(items) => items.iter().map(|x| T::from_value(field, x)).collect(),
            _ => Err(expected(field, v, "a list")),
        }
    }
    fn to_value(&self) -> Value {
        Value::List(self.iter().map(ConfigValue::to_value).collect())
    }
}

/// A protocol configuration: named fields over a `Default` that holds the paper's values.
pub trait Config: Default + Sized {
    /// The field names, in declaration order.
    const FIELDS: &'static [&'static str];
    /// Assign one field by name; an unknown name is an error that lists the known ones.
    fn set(&mut self, field: &str, v: &Value) -> Result<(), ConfigError>;
    /// Read one field by name.
    fn get(&self, field: &str) -> Option<Value>;
    /// Check the whole configuration (ranges, relations between fields).
    fn check(&self) -> Result<(), ConfigError>;

    /// `Default`, then each override in turn, then [`Config::check`].
    fn from_overrides<'a, I>(overrides: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (&'a str, &'a Value)>,
    {
        let mut c = Self::default();
        for (k, v) in overrides {
            c.set(k, v)?;
        }
        c.check()?;
        Ok(c)
    }

    /// Every field with its current value, in declaration order.
    fn values(&self) -> Vec<(&'static str, Value)> {
        Self::FIELDS.iter().filter_map(|f| self.get(f).map(|v| (*f, v))).collect()
    }
}

/// The error for a field name a config does not have.
pub fn unknown_field(field: &str, known: &[&str]) -> ConfigError {
    ConfigError::new(field, "an override", format!("unknown setting; known: {}", known.join(", ")))
}

/// Implements [`Config`] for a struct by listing its fields once; `check` is the struct's own
/// `fn validate(&self) -> Result<(), ConfigError>`.
///
/// ```ignore
/// castlab_core::config_fields!(ProtoConfig { alpha, beta, t_min, t_max });
/// ```
#[macro_export]
macro_rules! config_fields {
    ($ty:ty { $($field:ident),+ $(,)? }) => {
        impl $crate::config::Config for $ty {
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),+];
            fn set(&mut self, field: &str, v: &$crate::config::Value) -> Result<(), $crate::config::ConfigError> {
                match field {
                    $(stringify!($field) => {
                        self.$field = $crate::config::ConfigValue::from_value(field, v)?;
                        Ok(())
                    })+
                    _ => Err($crate::config::unknown_field(field, Self::FIELDS)),
                }
            }
            fn get(&self, field: &str) -> Option<$crate::config::Value> {
                match field {
                    $(stringify!($field) => Some($crate::config::ConfigValue::to_value(&self.$field)),)+
                    _ => None,
                }
            }
            fn check(&self) -> Result<(), $crate::config::ConfigError> {
                self.validate()
            }
        }
    };
}

/// Implements [`ConfigValue`] for a field-less enum, spelled by variant names (case-insensitive).
#[macro_export]
macro_rules! config_enum {
    ($ty:ty { $($var:ident => $name:literal),+ $(,)? }) => {
        impl $crate::config::ConfigValue for $ty {
            const KIND: &'static str = concat!("one of:" $(, " ", $name)+);
            fn from_value(field: &str, v: &$crate::config::Value) -> Result<Self, $crate::config::ConfigError> {
                if let $crate::config::Value::Str(s) = v {
                    $(if s.eq_ignore_ascii_case($name) {
                        return Ok(<$ty>::$var);
                    })+
                }
                Err($crate::config::ConfigError::new(field, v, concat!("must be one of" $(, " ", $name)+)))
            }
            fn to_value(&self) -> $crate::config::Value {
                $crate::config::Value::Str(match self { $(<$ty>::$var => $name,)+ }.to_string())
            }
        }
    };
}

/// Range checks for `validate` functions, each an error naming the field.
pub mod check {
    use super::ConfigError;
    use crate::time::Duration;

    /// `lo < x <= hi`.
    pub fn in_open_closed(field: &str, x: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
        if x > lo && x <= hi {
            Ok(())
        } else {
            Err(ConfigError::new(field, x, format!("must be in ({lo}, {hi}]")))
        }
    }
    /// `lo <= x <= hi`.
    pub fn in_closed(field: &str, x: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
        if x >= lo && x <= hi {
            Ok(())
        } else {
            Err(ConfigError::new(field, x, format!("must be in [{lo}, {hi}]")))
        }
    }
    /// Finite and `> 0`.
    pub fn positive(field: &str, x: f64) -> Result<(), ConfigError> {
        if x.is_finite() && x > 0.0 {
            Ok(())
        } else {
            Err(ConfigError::new(field, x, "must be a finite number > 0"))
        }
    }
    /// An integer in `lo..=hi`.
    pub fn int_in(field: &str, x: u64, lo: u64, hi: u64) -> Result<(), ConfigError> {
        if (lo..=hi).contains(&x) {
            Ok(())
        } else {
            Err(ConfigError::new(field, x, format!("must be in {lo}..={hi}")))
        }
    }
    /// A sending rate for packets of `size_bytes`: finite, `> 0`, and slow enough that one
    /// packet takes at least the clock's 1 ns (faster, the interval rounds to 0 and a run
    /// never ends: 1.6e13 b/s with 1,000-byte packets).
    pub fn packet_rate(field: &str, rate_bps: f64, size_bytes: u32) -> Result<(), ConfigError> {
        positive(field, rate_bps)?;
        let max = f64::from(size_bytes.max(1)) * 8.0 * 1e9;
        if rate_bps > max {
            return Err(ConfigError::new(
                field,
                rate_bps,
                format!("must be at most {max:.3e} b/s for {size_bytes}-byte packets (one packet per ns)"),
            ));
        }
        Ok(())
    }
    /// A duration `> 0`.
    pub fn nonzero(field: &str, d: Duration) -> Result<(), ConfigError> {
        if d.is_zero() {
            Err(ConfigError::new(field, 0, "must be > 0 s"))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Demo {
        gain: f64,
        t: Duration,
        n: u32,
        on: bool,
        cap: Option<u64>,
        w: Vec<f64>,
    }
    impl Default for Demo {
        fn default() -> Self {
            Demo { gain: 0.5, t: Duration::from_secs(2), n: 3, on: true, cap: None, w: vec![1.0, 0.5] }
        }
    }
    impl Demo {
        fn validate(&self) -> Result<(), ConfigError> {
            check::in_open_closed("gain", self.gain, 0.0, 1.0)
        }
    }
    config_fields!(Demo { gain, t, n, on, cap, w });

    #[test]
    fn overrides_start_from_default_and_name_bad_fields() {
        let c = Demo::from_overrides([("n", &Value::Int(7)), ("t", &Value::Float(0.25))]).unwrap();
        assert_eq!(c, Demo { n: 7, t: Duration::from_millis(250), ..Demo::default() });
        let e = Demo::from_overrides([("gian", &Value::Float(0.1))]).unwrap_err();
        assert_eq!(e.field, "gian");
        assert!(e.reason.contains("known: gain, t, n, on, cap, w"), "{e}");
        let e = Demo::from_overrides([("gain", &Value::Float(2.0))]).unwrap_err();
        assert_eq!((e.field.as_str(), e.reason.as_str()), ("gain", "must be in (0, 1]"));
        let e = Demo::from_overrides([("n", &Value::Int(-1))]).unwrap_err();
        assert_eq!(e.field, "n");
        let e = Demo::from_overrides([("n", &Value::Float(1.5))]).unwrap_err();
        assert_eq!(e.to_string(), "n: must be an integer (got 1.5)");
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert_eq!(Demo::from_overrides([("t", &Value::Float(bad))]).unwrap_err().field, "t");
        }
        assert_eq!(Demo::from_overrides([("on", &Value::Int(1))]).unwrap_err().field, "on");
        let c = Demo::from_overrides([("cap", &Value::Int(9)), ("w", &Value::List(vec![Value::Int(1)]))]).unwrap();
        assert_eq!((c.cap, c.w), (Some(9), vec![1.0]));
    }

    #[test]
    fn values_read_back_the_defaults() {
        let v = Demo::default().values();
        assert_eq!(v.iter().map(|(k, _)| *k).collect::<Vec<_>>(), Demo::FIELDS);
        assert_eq!(v[0].1, Value::Float(0.5));
        assert_eq!(v[1].1, Value::Float(2.0));
        assert_eq!(v[4].1, Value::None);
        // what `get` gives back, `set` takes (a round trip for every field)
        let mut c = Demo { gain: 0.7, n: 11, on: false, cap: Some(4), ..Demo::default() };
        let snapshot = c.values();
        let fresh = Demo::from_overrides(snapshot.iter().map(|(k, v)| (*k, v))).unwrap();
        c.t = fresh.t;
        assert_eq!(fresh, c);
    }
}
