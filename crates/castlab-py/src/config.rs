//! The one way a protocol configuration crosses into Python: keyword overrides of the Rust
//! `Default` (the paper's values), assigned by name and validated in Rust
//! ([`castlab_core::config`]). Bindings take `**config` and call [`build`]; nothing here or in
//! the `.pyi` repeats a default. `castlab._native.config_defaults(protocol)` shows them, and
//! `tests/test_config.py` checks the stub's documented keys against it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use castlab_core::config::{Config, ConfigError, Value};
use castlab_proto::bcfs::BcfConfig;
use castlab_proto::bcfs_pgm::PgmConfig as BcfPgmConfig;
use castlab_proto::lesbcc::LesbccConfig;
use castlab_proto::nlm::NlmConfig;
use castlab_proto::pgm::PgmReceiverConfig;
use castlab_proto::rainbow::RainbowConfig;
use castlab_proto::rlm::RlmConfig;
use castlab_proto::tcp::TcpConfig;

/// A configuration error as Python's `ValueError`, its message starting with the field.
pub(crate) fn cfg_err(e: ConfigError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A Python value as a config [`Value`]; `field` names it in the error.
pub(crate) fn to_value(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        Ok(Value::None)
    } else if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        v.extract::<i64>()
            .map(Value::Int)
            .map_err(|_| cfg_err(ConfigError::new(field, v, "must fit in a 64-bit integer")))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(Value::Str(v.extract()?))
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        Ok(Value::List(items.iter().map(|x| to_value(field, x)).collect::<PyResult<_>>()?))
    } else if let Ok(x) = v.extract::<f64>() {
        // numpy scalars and other floats
        Ok(Value::Float(x))
    } else {
        Err(cfg_err(ConfigError::new(field, v, "must be a number, a bool, a string, None or a list")))
    }
}

fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(x) => x.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::List(items) => {
            PyList::new(py, items.iter().map(|x| to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}

/// A configuration as a dict of field -> value (durations in seconds).
pub(crate) fn config_dict<'py, C: Config>(py: Python<'py>, c: &C) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c.values() {
        d.set_item(k, to_py(py, &v)?)?;
    }
    Ok(d)
}

/// `C::default()` (the paper's values) with the keyword overrides applied, validated.
pub(crate) fn build<C: Config>(overrides: Option<&Bound<'_, PyDict>>) -> PyResult<C> {
    apply(C::default(), overrides)
}

/// `base` with the keyword overrides applied, validated.
pub(crate) fn apply<C: Config>(mut base: C, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<C> {
    if let Some(d) = overrides {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let v = to_value(&k, &v)?;
            base.set(&k, &v).map_err(cfg_err)?;
        }
    }
    base.check().map_err(cfg_err)?;
    Ok(base)
}

/// Every protocol whose configuration crosses into Python, with its defaults.
fn defaults(protocol: &str) -> Option<Vec<(&'static str, Value)>> {
    Some(match protocol {
        "rlm" => RlmConfig::default().values(),
        "rlc" => castlab_proto::rlc::RlcConfig::default().values(),
        "nlm" => NlmConfig::default().values(),
        "lesbcc" => LesbccConfig::default().values(),
        "pgm" => PgmReceiverConfig::default().values(),
        "tcp" => TcpConfig::default().values(),
        "bcf" => BcfConfig::default().values(),
        "rainbow" => RainbowConfig::default().values(),
        "bcf_pgm" => BcfPgmConfig::default().values(),
        _ => return None,
    })
}

/// The protocols `config_defaults` knows.
pub(crate) const PROTOCOLS: &[&str] = &["rlm", "rlc", "nlm", "lesbcc", "pgm", "tcp", "bcf", "rainbow", "bcf_pgm"];

/// The default configuration of `protocol` (the paper's values), as a dict of field -> value;
/// durations in seconds. These are exactly the keyword overrides the matching `add_*` methods
/// accept.
#[pyfunction]
pub(crate) fn config_defaults<'py>(py: Python<'py>, protocol: &str) -> PyResult<Bound<'py, PyDict>> {
    let vals = defaults(protocol).ok_or_else(|| {
        cfg_err(ConfigError::new("protocol", protocol, format!("must be one of {}", PROTOCOLS.join(", "))))
    })?;
    let d = PyDict::new(py);
    for (k, v) in &vals {
        d.set_item(*k, to_py(py, v)?)?;
    }
    Ok(d)
}
