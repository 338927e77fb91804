//! Whether an agent or router keeps its traces: rows per packet, ACK, request or sample, whose
//! memory grows with a run's length (a long soak, a 10^5-second run) rather than with what
//! happens in it. Not a paper constant: our choice, and `Full` by default so that every
//! figure's data is there unless a run asks otherwise.

/// What a protocol keeps beyond its counters and its event records (level changes, decisions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Trace {
    /// Every trace row (the default).
    #[default]
    Full,
    /// No trace rows: counters and event records only, so memory stays flat over a long run.
    Off,
}

impl Trace {
    /// Whether trace rows are kept.
    #[inline]
    pub fn on(self) -> bool {
        self == Trace::Full
    }
}

castlab_core::config_enum!(Trace { Full => "full", Off => "off" });
