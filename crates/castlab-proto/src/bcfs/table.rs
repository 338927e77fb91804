//! The breadcrumb state of a router (§II-B): its settings, the table and its counters.

use std::collections::HashMap;

use castlab_core::{Addr, ChannelId, ConfigError, Duration, Instant, Port};

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

    /// Directed links (breadcrumbs) currently held, over every entry.
    pub fn links_held(&self) -> usize {
        self.links.len() - self.free_links.len()
    }

    /// Bytes of breadcrumb state this table holds on the heap (the BCFS paper's open question
    /// of a router's memory, §V): the entry and link slabs and their free lists at their
    /// allocated capacity, and the index map estimated as hashbrown lays it out (buckets the
    /// next power of two at or above 8/7 of its capacity, each a key-value slot and one
    /// control byte, plus one group of 16 control bytes).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let cap = self.index.capacity();
        let buckets = if cap == 0 { 0 } else { (cap * 8 / 7).max(cap + 1).next_power_of_two() };
        let map = if buckets == 0 { 0 } else { buckets * (size_of::<((Addr, u32), u32)>() + 1) + 16 };
        self.entries.capacity() * size_of::<Entry>()
            + self.links.capacity() * size_of::<LinkRec>()
            + (self.free_entries.capacity() + self.free_links.capacity()) * size_of::<u32>()
            + map
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
