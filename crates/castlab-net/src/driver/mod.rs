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
//! Wires: the bytes of a datagram are castlab's envelope ([`wire::envelope`], the default) or
//! RFC 3208 PGM ([`wire::pgm`], `NetConfig::pgm_wire`); the driver matches on its [`wire::Wire`]
//! once per packet sent and once per datagram read, and everything else is common.
//!
//! Restarts: every datagram carries its driver's session epoch, the Unix-epoch nanoseconds at
//! which that driver was created ([`crate::envelope`]). The receiving driver keeps the epoch
//! flowing from each node and when it last heard it. Another epoch means the node's process
//! was restarted, so every local agent on another node is told
//! ([`Agent::handle_peer_restart`], then the driving rule) before the packet is delivered,
//! and resynchronises with the new incarnation. Which other epoch is believed depends on
//! whether anything vouches for it:
//!
//! * with a key, the MAC covers the epoch: a newer one is believed at once; an older one is a
//!   late straggler of the old incarnation, counted (`stale_epoch`) and dropped;
//! * without a key, anyone who can send from the node's address can write any epoch, so one
//!   forged datagram must not override the stream that is flowing: another epoch is believed
//!   only once the flowing one has been silent for [`NetConfig::restart_quiet`]; before that
//!   its datagrams are dropped and counted (`unconfirmed_epoch` if newer, `stale_epoch` if
//!   older). A real restart is believed at its first datagram at least `restart_quiet` after
//!   the old incarnation's last; a forgery can only take over a node that has been silent that
//!   long, and the node's own epoch takes it back once the forger has been silent as long.
//!
//! Replays: with a key, a datagram captured and sent again still carries a valid MAC. Each
//! datagram's packet `uid` carries a count unique within its driver's incarnation, under the
//! MAC; the receiving driver keeps a window of the counts accepted per node
//! ([`replay`], RFC 4303 §3.4.3's anti-replay rule) and drops and counts (`replayed`) a count
//! accepted before or older than the window. A datagram a user-space router sealed again (a
//! packet it marked or rewrote) or made carries epoch 0 and is not judged: the router has no
//! incarnation to count within. Without a key nothing is refused as a copy: a forger needs no
//! copy to forge.
//!
//! With a key, epochs compare by the real-time clock, so a restart on a host whose clock was
//! stepped back by more than the downtime would read as stale: keep clocks monotone (NTP
//! slews rather than steps).
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

use castlab_core::{Addr, Agent, AgentEvent, AgentId, GroupId, Instant, NodeId, Packet, Rng, StartInfo, StreamKind};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use socket2::{Domain, Protocol, SockRef, Socket, Type};

use crate::envelope::{Envelope, MAX_DATAGRAM};
use crate::pcap::PcapWriter;
use crate::session::{invalid, GroupEntry, NetConfig, SessionError, SessionTable, MAX_NODES};
use crate::stats::{NetStats, Timelines, TokenBucket};

/// Tokens at or above this are group sockets.
const GROUP_TOKEN_BASE: usize = 1 << 20;
/// At most this many datagrams are read from one socket per loop turn, so a flood cannot
/// starve the timers; a socket left with data is read again on the next turn.
const READS_PER_TURN: usize = 256;
/// At most this many timer deadlines are run per loop turn, for the same reason.
const FIRES_PER_TURN: usize = 1024;

mod replay;
mod wire;

use replay::ReplayWindow;

/// The bits of a packet's `uid` that count this driver's datagrams (the node is above them).
const UID_COUNT_MASK: u64 = (1 << 40) - 1;

use wire::pgm::PgmSession;
pub use wire::pgm::PEER_NODE_BASE;
use wire::Wire;

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
    /// The driver ran its shutdown step ([`Driver::shutdown`]): its agents were told to stop.
    #[error("the driver was shut down: its agents were told to stop and run no more")]
    ShutDown,
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

/// The session epoch flowing from one node and when a datagram of it was last accepted.
#[derive(Clone, Copy, Default)]
struct PeerEpoch {
    epoch: u64,
    heard: Instant,
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
    /// The session epoch flowing from each node and when it was last heard (index; epoch 0:
    /// none yet), allocated once.
    peer_epochs: Box<[PeerEpoch]>,
    /// With a key, each node's replay window ([`replay`]; index), allocated once; empty
    /// without a key.
    replay: Box<[ReplayWindow]>,
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
    wire: Wire,
    pcap: Option<PcapWriter>,
    /// The shutdown step ran ([`Driver::shutdown`]).
    shut_down: bool,
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
        let wire = if cfg.pgm_wire { Wire::Pgm(Box::new(PgmSession::new(&cfg, &table)?)) } else { Wire::Envelope };
        let epoch_ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        let groups = table.groups().map(|(g, _)| g.index() + 1).max().unwrap_or(0);
        let replay_nodes = if cfg.key.is_some() { MAX_NODES as usize } else { 0 };
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
            peer_epochs: vec![PeerEpoch::default(); MAX_NODES as usize].into_boxed_slice(),
            replay: vec![ReplayWindow::default(); replay_nodes].into_boxed_slice(),
            next_uid: 0,
            buf: vec![0u8; MAX_DATAGRAM + 1].into_boxed_slice(),
            app: vec![0u8; MAX_DATAGRAM].into_boxed_slice(),
            rx_app: vec![0u8; MAX_DATAGRAM].into_boxed_slice(),
            stats: NetStats::default(),
            timelines: Timelines::default(),
            last_error: None,
            wire,
            pcap: None,
            shut_down: false,
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

    /// Note one datagram in the capture, if there is one (see [`capture_into`]).
    fn capture(&mut self, now: Instant, from: SocketAddrV4, to: SocketAddrV4, len: usize) {
        let at_ns = self.epoch_ns.saturating_add(now.as_nanos());
        capture_into(&mut self.pcap, &mut self.last_error, at_ns, from, to, &self.buf[..len]);
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
        let udp_port = match &self.wire {
            // PGM's UDP encapsulation has one port: NAKs come to the source at the group's.
            Wire::Pgm(s) => {
                if self.slots.iter().any(|x| x.addr.node == addr.node) {
                    return Err(invalid("node", addr.node.0, "with pgm_wire, one agent per node and driver").into());
                }
                s.port
            }
            Wire::Envelope => {
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
        if let Wire::Pgm(_) = self.wire {
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
        if self.shut_down {
            return Err(NetError::ShutDown);
        }
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
                    self.read_socket(Sock::Agent(i));
                }
            }
            for j in 0..self.gsocks.len() {
                if self.gsocks[j].pending {
                    self.read_socket(Sock::Group(j));
                }
            }
        }
    }

    /// Whether [`Driver::shutdown`] ran.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// The shutdown step, once, before the process exits (on a stop signal or at the end of
    /// its run): every agent, in the order added, is told to stop ([`Agent::handle_shutdown`])
    /// and the driving rule applied, except that each packet the step queued is sent even
    /// when the socket is full or the rate cap has no room, by retrying every millisecond
    /// until `within` has passed since the step began (the rest are counted as
    /// `shutdown_unsent`). With the PGM wire the SPMs of the step carry OPT_FIN (the session's
    /// end, RFC 3208 §9); when no agent sent one, the session's last SPM is sent again with it
    /// ([`Driver::end_pgm_session`]). Then every group an agent still holds is left, so the
    /// host's IGMP leave goes out now rather than when the sockets close. Afterwards the
    /// driver runs no more ([`NetError::ShutDown`]); its counters, timelines and agents stay
    /// readable. A second call does nothing.
    pub fn shutdown(&mut self, within: std::time::Duration) {
        if self.shut_down {
            return;
        }
        self.shut_down = true;
        let deadline = std::time::Instant::now() + within;
        if let Wire::Pgm(s) = &mut self.wire {
            s.ending = true;
            s.fin_encoded = false;
        }
        for i in 0..self.slots.len() {
            let now = self.now();
            self.stats.shutdown_agents += 1;
            self.slots[i].agent.handle_shutdown(now);
            while let Some(p) = self.slots[i].agent.poll_transmit() {
                self.send_lingering(i, p, deadline);
            }
            self.slots[i].armed = None;
            self.drive(i, now);
        }
        let fin_sent = match &self.wire {
            Wire::Pgm(s) => s.fin_encoded,
            Wire::Envelope => true,
        };
        if !fin_sent {
            self.end_pgm_session();
        }
        for i in 0..self.slots.len() {
            while let Some(&g) = self.slots[i].joined.last() {
                self.leave(i, g);
                self.stats.shutdown_left_groups += 1;
            }
        }
    }

    /// Send `p` from agent `i` as [`Driver::send`] does; when the rate cap or a full socket
    /// refuses it, try again every millisecond until `deadline` (a retry is not a drop: the
    /// counters keep only the last attempt's refusal).
    fn send_lingering(&mut self, i: usize, p: Packet, deadline: std::time::Instant) {
        loop {
            let before = (self.stats.rate_cap_drops, self.stats.rate_cap_drop_bytes, self.stats.send_would_block);
            let sent_before = self.stats.datagrams_sent;
            let now = self.now();
            self.send(i, p, now);
            if self.stats.datagrams_sent > sent_before {
                self.stats.shutdown_sent += 1;
                return;
            }
            let refused =
                (self.stats.rate_cap_drops, self.stats.rate_cap_drop_bytes, self.stats.send_would_block) != before;
            if !refused || std::time::Instant::now() >= deadline {
                self.stats.shutdown_unsent += 1;
                return;
            }
            (self.stats.rate_cap_drops, self.stats.rate_cap_drop_bytes, self.stats.send_would_block) = before;
            std::thread::sleep(
                std::time::Duration::from_millis(1).min(deadline.saturating_duration_since(std::time::Instant::now())),
            );
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

    /// Stamp `src` and send `p` on this driver's wire.
    fn send(&mut self, i: usize, mut p: Packet, now: Instant) {
        p.src = self.slots[i].addr;
        match &mut self.wire {
            Wire::Envelope => self.send_envelope(i, p, now),
            Wire::Pgm(s) => {
                let Some(own_ip) = self.table.node(p.src.node) else {
                    self.stats.no_route += 1;
                    return;
                };
                let encoded = s.encode(i, &p, own_ip, &self.table, &mut self.bucket, now, &mut self.buf);
                self.send_pgm(i, encoded, now);
            }
        }
    }

    /// Send the `n` bytes in the buffer from agent `i`'s socket to `target`, counting (and
    /// capturing) them. True when sent.
    fn send_datagram(&mut self, i: usize, target: SocketAddrV4, n: usize, now: Instant) -> bool {
        match self.slots[i].socket.send_to(&self.buf[..n], SocketAddr::V4(target)) {
            Ok(_) => {
                self.stats.datagrams_sent += 1;
                self.stats.bytes_sent += n as u64;
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

    /// The session epoch of a datagram from `node` against the one flowing from it (the rule
    /// is in the module documentation): false (counted) for a datagram to drop; an epoch
    /// believed in place of another tells every local agent on another node of the restart
    /// before the packet is delivered. Nodes past the table (unlisted, out of range) and epoch
    /// 0 (a sender that stamps none) are not tracked.
    fn epoch_ok(&mut self, node: NodeId, epoch: u64) -> bool {
        if epoch == 0 || node.index() >= self.peer_epochs.len() {
            return true;
        }
        let now = self.now();
        let peer = &mut self.peer_epochs[node.index()];
        let seen = peer.epoch;
        if epoch == seen {
            peer.heard = now;
            return true;
        }
        if seen != 0 {
            let quiet = now.saturating_since(peer.heard) >= self.cfg.restart_quiet;
            let believed = if self.envelope.keyed() { epoch > seen } else { quiet };
            if !believed {
                if epoch < seen {
                    self.stats.stale_epoch += 1;
                } else {
                    self.stats.unconfirmed_epoch += 1;
                }
                return false;
            }
        }
        *peer = PeerEpoch { epoch, heard: now };
        if let Some(w) = self.replay.get_mut(node.index()) {
            w.reset(); // a new incarnation counts from 1 again
        }
        if seen != 0 {
            self.stats.peer_restarts += 1;
            for i in 0..self.slots.len() {
                if self.slots[i].addr.node != node {
                    self.slots[i].agent.handle_peer_restart(now, node);
                    self.drive(i, now);
                }
            }
        }
        true
    }

    /// With a key: whether `p` (sealed with `epoch`, just accepted for its node) is not a
    /// replay, counting it (`replayed`) if it is. Only a datagram as a driver sealed it is
    /// judged: epoch set, and the `uid` counted by the node it comes from. What a router
    /// sealed (a packet it marked, rewrote or made) carries epoch 0 and another counter, so
    /// it passes. Without a key every datagram passes: anyone can forge one, so refusing
    /// copies would protect nothing.
    fn replay_ok(&mut self, p: &Packet, epoch: u64) -> bool {
        if epoch == 0 || p.uid >> 40 != u64::from(p.src.node.0) {
            return true;
        }
        let Some(w) = self.replay.get_mut(p.src.node.index()) else { return true };
        if w.accept(p.uid & UID_COUNT_MASK) {
            return true;
        }
        self.stats.replayed += 1;
        false
    }

    fn to_local_time(&self, p: &mut Packet) {
        p.sent_at = Instant::from_nanos(p.sent_at.as_nanos().saturating_sub(self.epoch_ns));
    }

    /// Read what arrived on `sock` (at most `READS_PER_TURN` datagrams), counting each
    /// datagram and handing it to this driver's wire.
    fn read_socket(&mut self, sock: Sock) {
        for _ in 0..READS_PER_TURN {
            let socket = match sock {
                Sock::Agent(i) => &self.slots[i].socket,
                Sock::Group(j) => &self.gsocks[j].socket,
            };
            let (n, from) = match socket.recv_from(&mut self.buf) {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    match sock {
                        Sock::Agent(i) => self.slots[i].pending = false,
                        Sock::Group(j) => self.gsocks[j].pending = false,
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
            match &mut self.wire {
                Wire::Envelope => self.on_envelope_datagram(sock, n, from),
                Wire::Pgm(s) => {
                    let now = Instant::from_nanos(self.clock0.elapsed().as_nanos() as u64);
                    if self.pcap.is_some() {
                        let to = s.capture_to(sock, &self.slots);
                        let from = match from {
                            SocketAddr::V4(a) => a,
                            SocketAddr::V6(_) => crate::pcap::UNKNOWN,
                        };
                        let at_ns = self.epoch_ns.saturating_add(now.as_nanos());
                        capture_into(&mut self.pcap, &mut self.last_error, at_ns, from, to, &self.buf[..n]);
                    }
                    let pgm_flow = self.cfg.pgm_flow;
                    let got =
                        s.accept(&self.buf[..n], sock, from, &self.slots, &self.table, pgm_flow, &mut self.stats, now);
                    if let Some(a) = got {
                        self.deliver_pgm(sock, a);
                    }
                }
            }
        }
    }

    /// Hand group packet `p` (with `m` application bytes in `rx_app`) to every local agent that
    /// joined `g`, counting it as not joined when there is none.
    fn deliver_to_members(&mut self, g: GroupId, now: Instant, p: &Packet, m: usize) {
        let mut any = false;
        for i in 0..self.slots.len() {
            if self.slots[i].joined.contains(&g) {
                any = true;
                self.stats.delivered += 1;
                if m > 0 {
                    self.slots[i].agent.handle_payload(p, &self.rx_app[..m]);
                }
                self.slots[i].agent.handle_packet(now, p);
                self.drive(i, now);
            }
        }
        if !any {
            self.stats.not_joined += 1;
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

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(w) = &mut self.pcap {
            let _ = w.flush();
        }
    }
}

/// One of a driver's sockets: agent `i`'s, or group socket `j`.
#[derive(Clone, Copy, Debug)]
enum Sock {
    Agent(usize),
    Group(usize),
}

/// Note `bytes`, a datagram from `from` to `to` at `at_ns` on the Unix epoch, in the capture
/// `pcap` if there is one. A write error ends the capture (noted in `last_error`), never the
/// run.
fn capture_into(
    pcap: &mut Option<PcapWriter>,
    last_error: &mut Option<String>,
    at_ns: u64,
    from: SocketAddrV4,
    to: SocketAddrV4,
    bytes: &[u8],
) {
    if let Some(w) = pcap {
        if let Err(e) = w.record(at_ns, from, to, bytes) {
            *pcap = None;
            *last_error = Some(format!("pcap: {e}"));
        }
    }
}
