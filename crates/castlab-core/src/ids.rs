//! Small copyable identifiers. Each is an index into a table owned by the simulator (or the
//! real-network driver), so look-ups on the packet path are array indexing, never hashing.

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub u32);
        impl $name {
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}{}", stringify!($name), self.0)
            }
        }
    };
}

id_type!(
    /// A host or router.
    NodeId
);
id_type!(
    /// One direction of a link (a simplex channel with its own output queue).
    ChannelId
);
id_type!(
    /// An agent (source, receiver, TCP endpoint...) attached to a node.
    AgentId
);
id_type!(
    /// A multicast group. Groups are source-specific: each has exactly one source node.
    GroupId
);

/// A port number that names an agent on its node (unicast demultiplexing).
pub type Port = u16;

/// A unicast address: a node and a port on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Addr {
    pub node: NodeId,
    pub port: Port,
}

impl Addr {
    pub const fn new(node: NodeId, port: Port) -> Self {
        Addr { node, port }
    }
}

/// Where a packet is going.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dest {
    Unicast(Addr),
    Group(GroupId),
}
