//! The checks of the bindings' own arguments (the engine's and the sink's; a protocol's are
//! its registration's): every user-facing integer arrives as `i64` and is range-checked here,
//! so that a negative queue limit or seed is a `ValueError` that names the field (PyO3's own
//! conversion would raise `OverflowError`). The integer checks are the registry's
//! (`castlab_proto::registry::check`, the ones `registry::Args` uses), and every time goes
//! through the configs' check.

use castlab_core::{ConfigValue, Duration, Instant, Value};
use castlab_proto::registry::check;
use castlab_sim::SimError;

use crate::error::{Error, Result};

/// An engine error as Python's exception (see `error.rs`).
pub(crate) fn err(e: SimError) -> Error {
    Error::from(e)
}

/// `field: reason (got value)` as a `ValueError`.
pub(crate) fn bad(field: &str, value: impl std::fmt::Display, reason: &str) -> Error {
    Error::bad(field, value, reason)
}

/// A non-negative 64-bit integer, or a ValueError naming `field` (the registry's check).
pub(crate) fn nonneg_u64(field: &str, v: i64) -> Result<u64> {
    Ok(check::u64(field, v)?)
}

/// A positive 32-bit integer, or a ValueError naming `field`.
pub(crate) fn positive_u32(field: &str, v: i64) -> Result<u32> {
    Ok(check::positive_u32(field, v)?)
}

/// A time in seconds: finite, >= 0 and within the u64-nanosecond clock (about 584 years:
/// beyond it, an error rather than a silent cap). The same check as every config field's.
pub(crate) fn time_s(field: &str, v: f64) -> Result<Instant> {
    Ok(Instant::from_value(field, &Value::Float(v))?)
}

/// A duration in seconds, checked as [`time_s`].
pub(crate) fn duration_s(field: &str, v: f64) -> Result<Duration> {
    Ok(Duration::from_value(field, &Value::Float(v))?)
}
