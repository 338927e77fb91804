//! castlab-proto: protocols as sans-IO state machines.
//!
//! Depends on `castlab-core` only: never on the simulator, an async runtime, Python or
//! `std::time`. Every agent here follows the driving rule documented on
//! [`castlab_core::agent`].

pub mod bcfs;
pub mod cbr;
pub mod equations;
pub mod flid;
pub mod lesbcc;
pub mod nlm;
pub mod pgmcc;
pub mod registry;
pub mod rlc;
pub mod rlm;
pub mod sink;
pub mod tcp;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tfmcc;
pub mod trace;
pub mod webrc;
pub mod window;

#[cfg(test)]
mod tests;

pub use cbr::{CbrSource, CbrStream};
pub use sink::{LayeredSink, Record, SinkRecords, SinkSummary};
pub use trace::Trace;

/// The protocol registry: every protocol the drivers know, each described beside its code
/// (see [`registry`]) in its `<protocol>/registration.rs`. Registering a protocol is one line
/// here. The order is the scenario's: flow tables are built in it (`[[tcp]]` before
/// `[[cbr]]`), the first session kind is the default (`layered`), and the first receiver of a
/// session kind is its default (RLM's before the measuring sink).
pub static PROTOCOLS: &[&registry::Protocol] = &[
    &tcp::registration::PROTOCOL,
    &cbr::registration::PROTOCOL,
    &rlm::registration::PROTOCOL,
    &nlm::registration::PROTOCOL,
    &bcfs::registration::PROTOCOL,
    &lesbcc::registration::PROTOCOL,
    &rlc::registration::PROTOCOL,
    &sink::registration::PROTOCOL,
    &tfmcc::registration::PROTOCOL,
    &pgmcc::registration::PROTOCOL,
    &webrc::registration::PROTOCOL,
    &flid::registration::PROTOCOL,
];
