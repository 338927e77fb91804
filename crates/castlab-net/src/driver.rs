//! The driver: castlab agents on real sockets and the wall clock.
//!
//! One thread and one [`mio::Poll`]. The loop runs every due timer deadline (in deadline order,
//! never before the deadline), then waits for a readable socket no longer than until the next
//! deadline. After every `handle_*` call it applies the driving rule of
//! [`castlab_core::agent`]: drain `poll_transmit` (each packet becomes one datagram), re-read
//! `poll_timeout` (replacing the armed deadline), drain `poll_event` (joins and leaves become
//! socket options; level and rate changes go into [`Timelines`]).
//!
//! Sockets: each agent has its own UDP socket bound to its node's address and
//! `port_base + port` (modulo 2^16, [`NetConfig::udp_port`]); it receives the agent's unicast
//! packets and sends everything the agent
//! sends (so a datagram's IP source is the node's address, which receivers check). Group
//! packets arrive on one socket per group UDP port, bound to the wildcard address with
//! `IP_MULTICAST_ALL` off, so that it receives only the groups this process joined; the
//! driver keeps a per-group count of local members and hands each packet to every local agent
//! that joined the group, as a host's kernel would.
//!
//! Restarts: every datagram carries its driver's session epoch, the Unix-epoch nanoseconds at
//! which that driver was created ([`crate::envelope`]). The receiving driver keeps the latest
//! epoch of each node: a newer one means the node's process was restarted, so every local
//! agent on another node is told ([`Agent::handle_peer_restart`], then the driving rule)
//! before the packet is delivered, and resynchronises with the new incarnation; a datagram
//! with an older one is a late straggler of the old incarnation and is counted
//! (`stale_epoch`) and dropped. Epochs compare by the real-time clock, so a restart on a host
//! whose clock was stepped back by more than the downtime would read as stale: keep clocks
//! monotone (NTP slews rather than steps).
//!
//! Time: [`Instant`] is the monotonic clock since the driver was created. The codec's
//! `sent_at` field carries the sender's time on a shared scale (Unix-epoch nanoseconds from
//! the real-time clock, sampled once at creation and then advanced by the monotonic clock):
//! the sending driver converts to it and the receiving one back to its own `Instant`, so an
//! agent comparing `sent_at` with its own times (a receiver's join instants) compares
//! like with like. On one host (namespaces share the clock) this is exact up to the sampling
//! of the two clocks; across hosts it needs synchronised clocks (NTP).

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{SystemTime, UNIX_EPOCH};

use castlab_core::{
    Addr, Agent, AgentEvent, AgentId, Dest, GroupId, Header, Instant, NodeId, Packet, PgmHeader, PgmKind, Rng,
    StartInfo, StreamKind,
};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use crate::envelope::{Envelope, Reject, MAX_DATAGRAM};
use crate::pcap::PcapWriter;
use crate::pgm_codec::{self, PgmPacket, PgmType};
use crate::session::{invalid, GroupEntry, NetConfig, SessionError, SessionTable, MAX_NODES};
use crate::stats::{NetStats, Timelines, TokenBucket};

/// Tokens at or above this are group sockets.
const GROUP_TOKEN_BASE: usize = 1 << 20;
/// At most this many datagrams are read from one socket per loop turn, so a flood cannot
/// starve the timers; a socket left with data is read again on the next turn.
const READS_PER_TURN: usize = 256;
/// At most this many timer deadlines are run per loop turn, for the same reason.
const FIRES_PER_TURN: usize = 1024;

/// Errors setting up or running the driver. Each names the field or the socket concerned.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Config(#[from] castlab_core::ConfigError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> NetError {
    let what = what.into();
    move |source| NetError::Io { what, source }
}

struct Slot {
    id: AgentId,
    addr: Addr,
    /// The socket's address (node address and UDP port).
    bound: SocketAddrV4,
    agent: Box<dyn Agent + Send>,
    socket: UdpSocket,
    armed: Option<Instant>,
    joined: Vec<GroupId>,
    pending: bool,
}

/// Node ids from here up name PGM peers the session table does not list (third-party
/// receivers known only by the address their NAKs come from), in order of first datagram.
pub const PEER_NODE_BASE: u32 = 1 << 30;
/// At most this many unlisted PGM peers are remembered; datagrams from more are refused as
/// from a wrong source (the table is allocated as it grows, never per packet after).
const MAX_PEERS: usize = 4096;

/// The PGM session of a driver with `pgm_wire` (see [`crate::pgm_codec`] for the format).
struct PgmSession {
    /// The one UDP port: the groups', every agent socket's, and PGM's data-destination port.
    port: u16,
    /// The session's group and its address (the group NLA of NAKs and NCFs).
    group: GroupId,
    group_addr: Ipv4Addr,
    /// This process's TSI (what its downstream packets carry): GSI "cl" + the session id,
    /// data-source port `pgm_flow` (our choice: stable across runs, unique per session).
    gsi: [u8; 6],
    sport: u16,
    /// The TSI of the source whose downstream packets arrived last: the NAKs' destination TSI.
    remote: Option<([u8; 6], u16)>,
    /// SPM sequence number (RFC 3208 §8.1: its own sequence, one per SPM sent).
    spm_sqn: u32,
    /// Unlisted peers' addresses: peer k is node `PEER_NODE_BASE + k`.
    peers: Vec<Ipv4Addr>,
    /// The last SPM sent (agent index, destination, packet), with its window edges moved on by
    /// every ODATA since: the template of the SPM with OPT_FIN that ends the session.
    last_spm: Option<(usize, SocketAddrV4, PgmPacket)>,
}

struct GroupSocket {
    udp_port: u16,
    socket: UdpSocket,
    pending: bool,
}

/// The real-network driver. See the module documentation.
pub struct Driver {
    cfg: NetConfig,
    table: SessionTable,
    envelope: Envelope,
    poll: Poll,
    events: Events,
    clock0: std::time::Instant,
    /// Unix-epoch ns at `clock0`: the shared time scale of `sent_at` on the wire.
    epoch_ns: u64,
    slots: Vec<Slot>,
    gsocks: Vec<GroupSocket>,
    /// Local members per group id (index), so membership changes only on 0 <-> 1.
    members: Vec<u32>,
    /// The latest session epoch seen from each node (index; 0: none yet), allocated once.
    peer_epochs: Box<[u64]>,
    bucket: TokenBucket,
    next_uid: u64,
    buf: Box<[u8]>,
    /// The application bytes of the packet being sent (`Agent::poll_payload`).
    app: Box<[u8]>,
    /// The application bytes of a group packet being delivered: a copy, since an agent's
    /// sends reuse `buf` before the next member gets the packet.
    rx_app: Box<[u8]>,
    stats: NetStats,
    timelines: Timelines,
    last_error: Option<String>,
    pgm: Option<PgmSession>,
    pcap: Option<PcapWriter>,
}

impl Driver {
    /// A driver for `table` under `cfg`. Checks the configuration and every group against
    /// the safety settings (239.0.0.0/8 unless `allow_any_group`; sources with addresses).
    pub fn new(cfg: NetConfig, table: SessionTable) -> Result<Self, NetError> {
        cfg.validate()?;
        for (g, e) in table.groups() {
            if !cfg.group_allowed(e.addr) {
                return Err(invalid(
                    "group address",
                    format!("{} for {g}", e.addr),
                    "must be in 239.0.0.0/8 (or allow any group)",
                )
                .into());
            }
            if let Some(s) = e.source {
                if table.node(s).is_none() {
                    return Err(
                        invalid("group source", format!("{s} of {g}"), "the source node needs an address").into()
                    );
                }
            }
        }
        let pgm = if cfg.pgm_wire { Some(pgm_session(&cfg, &table)?) } else { None };
        let epoch_ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        let groups = table.groups().map(|(g, _)| g.index() + 1).max().unwrap_or(0);
        Ok(Driver {
            // this incarnation's epoch: its creation time, so that a restart has a later one
            envelope: Envelope::new(cfg.session_id, cfg.key.as_deref()).with_epoch(epoch_ns.max(1)),
            bucket: TokenBucket::new(cfg.rate_cap_bps, cfg.rate_cap_burst_bytes),
            cfg,
            table,
            poll: Poll::new().map_err(io_err("creating the poll"))?,
            events: Events::with_capacity(256),
            clock0: std::time::Instant::now(),
            epoch_ns,
            slots: Vec::new(),
            gsocks: Vec::new(),
            members: vec![0; groups],
            peer_epochs: vec![0; MAX_NODES as usize].into_boxed_slice(),
            next_uid: 0,
            buf: vec![0u8; MAX_DATAGRAM + 1].into_boxed_slice(),
            app: vec![0u8; MAX_DATAGRAM].into_boxed_slice(),
            rx_app: vec![0u8; MAX_DATAGRAM].into_boxed_slice(),
            stats: NetStats::default(),
            timelines: Timelines::default(),
            last_error: None,
            pgm,
            pcap: None,
        })
    }

    /// Write every datagram this driver sends and reads from now on into the pcap file `path`
    /// (see [`crate::pcap`]), timestamped on the Unix epoch.
    pub fn set_pcap(&mut self, path: &std::path::Path) -> Result<(), NetError> {
        let w = PcapWriter::create(path).map_err(io_err(format!("pcap file {}", path.display())))?;
        self.pcap = Some(w);
        Ok(())
    }

    /// Flush the pcap file (also done when the driver is dropped); returns the records written.
    pub fn flush_pcap(&mut self) -> Result<u64, NetError> {
        match &mut self.pcap {
            Some(w) => {
                w.flush().map_err(io_err("pcap file"))?;
                Ok(w.records)
            }
            None => Ok(0),
        }
    }

    /// Note one datagram in the capture, if there is one. A write error ends the capture (and
    /// is noted), never the run.
    fn capture(&mut self, now: Instant, from: SocketAddrV4, to: SocketAddrV4, len: usize) {
        if let Some(w) = &mut self.pcap {
            if let Err(e) = w.record(self.epoch_ns.saturating_add(now.as_nanos()), from, to, &self.buf[..len]) {
                self.pcap = None;
                self.last_error = Some(format!("pcap: {e}"));
            }
        }
    }

    /// Wall-clock time since the driver was created.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.clock0.elapsed().as_nanos() as u64)
    }

    pub fn config(&self) -> &NetConfig {
        &self.cfg
    }
    /// This driver's session epoch, sealed into every datagram it sends.
    pub fn epoch(&self) -> u64 {
        self.envelope.epoch()
    }
    pub fn table(&self) -> &SessionTable {
        &self.table
    }
    pub fn stats(&self) -> &NetStats {
        &self.stats
    }
    pub fn timelines(&self) -> &Timelines {
        &self.timelines
    }
    /// The last socket error met (membership or send), for status output.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }
    pub fn agent_count(&self) -> usize {
        self.slots.len()
    }
    /// Agent `i` (in the order added) as its concrete type.
    pub fn agent<T: 'static>(&self, i: usize) -> Option<&T> {
        self.slots.get(i).and_then(|s| s.agent.as_any().downcast_ref::<T>())
    }
    /// Agent `i` as `Any`, for a caller that tries several types.
    pub fn agent_any(&self, i: usize) -> Option<&dyn core::any::Any> {
        self.slots.get(i).map(|s| s.agent.as_any())
    }
    pub fn agent_id(&self, i: usize) -> Option<AgentId> {
        self.slots.get(i).map(|s| s.id)
    }
    /// The UDP address agent `i`'s socket is bound to.
    pub fn local_addr(&self, i: usize) -> Option<SocketAddr> {
        self.slots.get(i).and_then(|s| s.socket.local_addr().ok())
    }
    /// Groups agent `i` is a member of now.
    pub fn joined(&self, i: usize) -> &[GroupId] {
        self.slots.get(i).map_or(&[], |s| &s.joined)
    }

    /// Bind a socket for an agent at `addr` (its node's address, `port_base + port`), start it
    /// now with the simulator's `StartInfo` (its address and `Rng::stream(seed, Agent, id)`),
    /// and apply the driving rule. Returns its index.
    pub fn add_agent(&mut self, id: AgentId, addr: Addr, agent: Box<dyn Agent + Send>) -> Result<usize, NetError> {
        let ip = self
            .table
            .node(addr.node)
            .ok_or_else(|| invalid("node", addr.node.0, "has no address in the session table"))?;
        let udp_port = match &self.pgm {
            // PGM's UDP encapsulation has one port: NAKs come to the source at the group's.
            Some(s) => {
                if self.slots.iter().any(|x| x.addr.node == addr.node) {
                    return Err(invalid("node", addr.node.0, "with pgm_wire, one agent per node and driver").into());
                }
                s.port
            }
            None => {
                let udp_port = self
                    .cfg
                    .udp_port(addr.port)
                    .ok_or_else(|| invalid("port", addr.port, "port_base + port is UDP port 0"))?;
                if self.table.groups().any(|(_, e)| e.udp_port == udp_port) {
                    return Err(invalid("port", addr.port, "port_base + port is a group's UDP port").into());
                }
                udp_port
            }
        };
        if self.slots.iter().any(|s| s.addr == addr) {
            return Err(invalid("port", addr.port, "another agent of this driver has this node and port").into());
        }
        let what = format!("agent {} socket {ip}:{udp_port}", id.0);
        let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).map_err(io_err(what.clone()))?;
        s.set_nonblocking(true).map_err(io_err(what.clone()))?;
        s.set_multicast_ttl_v4(self.cfg.ttl).map_err(io_err(what.clone()))?;
        s.set_multicast_if_v4(&self.cfg.iface_addr).map_err(io_err(format!("{what}: iface_addr")))?;
        s.set_multicast_loop_v4(true).map_err(io_err(what.clone()))?;
        if self.pgm.is_some() {
            // beside this process's group socket on the same port (the wildcard address)
            s.set_reuse_address(true).map_err(io_err(what.clone()))?;
        }
        self.set_rcvbuf(&s, &what)?;
        s.bind(&SocketAddrV4::new(ip, udp_port).into()).map_err(io_err(format!("{what}: bind")))?;
        let mut socket = UdpSocket::from_std(s.into());
        let i = self.slots.len();
        self.poll.registry().register(&mut socket, Token(i), Interest::READABLE).map_err(io_err(what))?;
        let bound = SocketAddrV4::new(ip, udp_port);
        self.slots.push(Slot { id, addr, bound, agent, socket, armed: None, joined: Vec::new(), pending: false });
        let now = self.now();
        let info = StartInfo { addr, rng: Rng::stream(self.cfg.seed, StreamKind::Agent, id.0 as u64) };
        self.slots[i].agent.handle_start(now, info);
        self.drive(i, now);
        Ok(i)
    }

    fn set_rcvbuf(&mut self, s: &Socket, what: &str) -> Result<(), NetError> {
        s.set_recv_buffer_size(self.cfg.recv_buffer_bytes).map_err(io_err(format!("{what}: SO_RCVBUF")))?;
        let got = s.recv_buffer_size().map_err(io_err(what.to_string()))? as u64;
        let r = &mut self.stats.recv_buffer_bytes;
        *r = if *r == 0 { got } else { (*r).min(got) };
        Ok(())
    }

    /// Run until the wall clock reaches `until` (since the driver's creation), or until the
    /// poll is interrupted by a signal (returns early so that the caller can look at it).
    pub fn run_until(&mut self, until: Instant) -> Result<(), NetError> {
        loop {
            let mut now = self.now();
            // Timers first: every due deadline, earliest first (ties: the agent added first).
            for _ in 0..FIRES_PER_TURN {
                let due = self
                    .slots
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| s.armed.filter(|t| *t <= now).map(|t| (t, i)))
                    .min();
                let Some((t, i)) = due else { break };
                self.slots[i].armed = None;
                let late = now.saturating_since(t).as_nanos();
                self.stats.timer_fires += 1;
                self.stats.late_total_ns += late;
                self.stats.late_max_ns = self.stats.late_max_ns.max(late);
                self.slots[i].agent.handle_timeout(now);
                self.drive(i, now);
                now = self.now();
            }
            if now >= until {
                return Ok(());
            }
            let pending = self.slots.iter().any(|s| s.pending) || self.gsocks.iter().any(|g| g.pending);
            let next = self.slots.iter().filter_map(|s| s.armed).min().unwrap_or(Instant::MAX).min(until);
            let timeout = if pending {
                std::time::Duration::ZERO
            } else {
                std::time::Duration::from_nanos((next - now).as_nanos())
            };
            match self.poll.poll(&mut self.events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
                Err(e) => return Err(NetError::Io { what: "poll".into(), source: e }),
            }
            for ev in self.events.iter() {
                let t = ev.token().0;
                if t >= GROUP_TOKEN_BASE {
                    if let Some(g) = self.gsocks.get_mut(t - GROUP_TOKEN_BASE) {
                        g.pending = true;
                    }
                } else if let Some(s) = self.slots.get_mut(t) {
                    s.pending = true;
                }
            }
            for i in 0..self.slots.len() {
                if self.slots[i].pending {
                    self.read_agent_socket(i);
                }
            }
            for j in 0..self.gsocks.len() {
                if self.gsocks[j].pending {
                    self.read_group_socket(j);
                }
            }
        }
    }

    /// The driving rule (castlab_core::agent) for agent `i` after a `handle_*` call.
    fn drive(&mut self, i: usize, now: Instant) {
        while let Some(p) = self.slots[i].agent.poll_transmit() {
            self.send(i, p, now);
        }
        self.slots[i].armed = self.slots[i].agent.poll_timeout();
        while let Some(ev) = self.slots[i].agent.poll_event() {
            match ev {
                AgentEvent::Join(g) => self.join(i, g),
                AgentEvent::Leave(g) => self.leave(i, g),
                AgentEvent::LevelChanged { level } => {
                    self.timelines.level_time_ns.push(now.as_nanos());
                    self.timelines.level_agent.push(self.slots[i].id.0);
                    self.timelines.level.push(level);
                }
                AgentEvent::RateChanged { rate_bps } => {
                    self.timelines.rate_time_ns.push(now.as_nanos());
                    self.timelines.rate_agent.push(self.slots[i].id.0);
                    self.timelines.rate_bps.push(rate_bps);
                }
            }
        }
    }

    /// Stamp `src`, `uid` and `sent_at` as the simulator does, then send one datagram.
    fn send(&mut self, i: usize, mut p: Packet, now: Instant) {
        if self.pgm.is_some() {
            p.src = self.slots[i].addr;
            return self.send_pgm(i, p, now);
        }
        let slot = &self.slots[i];
        let id = slot.id.0;
        p.src = slot.addr;
        self.next_uid += 1;
        // Unique across the session's processes: the node in the top bits, a count below.
        p.uid = (slot.addr.node.0 as u64) << 40 | (self.next_uid & ((1 << 40) - 1));
        p.sent_at = Instant::from_nanos(self.epoch_ns.saturating_add(now.as_nanos()));
        let target = match p.dst {
            Dest::Unicast(a) => match (self.table.node(a.node), self.cfg.udp_port(a.port)) {
                (Some(ip), Some(port)) => SocketAddrV4::new(ip, port),
                _ => {
                    self.stats.no_route += 1;
                    return;
                }
            },
            Dest::Group(g) => match self.table.group(g) {
                Some(e) => SocketAddrV4::new(e.addr, e.udp_port),
                None => {
                    self.stats.no_route += 1;
                    return;
                }
            },
        };
        let m = self.slots[i].agent.poll_payload(&p, &mut self.app).min(self.app.len());
        let len = self.envelope.datagram_len_with(&p, m);
        if !self.bucket.take(now.as_nanos(), len) {
            self.stats.rate_cap_drops += 1;
            self.stats.rate_cap_drop_bytes += len as u64;
            return;
        }
        let n = match self.envelope.seal_with(&p, &self.app[..m], &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.stats.send_errors += 1;
                self.note_error(format!("agent {id}: {e}"));
                return;
            }
        };
        match self.slots[i].socket.send_to(&self.buf[..n], SocketAddr::V4(target)) {
            Ok(_) => {
                self.stats.datagrams_sent += 1;
                self.stats.bytes_sent += n as u64;
                self.capture(now, self.slots[i].bound, target, n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.stats.send_would_block += 1,
            Err(e) => {
                self.stats.send_errors += 1;
                if self.last_error.is_none() {
                    self.note_error(format!("send to {target}: {e}"));
                }
            }
        }
    }

    fn note_error(&mut self, e: String) {
        self.last_error = Some(e);
    }

    /// Whether the datagram's IP source fits the packet's claimed node (when listed).
    fn source_ok(&mut self, p: &Packet, from: Ipv4Addr) -> bool {
        match self.table.node(p.src.node) {
            Some(ip) => ip == from,
            None => {
                self.stats.from_unlisted += 1;
                true
            }
        }
    }

    /// The session epoch of a datagram from `node` against the latest seen from it: false
    /// (counted) for an older one; a newer one tells every local agent on another node of the
    /// restart before the packet is delivered. Nodes past the table (unlisted, out of range)
    /// and epoch 0 (a sender that stamps none) are not tracked.
    fn epoch_ok(&mut self, node: NodeId, epoch: u64) -> bool {
        let Some(seen) = self.peer_epochs.get(node.index()).copied() else { return true };
        if epoch == 0 || epoch == seen {
            return true;
        }
        if epoch < seen {
            self.stats.stale_epoch += 1;
            return false;
        }
        self.peer_epochs[node.index()] = epoch;
        if seen != 0 {
            self.stats.peer_restarts += 1;
            let now = self.now();
            for i in 0..self.slots.len() {
                if self.slots[i].addr.node != node {
                    self.slots[i].agent.handle_peer_restart(now, node);
                    self.drive(i, now);
                }
            }
        }
        true
    }

    fn to_local_time(&self, p: &mut Packet) {
        p.sent_at = Instant::from_nanos(p.sent_at.as_nanos().saturating_sub(self.epoch_ns));
    }

    fn read_agent_socket(&mut self, i: usize) {
        if self.pgm.is_some() {
            return self.read_pgm(Some(i), None);
        }
        for _ in 0..READS_PER_TURN {
            let to = Some(self.slots[i].bound);
            let (mut p, from, epoch, app) = match self.receive_on(Some(i), None, to) {
                Received::Packet(p, from, epoch, app) => (p, from, epoch, app),
                Received::Skip => continue,
                Received::Drained => {
                    self.slots[i].pending = false;
                    return;
                }
            };
            if p.dst != Dest::Unicast(self.slots[i].addr) {
                self.stats.rejected[Reject::Misdirected as usize] += 1;
                continue;
            }
            let SocketAddr::V4(from) = from else {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            };
            if !self.source_ok(&p, *from.ip()) {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            }
            if !self.epoch_ok(p.src.node, epoch) {
                continue;
            }
            self.to_local_time(&mut p);
            self.stats.delivered += 1;
            let now = self.now();
            if !app.is_empty() {
                self.slots[i].agent.handle_payload(&p, &self.buf[app]);
            }
            self.slots[i].agent.handle_packet(now, &p);
            self.drive(i, now);
        }
    }

    fn read_group_socket(&mut self, j: usize) {
        if self.pgm.is_some() {
            return self.read_pgm(None, Some(j));
        }
        for _ in 0..READS_PER_TURN {
            let (mut p, from, epoch, app) = match self.receive_on(None, Some(j), None) {
                Received::Packet(p, from, epoch, app) => (p, from, epoch, app),
                Received::Skip => continue,
                Received::Drained => {
                    self.gsocks[j].pending = false;
                    return;
                }
            };
            let entry = match p.dst {
                Dest::Group(g) => self.table.group(g).filter(|e| e.udp_port == self.gsocks[j].udp_port),
                Dest::Unicast(_) => None,
            };
            let Some(entry) = entry else {
                self.stats.rejected[Reject::Misdirected as usize] += 1;
                continue;
            };
            let SocketAddr::V4(from) = from else {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            };
            // Source-specific groups: only the group's source may send on it.
            let from_source = match entry.source {
                Some(s) => p.src.node == s && self.table.node(s) == Some(*from.ip()),
                None => true,
            };
            if !from_source || !self.source_ok(&p, *from.ip()) {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            }
            if !self.epoch_ok(p.src.node, epoch) {
                continue;
            }
            self.to_local_time(&mut p);
            let g = p.group().expect("checked above");
            let m = app.len();
            self.rx_app[..m].copy_from_slice(&self.buf[app]);
            let mut any = false;
            let now = self.now();
            for i in 0..self.slots.len() {
                if self.slots[i].joined.contains(&g) {
                    any = true;
                    self.stats.delivered += 1;
                    if m > 0 {
                        self.slots[i].agent.handle_payload(&p, &self.rx_app[..m]);
                    }
                    self.slots[i].agent.handle_packet(now, &p);
                    self.drive(i, now);
                }
            }
            if !any {
                self.stats.not_joined += 1;
            }
        }
    }

    /// The socket receiving group port `udp_port`, created on first use.
    fn group_socket(&mut self, udp_port: u16) -> Result<usize, NetError> {
        if let Some(j) = self.gsocks.iter().position(|g| g.udp_port == udp_port) {
            return Ok(j);
        }
        let what = format!("group socket 0.0.0.0:{udp_port}");
        let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP)).map_err(io_err(what.clone()))?;
        s.set_nonblocking(true).map_err(io_err(what.clone()))?;
        // Several receivers on one host share the group port; each socket gets only the
        // groups it joined (Linux delivers every joined group to every socket otherwise).
        s.set_reuse_address(true).map_err(io_err(what.clone()))?;
        s.set_multicast_all_v4(false).map_err(io_err(format!("{what}: IP_MULTICAST_ALL")))?;
        self.set_rcvbuf(&s, &what)?;
        s.bind(&SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, udp_port).into()).map_err(io_err(format!("{what}: bind")))?;
        let mut socket = UdpSocket::from_std(s.into());
        let j = self.gsocks.len();
        self.poll
            .registry()
            .register(&mut socket, Token(GROUP_TOKEN_BASE + j), Interest::READABLE)
            .map_err(io_err(what))?;
        self.gsocks.push(GroupSocket { udp_port, socket, pending: false });
        Ok(j)
    }

    /// The kernel membership for `g` (source-specific where the group has a source).
    fn membership(&mut self, j: usize, g: GroupId, e: GroupEntry, join: bool) -> io::Result<()> {
        let s = SockRef::from(&self.gsocks[j].socket);
        let iface = self.cfg.iface_addr;
        match e.source.and_then(|n| self.table.node(n)) {
            Some(src) if join => s.join_ssm_v4(&src, &e.addr, &iface),
            Some(src) => s.leave_ssm_v4(&src, &e.addr, &iface),
            None if join => s.join_multicast_v4(&e.addr, &iface),
            None => s.leave_multicast_v4(&e.addr, &iface),
        }
        .map_err(|err| {
            io::Error::new(err.kind(), format!("{} {g} {}: {err}", if join { "join" } else { "leave" }, e.addr))
        })
    }

    fn join(&mut self, i: usize, g: GroupId) {
        if self.slots[i].joined.contains(&g) {
            return;
        }
        let Some(e) = self.table.group(g) else {
            self.stats.join_errors += 1;
            self.note_error(format!("agent {} joined {g}, which the session table does not list", self.slots[i].id.0));
            return;
        };
        if self.members[g.index()] == 0 {
            let r = self
                .group_socket(e.udp_port)
                .map_err(|e| e.to_string())
                .and_then(|j| self.membership(j, g, e, true).map_err(|e| e.to_string()));
            if let Err(msg) = r {
                self.stats.join_errors += 1;
                self.note_error(msg);
                return;
            }
        }
        self.members[g.index()] += 1;
        self.slots[i].joined.push(g);
    }

    fn leave(&mut self, i: usize, g: GroupId) {
        let Some(k) = self.slots[i].joined.iter().position(|x| *x == g) else { return };
        self.slots[i].joined.swap_remove(k);
        self.members[g.index()] -= 1;
        if self.members[g.index()] == 0 {
            let e = self.table.group(g).expect("joined groups are listed");
            let j = self.gsocks.iter().position(|s| s.udp_port == e.udp_port).expect("a joined group has its socket");
            if let Err(err) = self.membership(j, g, e, false) {
                self.stats.join_errors += 1;
                self.note_error(err.to_string());
            }
        }
    }
}

/// The PGM session of a configuration with `pgm_wire`: the groups must share one UDP port;
/// the lowest group id is the session's group.
fn pgm_session(cfg: &NetConfig, table: &SessionTable) -> Result<PgmSession, NetError> {
    let mut groups = table.groups();
    let (group, first) =
        groups.next().ok_or_else(|| invalid("groups", "none", "pgm_wire needs the session's group"))?;
    if let Some((g, e)) = table.groups().find(|(_, e)| e.udp_port != first.udp_port) {
        return Err(invalid(
            "group port",
            format!("{} of {g}", e.udp_port),
            "with pgm_wire, every group has one UDP port",
        )
        .into());
    }
    let id = cfg.session_id.to_be_bytes();
    Ok(PgmSession {
        port: first.udp_port,
        group,
        group_addr: first.addr,
        gsi: [b'c', b'l', id[0], id[1], id[2], id[3]],
        sport: cfg.pgm_flow as u16,
        remote: None,
        spm_sqn: 0,
        peers: Vec::new(),
        last_spm: None,
    })
}

impl Driver {
    /// Read one datagram from agent `i`'s or group socket `j` and open its envelope, counting
    /// what arrives and what is rejected, and noting it in the capture: to `to`, or (group
    /// sockets) to the group the packet names.
    fn receive_on(&mut self, i: Option<usize>, j: Option<usize>, to: Option<SocketAddrV4>) -> Received {
        let sock = match (i, j) {
            (Some(i), _) => &self.slots[i].socket,
            (None, Some(j)) => &self.gsocks[j].socket,
            _ => return Received::Drained,
        };
        let (n, from) = match sock.recv_from(&mut self.buf) {
            Ok(x) => x,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Received::Drained,
            Err(_) => {
                self.stats.recv_errors += 1;
                return Received::Skip;
            }
        };
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += n as u64;
        let opened = self.envelope.open_parts(&self.buf[..n]);
        if self.pcap.is_some() {
            let to = to
                .or_else(|| match &opened {
                    Ok(crate::envelope::OpenedDatagram { packet: p, .. }) => {
                        p.group().and_then(|g| self.table.group(g)).map(|e| SocketAddrV4::new(e.addr, e.udp_port))
                    }
                    Err(_) => None,
                })
                .unwrap_or(crate::pcap::UNKNOWN);
            let from = match from {
                SocketAddr::V4(a) => a,
                SocketAddr::V6(_) => crate::pcap::UNKNOWN,
            };
            let now = self.now();
            self.capture(now, from, to, n);
        }
        match opened {
            Ok(o) => Received::Packet(o.packet, from, o.epoch, o.app),
            Err(r) => {
                self.stats.rejected[r as usize] += 1;
                Received::Skip
            }
        }
    }
}

/// What `read_pgm` does with one decoded datagram.
enum PgmIn {
    /// Deliver to the agent socket's agent (NAKs) or to the group's members (the rest).
    Deliver,
    /// Counted, not for an agent (SPMR, NNAK, POLL...).
    Counted,
}

impl Driver {
    /// The IPv4 address of `node`: the session table's, or an unlisted PGM peer's.
    fn ip_of(&self, node: NodeId) -> Option<Ipv4Addr> {
        match (&self.pgm, node.0.checked_sub(PEER_NODE_BASE)) {
            (Some(s), Some(k)) => s.peers.get(k as usize).copied(),
            _ => self.table.node(node),
        }
    }

    /// The node id of `ip`: the session table's node with that address, or a PGM peer's (a new
    /// one is remembered; None when the peer table is full).
    fn node_of(&mut self, ip: Ipv4Addr) -> Option<NodeId> {
        if let Some(n) = self.table.node_of(ip) {
            return Some(n);
        }
        let s = self.pgm.as_mut()?;
        let k = match s.peers.iter().position(|a| *a == ip) {
            Some(k) => k,
            None if s.peers.len() < MAX_PEERS => {
                s.peers.push(ip);
                s.peers.len() - 1
            }
            None => return None,
        };
        Some(NodeId(PEER_NODE_BASE + k as u32))
    }

    /// One of agent `i`'s packets as a PGM datagram (castlab's PGM header mapped onto RFC 3208's
    /// fields; the sequence numbers are the low 32 bits, as on the wire).
    fn send_pgm(&mut self, i: usize, p: Packet, now: Instant) {
        let Header::Pgm(h) = p.header else {
            // the PGM wire carries PGM only
            self.stats.no_route += 1;
            return;
        };
        let s = self.pgm.as_ref().expect("pgm wire");
        let own_ip = self.table.node(self.slots[i].addr.node).expect("agents have addresses");
        let ends = pgm_codec::Ends {
            port: s.port,
            group_addr: s.group_addr,
            gsi: s.gsi,
            sport: s.sport,
            remote: s.remote,
            spm_sqn: s.spm_sqn,
        };
        let dst_ip = match p.dst {
            Dest::Unicast(a) => self.ip_of(a.node),
            Dest::Group(_) => None,
        };
        let Some((w, target, data)) = pgm_codec::from_castlab(&p, h, &ends, own_ip, dst_ip) else {
            self.stats.no_route += 1;
            return;
        };
        let len = w.wire_len();
        if !self.bucket.take(now.as_nanos(), len) {
            self.stats.rate_cap_drops += 1;
            self.stats.rate_cap_drop_bytes += len as u64;
            return;
        }
        let seq = p.seq;
        let n = match pgm_codec::encode(&w, &mut self.buf, |t| {
            if data {
                pgm_codec::zmq::frame(t, seq)
            }
        }) {
            Ok(n) => n,
            Err(e) => {
                self.stats.send_errors += 1;
                self.note_error(format!("agent {}: {e}", self.slots[i].id.0));
                return;
            }
        };
        let s = self.pgm.as_mut().expect("pgm wire");
        match (w.kind, &mut s.last_spm) {
            (PgmType::Spm, _) => {
                s.spm_sqn = s.spm_sqn.wrapping_add(1);
                s.last_spm = Some((i, target, w));
            }
            // an SPM's lead is the highest sequence number sent, its trail the window's
            (PgmType::Odata, Some((_, _, spm))) => {
                spm.lead = w.sqn;
                spm.trail = w.trail;
            }
            _ => {}
        }
        self.send_pgm_datagram(i, target, n, w.kind, now);
    }

    /// Send the `n` encoded bytes in the buffer from agent `i`'s socket, counting them (and
    /// capturing them) by PGM type. True when sent.
    fn send_pgm_datagram(&mut self, i: usize, target: SocketAddrV4, n: usize, kind: PgmType, now: Instant) -> bool {
        match self.slots[i].socket.send_to(&self.buf[..n], SocketAddr::V4(target)) {
            Ok(_) => {
                self.stats.datagrams_sent += 1;
                self.stats.bytes_sent += n as u64;
                self.stats.pgm_sent[kind as usize & 0x0f] += 1;
                self.capture(now, self.slots[i].bound, target, n);
                true
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.stats.send_would_block += 1;
                false
            }
            Err(e) => {
                self.stats.send_errors += 1;
                if self.last_error.is_none() {
                    self.note_error(format!("send to {target}: {e}"));
                }
                false
            }
        }
    }

    /// End the PGM session: send one SPM carrying RFC 3208's OPT_FIN (the session's end), the
    /// window's edges those of the last data sent. True when sent;
    /// false without the PGM wire or before the first SPM (receivers know no session yet).
    pub fn end_pgm_session(&mut self) -> bool {
        let Some(s) = self.pgm.as_mut() else { return false };
        let Some((i, target, mut w)) = s.last_spm else { return false };
        w.sqn = s.spm_sqn;
        w.fin = true;
        s.spm_sqn = s.spm_sqn.wrapping_add(1);
        let n = match pgm_codec::encode(&w, &mut self.buf, |_| {}) {
            Ok(n) => n,
            Err(e) => {
                self.stats.send_errors += 1;
                self.note_error(format!("end of session: {e}"));
                return false;
            }
        };
        let now = self.now();
        self.send_pgm_datagram(i, target, n, w.kind, now)
    }

    /// Read PGM datagrams from agent `agent`'s socket (upstream: NAKs for that agent) or group
    /// socket `group` (downstream: for the group's local members), check them against the
    /// session, and deliver each as castlab packets: one per sequence number (a NAK or NCF with
    /// an OPT_NAK_LIST is several).
    fn read_pgm(&mut self, agent: Option<usize>, group: Option<usize>) {
        for _ in 0..READS_PER_TURN {
            let sock = match (agent, group) {
                (Some(i), _) => &self.slots[i].socket,
                (None, Some(j)) => &self.gsocks[j].socket,
                _ => return,
            };
            let (n, from) = match sock.recv_from(&mut self.buf) {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match (agent, group) {
                        (Some(i), _) => self.slots[i].pending = false,
                        (None, Some(j)) => self.gsocks[j].pending = false,
                        _ => {}
                    }
                    return;
                }
                Err(_) => {
                    self.stats.recv_errors += 1;
                    continue;
                }
            };
            self.stats.datagrams_received += 1;
            self.stats.bytes_received += n as u64;
            if self.pcap.is_some() {
                let to = match (agent, &self.pgm) {
                    (Some(i), _) => self.slots[i].bound,
                    (None, Some(s)) => SocketAddrV4::new(s.group_addr, s.port),
                    _ => crate::pcap::UNKNOWN,
                };
                let from = match from {
                    SocketAddr::V4(a) => a,
                    SocketAddr::V6(_) => crate::pcap::UNKNOWN,
                };
                let now = self.now();
                self.capture(now, from, to, n);
            }
            let w = match pgm_codec::decode(&self.buf[..n]) {
                Ok(w) => w,
                Err(_) => {
                    self.stats.rejected[Reject::Malformed as usize] += 1;
                    continue;
                }
            };
            self.stats.pgm_received[w.kind as usize & 0x0f] += 1;
            let SocketAddr::V4(from) = from else {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            };
            match self.check_pgm(agent, &w) {
                Ok(PgmIn::Deliver) => {}
                Ok(PgmIn::Counted) => continue,
                Err(r) => {
                    self.stats.rejected[r as usize] += 1;
                    continue;
                }
            }
            let Some(node) = self.node_of(*from.ip()) else {
                self.stats.rejected[Reject::WrongSource as usize] += 1;
                continue;
            };
            let s = self.pgm.as_mut().expect("pgm wire");
            let mut p = Packet::data(Dest::Group(s.group), n as u32);
            p.src = Addr::new(node, 0);
            p.flow = self.cfg.pgm_flow;
            p.seq = w.sqn as u64;
            let (kind, trail, lead) = match w.kind {
                PgmType::Odata => (PgmKind::Odata, w.trail as u64, w.sqn as u64 + 1),
                PgmType::Rdata => (PgmKind::Rdata, w.trail as u64, w.sqn as u64 + 1),
                // an NCF carries no window: trail 0 gives nothing up, lead = the confirmed one
                PgmType::Ncf => (PgmKind::Ncf, 0, w.sqn as u64 + 1),
                PgmType::Spm => {
                    p.seq = w.lead.wrapping_add(1) as u64;
                    (PgmKind::Spm, w.trail as u64, w.lead.wrapping_add(1) as u64)
                }
                _ => (PgmKind::Nak, 0, 0),
            };
            p.header = Header::Pgm(PgmHeader { kind, trail, lead });
            if w.kind.downstream() {
                s.remote = Some((w.gsi, w.sport));
            }
            if let Some(i) = agent {
                p.dst = Dest::Unicast(self.slots[i].addr);
            } else {
                // only the group's source may send on it, as for the envelope
                let entry = self.table.group(p.group().expect("group packet")).expect("the session's group");
                let ok = match entry.source {
                    Some(src) => node == src && self.table.node(src) == Some(*from.ip()),
                    None => true,
                };
                if !ok {
                    self.stats.rejected[Reject::WrongSource as usize] += 1;
                    continue;
                }
            }
            if self.table.node(node).is_none() {
                self.stats.from_unlisted += 1;
            }
            let now = self.now();
            p.sent_at = now;
            let extra = w.naks;
            self.deliver_pgm(agent, now, &p);
            for &q in extra.as_slice() {
                p.seq = q as u64;
                if let Header::Pgm(h) = &mut p.header {
                    if h.kind == PgmKind::Ncf {
                        h.lead = q as u64 + 1;
                    }
                }
                self.deliver_pgm(agent, now, &p);
            }
        }
    }

    /// Whether a decoded datagram belongs to this session and this socket.
    fn check_pgm(&self, agent: Option<usize>, w: &PgmPacket) -> Result<PgmIn, Reject> {
        let s = self.pgm.as_ref().expect("pgm wire");
        match (agent, w.kind) {
            // upstream to our source: its TSI, its address, our group
            (Some(i), PgmType::Nak) => {
                if w.gsi != s.gsi || w.dport != s.sport || w.sport != s.port {
                    return Err(Reject::ForeignSession);
                }
                let own = self.table.node(self.slots[i].addr.node);
                if own != Some(w.nla) || w.group != s.group_addr {
                    return Err(Reject::Misdirected);
                }
                Ok(PgmIn::Deliver)
            }
            (Some(_), PgmType::Nnak | PgmType::Spmr) => Ok(PgmIn::Counted),
            (None, PgmType::Odata | PgmType::Rdata | PgmType::Ncf | PgmType::Spm) => {
                if w.dport != s.port {
                    return Err(Reject::ForeignSession);
                }
                if w.kind == PgmType::Ncf && w.group != s.group_addr {
                    return Err(Reject::Misdirected);
                }
                Ok(PgmIn::Deliver)
            }
            // receivers' multicast SPMRs (§13.6) and the rest: seen, not ours to answer
            (None, PgmType::Spmr | PgmType::Poll | PgmType::Polr | PgmType::Ack | PgmType::Nnak) => Ok(PgmIn::Counted),
            _ => Err(Reject::Misdirected),
        }
    }

    fn deliver_pgm(&mut self, agent: Option<usize>, now: Instant, p: &Packet) {
        match agent {
            Some(i) => {
                self.stats.delivered += 1;
                self.slots[i].agent.handle_packet(now, p);
                self.drive(i, now);
            }
            None => {
                let g = p.group().expect("group packet");
                let mut any = false;
                for i in 0..self.slots.len() {
                    if self.slots[i].joined.contains(&g) {
                        any = true;
                        self.stats.delivered += 1;
                        self.slots[i].agent.handle_packet(now, p);
                        self.drive(i, now);
                    }
                }
                if !any {
                    self.stats.not_joined += 1;
                }
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(w) = &mut self.pcap {
            let _ = w.flush();
        }
    }
}

/// One datagram read from a socket.
enum Received {
    /// A datagram that passed the envelope (session, MAC, size), with its sender, epoch and
    /// where its application bytes are in the receive buffer.
    Packet(Packet, SocketAddr, u64, core::ops::Range<usize>),
    /// A datagram counted and dropped, or a read error counted: read on.
    Skip,
    /// Nothing left to read.
    Drained,
}
