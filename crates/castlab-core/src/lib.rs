//! castlab-core: the vocabulary every castlab crate shares.
//!
//! Time ([`time`]), identifiers ([`ids`]), the packet and its wire codec ([`packet`],
//! [`codec`]), the sans-IO [`agent`] and [`router`] contracts, deterministic RNG streams
//! ([`rng`]), and the output-queue disciplines ([`queue`]) the simulator and the real router
//! share. This crate depends on nothing but `thiserror`, so protocol state machines built on
//! it run unchanged in the simulator, in hand-driven unit tests and over real sockets.

pub mod agent;
pub mod codec;
pub mod config;
pub mod ids;
pub mod packet;
pub mod queue;
pub mod records;
pub mod rng;
pub mod router;
pub mod time;

pub use agent::{Agent, AgentEvent, StartInfo, Timer, TimerTable};
pub use config::{Config, ConfigError, ConfigValue, Value};
pub use ids::{Addr, AgentId, ChannelId, Dest, GroupId, NodeId, Port};
pub use packet::{
    BcfHeader, BcfKind, ControlMsg, Header, HeaderKind, NlmHeader, NlmKind, Packet, PgmHeader, PgmKind, RlmHeader,
    RlmKind, TcpHeader,
};
pub use rng::{Rng, StreamKind};
pub use router::{NetView, RouterExtension, RouterSend, Verdict};
pub use time::{Duration, Instant};
