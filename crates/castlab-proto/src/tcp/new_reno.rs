//! TCP NewReno (RFC 6582): Reno's fast recovery with partial acknowledgements.

use super::*;

/// TCP NewReno: RFC 6582 §3.2 on top of RFC 5681.
#[derive(Clone, Debug)]
pub struct NewReno {
    w: Window,
    recovering: bool,
    /// RFC 6582 §3.2 step 1, `recover`, kept as one past the highest byte sent when it was
    /// recorded, so "the ACK covers recover" reads `ack >= recover`. Starts at 0, the first
    /// byte (the initial send sequence number of this model).
    recover: u64,
    partial_acks: u32,
}

impl NewReno {
    pub fn new(cfg: &TcpConfig) -> Self {
        NewReno { w: Window::new(cfg), recovering: false, recover: 0, partial_acks: 0 }
    }
    /// The `recover` variable of RFC 6582 (exclusive: one past the highest byte it covers).
    pub fn recover(&self) -> u64 {
        self.recover
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
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

    fn on_new_ack(&mut self, a: &AckInfo) -> AckResponse {
        if !self.recovering {
            self.w.grow(a.bytes_acked);
            return AckResponse { retransmit: false, restart_rto: true };
        }
        if a.ack >= self.recover {
            // RFC 6582 §3.2 step 3, full acknowledgement: cwnd = min(ssthresh,
            // max(FlightSize, SMSS) + SMSS) (option 1, which avoids a burst), exit recovery.
            self.recovering = false;
            self.w.cwnd = self.w.ssthresh.min(a.flight_after.max(self.w.mss) + self.w.mss);
            self.w.ca_acked = 0;
            AckResponse { retransmit: false, restart_rto: true }
        } else {
            // RFC 6582 §3.2 step 3, partial acknowledgement: retransmit the first unacknowledged
            // segment, deflate cwnd by the new data acknowledged and add back SMSS if at least
            // SMSS was acknowledged; stay in fast recovery. Reset the retransmit timer on the
            // first partial ACK only (as step 3 says; the "Impatient" choice of RFC 3782 §4).
            self.partial_acks += 1;
            let back = if a.bytes_acked >= self.w.mss { self.w.mss } else { 0 };
            self.w.cwnd = (self.w.cwnd.saturating_sub(a.bytes_acked) + back).max(self.w.mss);
            AckResponse { retransmit: true, restart_rto: self.partial_acks == 1 }
        }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if self.recovering {
            // RFC 5681 §3.2 step 4, unchanged by RFC 6582: inflate by SMSS.
            self.w.cwnd += self.w.mss;
            AckResponse::default()
        } else if dupacks == self.w.dupthresh {
            // RFC 6582 §3.2 step 2: enter fast retransmit only if the ACK covers more than
            // recover; then recover = highest sequence number transmitted.
            if a.ack < self.recover {
                return AckResponse::default();
            }
            self.recover = a.snd_max;
            self.recovering = true;
            self.partial_acks = 0;
            self.w.enter_fast_recovery(a.flight_before);
            AckResponse { retransmit: true, restart_rto: false }
        } else {
            AckResponse::default()
        }
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        // RFC 6582 §3.2 step 4: after a retransmit timeout, record the highest sequence number
        // transmitted in recover and exit fast recovery.
        self.recover = to.snd_max;
        self.w.timeout(to, self.recovering);
        self.recovering = false;
    }
}
