//! The NLM sender (§3.1, §3.4-§3.5): all layers on one group, SESS every `ss_intvl`, and the
//! DROP_REQ / ADD_REQ handling of its own interface.

use super::*;

#[derive(Clone, Debug, Default)]
pub struct SenderRecords {
    /// Every change of the sender's L_cur: when, the new value, and why (cause codes as
    /// [`LmrRecords::lcur_cause`]: 2 DROP_REQ, 3 ADD_REQ).
    pub level_time_ns: Vec<u64>,
    pub level: Vec<u8>,
    pub level_cause: Vec<u8>,
    /// Requests received: when, kind (`NlmHeader::DROP_REQ` / `ADD_REQ`), L.
    pub req_time_ns: Vec<u64>,
    pub req_kind: Vec<u8>,
    pub req_level: Vec<u8>,
    pub sess_sent: u64,
    /// Data packets sent, and those withheld because their layer was above L_cur.
    pub data_sent: u64,
    pub data_withheld: u64,
}

/// The NLM sender of one session (§3.1, §3.4, §3.5).
#[derive(Debug)]
pub struct NlmSender {
    cfg: NlmConfig,
    group: GroupId,
    layers: u8,
    l_cur: u8,
    cbr: CbrSource,
    addr: Addr,
    next_sess: Instant,
    stop: Instant,
    sess_due: bool,
    events: Vec<AgentEvent>,
    rates_bps: Vec<f64>,
    seen: Seen,
    pub records: SenderRecords,
}

impl NlmSender {
    /// Layer m (0-based) at `rates_bps[m]`, all on `group`; CBR with McCanne et al. §4's jitter if asked.
    #[allow(clippy::too_many_arguments)]
    pub fn try_new(
        cfg: NlmConfig,
        group: GroupId,
        rates_bps: &[f64],
        packet_size: u32,
        flow: u32,
        start: Instant,
        stop: Instant,
        jitter: bool,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        if rates_bps.is_empty() || rates_bps.len() > 255 {
            return Err(ConfigError::new("rates_bps", rates_bps.len() as f64, "needs 1 to 255 layers"));
        }
        if let Some(r) = rates_bps.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(ConfigError::new("rates_bps", *r, "every rate must be positive"));
        }
        let streams =
            rates_bps.iter().enumerate().map(|(m, r)| CbrStream::new(Dest::Group(group), *r, m as u8)).collect();
        let layers = rates_bps.len() as u8;
        Ok(NlmSender {
            l_cur: cfg.initial_layers.min(layers),
            cfg,
            group,
            layers,
            cbr: CbrSource::try_new(streams, packet_size, flow, start, stop, jitter)?,
            addr: Addr::default(),
            next_sess: Instant::MAX,
            stop,
            sess_due: false,
            events: Vec::with_capacity(4),
            rates_bps: rates_bps.to_vec(),
            seen: Seen::default(),
            records: SenderRecords::default(),
        })
    }

    /// The number of layers the sender currently transmits (its L_cur).
    pub fn level(&self) -> u8 {
        self.l_cur
    }
    pub fn layers(&self) -> u8 {
        self.layers
    }
    pub fn config(&self) -> &NlmConfig {
        &self.cfg
    }

    fn set_level(&mut self, now: Instant, l: u8, cause: u8) {
        self.l_cur = l;
        self.records.level_time_ns.push(now.as_nanos());
        self.records.level.push(l);
        self.records.level_cause.push(cause);
        let rate: f64 = self.rates_bps[..l as usize].iter().sum();
        self.events.push(AgentEvent::RateChanged { rate_bps: rate });
    }
}

impl Agent for NlmSender {
    fn handle_start(&mut self, now: Instant, mut info: StartInfo) {
        self.addr = info.addr;
        // the first SESS at a random phase within ss_intvl (our choice): senders started
        // together would otherwise send their SESS in synchronised bursts
        let phase = self.cfg.ss_intvl.mul_f64(info.rng.uniform());
        self.cbr.handle_start(now, info);
        self.next_sess = now + phase;
        let l = self.l_cur;
        self.set_level(now, l, 5);
    }

    /// DROP_REQ / ADD_REQ at the sender's only interface: Figures 5 and 6 with no other
    /// interface and no upstream (nothing is forwarded).
    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        let Header::Nlm(h) = p.header else { return };
        if h.group != self.group.0 || !(h.kind == NlmHeader::DROP_REQ || h.kind == NlmHeader::ADD_REQ) {
            return;
        }
        if self.cfg.trace.on() {
            self.records.req_time_ns.push(now.as_nanos());
            self.records.req_kind.push(h.kind as u8);
            self.records.req_level.push(h.level);
        }
        if !self.seen.first_copy(&h) {
            return; // a repetition of a request already acted on
        }
        if h.kind == NlmHeader::DROP_REQ {
            // Figure 5: L ≤ L_cur → L_cur = L - 1 (never below the base layer)
            if h.level >= 2 && h.level <= self.l_cur {
                self.set_level(now, h.level - 1, 2);
            }
        } else if h.level > self.l_cur {
            // Figure 6: L > L_cur → L_cur = L
            self.set_level(now, h.level.min(self.layers), 3);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if matches!(self.cbr.poll_timeout(), Some(t) if t <= now) {
            self.cbr.handle_timeout(now);
        }
        if self.next_sess <= now {
            self.sess_due = true;
            self.next_sess = now + self.cfg.ss_intvl;
            if self.next_sess >= self.stop {
                self.next_sess = Instant::MAX;
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        if self.sess_due {
            self.sess_due = false;
            self.records.sess_sent += 1;
            // §3.5: SESS(S, L) every ss_intvl; L = the layers the source can send (see the
            // module documentation), UpID = the sender itself.
            let h = NlmHeader { kind: NlmHeader::SESS, level: self.layers, group: self.group.0, up: self.addr, seq: 0 };
            return Some(control_packet(&self.cfg, Dest::Group(self.group), h));
        }
        loop {
            let mut p = self.cbr.poll_transmit()?;
            if p.layer >= self.l_cur {
                self.records.data_withheld += 1;
                continue;
            }
            self.records.data_sent += 1;
            p.header = Header::Nlm(NlmHeader {
                kind: NlmHeader::DATA,
                level: p.layer + 1,
                group: self.group.0,
                up: self.addr,
                seq: 0,
            });
            return Some(p);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let c = self.cbr.poll_timeout().unwrap_or(Instant::MAX);
        let t = c.min(self.next_sess);
        (t != Instant::MAX).then_some(t)
    }

    /// Told to stop: NLM (§3) has no message for a sender leaving its session (no SESS says
    /// the session ends; LMRs and receivers let its state time out), so the sender sends
    /// nothing more, neither data nor SESS, and disarms its timers. It holds no group.
    fn handle_shutdown(&mut self, now: Instant) {
        self.cbr.handle_shutdown(now);
        self.stop = self.stop.min(now);
        self.next_sess = Instant::MAX;
        self.sess_due = false;
    }

    fn poll_event(&mut self) -> Option<AgentEvent> {
        if self.events.is_empty() {
            None
        } else {
            Some(self.events.remove(0))
        }
    }
}
