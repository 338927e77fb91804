//! The window side of SACK-based loss recovery (RFC 6675 §5): the controller of the "sack"
//! variant. The sender keeps the scoreboard and chooses what to send (`NextSeg`, `SetPipe`);
//! this file owns cwnd, ssthresh and whether the flow is in loss recovery.

use super::*;

/// RFC 6675 loss recovery's window: enter on the third duplicate ACK or when the scoreboard
/// says the first unacknowledged segment is lost (the sender asks), with cwnd = ssthresh =
/// FlightSize / 2; no inflation (the pipe estimate governs sending); leave on the ACK that
/// covers RecoveryPoint. Outside recovery it grows as Reno does (RFC 5681 §3.1).
#[derive(Clone, Debug)]
pub struct Sack {
    w: Window,
    recovering: bool,
    /// RecoveryPoint (RFC 6675 §5 step 4.1), one past HighData when recovery began; also
    /// RFC 6582's guard (recovery is not entered again before the ACK passes it).
    recover: u64,
}

impl Sack {
    pub fn new(cfg: &TcpConfig) -> Self {
        Sack { w: Window::new(cfg), recovering: false, recover: 0 }
    }
    /// RecoveryPoint (exclusive).
    pub fn recovery_point(&self) -> u64 {
        self.recover
    }
}

impl CongestionControl for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh
    }
    fn in_recovery(&self) -> bool {
        self.recovering
    }
    fn uses_sack(&self) -> bool {
        true
    }

    fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
        if !self.recovering {
            self.w.grow(a.bytes_acked);
        } else if a.ack >= self.recover {
            // RFC 6675 §5: "When a TCP sender receives the cumulative ACK for this data octet
            // the loss recovery phase is terminated"; cwnd is ssthresh already.
            self.recovering = false;
            self.w.ca_acked = 0;
        }
        // RFC 6298 §5.3 on every ACK of new data; RFC 6675 changes nothing in the timer.
        AckResponse { retransmit: false, restart_rto: true }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if !self.recovering && dupacks == self.w.dupthresh {
            return self.on_sack_loss(a);
        }
        AckResponse::default()
    }

    fn on_sack_loss(&mut self, a: &AckInfo) -> AckResponse {
        if self.recovering || a.ack < self.recover {
            return AckResponse::default();
        }
        // RFC 6675 §5 step 4.1 RecoveryPoint = HighData; 4.2 ssthresh = cwnd = FlightSize / 2
        // (RFC 5681 eq. (4), at least 2 SMSS); 4.3 the retransmission, by the sender.
        self.recover = a.snd_max;
        self.recovering = true;
        let cwnd = self.w.cwnd;
        self.w.halve(a.flight_before, cwnd);
        self.w.cwnd = self.w.ssthresh;
        AckResponse { retransmit: true, restart_rto: false }
    }

    fn on_loss_repaired(&mut self, a: &AckInfo) {
        // RFC 5681 eq. (4), as on entering recovery; cwnd = ssthresh at once, as Linux ends
        // the reduction on the same ACK
        let cwnd = self.w.cwnd;
        self.w.halve(a.flight_before, cwnd);
        self.w.cwnd = self.w.ssthresh;
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        // RFC 6675 §5.1: an RTO during recovery sets RecoveryPoint to HighData and ends it.
        self.recover = to.snd_max;
        self.w.timeout(to, self.recovering);
        self.recovering = false;
    }
}
