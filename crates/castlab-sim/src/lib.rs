//! castlab-sim: the deterministic packet-level discrete-event simulator.
//!
//! [`Simulator`] holds the topology (nodes, duplex links as two channels with output queues),
//! shortest-path unicast routing, source-specific multicast trees with graft/prune latency,
//! agents (any [`castlab_core::Agent`]) and router extensions (any
//! [`castlab_core::RouterExtension`]), and runs the event loop. [`metrics`] holds the metrics
//! computed in Rust (the worst-case windowed loss of McCanne et al. 1996). See `engine` for the model.

pub mod engine;
pub mod error;
/// The metrics moved to castlab-core (the protocols' readers compute them too); kept here by name.
pub use castlab_core::metrics;
/// The queue disciplines live in `castlab-core`, shared with the real-network router.
pub use castlab_core::queue;
mod routing;
pub mod testext;

pub use engine::{
    ChannelSeries, ChannelStats, Conservation, EngineStats, LinkConfig, LinkTap, NodeStats, SimConfig, Simulator,
    Timelines, TokenBucket,
};
pub use error::{Result, SimError};
pub use queue::{QueueConfig, RedConfig};
