//! The FLID-DL receiver: per-slot decisions, joins at slot boundaries, never sends.

use castlab_core::{Agent, AgentEvent, ConfigError, ControlMsg, Dest, GroupId, Header, Instant, Packet, StartInfo};

use super::{check_groups, FlidConfig, FLID_DATA_KIND, FLID_MAX_GROUPS};

/// What the receiver did, for monitors and tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlidRecords {
    /// (time, level) after every change, starting with level 1 at start.
    pub levels: Vec<(Instant, u32)>,
    /// Packets received per layer index.
    pub received: [u64; FLID_MAX_GROUPS],
    /// Bytes received (all layers).
    pub bytes: u64,
    /// Packets lost (gaps in a group's sequence numbers), per layer index of the packet that
    /// showed the gap.
    pub lost: [u64; FLID_MAX_GROUPS],
    /// Packets older than one already seen on their group (late or duplicated).
    pub late: u64,
    /// Lost packets whose gap spans a boundary after a slot with loss (counted in `lost`, not
    /// in a decision: that slot's decrease answered them).
    pub straddling: u64,
    /// Slot boundaries seen, slots with a loss, slots whose signal covered the level.
    pub slots: u64,
    pub loss_slots: u64,
    pub signalled_slots: u64,
    /// Times of increases and decreases.
    pub increases: Vec<Instant>,
    pub decreases: Vec<Instant>,
}

/// Events a boundary can cause: a join or leave per group and one level change.
const EVENT_CAP: usize = 2 * FLID_MAX_GROUPS + 2;

/// The FLID-DL receiver. See the module documentation.
#[derive(Debug)]
pub struct FlidReceiver {
    cfg: FlidConfig,
    groups: Vec<GroupId>,
    flow: u32,
    level: u32,
    /// The slot being received, once a packet has been seen.
    slot: Option<u64>,
    loss_in_slot: bool,
    /// The slot before the current one had a loss (its decrease answered the congestion).
    prev_loss: bool,
    signal_in_slot: u64,
    joined: [bool; FLID_MAX_GROUPS],
    /// Next expected sequence number per group, once one has been seen since joining.
    expect: [Option<u64>; FLID_MAX_GROUPS],
    /// Slot of the last packet seen per group.
    last_slot: [u64; FLID_MAX_GROUPS],
    events: [AgentEvent; EVENT_CAP],
    ev_head: usize,
    ev_len: usize,
    records: FlidRecords,
}

impl FlidReceiver {
    /// A receiver of the session on `groups` whose data carries `flow`.
    pub fn try_new(cfg: FlidConfig, groups: &[GroupId], flow: u32) -> Result<Self, ConfigError> {
        cfg.validate()?;
        check_groups(&cfg, groups)?;
        Ok(FlidReceiver {
            groups: groups.to_vec(),
            cfg,
            flow,
            level: 0,
            slot: None,
            loss_in_slot: false,
            prev_loss: false,
            signal_in_slot: 0,
            joined: [false; FLID_MAX_GROUPS],
            expect: [None; FLID_MAX_GROUPS],
            last_slot: [0; FLID_MAX_GROUPS],
            events: [AgentEvent::LevelChanged { level: 0 }; EVENT_CAP],
            ev_head: 0,
            ev_len: 0,
            records: FlidRecords::default(),
        })
    }

    pub fn level(&self) -> u32 {
        self.level
    }
    pub fn config(&self) -> &FlidConfig {
        &self.cfg
    }
    pub fn records(&self) -> &FlidRecords {
        &self.records
    }
    /// Whether the receiver holds `groups[i]`.
    pub fn holds(&self, i: usize) -> bool {
        self.joined.get(i).copied().unwrap_or(false)
    }

    fn push_event(&mut self, e: AgentEvent) {
        if self.ev_len < EVENT_CAP {
            self.events[(self.ev_head + self.ev_len) % EVENT_CAP] = e;
            self.ev_len += 1;
        }
    }

    fn set_level(&mut self, now: Instant, level: u32) {
        if level != self.level {
            self.level = level;
            self.records.levels.push((now, level));
            self.push_event(AgentEvent::LevelChanged { level });
        }
    }

    /// Whether group index `g` carries one of layers 1..level-1 in slot `k`.
    fn wanted(&self, g: usize, level: u32, k: u64) -> bool {
        (1..level).any(|l| self.cfg.group_of(l, k) == g)
    }

    /// Joins the dynamic groups of layers 1..level-1 for slot `k` and leaves the others.
    fn subscribe(&mut self, level: u32, k: u64) {
        for g in 1..self.groups.len() {
            let want = self.wanted(g, level, k);
            if want && !self.joined[g] {
                self.joined[g] = true;
                self.expect[g] = None;
                self.push_event(AgentEvent::Join(self.groups[g]));
            } else if !want && self.joined[g] {
                self.joined[g] = false;
                self.expect[g] = None;
                self.push_event(AgentEvent::Leave(self.groups[g]));
            }
        }
    }

    /// The boundaries from the current slot into slot `k`.
    fn boundary(&mut self, now: Instant, k: u64) {
        let Some(cur) = self.slot else {
            self.slot = Some(k);
            return;
        };
        let mut level = self.level;
        self.records.slots += 1;
        let top = self.cfg.levels();
        if self.loss_in_slot {
            // A loss in the slot: let the top layer fall (no join), the dynamic layers' own
            // decrease does the leave.
            self.records.loss_slots += 1;
            if level > 1 {
                level -= 1;
                self.records.decreases.push(now);
            }
        } else if self.signal_in_slot >= level as u64 {
            // No loss and an increase signal for this level: add a layer.
            self.records.signalled_slots += 1;
            if level < top {
                level += 1;
                self.records.increases.push(now);
            }
        }
        // Slots that passed with no packet at all: each a slot with loss (a jump of more
        // than `levels` slots ends at level 1 whatever its length).
        let skipped = k - cur - 1;
        self.records.slots += skipped;
        self.records.loss_slots += skipped;
        for _ in 0..skipped.min(top as u64) {
            if level > 1 {
                level -= 1;
                self.records.decreases.push(now);
            }
        }
        self.subscribe(level, k);
        self.set_level(now, level);
        self.slot = Some(k);
        self.prev_loss = self.loss_in_slot || skipped > 0;
        self.loss_in_slot = false;
        self.signal_in_slot = 0;
    }
}

impl Agent for FlidReceiver {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.joined[0] = true;
        self.push_event(AgentEvent::Join(self.groups[0]));
        self.set_level(now, 1);
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let Header::Control(ControlMsg { kind: FLID_DATA_KIND, args }) = p.header else {
            return;
        };
        let Dest::Group(dst) = p.dst else {
            return;
        };
        if p.flow != self.flow || self.level == 0 {
            return;
        }
        let Some(g) = self.groups.iter().position(|&x| x == dst) else {
            return;
        };
        if !self.joined[g] {
            // Still flowing after a leave (leave latency): not ours to count.
            return;
        }
        let k = args[0];
        if self.slot.is_none_or(|s| k > s) {
            self.boundary(now, k);
            if !self.joined[g] {
                // The boundary just left this packet's group.
                return;
            }
        }
        let m = (p.layer as usize).min(FLID_MAX_GROUPS - 1);
        self.records.received[m] += 1;
        self.records.bytes += p.size_bytes as u64;
        if self.slot == Some(k) {
            self.signal_in_slot = self.signal_in_slot.max(args[1]);
        }
        match self.expect[g] {
            Some(e) if p.seq > e => {
                self.records.lost[m] += p.seq - e;
                let within = self.last_slot[g] == k;
                if self.slot == Some(k) && (within || !self.prev_loss) {
                    self.loss_in_slot = true;
                } else {
                    self.records.straddling += p.seq - e;
                }
            }
            Some(e) if p.seq < e => {
                self.records.late += 1;
                return;
            }
            _ => {}
        }
        self.expect[g] = Some(p.seq + 1);
        self.last_slot[g] = k;
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self) -> Option<Packet> {
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.ev_len == 0 {
            return None;
        }
        let e = self.events[self.ev_head];
        self.ev_head = (self.ev_head + 1) % EVENT_CAP;
        self.ev_len -= 1;
        Some(e)
    }
}
