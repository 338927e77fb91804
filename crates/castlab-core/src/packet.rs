//! The packet every agent, router extension and link handles.
//!
//! A `Packet` is a fixed-size `Copy` value: the simulator stores packets in a pool and moves
//! them by value, so forwarding and multicast fan-out never allocate. Protocol headers are
//! variants of [`Header`], declared with their wire bodies in [`crate::headers`] (re-exported
//! here).

pub use crate::headers::*;
use crate::ids::{Addr, Dest, GroupId};
use crate::time::Instant;

/// A `u8`-backed code carried on the wire: the codec turns an unknown byte into an error in one
/// place ([`TryFrom<u8>`]), and bindings show it by [`name`](Self::name). The first variant is
/// the `Default`.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $(#[$fm:meta])* $first:ident = $fv:literal $(, $(#[$vm:meta])* $var:ident = $val:literal)* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        $vis enum $name {
            $(#[$fm])* $first = $fv,
            $($(#[$vm])* $var = $val,)*
        }
        impl Default for $name {
            fn default() -> Self {
                $name::$first
            }
        }
        impl TryFrom<u8> for $name {
            type Error = u8;
            fn try_from(v: u8) -> Result<Self, u8> {
                match v {
                    $fv => Ok($name::$first),
                    $($val => Ok($name::$var),)*
                    other => Err(other),
                }
            }
        }
        impl $name {
            /// Every value, in wire order.
            pub const ALL: &'static [$name] = &[$name::$first $(, $name::$var)*];
            /// Every value's name, in wire order (index = code where the codes count from 0).
            pub const NAMES: &'static [&'static str] = &[stringify!($first) $(, stringify!($var))*];
            /// The variant's name, for records and bindings.
            pub const fn name(self) -> &'static str {
                match self {
                    $name::$first => stringify!($first),
                    $($name::$var => stringify!($var),)*
                }
            }
        }
    };
}

/// A packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id within a run, stamped by the engine when the packet is first sent (0 before).
    pub uid: u64,
    /// Sender's address; the engine stamps it from the sending agent's binding.
    pub src: Addr,
    pub dst: Dest,
    /// Size on the wire, headers included: what serialisation time is computed from.
    pub size_bytes: u32,
    /// Flow or session identifier, chosen by the sender; monitors key on it.
    pub flow: u32,
    /// Sequence number, per (flow, layer) for data.
    pub seq: u64,
    /// Layer (0-based) for layered sources; 0 otherwise.
    pub layer: u8,
    /// Congestion mark (RED in marking mode, ECN-like); routers may set it.
    pub marked: bool,
    /// When the sender created it.
    pub sent_at: Instant,
    pub header: Header,
}

impl Packet {
    /// A data packet with the given destination and size; every other field zero.
    pub fn data(dst: Dest, size_bytes: u32) -> Self {
        Packet {
            uid: 0,
            src: Addr::default(),
            dst,
            size_bytes,
            flow: 0,
            seq: 0,
            layer: 0,
            marked: false,
            sent_at: Instant::ZERO,
            header: Header::Data,
        }
    }

    pub fn group(&self) -> Option<GroupId> {
        match self.dst {
            Dest::Group(g) => Some(g),
            Dest::Unicast(_) => None,
        }
    }
}
