//! The checks of the bindings' own arguments (the engine's and the sink's; a protocol's are
//! its registration's): every user-facing integer arrives as `i64` and is range-checked here,
//! so that a negative queue limit or seed is a `ValueError` that names the field (PyO3's own
//! conversion would raise `OverflowError`), and every time goes through the configs' check.

use castlab_core::{ConfigValue, Duration, Instant, Value};
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

pub(crate) fn nonneg_u64(field: &str, v: i64) -> Result<u64> {
    u64::try_from(v).map_err(|_| bad(field, v, "must be >= 0"))
}

/// A 32-bit unsigned field (a flow id, a size in bytes), or a ValueError naming `field`.
pub(crate) fn u32_field(field: &str, v: i64) -> Result<u32> {
    u32::try_from(v).map_err(|_| bad(field, v, "must be in 0..2^32"))
}

pub(crate) fn positive_u32(field: &str, v: i64) -> Result<u32> {
    if v <= 0 || v > u32::MAX as i64 {
        return Err(bad(field, v, "must be a positive 32-bit integer"));
    }
    Ok(v as u32)
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
