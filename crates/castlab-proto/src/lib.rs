//! castlab-proto: protocols as sans-IO state machines.
//!
//! Depends on `castlab-core` only: never on the simulator, an async runtime, Python or
//! `std::time`. Every agent here follows the driving rule documented on
//! [`castlab_core::agent`].

pub mod bcfs;
pub mod bcfs_pgm;
pub mod cbr;
pub mod fountain;
pub mod lesbcc;
pub mod nlm;
pub mod pgm;
pub mod rainbow;
pub mod rlc;
pub mod rlm;
pub mod sink;
pub mod tcp;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod window;

#[cfg(test)]
mod properties;

pub use cbr::{CbrSource, CbrStream};
pub use sink::{LayeredSink, Record, SinkRecords, SinkSummary};
