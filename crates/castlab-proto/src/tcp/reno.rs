//! TCP Reno (RFC 5681): slow start, congestion avoidance, fast retransmit and fast recovery.

use super::*;

/// TCP Reno: RFC 5681 §3 (slow start, congestion avoidance, fast retransmit, fast recovery).
#[derive(Clone, Debug)]
pub struct Reno {
    w: Window,
    recovering: bool,
}

impl Reno {
    pub fn new(cfg: &TcpConfig) -> Self {
        Reno { w: Window::new(cfg), recovering: false }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
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
        if self.recovering {
            // RFC 5681 §3.2 step 6: the next ACK of new data deflates the window.
            self.recovering = false;
            self.w.cwnd = self.w.ssthresh;
            self.w.ca_acked = 0;
        } else {
            self.w.grow(a.bytes_acked);
        }
        // RFC 6298 §5.3: restart the timer on every ACK of new data.
        AckResponse { retransmit: false, restart_rto: true }
    }

    fn on_dup_ack(&mut self, a: &AckInfo, dupacks: u32) -> AckResponse {
        if self.recovering {
            // RFC 5681 §3.2 step 4: each further duplicate inflates cwnd by SMSS.
            self.w.cwnd += self.w.mss;
            AckResponse::default()
        } else if dupacks == self.w.dupthresh {
            // RFC 5681 §3.2 steps 2-3, fast retransmit.
            self.recovering = true;
            self.w.enter_fast_recovery(a.flight_before);
            AckResponse { retransmit: true, restart_rto: false }
        } else {
            AckResponse::default()
        }
    }

    fn on_timeout(&mut self, to: &TimeoutInfo) {
        self.w.timeout(to, self.recovering);
        self.recovering = false;
    }
}
