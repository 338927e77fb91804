//! The TCP sink agent: cumulative ACKs, immediate or delayed (RFC 5681 §4.2), with SACK
//! blocks when the flow uses SACK (RFC 2018 §4).

use super::*;

// ------------------------------------------------------------------------------------------
// Sink
// ------------------------------------------------------------------------------------------

/// Columnar records of a [`TcpSink`].
#[derive(Clone, Debug, Default)]
pub struct SinkTrace {
    /// One row per data segment that advanced the in-order point: when, and the in-order
    /// payload bytes received so far (goodput is the slope).
    pub rx_time_ns: Vec<u64>,
    pub rx_bytes: Vec<u64>,
}

impl SinkTrace {
    /// In-order payload bytes delivered in the window `(t0, t1]` (ns).
    pub fn bytes_between(&self, t0_ns: u64, t1_ns: u64) -> u64 {
        cum_at(&self.rx_time_ns, &self.rx_bytes, t1_ns) - cum_at(&self.rx_time_ns, &self.rx_bytes, t0_ns)
    }
}

/// Counters of a [`TcpSink`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSinkStats {
    pub segments: u64,
    /// Segments entirely below the in-order point (already received).
    pub duplicates: u64,
    /// Segments above the in-order point (a hole before them).
    pub out_of_order: u64,
    pub acks_sent: u64,
    pub ignored: u64,
}

castlab_core::timers! {
    /// The sink's one timer: the delayed ACK (RFC 5681 §4.2).
    pub enum SinkTimer { DelAck }
}

/// A TCP receiver for one flow: cumulative ACKs, immediate or delayed (RFC 5681 §4.2).
#[derive(Debug)]
pub struct TcpSink {
    cfg: TcpConfig,
    /// Next byte expected in order (the cumulative ACK).
    rcv_nxt: u64,
    /// Segments received above `rcv_nxt`: disjoint, sorted, non-adjacent `[start, end)`.
    ooo: Vec<(u64, u64)>,
    /// In-order segments received since the last ACK (delayed ACKs).
    unacked: u32,
    /// Immediate ACKs left in Linux's quick-ACK mode (`TcpConfig::quickack`).
    quick: u32,
    /// When the last in-order data segment arrived (`quickack_gap`), None before the first.
    last_in_order: Option<Instant>,
    /// The SACK blocks of the last ACK, most recent first (RFC 2018 §4 repeats them).
    sack_recent: [(u64, u64); 3],
    /// The out-of-order segment that triggers the ACK being built (RFC 2018 §4: its block
    /// comes first).
    sack_trigger: Option<u64>,
    /// Timestamp to echo in the next ACK and where to send it.
    ts_recent: u64,
    peer: Option<(Dest, u32)>,
    fin_at: Option<Instant>,
    timers: TimerTable<SinkTimer>,
    now: Instant,
    out: VecDeque<Packet>,
    pub stats: TcpSinkStats,
    pub trace: SinkTrace,
}

impl TcpSink {
    pub fn new(cfg: TcpConfig) -> Self {
        TcpSink {
            cfg,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(16),
            sack_recent: [(0, 0); 3],
            sack_trigger: None,
            unacked: 0,
            quick: 0,
            last_in_order: None,
            ts_recent: 0,
            peer: None,
            fin_at: None,
            timers: TimerTable::default(),
            now: Instant::ZERO,
            out: VecDeque::with_capacity(4),
            stats: TcpSinkStats::default(),
            trace: SinkTrace::default(),
        }
    }

    /// In-order payload bytes received.
    pub fn received_bytes(&self) -> u64 {
        self.rcv_nxt
    }
    /// When the segment carrying FIN was delivered in order (fixed-size transfers).
    pub fn fin_at(&self) -> Option<Instant> {
        self.fin_at
    }

    /// The out-of-order block holding byte `x`, if any.
    fn ooo_block(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.ooo.partition_point(|&(_, e)| e <= x);
        self.ooo.get(i).copied().filter(|&(s, _)| s <= x)
    }

    /// RFC 2018 §4: the first block holds the segment that triggered the ACK (unless it
    /// advanced the cumulative ACK), then the most recently reported blocks not yet listed, as
    /// they stand now; at most three. Offsets above `rcv_nxt` (`TcpHeader::sack`).
    fn sack_blocks(&mut self) -> [(u32, u32); 3] {
        let mut chosen = [(0u64, 0u64); 3];
        let mut n = 0;
        let trigger = self.sack_trigger.take().and_then(|x| self.ooo_block(x));
        let recent = self.sack_recent;
        for cand in trigger.into_iter().chain(recent.iter().filter(|b| b.0 < b.1).filter_map(|b| self.ooo_block(b.0))) {
            if n < 3 && !chosen[..n].contains(&cand) {
                chosen[n] = cand;
                n += 1;
            }
        }
        self.sack_recent = chosen;
        let base = self.rcv_nxt;
        let off = |x: u64| u32::try_from(x - base).unwrap_or(u32::MAX);
        chosen.map(|(s, e)| if s < e { (off(s), off(e)) } else { (0, 0) })
    }

    fn send_ack(&mut self) {
        let Some((dst, flow)) = self.peer else { return };
        let sack = if self.cfg.sack { self.sack_blocks() } else { [(0, 0); 3] };
        let mut p = Packet::data(dst, self.cfg.header_bytes);
        p.flow = flow;
        p.seq = 0;
        p.header = Header::Tcp(TcpHeader {
            ack: self.rcv_nxt,
            flags: TcpHeader::ACK,
            payload: 0,
            wnd: self.cfg.rwnd_bytes,
            ts_val: self.now.as_nanos(),
            ts_ecr: self.ts_recent,
            sack,
        });
        self.unacked = 0;
        // tcp_dec_quickack_mode: every ACK sent uses one of quick-ACK mode's
        self.quick = self.quick.saturating_sub(1);
        self.timers.stop(SinkTimer::DelAck);
        self.stats.acks_sent += 1;
        self.out.push_back(p);
    }

    /// Insert `[s, e)` into the out-of-order list, merging overlaps and neighbours.
    fn insert_ooo(&mut self, s: u64, e: u64) {
        let i = self.ooo.partition_point(|&(_, end)| end < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            ns = ns.min(self.ooo[j].0);
            ne = ne.max(self.ooo[j].1);
            j += 1;
        }
        if j > i {
            self.ooo[i] = (ns, ne);
            self.ooo.drain(i + 1..j);
        } else {
            self.ooo.insert(i, (ns, ne));
        }
    }

    fn on_data(&mut self, now: Instant, p: &Packet, h: &TcpHeader) {
        self.stats.segments += 1;
        let (s, e) = (p.seq, p.seq + h.payload as u64);
        if e <= self.rcv_nxt {
            // A duplicate segment: ACK at once (RFC 793 / RFC 5681 §4.2); Linux also enters
            // quick-ACK mode (tcp_data_queue: tcp_enter_quickack_mode).
            self.stats.duplicates += 1;
            if self.cfg.quickack {
                self.quick = self.quick.max(self.cfg.quickacks);
            }
            self.ts_recent = h.ts_val;
            self.send_ack();
            return;
        }
        if s > self.rcv_nxt {
            // RFC 5681 §4.2: an out-of-order segment gets an immediate duplicate ACK. The
            // echoed timestamp stays that of the last in-order segment (RFC 7323 §4.3).
            self.stats.out_of_order += 1;
            self.insert_ooo(s, e);
            self.sack_trigger = Some(s);
            self.send_ack();
            return;
        }
        // In order (possibly overlapping what we have).
        let filled_hole = !self.ooo.is_empty();
        if self.unacked == 0 {
            // RFC 7323 §4.3: with delayed ACKs, echo the earliest unacknowledged segment.
            self.ts_recent = h.ts_val;
        }
        self.rcv_nxt = e;
        while let Some(&(fs, fe)) = self.ooo.first() {
            if fs > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(fe);
            self.ooo.remove(0);
        }
        if h.flags & TcpHeader::FIN != 0 && self.ooo.is_empty() && self.fin_at.is_none() {
            self.fin_at = Some(now);
        }
        if self.cfg.trace.on() {
            self.trace.rx_time_ns.push(now.as_nanos());
            self.trace.rx_bytes.push(self.rcv_nxt);
        }
        self.unacked += 1;
        // tcp_event_data_recv: the first data segment, or one after a gap longer than the
        // receiver's RTO, starts quick-ACK mode
        if self.cfg.quickack && self.last_in_order.is_none_or(|t| now - t > self.cfg.quickack_gap) {
            self.quick = self.quick.max(self.cfg.quickacks);
        }
        self.last_in_order = Some(now);
        if filled_hole {
            // RFC 5681 §4.2: a segment that fills (part of) a gap is ACKed immediately.
            self.ts_recent = h.ts_val;
            self.send_ack();
        } else if !self.cfg.delayed_ack
            || self.unacked >= 2
            || self.quick > 0
            || self.fin_at.is_some()
            || (self.cfg.push && (h.flags & TcpHeader::PSH != 0 || h.payload < self.cfg.mss_bytes))
        {
            // RFC 5681 §4.2 / RFC 1122 §4.2.3.2: an ACK at least every second segment.
            self.send_ack();
        } else if !self.timers.is_armed(SinkTimer::DelAck) {
            self.timers.set(SinkTimer::DelAck, now + self.cfg.delayed_ack_timeout);
        }
    }
}

impl Agent for TcpSink {
    fn handle_start(&mut self, now: Instant, _info: StartInfo) {
        self.now = now;
    }

    fn handle_packet(&mut self, now: Instant, p: &Packet) {
        self.now = now;
        let Header::Tcp(h) = p.header else {
            self.stats.ignored += 1;
            return;
        };
        if h.flags & TcpHeader::DATA == 0 {
            self.stats.ignored += 1;
            return;
        }
        match self.peer {
            None => self.peer = Some((Dest::Unicast(p.src), p.flow)),
            Some((Dest::Unicast(a), f)) if a == p.src && f == p.flow => {}
            Some(_) => {
                // One sink serves one connection.
                self.stats.ignored += 1;
                return;
            }
        }
        self.on_data(now, p, &h);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.timers.expire(now) == Some(SinkTimer::DelAck) && self.unacked > 0 {
            self.send_ack();
        }
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.out.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next()
    }
}
