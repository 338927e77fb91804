//! The NLM receiver (§3.4): loss measurement over all layers, DROP_REQ upstream above
//! `loss_th`.

use super::*;

/// Columnar records of a receiver.
#[derive(Clone, Debug, Default)]
pub struct ReceiverRecords {
    /// Width of the counting bins.
    pub bin: Duration,
    /// Per bin and layer (flat, `bin * layers + layer`): data packets received, and lost
    /// (from sequence gaps).
    pub bin_received: Vec<u32>,
    pub bin_lost: Vec<u32>,
    /// Measurement windows whose loss exceeded loss_th: end time, loss rate.
    pub over_time_ns: Vec<u64>,
    pub over_loss: Vec<f64>,
    /// DROP_REQs generated (first copy): when, L, to whom (node).
    pub req_time_ns: Vec<u64>,
    pub req_level: Vec<u8>,
    pub req_to: Vec<u32>,
    /// Copies of requests sent, repetitions included.
    pub req_copies: u64,
    pub received: u64,
    pub lost: u64,
    pub sess_received: u64,
}

/// An NLM receiver (§3.1, §3.4): joins its session's group, counts losses over all layers and
/// sends DROP_REQ to the upstream LMR (UpID of the last SESS) when the loss rate exceeds loss_th.
#[derive(Debug)]
pub struct NlmReceiver {
    cfg: NlmConfig,
    group: GroupId,
    layers: usize,
    upstream: Option<Addr>,
    next_seq: Vec<u64>,
    last_seen: Vec<Option<Instant>>,
    /// Per layer: a SESS announced it filtered since its last packet (restart its gap tracking).
    announced_filtered: Vec<bool>,
    win_end: Instant,
    win_received: u32,
    win_lost: u32,
    win_top: u8,
    repeat: Option<Repeat>,
    addr: Addr,
    next_req: u32,
    joined: bool,
    /// Told to stop ([`Agent::handle_shutdown`]): the group left, packets ignored.
    stopped: bool,
    events: Vec<AgentEvent>,
    out: Option<Packet>,
    pub records: ReceiverRecords,
}

impl NlmReceiver {
    /// A receiver of the session on `group` with `layers` layers, counting in bins of `bin`.
    pub fn try_new(cfg: NlmConfig, group: GroupId, layers: usize, bin: Duration) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if layers == 0 || layers > 255 {
            return Err(ConfigError::new("layers", layers as f64, "needs 1 to 255 layers"));
        }
        if bin.is_zero() {
            return Err(ConfigError::new("bin", 0.0, "must be > 0"));
        }
        Ok(NlmReceiver {
            cfg,
            group,
            layers,
            upstream: None,
            next_seq: vec![0; layers],
            last_seen: vec![None; layers],
            announced_filtered: vec![false; layers],
            win_end: Instant::MAX,
            win_received: 0,
            win_lost: 0,
            win_top: 0,
            repeat: None,
            addr: Addr::default(),
            next_req: 0,
            joined: false,
            stopped: false,
            events: Vec::with_capacity(4),
            out: None,
            records: ReceiverRecords { bin, ..Default::default() },
        })
    }

    pub fn layers(&self) -> usize {
        self.layers
    }

    /// The upstream LMR (or sender) learnt from SESS.
    pub fn upstream(&self) -> Option<Addr> {
        self.upstream
    }

    fn bin_index(&mut self, now: Instant) -> usize {
        let b = (now.as_nanos() / self.records.bin.as_nanos()) as usize;
        let need = (b + 1) * self.layers;
        if self.records.bin_received.len() < need {
            self.records.bin_received.resize(need, 0);
            self.records.bin_lost.resize(need, 0);
        }
        b
    }

    fn on_data(&mut self, now: Instant, p: &Packet) {
        let m = p.layer as usize;
        if m >= self.layers {
            return;
        }
        let trace = self.cfg.trace.on();
        let b = if trace { self.bin_index(now) * self.layers + m } else { 0 };
        self.records.received += 1;
        if trace {
            self.records.bin_received[b] += 1;
        }
        let fresh = match self.last_seen[m] {
            None => true,
            Some(t) => now.saturating_since(t) > self.cfg.layer_timeout || self.announced_filtered[m],
        };
        self.announced_filtered[m] = false;
        let mut lost = 0;
        if fresh {
            self.next_seq[m] = p.seq + 1;
        } else if p.seq >= self.next_seq[m] {
            lost = (p.seq - self.next_seq[m]) as u32;
            self.next_seq[m] = p.seq + 1;
        }
        self.last_seen[m] = Some(now);
        if lost > 0 {
            self.records.lost += lost as u64;
            if trace {
                self.records.bin_lost[b] += lost;
            }
        }
        // §3.4: loss rate over all layers of the session, judged once per window
        if now >= self.win_end {
            self.judge_window(now);
        }
        if self.win_end == Instant::MAX {
            self.win_end = now + self.cfg.loss_interval;
        }
        self.win_received += 1;
        self.win_lost += lost;
        self.win_top = self.win_top.max(p.layer + 1);
    }

    fn judge_window(&mut self, now: Instant) {
        let n = self.win_received + self.win_lost;
        if n >= self.cfg.loss_min_packets {
            let rate = self.win_lost as f64 / n as f64;
            if rate > self.cfg.loss_th {
                self.records.over_time_ns.push(now.as_nanos());
                self.records.over_loss.push(rate);
                if let (Some(up), true) = (self.upstream, self.win_top >= 2) {
                    self.next_req = self.next_req.wrapping_add(1);
                    let h = NlmHeader {
                        kind: NlmHeader::DROP_REQ,
                        level: self.win_top,
                        group: self.group.0,
                        up: self.addr,
                        seq: self.next_req,
                    };
                    self.records.req_time_ns.push(now.as_nanos());
                    self.records.req_level.push(self.win_top);
                    self.records.req_to.push(up.node.0);
                    self.repeat = Some(Repeat { h, to: up, next: now, until: now + self.cfg.detect_period });
                    self.send_repeat(now);
                }
            }
        }
        self.win_end = now + self.cfg.loss_interval;
        self.win_received = 0;
        self.win_lost = 0;
        self.win_top = 0;
    }

    fn send_repeat(&mut self, now: Instant) {
        let Some(r) = self.repeat.as_mut() else { return };
        if r.next > now {
            return;
        }
        self.out = Some(control_packet(&self.cfg, Dest::Unicast(r.to), r.h));
        self.records.req_copies += 1;
        r.next = now + self.cfg.ss_intvl;
        if r.next >= r.until {
            self.repeat = None;
        }
    }
}

impl Agent for NlmReceiver {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.addr = info.addr;
        self.joined = true;
        self.events.push(AgentEvent::Join(self.group));
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        if self.stopped {
            return;
        }
        let Header::Nlm(h) = p.header else { return };
        if h.group != self.group.0 {
            return;
        }
        match h.kind {
            NlmHeader::DATA => self.on_data(now, p),
            NlmHeader::SESS => {
                self.records.sess_received += 1;
                self.upstream = Some(h.up);
                // layers above L are not transmitted to us: their next gap is filtering
                for m in (h.level as usize).min(self.layers)..self.layers {
                    self.announced_filtered[m] = true;
                }
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.send_repeat(now);
    }

    /// Told to stop: the receiver leaves its session's group and stops repeating a DROP_REQ
    /// (a receiver that has gone asks no router to filter for it).
    fn handle_shutdown(&mut self, _now: Instant) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.joined = false;
        self.repeat = None;
        self.out = None;
        self.events.push(AgentEvent::Leave(self.group));
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.repeat.map(|r| r.next)
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        self.events.pop()
    }
}
