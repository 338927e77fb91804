//! The session table: how castlab's ids map onto IPv4 addresses and UDP ports, and the
//! driver's safety settings.
//!
//! * `NodeId` -> an IPv4 address (a host; on loopback each node can have its own 127.0.0.x).
//! * castlab port `p` -> UDP port `(port_base + p) mod 2^16` on the node's address.
//! * `GroupId` -> a multicast address (in 239.0.0.0/8 unless `allow_any_group`) and UDP port,
//!   with the group's source node where it has one (groups are source-specific; a group with
//!   no source, such as a control group that every receiver sends to, is joined
//!   any-source).

use std::net::Ipv4Addr;

use castlab_core::{ConfigError, Duration, GroupId, NodeId};

/// Node ids above this are refused: the tables are indexed arrays, allocated once.
pub const MAX_NODES: u32 = 4096;
/// Group ids above this are refused, for the same reason.
pub const MAX_GROUPS: u32 = 4096;

/// A multicast group of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupEntry {
    pub addr: Ipv4Addr,
    pub udp_port: u16,
    /// The only node allowed to send on the group; `None` for an any-source group.
    pub source: Option<NodeId>,
}

/// Errors in a session description. Each names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("{field}: {reason} (got {value})")]
    Invalid { field: &'static str, value: String, reason: &'static str },
}

pub(crate) fn invalid(field: &'static str, value: impl ToString, reason: &'static str) -> SessionError {
    SessionError::Invalid { field, value: value.to_string(), reason }
}

/// Addresses of the session's nodes and groups.
#[derive(Clone, Debug, Default)]
pub struct SessionTable {
    nodes: Vec<Option<Ipv4Addr>>,
    groups: Vec<Option<GroupEntry>>,
}

impl SessionTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_node(&mut self, node: NodeId, ip: Ipv4Addr) -> Result<(), SessionError> {
        if node.0 >= MAX_NODES {
            return Err(invalid("node", node.0, "node ids must be below 4096"));
        }
        if ip.is_unspecified() || ip.is_multicast() || ip.is_broadcast() {
            return Err(invalid("node address", ip, "must be a unicast address"));
        }
        let i = node.index();
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, None);
        }
        self.nodes[i] = Some(ip);
        Ok(())
    }

    /// Add group `g`. Checked against the safety settings when the driver starts.
    pub fn set_group(&mut self, g: GroupId, entry: GroupEntry) -> Result<(), SessionError> {
        if g.0 >= MAX_GROUPS {
            return Err(invalid("group", g.0, "group ids must be below 4096"));
        }
        if !entry.addr.is_multicast() {
            return Err(invalid("group address", entry.addr, "must be an IPv4 multicast address"));
        }
        if entry.udp_port == 0 {
            return Err(invalid("group port", 0, "must be a UDP port in 1..=65535"));
        }
        let i = g.index();
        if self.groups.len() <= i {
            self.groups.resize(i + 1, None);
        }
        self.groups[i] = Some(entry);
        Ok(())
    }

    /// One more than the highest node id set: ids to look up with [`SessionTable::node`].
    pub fn node_slots(&self) -> u32 {
        self.nodes.len() as u32
    }

    pub fn node(&self, n: NodeId) -> Option<Ipv4Addr> {
        self.nodes.get(n.index()).copied().flatten()
    }

    pub fn group(&self, g: GroupId) -> Option<GroupEntry> {
        self.groups.get(g.index()).copied().flatten()
    }

    /// The node whose address is `ip` (the lowest id if several share it).
    pub fn node_of(&self, ip: Ipv4Addr) -> Option<NodeId> {
        self.nodes.iter().position(|a| *a == Some(ip)).map(|i| NodeId(i as u32))
    }

    pub fn groups(&self) -> impl Iterator<Item = (GroupId, GroupEntry)> + '_ {
        self.groups.iter().enumerate().filter_map(|(i, e)| e.map(|e| (GroupId(i as u32), e)))
    }
}

/// The driver's settings. `Default` is the safe set-up: loopback, TTL 1, a 20 Mb/s cap.
#[derive(Clone, Debug)]
pub struct NetConfig {
    /// Session id carried in every envelope; datagrams of other sessions are dropped. Default 1
    /// (our choice; sessions sharing a network pick distinct ids).
    pub session_id: u32,
    /// Pre-shared key: when set, every datagram carries a truncated HMAC-SHA256 and datagrams
    /// without a valid one are dropped.
    pub key: Option<Vec<u8>>,
    /// The interface address for multicast (IP_MULTICAST_IF and membership). Default
    /// 127.0.0.1: traffic stays on the loopback interface unless told otherwise.
    pub iface_addr: Ipv4Addr,
    /// IP_MULTICAST_TTL. Default 1: multicast never leaves the link (our choice, the safe one;
    /// a routed testbed needs one more per router hop).
    pub ttl: u32,
    /// castlab port p is UDP port `(port_base + p) mod 2^16` ([`NetConfig::udp_port`]). Default 47000 (our choice: a fixed base so
    /// that the processes of a session agree without being told; any free range will do).
    pub port_base: u16,
    /// Allow multicast addresses outside 239.0.0.0/8 (the administratively scoped block,
    /// RFC 2365). Default false.
    pub allow_any_group: bool,
    /// Hard cap on this process's sending rate, bit/s of UDP payload. Datagrams over it are
    /// dropped and counted. Default 20 Mb/s (our choice: ten times the largest rate the papers'
    /// set-ups send, 2 Mb/s for six doubling layers from 32 kb/s).
    pub rate_cap_bps: f64,
    /// Token-bucket depth of the cap, bytes. Default 64 KiB (our choice: absorbs a burst of a
    /// few dozen 1 KB packets due at one instant, as a layered source's streams can be).
    pub rate_cap_burst_bytes: u32,
    /// SO_RCVBUF requested for every socket, bytes. Default 4 MiB (our choice: 1.6 s of the
    /// 20 Mb/s cap; the kernel may clamp it to net.core.rmem_max, reported in the counters).
    pub recv_buffer_bytes: usize,
    /// Master seed: agent `a`'s random stream is `Rng::stream(seed, Agent, a)`, as in the
    /// simulator. Default 0.
    pub seed: u64,
    /// Speak PGM (RFC 3208 over UDP, [`crate::pgm_codec`]) instead of castlab's envelope, for agents
    /// whose packets carry `Header::Pgm`. The session's groups then share one UDP port, which is
    /// also PGM's data-destination port and the port every agent's socket binds (PGM's UDP
    /// encapsulation has one port, OpenPGM's and ZeroMQ's `epgm://` alike), and a datagram
    /// carries no session id, MAC or `sent_at`: the port and the TSI tell sessions apart.
    /// Default false (castlab's envelope, which castlab's own protocols need).
    pub pgm_wire: bool,
    /// With `pgm_wire`: the castlab flow id of the PGM session (what the agents' packets carry)
    /// and the data-source port of the TSI this process sends with. Default 1 (the PGM roles'
    /// default `--flow`).
    pub pgm_flow: u32,
    /// Without a key, a node's datagrams carrying another session epoch than the one flowing
    /// from it (a restart, or a forgery: nothing authenticates the epoch) are believed only
    /// once the flowing epoch has been silent this long; until then they are dropped and
    /// counted (`unconfirmed_epoch` if newer, `stale_epoch` if older). With a key the MAC
    /// covers the epoch and a newer one is believed at once. Default 1 s (our choice: four
    /// times the longest gap inside a flowing castlab stream, the 250 ms between the 1000-byte
    /// packets of a 32 kb/s base layer, so a stream that flows is never overridden; and short
    /// beside a process restart, of which it drops at most this much of the new incarnation).
    /// The rule keeps the source that is flowing and ignores a second claimant until the first
    /// has gone quiet, as RTP does for a colliding SSRC (RFC 3550 §8.2).
    pub restart_quiet: Duration,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            session_id: 1,
            key: None,
            iface_addr: Ipv4Addr::LOCALHOST,
            ttl: 1,
            port_base: 47_000,
            allow_any_group: false,
            rate_cap_bps: 20e6,
            rate_cap_burst_bytes: 64 * 1024,
            recv_buffer_bytes: 4 << 20,
            seed: 0,
            pgm_wire: false,
            pgm_flow: 1,
            restart_quiet: Duration::from_secs(1),
        }
    }
}

// The pre-shared `key` is bytes, not a setting by name: bindings pass it apart.
castlab_core::config_fields!(NetConfig {
    session_id,
    iface_addr,
    ttl,
    port_base,
    allow_any_group,
    rate_cap_bps,
    rate_cap_burst_bytes,
    recv_buffer_bytes,
    seed,
    pgm_wire,
    pgm_flow,
    restart_quiet,
});

impl NetConfig {
    /// The UDP port of castlab port `port`: `port_base + port`, wrapped modulo 2^16 so that
    /// every castlab port has one whatever the base (a router extension's own port sits at the
    /// top of castlab's port space); the map is one to one. None for UDP port 0, which no
    /// socket can be bound to or reached at.
    pub fn udp_port(&self, port: u16) -> Option<u16> {
        match self.port_base.wrapping_add(port) {
            0 => None,
            p => Some(p),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{int_in, positive};
        positive("rate_cap_bps", self.rate_cap_bps)?;
        int_in("rate_cap_burst_bytes", self.rate_cap_burst_bytes.into(), 1500, u32::MAX.into())?;
        int_in("ttl", self.ttl.into(), 1, 255)?;
        if self.iface_addr.is_multicast() || self.iface_addr.is_broadcast() {
            return Err(ConfigError::new("iface_addr", self.iface_addr, "must be a unicast interface address"));
        }
        int_in("port_base", self.port_base.into(), 1, u16::MAX.into())?;
        if self.pgm_wire {
            int_in("pgm_flow", self.pgm_flow.into(), 1, u16::MAX.into())?;
            if self.key.is_some() {
                return Err(ConfigError::new("key", "(set)", "PGM on the wire carries no MAC: no key with pgm_wire"));
            }
        }
        if self.key.as_ref().is_some_and(|k| k.is_empty()) {
            return Err(ConfigError::new("key", "b''", "must not be empty (None for no key)"));
        }
        Ok(())
    }

    /// Whether `addr` is a group this configuration allows.
    pub fn group_allowed(&self, addr: Ipv4Addr) -> bool {
        addr.is_multicast() && (self.allow_any_group || addr.octets()[0] == 239)
    }
}

#[cfg(test)]
mod tests {
    use super::NetConfig;

    #[test]
    fn every_castlab_port_has_one_udp_port_whatever_the_base() {
        let cfg = NetConfig::default(); // port base 47000
        assert_eq!(cfg.udp_port(0), Some(47_000));
        assert_eq!(cfg.udp_port(18_535), Some(65_535));
        assert_eq!(cfg.udp_port(18_536), None, "47000 + 18536 wraps to UDP port 0");
        assert_eq!(cfg.udp_port(18_537), Some(1));
        // a router extension's port at the top of the space (65001): 47000 + 65001 - 65536
        assert_eq!(cfg.udp_port(65_001), Some(46_465));
        // one to one: no two castlab ports share a UDP port
        let mut seen = vec![false; 1 << 16];
        for p in 0..=u16::MAX {
            if let Some(u) = cfg.udp_port(p) {
                assert!(!seen[u as usize], "UDP port {u} twice");
                seen[u as usize] = true;
            }
        }
        assert_eq!(seen.iter().filter(|&&s| s).count(), 65_535);
    }
}
