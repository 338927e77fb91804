//! castlab-core: the vocabulary every castlab crate shares.
//!
//! Time ([`time`]), identifiers ([`ids`]), the packet, its protocol headers and its wire codec
//! ([`packet`], [`headers`], [`codec`]), the sans-IO [`agent`] and [`router`] contracts, deterministic RNG streams
//! ([`rng`]), and the output-queue disciplines ([`queue`]) the simulator and the real router
//! share. This crate depends on nothing but `thiserror`, so protocol state machines built on
//! it run unchanged in the simulator, in hand-driven unit tests and over real sockets.

pub mod agent;
pub mod alloc_count;
pub mod codec;
pub mod config;
pub mod headers;
pub mod ids;
pub mod metrics;
pub mod packet;
pub mod queue;
pub mod records;
pub mod rng;
pub mod router;
pub mod time;

pub use agent::{Agent, AgentEvent, PacketLines, StartInfo, Timer, TimerTable};
pub use config::{Config, ConfigError, ConfigValue, Value};
pub use headers::*;
pub use ids::{Addr, AgentId, ChannelId, Dest, GroupId, NodeId, Port};
pub use packet::Packet;
pub use rng::{Rng, StreamKind};
pub use router::{NetView, RouterExtension, RouterSend, Verdict};
pub use time::{Duration, Instant};
