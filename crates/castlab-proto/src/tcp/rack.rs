//! RACK-TLP loss detection (RFC 8985) for a SACK sender: the per-segment transmit times, the
//! RACK state that marks segments lost by time (§6) and the tail loss probe's episode (§7).
//! The sender ([`super::TcpSender`]) owns the timers and decides what to send; this file owns
//! the records and the arithmetic.
//!
//! Where the RFC is loose, and what is chosen here:
//! - RACK.min_RTT (§6.2 step 1, "SHOULD track a windowed min-filtered estimate"): the
//!   smallest RTT sample of the flow. Linux's `tcp_min_rtt` is windowed over
//!   `tcp_min_rtt_wlen`, 300 s by default, longer than any simulated run here.
//! - No DSACK (the sink sends none): RACK.reo_wnd_mult stays 1 and RACK.reo_wnd is
//!   min_RTT/4 capped by SRTT, or 0 before any reordering is seen in recovery or with
//!   DupThresh segments SACKed (§6.2 step 4). A TLP retransmission is judged spurious only by
//!   §7.4.2's case 2 (a duplicate ACK without SACK blocks).
//! - Linux's timer slack (`TCP_TIMEOUT_MIN`, two jiffies) is added to the reordering timer and
//!   to a PTO with more than one segment in flight ([`TcpConfig::rack_reo_slack`],
//!   [`TcpConfig::tlp_slack`]); RFC 8985 has none.
//! - §6.2 step 2 judges a retransmitted segment's delivery by RACK.min_RTT only, as Linux's
//!   `tcp_rack_advance` does, not by the timestamp echo: under RFC 7323 §4.3 the receiver
//!   echoes the timestamp of the segment that last advanced its left edge, so the SACK of a
//!   retransmission that arrived out of order (a probe behind a hole, a resent hole behind
//!   another) always echoes an older one, and the echo test would discard exactly the
//!   deliveries that reveal the losses before them.
//! - After a retransmission timeout the sender keeps its go-back-N (RFC 2018 §8 clears the
//!   scoreboard); §6.3's marks are taken and count as the timeout's, not RACK's.

use super::*;

/// RFC 8985 §5.2's per-segment variables.
#[derive(Clone, Copy, Debug)]
struct Seg {
    /// Segment.xmit_ts: the latest (re)transmission.
    xmit_ts: Instant,
    retransmitted: bool,
    /// Marked lost and not retransmitted since (§6.1 clears it on a retransmission).
    lost: bool,
    /// Delivered by a SACK block (a cumulative ACK removes the record).
    sacked: bool,
}

/// What one ACK newly delivered, folded as the segments go by (no list is built).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Delivered {
    /// The latest-sent valid segment: (xmit_ts, end_seq), §6.2 step 2.
    latest: Option<(Instant, u64)>,
}

/// The RACK-TLP state of one sender.
#[derive(Clone, Debug)]
pub(crate) struct Rack {
    mss: u64,
    /// Records of the segments from `base` (a segment boundary) to `end`, in sequence order;
    /// every segment but the last of a fixed-size transfer is `mss` long.
    segs: VecDeque<Seg>,
    base: u64,
    end: u64,
    /// RACK.xmit_ts, RACK.end_seq and RACK.rtt (§5.3) once a segment has been delivered.
    segment: Option<(Instant, u64)>,
    rtt: Duration,
    /// RACK.fack and RACK.reordering_seen (§6.2 step 3).
    fack: u64,
    reordering_seen: bool,
    /// RACK.segs_sacked, and the segments marked lost and not yet retransmitted.
    pub(crate) segs_sacked: u32,
    pub(crate) segs_lost: u32,
    /// TLP.end_seq and TLP.is_retrans (§5.3, §7.1).
    pub(crate) tlp_end_seq: Option<u64>,
    pub(crate) tlp_is_retrans: bool,
    /// An RTT sample since the last probe or the start (§7.3, the second condition).
    pub(crate) rtt_since_probe: bool,
}

/// RACK_sent_after (§6.2 step 2): `(t1, seq1)` was sent after `(t2, seq2)`; equal times are
/// ordered by sequence.
fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    pub(crate) fn new(mss: u64) -> Self {
        Rack {
            mss: mss.max(1),
            segs: VecDeque::with_capacity(64),
            base: 0,
            end: 0,
            segment: None,
            rtt: Duration::ZERO,
            fack: 0,
            reordering_seen: false,
            segs_sacked: 0,
            segs_lost: 0,
            tlp_end_seq: None,
            tlp_is_retrans: false,
            rtt_since_probe: false,
        }
    }

    /// One past the last byte recorded (the next new segment starts here).
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    fn start_of(&self, i: usize) -> u64 {
        self.base + i as u64 * self.mss
    }

    fn end_of(&self, i: usize) -> u64 {
        (self.start_of(i) + self.mss).min(self.end)
    }

    fn index(&self, seq: u64) -> Option<usize> {
        (seq >= self.base && seq < self.end).then(|| ((seq - self.base) / self.mss) as usize)
    }

    /// §6.1: the segment `[seq, seq + len)` was sent at `now`, new data or a retransmission.
    pub(crate) fn on_send(&mut self, now: Instant, seq: u64, len: u64) {
        match self.index(seq) {
            Some(i) => {
                let s = &mut self.segs[i];
                s.retransmitted = true;
                s.xmit_ts = now;
                if std::mem::take(&mut s.lost) {
                    self.segs_lost = self.segs_lost.saturating_sub(1);
                }
            }
            None if seq == self.end => {
                if self.segs.is_empty() {
                    self.base = seq;
                }
                self.segs.push_back(Seg { xmit_ts: now, retransmitted: false, lost: false, sacked: false });
                self.end = seq + len;
            }
            // not at the edge of the records: a caller's bug, nothing to record
            None => {}
        }
    }

    /// §6.2 steps 2 and 3 for one newly delivered segment `i`.
    fn deliver(&self, d: &mut Delivered, fack: &mut u64, reo: &mut bool, i: usize, now: Instant, v: &Validity) {
        let s = self.segs[i];
        let end = self.end_of(i);
        // step 2: a retransmitted segment delivered sooner than RACK.min_RTT after it was sent
        // may be an earlier transmission's delivery, and gives no RACK.rtt
        let valid = !s.retransmitted || v.min_rtt.is_none_or(|m| now - s.xmit_ts >= m);
        if valid && d.latest.is_none_or(|(t, e)| sent_after(s.xmit_ts, end, t, e)) {
            d.latest = Some((s.xmit_ts, end));
        }
        // step 3: an original segment delivered below RACK.fack arrived out of order
        if end > *fack {
            *fack = end;
        } else if end < *fack && !s.retransmitted {
            *reo = true;
        }
    }

    /// The ACK's cumulative part and SACK blocks: marks the records and runs §6.2 steps 2 and
    /// 3. `blocks` are the ACK's SACK blocks, `[start, end)`.
    pub(crate) fn on_ack(&mut self, now: Instant, ack: u64, blocks: &[(u64, u64); 3], v: &Validity) {
        let mut d = Delivered::default();
        let (mut fack, mut reo) = (self.fack, self.reordering_seen);
        // cumulatively acknowledged, in sequence order
        let mut i = 0;
        while i < self.segs.len() && self.end_of(i) <= ack {
            if !self.segs[i].sacked {
                self.deliver(&mut d, &mut fack, &mut reo, i, now, v);
            }
            i += 1;
        }
        // selectively acknowledged, the blocks in sequence order
        let mut sorted = *blocks;
        sorted.sort_unstable();
        for &(s, e) in &sorted {
            if s >= e {
                continue;
            }
            let Some(mut j) = self.index(s.max(ack).max(self.base)) else { continue };
            while j < self.segs.len() && self.end_of(j) <= e {
                if self.start_of(j) >= s && !self.segs[j].sacked {
                    self.deliver(&mut d, &mut fack, &mut reo, j, now, v);
                    let seg = &mut self.segs[j];
                    seg.sacked = true;
                    self.segs_sacked += 1;
                    if std::mem::take(&mut seg.lost) {
                        self.segs_lost = self.segs_lost.saturating_sub(1);
                    }
                }
                j += 1;
            }
        }
        for _ in 0..i {
            if let Some(s) = self.segs.pop_front() {
                self.segs_sacked = self.segs_sacked.saturating_sub(u32::from(s.sacked));
                self.segs_lost = self.segs_lost.saturating_sub(u32::from(s.lost));
                self.base = (self.base + self.mss).min(self.end);
            }
        }
        if self.segs.is_empty() {
            self.base = self.end;
        }
        (self.fack, self.reordering_seen) = (fack, reo);
        if let Some((t, e)) = d.latest {
            self.rtt = now - t;
            if self.segment.is_none_or(|(rt, re)| sent_after(t, e, rt, re)) {
                self.segment = Some((t, e));
            }
        }
    }

    /// RACK_update_reo_wnd (§6.2 step 4) without DSACK: `recovering` is fast or RTO recovery.
    pub(crate) fn reo_wnd(
        &self,
        cfg: &TcpConfig,
        recovering: bool,
        min_rtt: Option<Duration>,
        srtt: Option<Duration>,
    ) -> Duration {
        if !self.reordering_seen && (recovering || self.segs_sacked >= cfg.dupack_threshold) {
            return Duration::ZERO;
        }
        let w = min_rtt.map_or(Duration::ZERO, |m| m / u64::from(cfg.rack_reo_wnd_divisor));
        srtt.map_or(w, |s| w.min(s))
    }

    /// RACK_detect_loss (§6.2 step 5): marks segments lost; the number marked and how long
    /// until the next one would be (the reordering timer), if any.
    pub(crate) fn detect_loss(&mut self, now: Instant, reo_wnd: Duration) -> (u32, Option<Duration>) {
        let Some((rt, re)) = self.segment else { return (0, None) };
        let (mut marked, mut timeout) = (0u32, None::<Duration>);
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.sacked || s.lost || !sent_after(rt, re, s.xmit_ts, self.end_of(i)) {
                continue;
            }
            let due = s.xmit_ts + self.rtt + reo_wnd;
            if due <= now {
                self.segs[i].lost = true;
                self.segs_lost += 1;
                marked += 1;
            } else {
                let left = due - now;
                timeout = Some(timeout.map_or(left, |t| t.max(left)));
            }
        }
        (marked, timeout)
    }

    /// §6.3 on a retransmission timeout, after the scoreboard was cleared (RFC 2018 §8): the
    /// first segment and those older than RACK.rtt + `reo_wnd` are lost; SACK marks go.
    pub(crate) fn on_rto(&mut self, now: Instant, reo_wnd: Duration) {
        let has_rtt = self.segment.is_some();
        for i in 0..self.segs.len() {
            let s = &mut self.segs[i];
            s.sacked = false;
            let old = has_rtt && s.xmit_ts + self.rtt + reo_wnd <= now;
            s.lost = i == 0 || old;
        }
        self.segs_sacked = 0;
        self.segs_lost = self.segs.iter().filter(|s| s.lost).count() as u32;
        // §7.1: a new RTO recovery resets the TLP episode
        self.tlp_end_seq = None;
        self.tlp_is_retrans = false;
    }

    /// The first segment marked lost and not retransmitted since: `(seq, len)`.
    pub(crate) fn first_lost(&self) -> Option<(u64, u64)> {
        if self.segs_lost == 0 {
            return None;
        }
        let i = self.segs.iter().position(|s| s.lost)?;
        Some((self.start_of(i), self.end_of(i) - self.start_of(i)))
    }

    /// Bytes in flight as Linux counts them (`tcp_packets_in_flight`: sent, less SACKed, less
    /// lost and not retransmitted since).
    pub(crate) fn pipe(&self) -> u64 {
        (0..self.segs.len())
            .filter(|&i| !self.segs[i].sacked && !self.segs[i].lost)
            .map(|i| self.end_of(i) - self.start_of(i))
            .sum()
    }

    /// The start of the last segment sent (the one a TLP retransmits, §7.3).
    pub(crate) fn last_segment(&self) -> Option<(u64, u64)> {
        let n = self.segs.len().checked_sub(1)?;
        Some((self.start_of(n), self.end_of(n) - self.start_of(n)))
    }
}

/// What §6.2 step 2 needs to judge a retransmitted segment's delivery.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Validity {
    /// RACK.min_RTT.
    pub(crate) min_rtt: Option<Duration>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{ms, start_info as info, Driver, Link, Pair};
    use castlab_core::{Addr, Dest, Header, NodeId, Packet, TcpHeader};

    const SND: Addr = Addr::new(NodeId(0), 1);
    const RCV: Addr = Addr::new(NodeId(1), 2);

    /// Linux's settings with 1000-byte segments and an ACK per segment, so that the windows
    /// below are counted by hand: IW 10, RTO = SRTT + max(200 ms, 4·RTTVAR), SACK, RACK-TLP.
    fn cfg(rack_tlp: bool, transfer: Transfer) -> TcpConfig {
        TcpConfig {
            mss_bytes: 1000,
            header_bytes: 40,
            delayed_ack: false,
            rack: rack_tlp,
            tlp: rack_tlp,
            transfer,
            ..TcpConfig::linux()
        }
    }

    /// A sack-variant sender and its sink joined by 50 ms each way at infinite rate (a window
    /// leaves in one instant, its ACKs come back together 100 ms later), the data link losing
    /// the `n`-th transmission (0-based) of the segment at `seq` when `drop(seq, n)`.
    fn run(c: TcpConfig, until: Instant, drop: impl FnMut(u64, u32) -> bool + 'static) -> TcpSender {
        run_sender(TcpSender::sack(RCV, 5, c.clone()), c, until, drop)
    }

    /// [`run`] with the sender given.
    fn run_sender(
        snd: TcpSender,
        c: TcpConfig,
        until: Instant,
        mut drop: impl FnMut(u64, u32) -> bool + 'static,
    ) -> TcpSender {
        let mut sent: Vec<u32> = Vec::new();
        let loss = move |p: &Packet| {
            let k = (p.seq / 1000) as usize;
            if sent.len() <= k {
                sent.resize(k + 1, 0);
            }
            sent[k] += 1;
            drop(p.seq, sent[k] - 1)
        };
        let d = Duration::from_millis(50);
        let mut pair =
            Pair::start(snd, info(SND), TcpSink::new(c), info(RCV), Link::delay(d).loss(loss), Link::delay(d));
        pair.run_until(until);
        pair.a.agent
    }

    /// The retransmissions of the segment at `seq`: (time in ms, kind).
    fn retx_of(s: &TcpSender, seq: u64) -> Vec<(u64, u8)> {
        let t = &s.trace;
        (0..t.retx_seq.len())
            .filter(|&i| t.retx_seq[i] == seq)
            .map(|i| (t.retx_time_ns[i] / 1_000_000, t.retx_kind[i]))
            .collect()
    }

    #[test]
    fn tail_loss_is_repaired_by_a_probe_and_rack_without_a_timeout() {
        // 20 segments: 10 at 0 ms, 10 at 100 ms (slow start); the last two (18, 19) are lost.
        // At 200 ms the ACKs of 10..17 leave 2 segments out: SRTT 100 ms, RTO 100 + 200 =
        // 300 ms (to 500 ms), PTO 2·100 + 2 = 202 ms (to 402 ms). The probe resends segment 19
        // at 402 ms; its SACK at 502 ms makes RACK mark 18 lost (sent at 100 ms, due at 100 +
        // RACK.rtt 100 + reo_wnd 25 = 225 ms): fast recovery resends it, acknowledged at 602 ms.
        let c = cfg(true, Transfer::Bytes(20_000));
        let s = run(c, ms(2000), |seq, n| (seq == 18_000 || seq == 19_000) && n == 0);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.tlp_probes, 1);
        assert_eq!(retx_of(&s, 19_000), vec![(402, RetxKind::Probe as u8)]);
        assert_eq!(retx_of(&s, 18_000), vec![(502, RetxKind::Fast as u8)]);
        assert_eq!(s.stats.rack_losses, 1);
        assert_eq!(s.completed_at(), Some(ms(602)));
        // the ablation, RFC 6675 alone: no duplicate ACK comes, the RTO expires at 500 ms
        let off =
            run(cfg(false, Transfer::Bytes(20_000)), ms(2000), |seq, n| (seq == 18_000 || seq == 19_000) && n == 0);
        assert_eq!(off.stats.timeouts, 1);
        assert_eq!(off.trace.timeout_time_ns, vec![ms(500).as_nanos()]);
        assert_eq!((off.stats.tlp_probes, off.stats.rack_losses), (0, 0));
    }

    #[test]
    fn a_probe_of_the_only_segment_out_is_capped_by_the_rto() {
        // 10 segments at 0 ms, the last lost. At 100 ms one segment is out: PTO = 2·100 +
        // TLP.max_ack_delay 200 = 400 ms, capped by the RTO's 100 + 300 = 400 ms; the probe
        // goes first and re-arms the RTO, so no timeout.
        let s = run(cfg(true, Transfer::Bytes(10_000)), ms(2000), |seq, n| seq == 9_000 && n == 0);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(retx_of(&s, 9_000), vec![(400, RetxKind::Probe as u8)]);
        assert_eq!(s.completed_at(), Some(ms(500)));
    }

    #[test]
    fn a_lost_retransmission_is_found_by_rack_one_rtt_later() {
        // Segment 2 is lost twice. At 100 ms the third SACKed segment makes reo_wnd 0 and RACK
        // marks 2 lost (sent at 0, due at 0 + 100 ms): fast retransmit. The segments sent after
        // it at 100 ms (10..15, later in sequence at the same instant) are SACKed at 200 ms,
        // so the retransmission, due at 100 + 100 + 0 (recovery) ms, is lost then and sent
        // again. RFC 6675 alone waits for the RTO.
        let s = run(cfg(true, Transfer::Bulk), ms(400), |seq, n| seq == 2_000 && n <= 1);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(retx_of(&s, 2_000), vec![(100, RetxKind::Fast as u8), (200, RetxKind::Sack as u8)]);
        assert_eq!(s.stats.rack_losses, 2);
        assert!(s.snd_una() > 15_000, "recovered by 300 ms: snd_una {}", s.snd_una());
        let off = run(cfg(false, Transfer::Bulk), ms(400), |seq, n| seq == 2_000 && n <= 1);
        assert_eq!(off.stats.timeouts, 1);
        assert_eq!(retx_of(&off, 2_000).len(), 2, "fast retransmit, then the timer's");
    }

    #[test]
    fn a_probe_that_repaired_the_only_loss_cuts_the_window_once() {
        // A receive window of one segment: after the initial window (10 segments at 0 ms, sent
        // before the window is known) a segment every 100 ms. Segment 13 (sent at 400 ms) is
        // lost; SRTT 100 ms, RTO 100 + 200 = 300 ms (to 700 ms), PTO with one segment out
        // 2·100 + 200 = 400 ms, capped at 700 ms. The probe resends it (the window has no room
        // for new data), its ACK at 800 ms reaches TLP.end_seq, and the next ACK, at 900 ms,
        // passes it with no duplicate seen: the probe repaired a loss (§7.4.2), and the window
        // is cut once (RFC 5681 eq. (4) on a flight of one segment: 2 SMSS), no timeout.
        let c = TcpConfig { rwnd_bytes: 1000, ..cfg(true, Transfer::Bulk) };
        let s = run(c, ms(950), |seq, n| seq == 13_000 && n == 0);
        assert_eq!(retx_of(&s, 13_000), vec![(700, RetxKind::Probe as u8)]);
        assert_eq!((s.stats.timeouts, s.stats.tlp_probes, s.stats.tlp_recoveries), (0, 1, 1));
        assert_eq!((s.cwnd(), s.ssthresh()), (2_000, 2_000));
        assert_eq!(s.snd_una(), 15_000);
        // without RACK-TLP the same loss is the RTO's at 700 ms
        let off = run(TcpConfig { rwnd_bytes: 1000, ..cfg(false, Transfer::Bulk) }, ms(950), |seq, n| {
            seq == 13_000 && n == 0
        });
        assert_eq!(off.trace.timeout_time_ns, vec![ms(700).as_nanos()]);
    }

    fn ack(at_ack: u64, sack: Option<(u64, u64)>) -> Packet {
        let mut p = Packet::data(Dest::Unicast(SND), 52);
        p.flow = 5;
        let mut blocks = [(0u32, 0u32); 3];
        if let Some((s, e)) = sack {
            blocks[0] = ((s - at_ack) as u32, (e - at_ack) as u32);
        }
        p.header = Header::Tcp(TcpHeader {
            ack: at_ack,
            flags: TcpHeader::ACK,
            wnd: 1 << 20,
            ts_ecr: 0,
            sack: blocks,
            ..Default::default()
        });
        p
    }

    /// The sender's first 10 segments at 0 ms; at 100 ms segment 0's ACK (an RTT sample of
    /// 100 ms: RACK.min_RTT, reo_wnd 25 ms); at 101 ms a SACK of segment 2 with 1 missing.
    fn reordered_start() -> Driver<TcpSender> {
        let mut d = Driver::start_with(TcpSender::sack(RCV, 5, cfg(true, Transfer::Bulk)), Instant::ZERO, info(SND));
        assert_eq!(d.sent.len(), 10);
        d.packet(ms(100), &ack(1000, None));
        d.packet(ms(101), &ack(1000, Some((2000, 3000))));
        d
    }

    #[test]
    fn reordering_within_the_window_is_not_a_loss() {
        // Segment 1 (sent at 0) is due at 0 + RACK.rtt 101 + reo_wnd 25 = 126 ms: the timer is
        // at 101 + 25 + 8 (slack) = 134 ms. Segment 1 arrives late, acknowledged at 110 ms:
        // nothing is marked lost or sent again, and reordering has been seen.
        let mut d = reordered_start();
        assert_eq!(d.agent.poll_timeout(), Some(ms(134)));
        d.packet(ms(110), &ack(3000, None));
        d.advance_to(ms(150));
        assert_eq!((d.agent.stats.rack_losses, d.agent.stats.retransmissions), (0, 0));
        assert!(d.agent.rack.as_ref().is_some_and(|r| r.reordering_seen));
        // past the window, the timer marks it lost and fast recovery resends it at 134 ms
        let mut d = reordered_start();
        d.advance_to(ms(150));
        assert_eq!(d.agent.stats.rack_losses, 1);
        assert_eq!(retx_of(&d.agent, 1000), vec![(134, RetxKind::Fast as u8)]);
        assert!(d.agent.controller().in_recovery());
    }

    #[test]
    fn records_follow_acks_and_sacks() {
        let mut r = Rack::new(1000);
        for k in 0..5 {
            r.on_send(ms(k), k * 1000, 1000);
        }
        let v = Validity { min_rtt: Some(Duration::from_millis(100)) };
        r.on_ack(ms(110), 1000, &[(3000, 5000), (0, 0), (0, 0)], &v);
        assert_eq!((r.base, r.end, r.segs.len(), r.segs_sacked), (1000, 5000, 4, 2));
        // RACK.segment is the latest sent of those delivered: segment 4, sent at 4 ms
        assert_eq!(r.segment, Some((ms(4), 5000)));
        assert_eq!(r.rtt, Duration::from_millis(106));
        // with 2 SACKed: reo_wnd = min_RTT / 4 = 25 ms; segment 1 due at 1 + 106 + 25 = 132 ms,
        // segment 2 at 133 ms (the timer waits for the later)
        let c = TcpConfig::linux();
        let w = r.reo_wnd(&c, false, Some(Duration::from_millis(100)), Some(Duration::from_millis(100)));
        assert_eq!(w, Duration::from_millis(25));
        assert_eq!(r.detect_loss(ms(110), w), (0, Some(Duration::from_millis(23))));
        assert_eq!(r.detect_loss(ms(133), w), (2, None));
        assert_eq!(r.first_lost(), Some((1000, 1000)));
        assert_eq!(r.pipe(), 0);
        r.on_send(ms(140), 1000, 1000);
        assert_eq!((r.segs_lost, r.pipe(), r.first_lost()), (1, 1000, Some((2000, 1000))));
    }
    /// BBR, counting the losses each ACK's sample reports to it.
    #[derive(Debug)]
    struct LossCount {
        bbr: Bbr,
        losses: std::rc::Rc<std::cell::Cell<u64>>,
    }

    impl CongestionControl for LossCount {
        fn name(&self) -> &'static str {
            self.bbr.name()
        }
        fn cwnd(&self) -> u64 {
            self.bbr.cwnd()
        }
        fn ssthresh(&self) -> u64 {
            self.bbr.ssthresh()
        }
        fn in_recovery(&self) -> bool {
            self.bbr.in_recovery()
        }
        fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
            self.bbr.on_new_ack(a)
        }
        fn on_dup_ack(&mut self, a: &AckInfo, n: u32) -> AckResponse {
            self.bbr.on_dup_ack(a, n)
        }
        fn on_timeout(&mut self, to: &TimeoutInfo) {
            self.bbr.on_timeout(to)
        }
        fn uses_sack(&self) -> bool {
            self.bbr.uses_sack()
        }
        fn on_sack_loss(&mut self, a: &AckInfo) -> AckResponse {
            self.bbr.on_sack_loss(a)
        }
        fn on_loss_repaired(&mut self, a: &AckInfo) {
            self.bbr.on_loss_repaired(a)
        }
        fn on_start(&mut self, now: Instant, rng: Rng) {
            self.bbr.on_start(now, rng)
        }
        fn wants_rate_samples(&self) -> bool {
            self.bbr.wants_rate_samples()
        }
        fn on_ack_sample(&mut self, s: &AckSample) {
            self.bbr.on_ack_sample(s)
        }
        fn on_ack_processed(&mut self, s: &AckSample) {
            self.losses.set(self.losses.get() + s.losses);
            self.bbr.on_ack_processed(s)
        }
        fn pacing_rate(&self) -> Option<f64> {
            self.bbr.pacing_rate()
        }
        fn state_code(&self) -> Option<u8> {
            self.bbr.state_code()
        }
        fn on_handshake_rtt(&mut self, now: Instant, rtt: Duration, srtt: Duration) {
            self.bbr.on_handshake_rtt(now, rtt, srtt)
        }
        fn path_model(&self) -> Option<(f64, Option<Duration>)> {
            self.bbr.path_model()
        }
    }

    /// A BBR flow on [`run`]'s path: the sender and the losses its samples reported.
    fn run_bbr(c: TcpConfig, until: Instant, drop: impl FnMut(u64, u32) -> bool + 'static) -> (TcpSender, u64) {
        let losses = std::rc::Rc::new(std::cell::Cell::new(0));
        let cc = LossCount { bbr: Bbr::new(&c, BbrConfig::default()), losses: losses.clone() };
        let s = run_sender(TcpSender::new(RCV, 5, c.clone(), Box::new(cc)), c, until, drop);
        (s, losses.get())
    }

    #[test]
    fn an_acks_rack_marks_reach_the_rate_sample() {
        // Segments 2 and 3 of the initial window lost once. 4, 5, 6 are SACKed at about
        // 100 ms; the third makes reo_wnd 0 and RACK marks both on that ACK: 2 losses, as
        // many as RACK marked. Without a loss no ACK reports one.
        let c = cfg(true, Transfer::Bytes(30_000));
        let (s, losses) = run_bbr(c.clone(), ms(3000), |seq, n| (seq == 2_000 || seq == 3_000) && n == 0);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(s.stats.rack_losses, 2);
        assert_eq!(losses, 2);
        assert!(s.completed_at().is_some());
        let (_, none) = run_bbr(c, ms(3000), |_, _| false);
        assert_eq!(none, 0);
    }

    #[test]
    fn without_rack_rfc_6675s_is_lost_marks_reach_the_rate_sample() {
        // The same losses, RACK off: the ACK that SACKs segment 6 puts 3 segments above 3
        // (more than (DupThresh - 1) SMSS), so IsLost covers 3 and 2 on it: 2 losses, once.
        let c = cfg(false, Transfer::Bytes(30_000));
        let (s, losses) = run_bbr(c, ms(3000), |seq, n| (seq == 2_000 || seq == 3_000) && n == 0);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(losses, 2);
        assert!(s.completed_at().is_some());
    }

    #[test]
    fn a_timeouts_marks_belong_to_no_ack() {
        // RACK off, the last 2 of 10 segments lost: no SACK above them, the RTO resends them.
        // Linux marks them lost in the timer (`tcp_timeout_mark_lost`), outside any ACK, so
        // no rate sample reports a loss.
        let c = cfg(false, Transfer::Bytes(10_000));
        let (s, losses) = run_bbr(c, ms(3000), |seq, n| seq >= 8_000 && n == 0);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(losses, 0);
        assert!(s.completed_at().is_some());
    }
}
