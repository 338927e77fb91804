//! The one way a protocol configuration crosses into Python: keyword overrides of the Rust
//! `Default` (the paper's values), assigned by name and validated in Rust
//! ([`castlab_core::config`]). Bindings take `**config` and call [`build`]; nothing here or in
//! the `.pyi` repeats a default. `castlab._native.config_defaults(protocol)` shows them, and
//! `tests/api/test_config.py` checks the stub's documented keys against it.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use castlab_core::config::{Config, ConfigError, Value};
use castlab_proto::registry;

use crate::error::Result;

/// A Python value as a config [`Value`]; `field` names it in the error.
pub(crate) fn to_value(field: &str, v: &Bound<'_, PyAny>) -> Result<Value> {
    if v.is_none() {
        Ok(Value::None)
    } else if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        v.extract::<i64>()
            .map(Value::Int)
            .map_err(|_| ConfigError::new(field, v, "must fit in a 64-bit integer").into())
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(Value::Str(v.extract()?))
    } else if v.is_instance_of::<PyBytes>() {
        Ok(Value::Bytes(v.extract()?))
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        Ok(Value::List(items.iter().map(|x| to_value(field, x)).collect::<Result<_>>()?))
    } else if !v.is_instance_of::<PyDict>() && v.hasattr("__len__")? && v.hasattr("__getitem__")? {
        // other sequences (numpy arrays, ranges): a list of their items, as a `Vec` argument
        // of a hand-written binding would take them
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        Ok(Value::List(items.iter().map(|x| to_value(field, x)).collect::<Result<_>>()?))
    } else if v.hasattr("__index__")? && v.extract::<i64>().is_ok() {
        // numpy integers
        Ok(Value::Int(v.extract()?))
    } else if let Ok(b) = v.extract::<bool>() {
        // numpy booleans
        Ok(Value::Bool(b))
    } else if let Ok(x) = v.extract::<f64>() {
        // numpy floats and other numbers
        Ok(Value::Float(x))
    } else {
        Err(ConfigError::new(field, v, "must be a number, a bool, a string, None or a list").into())
    }
}

pub(crate) fn value_to_py<'py>(py: Python<'py>, v: &Value) -> Result<Bound<'py, PyAny>> {
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            PyList::new(py, items.iter().map(|x| value_to_py(py, x)).collect::<Result<Vec<_>>>()?)?.into_any()
        }
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
    })
}

/// A configuration as a dict of field -> value (durations in seconds).
pub(crate) fn config_dict<'py, C: Config>(py: Python<'py>, c: &C) -> Result<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c.values() {
        d.set_item(k, value_to_py(py, &v)?)?;
    }
    Ok(d)
}

/// `base` with the keyword overrides applied, validated.
pub(crate) fn apply<C: Config>(mut base: C, overrides: Option<&Bound<'_, PyDict>>) -> Result<C> {
    if let Some(d) = overrides {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let v = to_value(&k, &v)?;
            base.set(&k, &v)?;
        }
    }
    base.check()?;
    Ok(base)
}

/// The default configuration of `protocol` (the paper's values), as a dict of field -> value;
/// durations in seconds. These are exactly the keyword overrides the matching roles accept.
/// Every table of the protocol registry is here.
#[pyfunction]
pub(crate) fn config_defaults<'py>(py: Python<'py>, protocol: &str) -> Result<Bound<'py, PyDict>> {
    let t = registry::config_table(protocol).ok_or_else(|| {
        let names: Vec<&str> = castlab_proto::PROTOCOLS.iter().flat_map(|p| p.configs.iter().map(|c| c.name)).collect();
        ConfigError::new("protocol", protocol, format!("must be one of {}", names.join(", ")))
    })?;
    let d = PyDict::new(py);
    for (k, v) in &(t.defaults)() {
        d.set_item(*k, value_to_py(py, v)?)?;
    }
    Ok(d)
}
