//! The Breadcrumb Forwarding Service (Yano & McCanne, UCB/CSD-99-1068, §II).
//!
//! - [`BcfTable`]: the BCF router's breadcrumb state as a sans-IO unit (§II-B): per (source,
//!   label) a list of directed links, each with a level; request setup and suppression
//!   (§II-B.1), reply forwarding and teardown (§II-B.2), data-driven soft-state refresh with a
//!   specially marked null request (§II-B), link ageing and LRU reclamation under a bound on
//!   entries (§II-B, "timed out by a soft-state aging process or ... LRU replacement").
//! - [`BcfRouter`]: the table wrapped as a [`RouterExtension`]. Every node on a BCF path runs
//!   one, the hosts included: a request sent by a local agent records a local link (its port),
//!   so that a reply reaching the host is handed to exactly the processes that asked.
//! - [`BcfHost`]: the host API of Fig. 2 (`bcf_bind`, `bcf_request`, `bcf_reply`, `bcf_rcv`) for
//!   transports to build on (Rainbow, PGM-like recovery, EXPRESS-style channels).
//! - [`ExpressSource`] / [`ExpressReceiver`]: EXPRESS channels over BCFS (§II-B): receivers
//!   refresh a channel (S, L) with level-1 null requests, the source sends level-0 replies.
//!
//! Addressing in the simulator: a request is a unicast packet to the source's address, so
//! routers forward it along the unicast route toward the source, which is the reverse path of
//! the replies (§IV: "a reverse path is available from each node via the route"). A reply is
//! sent by the source with `dst` = its own address; the BCF router at the source's node takes
//! it and from there on every copy travels hop by hop on breadcrumbs (`RouterSend::Via`).

pub mod fountain;
pub mod pgm;
pub mod protocol;
pub mod rainbow;

use std::collections::HashMap;

use castlab_core::{
    Addr, Agent, BcfHeader, ChannelId, ConfigError, Dest, Duration, Header, Instant, NetView, Packet, Port, Rng,
    RouterExtension, RouterSend, StartInfo, Verdict,
};

/// BCF router settings. The paper gives the mechanisms but no constants (§II-B); every value
/// here is our choice.
#[derive(Clone, Debug, PartialEq)]
pub struct BcfConfig {
    /// Bound on breadcrumb entries (source, label) held by one router. When full, the least
    /// recently used entry is reallocated (§II-B: "entries could simply be reallocated using
    /// LRU replacement"). Paper silent: 4096.
    pub max_entries: usize,
    /// Soft-state refresh (§II-B): when a request is suppressed and its entry has sent nothing
    /// upstream for this long, the router forwards a specially marked null request toward the
    /// source instead. Paper silent (it points to the scalable session messages of [25]): 1 s,
    /// several round trips of every scenario of §IV.
    pub refresh_interval: Duration,
    /// A directed link not refreshed by a request for this long is aged out (§II-B: "breadcrumb
    /// entries may be deleted by the router if no update is received after a certain time
    /// interval"). Checked when the entry is next touched (data driven, no timers). Paper
    /// silent: 5 s.
    pub link_lifetime: Duration,
}

impl Default for BcfConfig {
    fn default() -> Self {
        BcfConfig {
            max_entries: 4096,
            refresh_interval: Duration::from_secs_f64(1.0),
            link_lifetime: Duration::from_secs_f64(5.0),
        }
    }
}

impl BcfConfig {
    /// Most breadcrumb entries one router may be configured for: far beyond any scenario of
    /// §IV (thousands of labels), and small enough that a typo cannot exhaust memory.
    pub const MAX_ENTRIES_LIMIT: usize = 1 << 24;

    /// Check every field; the error names the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        use castlab_core::config::check::{int_in, nonzero};
        int_in("max_entries", self.max_entries as u64, 1, Self::MAX_ENTRIES_LIMIT as u64)?;
        nonzero("refresh_interval", self.refresh_interval)?;
        nonzero("link_lifetime", self.link_lifetime)?;
        Ok(())
    }
}

castlab_core::config_fields!(BcfConfig { max_entries, refresh_interval, link_lifetime });

/// Where a breadcrumb points: an output channel of the router, or a local agent's port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BcfLink {
    Channel(ChannelId),
    Local(Port),
}

/// What a router does with a request (§II-A (3), §II-B.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestAction {
    /// New label, or a level above every level held: forward toward the source.
    Forward,
    /// Suppressed: state for the label already carries this level or more.
    Suppress,
    /// Suppressed, but the entry's state is stale: send a marked null request of this level
    /// toward the source in its place (§II-B soft-state refresh).
    Refresh { level: u32 },
}

/// Counters of one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BcfStats {
    pub requests: u64,
    pub requests_forwarded: u64,
    pub requests_suppressed: u64,
    /// Marked null requests sent upstream in place of a suppressed request.
    pub refreshes_sent: u64,
    /// Requests that raised the level of a link already held.
    pub levels_raised: u64,
    pub entries_created: u64,
    pub replies: u64,
    /// Reply copies sent down directed links (including local deliveries).
    pub reply_copies: u64,
    /// Replies for which no breadcrumb was held (dropped).
    pub replies_without_state: u64,
    /// Links deleted by replies (§II-B.2 teardown).
    pub links_torn_down: u64,
    /// Links deleted because they were not refreshed within `link_lifetime`.
    pub links_aged: u64,
    /// Entries reclaimed by LRU replacement while still holding links.
    pub entries_evicted: u64,
    /// Most entries held at once.
    pub peak_entries: u64,
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct LinkRec {
    link: BcfLink,
    level: u32,
    refreshed: Instant,
    next: u32,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    source: Addr,
    label: u32,
    head: u32,
    /// Last time anything for this entry was sent toward the source (a request or a refresh).
    last_up: Instant,
    prev: u32,
    next: u32,
}

/// A router's breadcrumb state (§II-B), sans IO. Entries live in a slab with an intrusive LRU
/// list; links in a second slab as per-entry lists. Both grow only when a new label or link
/// appears beyond what was ever held at once; the index map is sized for `max_entries` at
/// construction and never iterated.
#[derive(Debug)]
pub struct BcfTable {
    cfg: BcfConfig,
    entries: Vec<Entry>,
    free_entries: Vec<u32>,
    links: Vec<LinkRec>,
    free_links: Vec<u32>,
    index: HashMap<(Addr, u32), u32>,
    /// Most recently used entry; `lru_tail` the least.
    lru_head: u32,
    lru_tail: u32,
    live: usize,
    pub stats: BcfStats,
}

/// A view of one breadcrumb entry (for tests and monitors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryView {
    /// (link, level), most recently added first.
    pub links: Vec<(BcfLink, u32)>,
}

impl BcfTable {
    pub fn new(cfg: BcfConfig) -> Self {
        // Grows on demand: reserving `max_entries` up front made a large bound cost its memory
        // at once (10^8 entries: 707 MB; 10^9: an abort).
        let cap = cfg.max_entries.clamp(1, 1024);
        BcfTable {
            index: HashMap::with_capacity(cap),
            entries: Vec::new(),
            free_entries: Vec::new(),
            links: Vec::new(),
            free_links: Vec::new(),
            lru_head: NIL,
            lru_tail: NIL,
            live: 0,
            stats: BcfStats::default(),
            cfg,
        }
    }

    pub fn config(&self) -> &BcfConfig {
        &self.cfg
    }

    /// Entries currently held.
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The links held for (source, label), if any.
    pub fn entry(&self, source: Addr, label: u32) -> Option<EntryView> {
        let &e = self.index.get(&(source, label))?;
        let mut links = Vec::new();
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            let l = self.links[i as usize];
            links.push((l.link, l.level));
            i = l.next;
        }
        Some(EntryView { links })
    }

    // ------------------------------------------------------------------- slab and LRU plumbing

    fn lru_unlink(&mut self, e: u32) {
        let Entry { prev, next, .. } = self.entries[e as usize];
        if prev != NIL {
            self.entries[prev as usize].next = next;
        } else {
            self.lru_head = next;
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        } else {
            self.lru_tail = prev;
        }
    }

    fn lru_push_front(&mut self, e: u32) {
        self.entries[e as usize].prev = NIL;
        self.entries[e as usize].next = self.lru_head;
        if self.lru_head != NIL {
            self.entries[self.lru_head as usize].prev = e;
        }
        self.lru_head = e;
        if self.lru_tail == NIL {
            self.lru_tail = e;
        }
    }

    fn touch(&mut self, e: u32) {
        if self.lru_head != e {
            self.lru_unlink(e);
            self.lru_push_front(e);
        }
    }

    fn free_entry(&mut self, e: u32) {
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            let next = self.links[i as usize].next;
            self.free_links.push(i);
            i = next;
        }
        let ent = self.entries[e as usize];
        self.index.remove(&(ent.source, ent.label));
        self.lru_unlink(e);
        self.entries[e as usize].head = NIL;
        self.free_entries.push(e);
        self.live -= 1;
    }

    fn new_entry(&mut self, now: Instant, source: Addr, label: u32) -> u32 {
        if self.live >= self.cfg.max_entries.max(1) {
            // LRU reclamation (§II-B); an entry whose links have all aged is no loss at all
            let victim = self.lru_tail;
            if self.has_live_links(now, victim) {
                self.stats.entries_evicted += 1;
            }
            self.free_entry(victim);
        }
        let ent = Entry { source, label, head: NIL, last_up: now, prev: NIL, next: NIL };
        let e = match self.free_entries.pop() {
            Some(e) => {
                self.entries[e as usize] = ent;
                e
            }
            None => {
                self.entries.push(ent);
                (self.entries.len() - 1) as u32
            }
        };
        self.index.insert((source, label), e);
        self.lru_push_front(e);
        self.live += 1;
        self.stats.entries_created += 1;
        self.stats.peak_entries = self.stats.peak_entries.max(self.live as u64);
        e
    }

    fn has_live_links(&self, now: Instant, e: u32) -> bool {
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            if now.saturating_since(self.links[i as usize].refreshed) < self.cfg.link_lifetime {
                return true;
            }
            i = self.links[i as usize].next;
        }
        false
    }

    fn alloc_link(&mut self, rec: LinkRec) -> u32 {
        match self.free_links.pop() {
            Some(i) => {
                self.links[i as usize] = rec;
                i
            }
            None => {
                self.links.push(rec);
                (self.links.len() - 1) as u32
            }
        }
    }

    /// Delete the links of entry `e` not refreshed within the lifetime (ageing, §II-B).
    fn age(&mut self, now: Instant, e: u32) {
        let life = self.cfg.link_lifetime;
        let mut prev = NIL;
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            let l = self.links[i as usize];
            if now.saturating_since(l.refreshed) >= life {
                if prev == NIL {
                    self.entries[e as usize].head = l.next;
                } else {
                    self.links[prev as usize].next = l.next;
                }
                self.free_links.push(i);
                self.stats.links_aged += 1;
            } else {
                prev = i;
            }
            i = l.next;
        }
    }

    // ------------------------------------------------------------------------------ the rules

    /// A request for (source, label) at `level` arrived from `link` (the link a reply must go
    /// down to reach the requester). §II-A (2)-(3), §II-B.1.
    pub fn on_request(&mut self, now: Instant, source: Addr, label: u32, level: u32, link: BcfLink) -> RequestAction {
        self.stats.requests += 1;
        let e = match self.index.get(&(source, label)) {
            Some(&e) => {
                self.age(now, e);
                self.touch(e);
                e
            }
            None => self.new_entry(now, source, label),
        };
        // the highest level held before this request, and this link's record
        let mut max_level: Option<u32> = None;
        let mut mine = NIL;
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            let l = self.links[i as usize];
            max_level = Some(max_level.map_or(l.level, |m| m.max(l.level)));
            if l.link == link {
                mine = i;
            }
            i = l.next;
        }
        if mine == NIL {
            // a new directed link, with its level (§II-B.1)
            let head = self.entries[e as usize].head;
            let rec = LinkRec { link, level, refreshed: now, next: head };
            let i = self.alloc_link(rec);
            self.entries[e as usize].head = i;
        } else {
            let l = &mut self.links[mine as usize];
            if level > l.level {
                l.level = level;
                self.stats.levels_raised += 1;
            }
            l.refreshed = now;
        }
        // forward only if the label is new here or the level exceeds every level held
        let forward = match max_level {
            None => true,
            Some(m) => level > m,
        };
        if forward {
            self.entries[e as usize].last_up = now;
            self.stats.requests_forwarded += 1;
            return RequestAction::Forward;
        }
        self.stats.requests_suppressed += 1;
        let ent = &mut self.entries[e as usize];
        if now.saturating_since(ent.last_up) >= self.cfg.refresh_interval {
            ent.last_up = now;
            self.stats.refreshes_sent += 1;
            return RequestAction::Refresh { level: max_level.unwrap_or(level) };
        }
        RequestAction::Suppress
    }

    /// A reply for (source, label) at `level` arrived. Pushes onto `out` every directed link to
    /// copy it to (§II-A (5)) and deletes the links whose level is at most `level` (§II-B.2).
    /// `out` is cleared first; reuse it across calls and nothing allocates once it has grown.
    pub fn on_reply(&mut self, now: Instant, source: Addr, label: u32, level: u32, out: &mut Vec<BcfLink>) {
        out.clear();
        self.stats.replies += 1;
        let Some(&e) = self.index.get(&(source, label)) else {
            self.stats.replies_without_state += 1;
            return;
        };
        self.age(now, e);
        let mut prev = NIL;
        let mut i = self.entries[e as usize].head;
        while i != NIL {
            let l = self.links[i as usize];
            out.push(l.link);
            if l.level <= level {
                if prev == NIL {
                    self.entries[e as usize].head = l.next;
                } else {
                    self.links[prev as usize].next = l.next;
                }
                self.free_links.push(i);
                self.stats.links_torn_down += 1;
            } else {
                prev = i;
            }
            i = l.next;
        }
        self.stats.reply_copies += out.len() as u64;
        if out.is_empty() {
            self.stats.replies_without_state += 1;
        }
        if self.entries[e as usize].head == NIL {
            self.free_entry(e);
        } else {
            self.touch(e);
        }
    }
}

/// The BCF router: a [`BcfTable`] as a router extension (§II-B).
#[derive(Debug)]
pub struct BcfRouter {
    pub table: BcfTable,
    node: castlab_core::NodeId,
    out: Vec<BcfLink>,
    pending: std::collections::VecDeque<RouterSend>,
    /// Reply copies sent down each output channel, indexed by channel id.
    pub replies_per_channel: Vec<u64>,
    /// Reply copies handed to local agents.
    pub local_deliveries: u64,
}

impl BcfRouter {
    pub fn new(cfg: BcfConfig) -> Self {
        BcfRouter {
            table: BcfTable::new(cfg),
            node: castlab_core::NodeId(0),
            out: Vec::with_capacity(16),
            pending: std::collections::VecDeque::with_capacity(16),
            replies_per_channel: Vec::new(),
            local_deliveries: 0,
        }
    }

    /// Reply copies this router sent down channel `ch`.
    pub fn replies_on(&self, ch: ChannelId) -> u64 {
        self.replies_per_channel.get(ch.index()).copied().unwrap_or(0)
    }
}

impl RouterExtension for BcfRouter {
    fn handle_start(&mut self, _now: Instant, _rng: Rng, net: &dyn NetView) {
        self.node = net.node();
        let n = net.out_channels().iter().map(|c| c.index() + 1).max().unwrap_or(0);
        self.replies_per_channel = vec![0; n];
    }

    fn on_arrival(&mut self, now: Instant, pkt: &mut Packet, from: Option<ChannelId>, net: &dyn NetView) -> Verdict {
        let Header::Bcf(h) = pkt.header else { return Verdict::Forward };
        match h.kind {
            BcfHeader::REQUEST => {
                let Dest::Unicast(source) = pkt.dst else { return Verdict::Forward };
                let link = match from {
                    Some(ch) => match net.reverse_channel(ch) {
                        Some(back) => BcfLink::Channel(back),
                        None => return Verdict::Forward,
                    },
                    None => BcfLink::Local(pkt.src.port),
                };
                match self.table.on_request(now, source, h.label, h.level, link) {
                    RequestAction::Forward => Verdict::Forward,
                    RequestAction::Suppress => Verdict::Consume,
                    RequestAction::Refresh { level } => {
                        // §II-B: a specially marked null message for the label, toward the source
                        pkt.header = Header::Bcf(BcfHeader {
                            kind: BcfHeader::REQUEST,
                            flags: BcfHeader::NULL | BcfHeader::REFRESH,
                            level,
                            label: h.label,
                            msg: 0,
                        });
                        Verdict::Forward
                    }
                }
            }
            BcfHeader::REPLY => {
                let source = pkt.src;
                let mut out = std::mem::take(&mut self.out);
                self.table.on_reply(now, source, h.label, h.level, &mut out);
                for &link in &out {
                    let copy = *pkt;
                    match link {
                        BcfLink::Channel(ch) => {
                            if let Some(c) = self.replies_per_channel.get_mut(ch.index()) {
                                *c += 1;
                            }
                            self.pending.push_back(RouterSend::Via(ch, copy));
                        }
                        BcfLink::Local(port) => {
                            let mut copy = copy;
                            copy.dst = Dest::Unicast(Addr::new(self.node, port));
                            self.local_deliveries += 1;
                            self.pending.push_back(RouterSend::Route(copy));
                        }
                    }
                }
                self.out = out;
                Verdict::Consume
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<RouterSend> {
        self.pending.pop_front()
    }
}

// ------------------------------------------------------------------------------- host API

/// A BCF message as `bcf_rcv` hands it to a transport (Fig. 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BcfMsg {
    /// Request: the source it was addressed to is this host; `from` is the sender of this copy.
    /// Reply: the source that sent it.
    pub from: Addr,
    pub kind: castlab_core::BcfKind,
    pub flags: u8,
    pub label: u32,
    pub level: u32,
    pub msg: u64,
}

impl BcfMsg {
    pub fn is_request(&self) -> bool {
        self.kind == BcfHeader::REQUEST
    }
    pub fn is_reply(&self) -> bool {
        self.kind == BcfHeader::REPLY
    }
    /// A router's marked null request: the original request was lost upstream (§II-B).
    pub fn is_refresh(&self) -> bool {
        self.flags & BcfHeader::REFRESH != 0
    }
}

/// The host side of BCFS (Fig. 2): a transport embeds one and calls it from its `Agent` code.
#[derive(Clone, Debug)]
pub struct BcfHost {
    addr: Addr,
    binds: Vec<(u32, u32)>,
    /// Flow id stamped on every packet (monitors key on it).
    pub flow: u32,
    /// Wire size of requests, bytes.
    pub request_bytes: u32,
    /// Wire size of replies, bytes.
    pub reply_bytes: u32,
    /// Messages refused because no binding matched their label.
    pub unbound: u64,
}

impl BcfHost {
    pub fn new(flow: u32, request_bytes: u32, reply_bytes: u32) -> Self {
        BcfHost { addr: Addr::default(), binds: Vec::new(), flow, request_bytes, reply_bytes, unbound: 0 }
    }

    /// Called from the agent's `handle_start`: the host's own address.
    pub fn set_addr(&mut self, addr: Addr) {
        self.addr = addr;
    }

    pub fn addr(&self) -> Addr {
        self.addr
    }

    /// `bcf_bind(lab, mask)`: receive BCF messages whose label matches `label` on the bits of
    /// `mask` (mask 0 binds every label).
    pub fn bind(&mut self, label: u32, mask: u32) {
        self.binds.push((label & mask, mask));
    }

    fn bound(&self, label: u32) -> bool {
        self.binds.iter().any(|&(l, m)| label & m == l)
    }

    /// `bcf_request(src, lab, lev, msg)`: a request toward `source`.
    pub fn request(&self, source: Addr, label: u32, level: u32, msg: Option<u64>) -> Packet {
        let mut p = Packet::data(Dest::Unicast(source), self.request_bytes);
        p.flow = self.flow;
        p.header = Header::Bcf(BcfHeader {
            kind: BcfHeader::REQUEST,
            flags: if msg.is_none() { BcfHeader::NULL } else { 0 },
            level,
            label,
            msg: msg.unwrap_or(0),
        });
        p
    }

    /// `bcf_reply(lab, lev, msg)`: a reply on `label` tearing down level `level` and below.
    pub fn reply(&self, label: u32, level: u32, msg: u64) -> Packet {
        let mut p = Packet::data(Dest::Unicast(self.addr), self.reply_bytes);
        p.flow = self.flow;
        p.header = Header::Bcf(BcfHeader { kind: BcfHeader::REPLY, flags: 0, level, label, msg });
        p
    }

    /// `bcf_rcv`: the BCF message in `p`, if it is one and its label is bound here.
    pub fn receive(&mut self, p: &Packet) -> Option<BcfMsg> {
        let Header::Bcf(h) = p.header else { return None };
        if !self.bound(h.label) {
            self.unbound += 1;
            return None;
        }
        Some(BcfMsg { from: p.src, kind: h.kind, flags: h.flags, label: h.label, level: h.level, msg: h.msg })
    }
}

// ----------------------------------------------------------------- EXPRESS channels (§II-B)

/// An EXPRESS channel source over BCFS (§II-B): data go out best effort as level-0 replies on
/// label `label`, which tear nothing down, to every receiver whose breadcrumbs are alive.
#[derive(Debug)]
pub struct ExpressSource {
    pub host: BcfHost,
    pub label: u32,
    pub interval: Duration,
    pub stop: Instant,
    next: Option<Instant>,
    seq: u64,
    pending: Option<Packet>,
    pub sent: u64,
    pub subscriptions_seen: u64,
    pub refreshes_seen: u64,
}

impl ExpressSource {
    pub fn new(label: u32, packet_bytes: u32, interval: Duration, stop: Instant) -> Self {
        let mut host = BcfHost::new(label, 40, packet_bytes);
        host.bind(label, u32::MAX);
        ExpressSource {
            host,
            label,
            interval,
            stop,
            next: None,
            seq: 0,
            pending: None,
            sent: 0,
            subscriptions_seen: 0,
            refreshes_seen: 0,
        }
    }
}

impl Agent for ExpressSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.next = Some(now);
    }
    fn handle_packet(&mut self, _now: Instant, p: &Packet) {
        if let Some(m) = self.host.receive(p) {
            if m.is_request() {
                self.subscriptions_seen += 1;
                self.refreshes_seen += m.is_refresh() as u64;
            }
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        if now >= self.stop {
            self.next = None;
            return;
        }
        let mut p = self.host.reply(self.label, 0, self.seq);
        p.seq = self.seq;
        self.seq += 1;
        self.sent += 1;
        self.pending = Some(p);
        self.next = Some(now + self.interval);
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.take()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}

/// An EXPRESS channel subscriber: a level-1 null request on (S, L) every `refresh` until
/// `stop`; it counts the channel's packets it receives and when.
#[derive(Debug)]
pub struct ExpressReceiver {
    pub host: BcfHost,
    pub source: Addr,
    pub label: u32,
    pub refresh: Duration,
    pub stop: Instant,
    next: Option<Instant>,
    pending: Option<Packet>,
    pub received: u64,
    pub last_rx: Option<Instant>,
}

impl ExpressReceiver {
    pub fn new(source: Addr, label: u32, refresh: Duration, stop: Instant) -> Self {
        let mut host = BcfHost::new(label, 40, 0);
        host.bind(label, u32::MAX);
        ExpressReceiver { host, source, label, refresh, stop, next: None, pending: None, received: 0, last_rx: None }
    }
}

impl Agent for ExpressReceiver {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
        self.next = Some(now);
    }
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if let Some(m) = self.host.receive(p) {
            if m.is_reply() && m.from == self.source {
                self.received += 1;
                self.last_rx = Some(now);
            }
        }
    }
    fn handle_timeout(&mut self, now: Instant) {
        if now >= self.stop {
            self.next = None;
            return;
        }
        self.pending = Some(self.host.request(self.source, self.label, 1, None));
        self.next = Some(now + self.refresh);
    }
    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.take()
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::NodeId;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }
    const S: Addr = Addr::new(NodeId(0), 7);
    const A: BcfLink = BcfLink::Channel(ChannelId(1));
    const B: BcfLink = BcfLink::Channel(ChannelId(2));
    const C: BcfLink = BcfLink::Local(9);

    #[test]
    fn request_rules_of_section_ii_b1() {
        let mut tb = BcfTable::new(BcfConfig::default());
        // new label: create, forward
        assert_eq!(tb.on_request(t(0), S, 5, 1, A), RequestAction::Forward);
        // known label, new link, same level: added, suppressed
        assert_eq!(tb.on_request(t(1), S, 5, 1, B), RequestAction::Suppress);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 1), (A, 1)]);
        // known link at a higher level: raised and, above every level held, forwarded
        assert_eq!(tb.on_request(t(2), S, 5, 2, A), RequestAction::Forward);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 1), (A, 2)]);
        assert_eq!(tb.stats.levels_raised, 1);
        // a new link at level 2 does not exceed the held 2: suppressed, but recorded at 2
        assert_eq!(tb.on_request(t(3), S, 5, 2, C), RequestAction::Suppress);
        // a lower level on a link never lowers it
        assert_eq!(tb.on_request(t(4), S, 5, 1, A), RequestAction::Suppress);
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(C, 2), (B, 1), (A, 2)]);
        // another label, another source: independent state
        assert_eq!(tb.on_request(t(5), S, 6, 1, A), RequestAction::Forward);
        assert_eq!(tb.on_request(t(5), Addr::new(NodeId(3), 7), 5, 1, A), RequestAction::Forward);
        assert_eq!(tb.len(), 3);
    }

    #[test]
    fn reply_copies_to_every_link_and_tears_down_up_to_its_level() {
        let mut tb = BcfTable::new(BcfConfig::default());
        let mut out = Vec::new();
        tb.on_request(t(0), S, 5, 1, A);
        tb.on_request(t(0), S, 5, 3, B);
        tb.on_request(t(0), S, 5, 2, C);
        tb.on_reply(t(1), S, 5, 2, &mut out);
        assert_eq!(out, vec![C, B, A]);
        // levels 1 and 2 deleted, level 3 retained
        assert_eq!(tb.entry(S, 5).unwrap().links, vec![(B, 3)]);
        tb.on_reply(t(2), S, 5, 3, &mut out);
        assert_eq!(out, vec![B]);
        assert!(tb.entry(S, 5).is_none(), "the last link's teardown frees the entry");
        tb.on_reply(t(3), S, 5, 3, &mut out);
        assert!(out.is_empty());
        assert_eq!(tb.stats.replies_without_state, 1);
        // a level-0 reply (EXPRESS data) tears nothing down
        tb.on_request(t(4), S, 8, 1, A);
        tb.on_reply(t(5), S, 8, 0, &mut out);
        assert_eq!(out, vec![A]);
        assert_eq!(tb.entry(S, 8).unwrap().links, vec![(A, 1)]);
    }

    #[test]
    fn stale_suppression_sends_a_marked_refresh_once_per_interval() {
        let cfg = BcfConfig { refresh_interval: Duration::from_millis(100), ..Default::default() };
        let mut tb = BcfTable::new(cfg);
        assert_eq!(tb.on_request(t(0), S, 1, 2, A), RequestAction::Forward);
        assert_eq!(tb.on_request(t(50), S, 1, 1, B), RequestAction::Suppress);
        // 100 ms after the last upstream message: a refresh at the highest level held
        assert_eq!(tb.on_request(t(100), S, 1, 1, B), RequestAction::Refresh { level: 2 });
        assert_eq!(tb.on_request(t(150), S, 1, 1, B), RequestAction::Suppress);
        assert_eq!(tb.on_request(t(200), S, 1, 1, A), RequestAction::Refresh { level: 2 });
        assert_eq!(tb.stats.refreshes_sent, 2);
    }

    #[test]
    fn links_age_out_and_lru_bounds_the_table() {
        let cfg = BcfConfig { max_entries: 2, link_lifetime: Duration::from_millis(100), ..Default::default() };
        let mut tb = BcfTable::new(cfg);
        let mut out = Vec::new();
        tb.on_request(t(0), S, 1, 1, A);
        tb.on_request(t(60), S, 1, 1, B);
        // at 120 ms A (refreshed at 0) has aged, B (60) has not
        tb.on_reply(t(120), S, 1, 0, &mut out);
        assert_eq!(out, vec![B]);
        assert_eq!(tb.stats.links_aged, 1);
        // an aged entry no longer suppresses: the request goes up as for a new label
        assert_eq!(tb.on_request(t(400), S, 1, 1, A), RequestAction::Forward);
        // the bound: a third label evicts the least recently used entry
        tb.on_request(t(401), S, 2, 1, A);
        tb.on_request(t(402), S, 1, 1, B); // touches label 1
        tb.on_request(t(403), S, 3, 1, A);
        assert_eq!(tb.len(), 2);
        assert!(tb.entry(S, 2).is_none(), "label 2 was least recently used");
        assert!(tb.entry(S, 1).is_some() && tb.entry(S, 3).is_some());
        assert_eq!(tb.stats.entries_evicted, 1);
        assert_eq!(tb.stats.peak_entries, 2);
    }

    #[test]
    fn host_api_binds_and_builds_messages() {
        let mut h = BcfHost::new(3, 40, 512);
        h.set_addr(Addr::new(NodeId(4), 1000));
        h.bind(0x1200, 0xff00);
        let r = h.request(S, 0x1234, 2, Some(99));
        assert_eq!(r.dst, Dest::Unicast(S));
        assert_eq!(r.size_bytes, 40);
        let Header::Bcf(b) = r.header else { panic!() };
        assert_eq!((b.kind, b.flags, b.label, b.level, b.msg), (BcfHeader::REQUEST, 0, 0x1234, 2, 99));
        let n = h.request(S, 0x1234, 1, None);
        assert!(matches!(n.header, Header::Bcf(b) if b.flags == BcfHeader::NULL));
        let mut rep = h.reply(0x12ff, 1, 5);
        assert_eq!(rep.size_bytes, 512);
        rep.src = S;
        let m = h.receive(&rep).unwrap();
        assert!(m.is_reply() && m.label == 0x12ff && m.from == S && m.msg == 5);
        let other = h.reply(0x1300, 1, 5);
        assert!(h.receive(&other).is_none());
        assert_eq!(h.unbound, 1);
    }
}
