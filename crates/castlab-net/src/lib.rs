//! castlab-net: the real-network driver.
//!
//! `castlab-net` is to sockets what `castlab-sim` is to the event queue: it hosts the same
//! sans-IO agents of `castlab-proto` (through `castlab-core`'s [`Agent`] trait only; it knows
//! no protocol), runs them on the wall clock, turns their transmits into UDP datagrams and
//! their joins and leaves into IP multicast membership (source-specific where the group has a
//! source), and counts everything it refuses.
//!
//! * [`session`]: how castlab's node, port and group ids map to IPv4 addresses and UDP ports,
//!   and the safety settings ([`NetConfig`]: TTL 1, loopback, 239.0.0.0/8, a rate cap).
//! * [`pgm_codec`]: RFC 3208 packets over UDP encapsulation, fields to bytes and back.
//! * [`envelope`]: the wire format around `castlab_core::codec` (magic, version, session id,
//!   optional truncated HMAC-SHA256, padding to the packet's `size_bytes`).
//! * [`driver`]: the event loop ([`Driver`]).
//! * [`stats`]: counters ([`NetStats`]) and level/rate timelines.
//! * [`router`]: the user-space multicast router ([`Router`]): AF_PACKET forwarding, ARP,
//!   static routes, an IGMP querier, DropTail/RED queues with delay lines, and hosted
//!   `RouterExtension`s.
//!
//! `docs/real-network.md` explains how to run a session by hand and how a user-space router
//! hosting `RouterExtension`s would be built on this crate.
//!
//! [`Agent`]: castlab_core::Agent

pub mod driver;
pub mod envelope;
pub mod pcap;
pub mod pgm_codec;
pub mod router;
pub mod session;
pub mod stats;

pub use driver::{Driver, NetError};
pub use envelope::{Envelope, OpenedDatagram, Reject};
pub use router::{DrainReport, Router, RouterConfig, RouterError};
pub use session::{GroupEntry, NetConfig, SessionError, SessionTable};
pub use stats::{NetStats, Timelines};
