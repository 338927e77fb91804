//! The driver's counters, so a user can see what was sent, what was refused and why, and
//! whether the host kept up with the agents' timers.

use crate::envelope::Reject;

/// Counters of one driver. All counts since the driver was created.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetStats {
    /// Datagrams and UDP payload bytes handed to the kernel.
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    /// Datagrams and bytes read from the sockets (before any check).
    pub datagrams_received: u64,
    pub bytes_received: u64,
    /// Packets handed to an agent (a group packet to two local members counts twice).
    pub delivered: u64,
    /// Datagrams dropped on receive, by [`Reject`] reason (index `Reject as usize`).
    pub rejected: [u64; 7],
    /// Group datagrams that passed every check but no local agent had joined the group (one
    /// that raced a leave, or that another socket's membership let in).
    pub not_joined: u64,
    /// Accepted packets from a node the session table does not list (no address to check).
    pub from_unlisted: u64,
    /// Packets an agent sent to a node or group the session table does not list.
    pub no_route: u64,
    /// Packets dropped by the sending-rate cap, and their bytes.
    pub rate_cap_drops: u64,
    pub rate_cap_drop_bytes: u64,
    /// Sends the kernel refused: a full socket buffer (`would_block`) or another error.
    pub send_would_block: u64,
    pub send_errors: u64,
    /// Receive errors other than "nothing to read".
    pub recv_errors: u64,
    /// Membership changes the kernel refused.
    pub join_errors: u64,
    /// Restarts of other processes of the session seen: a node's datagrams arrived with a
    /// newer session epoch than before (its agents were told, `Agent::handle_peer_restart`).
    pub peer_restarts: u64,
    /// Datagrams dropped because they carried an older epoch than the one flowing from their
    /// node: a late datagram of a process that has since been restarted (or, without a key,
    /// a forgery; see [`crate::driver`]).
    pub stale_epoch: u64,
    /// Datagrams dropped because they carried a newer epoch than the one flowing from their
    /// node while no key vouched for it and the flowing epoch had not yet been silent for
    /// `NetConfig::restart_quiet` (a forgery, or the first datagrams of a quick restart).
    pub unconfirmed_epoch: u64,
    /// With a key: datagrams dropped because their sender's count (in the packet's `uid`,
    /// under the MAC) was accepted before or lies more than the replay window below the
    /// highest accepted: a captured datagram sent again (RFC 4303 §3.4.3's rule).
    pub replayed: u64,
    /// Timer deadlines run, and how late the loop ran them (wall clock minus deadline).
    pub timer_fires: u64,
    pub late_total_ns: u64,
    pub late_max_ns: u64,
    /// With the PGM wire: datagrams sent and received (decoded, before the session checks) by
    /// PGM type, indexed by the type's code (SPM 0, ODATA 4, RDATA 5, NAK 8, NNAK 9, NCF 10,
    /// SPMR 12).
    pub pgm_sent: [u64; 16],
    pub pgm_received: [u64; 16],
    /// The smallest receive buffer the kernel granted to any of our sockets, bytes (0: no socket).
    pub recv_buffer_bytes: u64,
    /// The shutdown step ([`crate::Driver::shutdown`]): agents told to stop, the packets their
    /// step queued that were sent and that were not (the wait for a full socket or the rate
    /// cap ran out, or another send error), and the groups left for them.
    pub shutdown_agents: u64,
    pub shutdown_sent: u64,
    pub shutdown_unsent: u64,
    pub shutdown_left_groups: u64,
}

impl NetStats {
    pub fn rejected_by(&self, r: Reject) -> u64 {
        self.rejected[r as usize]
    }
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().sum()
    }
    /// Mean lateness of the timer deadlines run, ns (0 before any).
    pub fn late_mean_ns(&self) -> f64 {
        if self.timer_fires == 0 {
            0.0
        } else {
            self.late_total_ns as f64 / self.timer_fires as f64
        }
    }
    /// Every counter as (name, value), in a fixed order (for bindings and status lines).
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("datagrams_sent", self.datagrams_sent),
            ("bytes_sent", self.bytes_sent),
            ("datagrams_received", self.datagrams_received),
            ("bytes_received", self.bytes_received),
            ("delivered", self.delivered),
        ];
        for r in Reject::ALL {
            v.push((r.name(), self.rejected_by(r)));
        }
        v.extend([
            ("not_joined", self.not_joined),
            ("from_unlisted", self.from_unlisted),
            ("no_route", self.no_route),
            ("rate_cap_drops", self.rate_cap_drops),
            ("rate_cap_drop_bytes", self.rate_cap_drop_bytes),
            ("send_would_block", self.send_would_block),
            ("send_errors", self.send_errors),
            ("recv_errors", self.recv_errors),
            ("join_errors", self.join_errors),
            ("peer_restarts", self.peer_restarts),
            ("stale_epoch", self.stale_epoch),
            ("unconfirmed_epoch", self.unconfirmed_epoch),
            ("replayed", self.replayed),
            ("timer_fires", self.timer_fires),
            ("late_total_ns", self.late_total_ns),
            ("late_max_ns", self.late_max_ns),
            ("recv_buffer_bytes", self.recv_buffer_bytes),
            ("shutdown_agents", self.shutdown_agents),
            ("shutdown_sent", self.shutdown_sent),
            ("shutdown_unsent", self.shutdown_unsent),
            ("shutdown_left_groups", self.shutdown_left_groups),
        ]);
        for code in PGM_COUNTED {
            v.push((PGM_SENT_NAMES[code], self.pgm_sent[code]));
            v.push((PGM_RECEIVED_NAMES[code], self.pgm_received[code]));
        }
        v
    }
}

/// The codes of the PGM types counted by name in [`NetStats::pairs`].
const PGM_COUNTED: [usize; 8] = [0, 4, 5, 8, 9, 10, 12, 13];
const PGM_SENT_NAMES: [&str; 14] = [
    "pgm_sent_spm",
    "",
    "",
    "",
    "pgm_sent_odata",
    "pgm_sent_rdata",
    "",
    "",
    "pgm_sent_nak",
    "pgm_sent_nnak",
    "pgm_sent_ncf",
    "",
    "pgm_sent_spmr",
    "pgm_sent_ack",
];
const PGM_RECEIVED_NAMES: [&str; 14] = [
    "pgm_received_spm",
    "",
    "",
    "",
    "pgm_received_odata",
    "pgm_received_rdata",
    "",
    "",
    "pgm_received_nak",
    "pgm_received_nnak",
    "pgm_received_ncf",
    "",
    "pgm_received_spmr",
    "pgm_received_ack",
];

/// Level and rate changes reported by the agents (`AgentEvent::LevelChanged` and
/// `RateChanged`), columnar like the simulator's timelines. `agent` is the `AgentId`.
#[derive(Clone, Debug, Default)]
pub struct Timelines {
    pub level_time_ns: Vec<u64>,
    pub level_agent: Vec<u32>,
    pub level: Vec<u32>,
    pub rate_time_ns: Vec<u64>,
    pub rate_agent: Vec<u32>,
    pub rate_bps: Vec<f64>,
}

/// A token bucket in bytes: the hard cap on a process's sending rate.
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    rate_bytes_per_ns: f64,
    burst: f64,
    tokens: f64,
    last_ns: u64,
}

impl TokenBucket {
    pub(crate) fn new(rate_bps: f64, burst_bytes: u32) -> Self {
        TokenBucket {
            rate_bytes_per_ns: rate_bps / 8e9,
            burst: burst_bytes as f64,
            tokens: burst_bytes as f64,
            last_ns: 0,
        }
    }

    /// Take `bytes` at time `now_ns` if the bucket holds them.
    pub(crate) fn take(&mut self, now_ns: u64, bytes: usize) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns) as f64;
        self.last_ns = self.last_ns.max(now_ns);
        self.tokens = (self.tokens + dt * self.rate_bytes_per_ns).min(self.burst);
        if self.tokens >= bytes as f64 {
            self.tokens -= bytes as f64;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_passes_burst_then_rate() {
        // 8 Mb/s = 1 byte/us; burst 10_000 bytes.
        let mut b = TokenBucket::new(8e6, 10_000);
        let mut sent = 0usize;
        // offer 1000-byte packets every 100 us (80 Mb/s) for 1 s
        for k in 0..10_000u64 {
            if b.take(k * 100_000, 1000) {
                sent += 1000;
            }
        }
        // at most burst + rate * 1 s = 10_000 + 1_000_000 bytes; at least the rate minus a packet
        assert!(sent <= 1_010_000, "{sent}");
        assert!(sent >= 999_000, "{sent}");
    }
}
