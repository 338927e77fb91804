//! The router's way out ([`Router::shutdown`]), on SIGTERM, SIGINT or SIGHUP or at the end of
//! its run: it forwards what it had already accepted, then withdraws what it asked of its
//! neighbours.
//!
//! What the router changes, and what undoes it:
//! - **Its neighbour routers' membership tables**: the memberships it relayed (a v3 ALLOW toward
//!   a source, a `TO_EX{}` for an any-source group) would otherwise live on upstream for their
//!   membership interval (260 s by default, RFC 3376 §8.4) and keep traffic flowing toward a
//!   router that is gone. Each is withdrawn with the report that ends it (a BLOCK, a
//!   `TO_IN{}`), as when its last member leaves.
//! - **Nothing on its interfaces**: it opens AF_PACKET sockets without promiscuous mode
//!   (frames for other MAC addresses are counted `not_for_us`, never asked for), writes no
//!   sysctl (kernel forwarding must already be off, it only reads it), adds no qdisc (its
//!   queues are its own) and sets offloads on none of them (the testbed switches the hosts'
//!   off when it builds them); its sockets, their options and its scheduling class end with
//!   the process.
//!
//! Draining reads no more frames: what is queued, being serialised or in a delay line when the
//! drain begins goes out at its time (the link's rate and delay still apply), for at most the
//! limit given; frames waiting for a neighbour's address are dropped, since the ARP reply would
//! have to be read. What is left when the limit runs out is counted, not sent.

use castlab_core::Instant;

use super::{frame, Router};

/// What [`Router::shutdown`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Frames queued, being serialised or in a delay line when the drain began.
    pub queued: u64,
    /// Frames handed to the kernel during the drain.
    pub forwarded: u64,
    /// Frames still queued when the limit ran out (not sent).
    pub left: u64,
    /// Frames dropped while waiting for a neighbour's address.
    pub held_dropped: u64,
    /// Relayed memberships withdrawn from the neighbour routers (a report each).
    pub withdrawn: u64,
    /// How long the drain took, ns (the withdrawals after it included).
    pub took_ns: u64,
    /// Whether the limit ran out before every queued frame was sent.
    pub timed_out: bool,
}

impl DrainReport {
    /// Every field as (name, value), in a fixed order (for bindings and status lines).
    pub fn pairs(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("queued", self.queued),
            ("forwarded", self.forwarded),
            ("left", self.left),
            ("held_dropped", self.held_dropped),
            ("withdrawn", self.withdrawn),
            ("took_ns", self.took_ns),
            ("timed_out", u64::from(self.timed_out)),
        ]
    }
}

impl Router {
    /// Drain and withdraw (see the module documentation), taking at most `within` for the
    /// drain. Returns what was done; the counters and ports stay readable. May be called once
    /// the run has ended; a second call finds nothing queued and nothing to withdraw.
    pub fn shutdown(&mut self, within: castlab_core::Duration) -> DrainReport {
        let t0 = self.now();
        let until = t0 + within;
        let mut r = DrainReport::default();
        for h in std::mem::take(&mut self.held) {
            self.ports[h.port].release(h.slot);
            r.held_dropped += 1;
        }
        let tx_before: u64 = self.ports.iter().map(|p| p.stats.tx_frames).sum();
        r.queued = self.ports.iter().map(|p| p.in_flight() as u64).sum();
        loop {
            let now = self.now();
            if now > until {
                r.timed_out = self.ports.iter().any(|p| p.in_flight() > 0);
                break;
            }
            for p in self.ports.iter_mut() {
                p.poll(now);
            }
            let Some(next) = self.ports.iter().filter_map(|p| p.next_deadline()).min() else { break };
            if next > until {
                r.timed_out = true;
                break;
            }
            let now = self.now();
            if next > now {
                std::thread::sleep(std::time::Duration::from_nanos(next.saturating_since(now).as_nanos()));
            }
        }
        r.forwarded = self.ports.iter().map(|p| p.stats.tx_frames).sum::<u64>() - tx_before;
        r.left = self.ports.iter().map(|p| p.in_flight() as u64).sum();
        r.withdrawn = self.withdraw_relayed();
        for p in self.ports.iter_mut() {
            p.read_kernel_drops();
        }
        r.took_ns = self.now().saturating_since(t0).as_nanos();
        r
    }

    /// Withdraw every membership relayed to a neighbour router, as [`Router::relay_ref`] does
    /// when the last member goes; returns how many.
    fn withdraw_relayed(&mut self) -> u64 {
        let relayed: Vec<super::Relayed> = std::mem::take(&mut self.relayed).into_keys().collect();
        for &w in &relayed {
            let kind = if w.2.is_some() { frame::BLOCK_OLD_SOURCES } else { frame::CHANGE_TO_INCLUDE };
            self.send_report(w, kind, false);
        }
        // the next relay check must not send these again
        self.relay_next = Instant::MAX;
        relayed.len() as u64
    }
}
