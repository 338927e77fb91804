//! The one place where Rust errors become Python exceptions (as polars' `PyPolarsErr`).
//!
//! Every binding returns [`Result`]; `?` converts the engine's, the configs', the registry's
//! and the driver's errors through the `From` impls below, and `From<Error> for PyErr` decides
//! the Python kind once: bad input is a `ValueError` whose message starts with the field, a
//! call that does not fit the signature a `TypeError`, a socket failure an `OSError`, a start
//! the router's safety checks refuse a `PermissionError`.

use pyo3::exceptions::{PyOSError, PyPermissionError, PyTypeError, PyValueError};
use pyo3::PyErr;

use castlab_core::ConfigError;
use castlab_net::{NetError, RouterError};
use castlab_proto::registry::BuildError;
use castlab_sim::SimError;

/// An error on its way to Python.
#[derive(Debug)]
pub(crate) enum Error {
    /// Bad input: `ValueError`, the message starting with the field.
    Value(String),
    /// A call that does not fit: `TypeError`.
    Type(String),
    /// The operating system refused (a socket, a multicast join): `OSError`.
    Os(String),
    /// A start refused as unsafe (the router outside a namespace of its own): `PermissionError`.
    Permission(String),
    /// Already a Python exception (a failed conversion, a callback that raised).
    Py(PyErr),
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// `field: reason (got value)`, the form of every argument error.
    pub(crate) fn bad(field: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        Error::Value(format!("{field}: {reason} (got {value})"))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Value(m) | Error::Type(m) | Error::Os(m) | Error::Permission(m) => f.write_str(m),
            Error::Py(e) => write!(f, "{e}"),
        }
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Value(m) => PyValueError::new_err(m),
            Error::Type(m) => PyTypeError::new_err(m),
            Error::Os(m) => PyOSError::new_err(m),
            Error::Permission(m) => PyPermissionError::new_err(m),
            Error::Py(e) => e,
        }
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(x: std::convert::Infallible) -> Self {
        match x {}
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Py(e)
    }
}

impl From<SimError> for Error {
    fn from(e: SimError) -> Self {
        Error::Value(e.to_string())
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Value(e.to_string())
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        Error::Value(e.to_string())
    }
}

impl From<NetError> for Error {
    fn from(e: NetError) -> Self {
        match e {
            NetError::Session(s) => Error::Value(s.to_string()),
            NetError::Config(c) => c.into(),
            io @ NetError::Io { .. } => Error::Os(io.to_string()),
            done @ NetError::ShutDown => Error::Type(done.to_string()),
        }
    }
}

impl From<RouterError> for Error {
    fn from(e: RouterError) -> Self {
        match e {
            RouterError::Config(c) => Error::Value(c.to_string()),
            r @ RouterError::Refused(_) => Error::Permission(r.to_string()),
            io @ RouterError::Io { .. } => Error::Os(io.to_string()),
        }
    }
}
