//! What readers and functions answer: an [`Out`] tree of numbers, strings, numpy columns,
//! lists and dicts, which the bindings turn into Python objects in one generic function.

use castlab_core::config::{Config, Value};
use castlab_core::records::{Column, Scalar, Table};

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
    /// A numpy array the answer owns (a [`Function`](super::Function)'s result, which borrows
    /// nothing).
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
