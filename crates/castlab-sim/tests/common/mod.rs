//! Helpers the engine-level tests share (each test file is its own crate and includes this).
#![allow(dead_code)]

use castlab_core::Instant;
use castlab_sim::{LinkConfig, QueueConfig};

/// `s` seconds after the start of the run.
pub fn secs(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

/// A link of `rate` bit/s and `delay` seconds with a DropTail queue of `limit_pkts` packets.
pub fn link(rate: f64, delay: f64, limit_pkts: usize) -> LinkConfig {
    LinkConfig::new(rate, delay, QueueConfig::DropTail { limit_pkts })
}
