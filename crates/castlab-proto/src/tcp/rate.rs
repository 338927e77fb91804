//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation, the algorithm Linux's
//! `net/ipv4/tcp_rate.c` runs): each segment remembers, when it is sent, how much the
//! connection had delivered and when; the ACK that delivers it turns the difference into a
//! rate sample. Kept by the sender only for controllers that ask ([`CongestionControl::
//! wants_rate_samples`]), so other flows do no per-segment work.

use super::*;

/// Per-segment state (draft §3.2, "per-packet (P.*) variables").
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    start: u64,
    end: u64,
    /// When the segment was (last) sent.
    sent: Instant,
    /// P.first_sent_time, P.delivered_time, P.delivered, P.is_app_limited.
    first_sent: Instant,
    delivered_time: Instant,
    delivered: u64,
    app_limited: bool,
    /// Already delivered (by SACK); a later cumulative ACK does not count it again.
    done: bool,
}

/// The connection's delivery state (draft §3.1, "C.*") and the sample being built for one ACK.
#[derive(Clone, Debug)]
pub(crate) struct RateSampler {
    /// Sent, not yet cumulatively acknowledged segments, in sequence order.
    recs: VecDeque<TxRecord>,
    /// C.delivered (bytes), C.delivered_time, C.first_sent_time.
    pub(crate) delivered: u64,
    pub(crate) delivered_time: Instant,
    first_sent: Instant,
    /// C.app_limited: 0, or the `delivered` count past which sending is no longer
    /// application-limited.
    app_limited: u64,
    // The sample under construction (draft §3.3, "rs.*").
    rs_has: bool,
    rs_prior_delivered: u64,
    rs_prior_time: Instant,
    rs_send_elapsed: Duration,
    rs_ack_elapsed: Duration,
    rs_app_limited: bool,
    rs_newest: (Instant, u64),
}

impl RateSampler {
    pub(crate) fn new() -> Self {
        RateSampler {
            recs: VecDeque::with_capacity(64),
            delivered: 0,
            delivered_time: Instant::ZERO,
            first_sent: Instant::ZERO,
            app_limited: 0,
            rs_has: false,
            rs_prior_delivered: 0,
            rs_prior_time: Instant::ZERO,
            rs_send_elapsed: Duration::ZERO,
            rs_ack_elapsed: Duration::ZERO,
            rs_app_limited: false,
            rs_newest: (Instant::ZERO, 0),
        }
    }

    /// Draft §3.2 "Transmitting a data packet", for the segment `[seq, seq + len)` sent at
    /// `now`; `idle`: nothing was in flight before it.
    pub(crate) fn on_send(&mut self, now: Instant, seq: u64, len: u64, idle: bool) {
        if idle {
            self.first_sent = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            start: seq,
            end: seq + len,
            sent: now,
            first_sent: self.first_sent,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            done: false,
        };
        match self.recs.back() {
            Some(b) if seq < b.end => {
                // a retransmission: the record is stamped again (Linux stamps every
                // transmission); one already delivered stays delivered
                let i = self.recs.partition_point(|r| r.start < seq);
                if let Some(r) = self.recs.get_mut(i) {
                    if r.start == seq && !r.done {
                        *r = TxRecord { end: r.end, ..rec };
                    }
                }
            }
            _ => self.recs.push_back(rec),
        }
    }

    /// Sending is limited by the application with `inflight` bytes outstanding (draft §3.4):
    /// samples taken until that much more is delivered are marked application-limited.
    pub(crate) fn mark_app_limited(&mut self, inflight: u64) {
        self.app_limited = (self.delivered + inflight).max(1);
    }

    /// Draft §3.3 "Upon receiving ACK": deliver what the cumulative `ack` and the SACK
    /// `blocks` newly cover; returns the bytes newly delivered.
    pub(crate) fn on_ack(&mut self, now: Instant, ack: u64, blocks: &[(u64, u64)]) -> u64 {
        self.rs_has = false;
        let before = self.delivered;
        while let Some(&r) = self.recs.front() {
            if r.end > ack {
                break;
            }
            self.recs.pop_front();
            if !r.done {
                self.deliver(now, &r);
            }
        }
        for &(s, e) in blocks {
            let mut i = self.recs.partition_point(|r| r.start < s);
            while i < self.recs.len() && self.recs[i].end <= e {
                let r = self.recs[i];
                if !r.done {
                    self.deliver(now, &r);
                    self.recs[i].done = true;
                }
                i += 1;
            }
        }
        self.delivered - before
    }

    /// Draft §3.3 UpdateRateSample for one delivered segment.
    fn deliver(&mut self, now: Instant, r: &TxRecord) {
        self.delivered += r.end - r.start;
        self.delivered_time = now;
        // the sample follows the most recently sent of the delivered segments
        if !self.rs_has || (r.sent, r.end) > self.rs_newest {
            self.rs_has = true;
            self.rs_newest = (r.sent, r.end);
            self.rs_prior_delivered = r.delivered;
            self.rs_prior_time = r.delivered_time;
            self.rs_app_limited = r.app_limited;
            self.rs_send_elapsed = r.sent.saturating_since(r.first_sent);
            self.rs_ack_elapsed = now.saturating_since(r.delivered_time);
            self.first_sent = r.sent;
        }
    }

    /// Draft §3.3 GenerateRateSample: the sample of the ACK just processed, if valid. An
    /// interval shorter than `min_rtt` is discarded, as Linux does (`tcp_rate_gen`): it comes
    /// from ACK compression, not from the path.
    pub(crate) fn sample(&mut self, min_rtt: Option<Duration>) -> Option<RateSample> {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if !self.rs_has {
            return None;
        }
        let interval = self.rs_send_elapsed.max(self.rs_ack_elapsed);
        if interval.is_zero() || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered - self.rs_prior_delivered,
            interval,
            prior_delivered: self.rs_prior_delivered,
            is_app_limited: self.rs_app_limited,
        })
    }
}
