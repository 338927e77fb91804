//! WEBRC, Wave and Equation Based Rate Control: Luby and Goyal, RFC 3738 (April 2004; cited by
//! section). Luby and Goyal's paper and technical report ([15], [16] of the RFC) and the
//! constant-aggregate-rate design of [8] were not read; the RFC alone is the source.
//!
//! One sender, no feedback (§2): a base channel and T wave channels, each its own group.
//! Time is cut into slots of TSD seconds; the current time slot index CTSI counts them modulo
//! T (§3.1.2). The base channel sends BCR_P packets/s at the start of each slot, falling
//! exponentially to P·BCR_P at its end. Wave channel i is active during slots i-N+1..i
//! (mod T): its rate falls by P per slot down to BCR_P at the end of slot i, then it is
//! quiescent for Q slots. A receiver (§3.2) stays joined to the base channel and to the
//! lowest NWC active waves; it raises its rate by joining the next wave at an epoch boundary
//! when its target rate allows it, and lowers it by not joining (the joined waves decay and
//! go quiescent). The target rate is TFRC's equation of the average multicast round-trip
//! time ARTT (from join-to-first-packet times) and the loss event rate LOSSP (§3.2.2).
//!
//! * [`WebrcSender`] (`sender.rs`): the channels' packet schedules, CTSI, CN and PSN.
//! * [`WebrcReceiver`] (`receiver.rs`): joins and leaves, MRTT/ARTT, LOSSP, TRR_P, ARR_P,
//!   slow start, the target rate, join and exceptional timeouts.
//!
//! # Where the RFC is loose (our readings)
//!
//! * **N and SR_b** (§3.1.1): the RFC takes the peak sending rate SR_b as input and leaves
//!   N to [8]. We take N (`waves`) as the input: without [8]'s constant-aggregate beginnings
//!   every wave is exponential over its whole life, so the aggregate at the start of a slot
//!   is BCR_P·(1 + 1/P + ... + 1/P^N) packets/s, which is SR_P (the sender does not send at
//!   a constant aggregate rate, and receivers know it, §3.2.1).
//! * **T and QD** (§3.1.1): QD is a *minimum* quiescent period, so a session may use more
//!   quiescent slots than ceil(QD/TSD). The session's channel count, `layers` = T + 1, is a
//!   config field (castlab's scenarios make one group per layer); T - N must be at least
//!   ceil(QD/TSD). CN T is the base channel, CN 0..T-1 the waves, `groups[CN]` their groups.
//! * **Wave packets** (§3.1.2): wave k of channel i starts at the start of slot i-N+1 at
//!   BCR_P/P^N packets/s; its j-th packet leaves when the rate's integral from the start
//!   reaches j, for j = 0..M-1, M the integral over the wave rounded down. PSNs are the short
//!   format's (§5.1): the wave's last packet has 65535, so packet j has 65536-M+j (mod 2^16).
//!   The base channel's j-th packet of a slot leaves when the integral from the slot start
//!   reaches j, j = 0..L-1, with PSN congruent to j modulo L and wrapping at the largest
//!   multiple of L not above 2^16 (§3.1.2). The sender starts as if it had always run: at its
//!   start the waves of slots 0..N-1 are already under way.
//! * **First packet after join** (§3.2.3.2 says "a packet with PSN = i"): we read the first
//!   packet of channel i, the channel most recently joined, while JOINING.
//! * **MRTT's NWC** (§3.2.2.2): NWC after the join's increment; the subtracted term
//!   log(1/P)/2/(1-P)/BCR_P·P^NWC is then half the mean packet spacing of the wave joined.
//!   K counts the wave-channel measurements from 1 (the base channel's sets ARTT and V).
//! * **Losses** (§3.2.3.4): a gap in a channel's PSNs is a loss at once (castlab's links do
//!   not reorder); an older PSN is counted as late and ignored. A wave's first packet after a
//!   join starts its sequence; the base channel's first packet starts the session's.
//! * **RR_P and IRR_P** (§3.2.2.5): packets received (and received plus lost) in the epoch
//!   just ended, divided by EL.
//! * **Time slot change** (§3.2.3.3): a packet whose CTSI is d = 1..T-Q/2 slots ahead (mod T)
//!   applies the change d times; a larger d is a straggler and changes nothing.
//! * **Slow start's end** (§3.2.2.6): all four conditions are applied, the optional fourth
//!   (TRR_P greatly below ARR_P) included. LOSSP is reset there by solving REQN(LOSSP) =
//!   TRR_P for LOSSP (bisection on log p; REQN falls with p).
//! * **Join timeout** (§3.2.3.7: max{2·V/ARTT, 10·ARTT}): kept within [EL, 10·TSD] (our
//!   choice): ARTT may be near zero on a short path, or seconds from the base channel's first
//!   wait, and a timeout before the next epoch or after the wave has gone quiescent means nothing.
//! * **Not modelled**: the optional RR_P check before a join (§3.2.3.6), the constant
//!   aggregate rate of [8], receivers leaving on a high base-channel loss fraction
//!   (§3.2.1 SHOULD). The exceptional timeouts (§3.2.3.8) make the receiver leave every
//!   channel and stop.
//! * **Wire format**: `Header::Control` of kind [`WEBRC_DATA_KIND`] with the short format's
//!   fields (§5.1) in `args` = [CTSI, CN, PSN]; on the real network it travels in castlab's
//!   envelope, not inside LCT/ALC.

use castlab_core::config::check;
use castlab_core::{ConfigError, ControlMsg, Duration, Header, Packet};

mod receiver;
pub mod registration;
mod sender;

pub use receiver::{ReceiverRecords, WebrcReceiver};
pub use sender::{SenderRecords, WebrcSender};

/// `ControlMsg::kind` of WEBRC data packets ("WB").
pub const WEBRC_DATA_KIND: u16 = 0x5742;

/// The short format's PSN space (§5.1: 16 bits).
pub const PSN_SPACE: u64 = 1 << 16;

/// WEBRC constants. `Default` is the RFC's values; fields it leaves open say "our choice".
#[derive(Clone, Debug, PartialEq)]
pub struct WebrcConfig {
    /// LENP_B, bytes per packet (§3.1.1: as large as the MTU allows; our choice 1000 B,
    /// castlab's TCP segment).
    pub packet_size: u32,
    /// BCR_P, the base channel's rate at a slot's start, packets/s (§3.1.1: 1).
    pub bcr_p: f64,
    /// TSD, the time slot duration (§3.1.1: 10 s).
    pub tsd: Duration,
    /// QD, the minimum quiescent period (§3.1.1: 300 s).
    pub qd: Duration,
    /// P, the rate's multiplicative drop per slot (§3.1.1: 0.75).
    pub p: f64,
    /// N, slots per wave and active waves at any time (§3.1.1 leaves it to [8]; our choice
    /// 20: SR_b = 10.0 Mb/s with the defaults above).
    pub waves: u32,
    /// T + 1, the session's channels (T waves and the base channel; §3.1.1 T = N + Q with
    /// Q = ceil(QD/TSD) = 30 by default: 51).
    pub layers: u32,
    /// EL, the epoch length (§3.2.2.4: TSD/20 = 0.5 s).
    pub el: Duration,
    /// Nu, the time-based smoothing of the loss filter (§3.2.2.1: 0.3).
    pub nu: f64,
    /// Delta, the loss-based smoothing of the loss filter (§3.2.2.1: 0.3).
    pub delta: f64,
    /// Alpha, the ARTT filter's smoothing (§3.2.2.2: 0.25).
    pub alpha: f64,
    /// MRR_b, the receiver's largest reception rate, bits/s (§3.2.1; 0: none but SR_b).
    pub max_rate_bps: f64,
}

impl Default for WebrcConfig {
    fn default() -> Self {
        WebrcConfig {
            packet_size: 1000,
            bcr_p: 1.0,
            tsd: Duration::from_secs(10),
            qd: Duration::from_secs(300),
            p: 0.75,
            waves: 20,
            layers: 51,
            el: Duration::from_millis(500),
            nu: 0.3,
            delta: 0.3,
            alpha: 0.25,
            max_rate_bps: 0.0,
        }
    }
}

castlab_core::config_fields!(WebrcConfig {
    packet_size,
    bcr_p,
    tsd,
    qd,
    p,
    waves,
    layers,
    el,
    nu,
    delta,
    alpha,
    max_rate_bps,
});

impl WebrcConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check::int_in("packet_size", self.packet_size as u64, 64, 65_535)?;
        check::in_closed("bcr_p", self.bcr_p, 1e-3, 1e6)?;
        check::in_closed("tsd", self.tsd.as_secs_f64(), 1e-3, 3600.0)?;
        check::in_closed("qd", self.qd.as_secs_f64(), 1e-3, 1e6)?;
        check::in_open_closed("p", self.p, 0.0, 0.99)?;
        check::int_in("waves", self.waves as u64, 1, 253)?;
        // §5.1: T <= 255 in the short format.
        check::int_in("layers", self.layers as u64, 3, 256)?;
        let q_min = self.q_min();
        if (self.layers as u64) < self.waves as u64 + q_min + 1 {
            return Err(ConfigError::new(
                "layers",
                self.layers,
                format!("must be at least waves + ceil(qd/tsd) + 1 = {} (§3.1.1)", self.waves as u64 + q_min + 1),
            ));
        }
        check::in_closed("el", self.el.as_secs_f64(), 1e-3, 3600.0)?;
        if self.el > self.tsd {
            return Err(ConfigError::new("el", self.el.as_secs_f64(), "must be at most tsd (§3.2.2.4)"));
        }
        check::in_open_closed("nu", self.nu, 0.0, 0.999)?;
        check::in_open_closed("delta", self.delta, 0.0, 0.999)?;
        check::in_open_closed("alpha", self.alpha, 0.0, 0.999)?;
        check::in_closed("max_rate_bps", self.max_rate_bps, 0.0, 1e12)?;
        if self.wave_packets() >= PSN_SPACE || self.wave_packets() < 1 {
            return Err(ConfigError::new(
                "waves",
                self.waves,
                format!("a wave of {} packets does not fit the 16-bit PSN (§5.1)", self.wave_packets()),
            ));
        }
        let sr = self.sr_p();
        if !(sr.is_finite() && sr < 1e7) {
            return Err(ConfigError::new("waves", self.waves, "peak rate above 10^7 packets/s"));
        }
        Ok(())
    }

    /// ceil(QD/TSD), the fewest quiescent slots (§3.1.1).
    pub fn q_min(&self) -> u64 {
        self.qd.as_nanos().div_ceil(self.tsd.as_nanos())
    }
    /// T, the wave channels (the base channel's CN).
    pub fn t(&self) -> u32 {
        self.layers - 1
    }
    /// Q = T - N, the quiescent slots per cycle.
    pub fn q(&self) -> u32 {
        self.t() - self.waves
    }
    /// log(1/P)/TSD, the decay constant of every channel's rate (per second).
    pub fn lambda(&self) -> f64 {
        (1.0 / self.p).ln() / self.tsd.as_secs_f64()
    }
    /// L = ceil(BCR_P·TSD·(P-1)/log(P)), base channel packets per slot (§3.1.1).
    pub fn l(&self) -> u64 {
        (self.bcr_p * self.tsd.as_secs_f64() * (self.p - 1.0) / self.p.ln()).ceil() as u64
    }
    /// M, the packets of one wave: its rate's integral, BCR_P/P^N·(1 - P^N)/λ, rounded down.
    pub fn wave_packets(&self) -> u64 {
        let r0 = self.bcr_p * self.p.powi(-(self.waves as i32));
        (r0 * (1.0 - self.p.powi(self.waves as i32)) / self.lambda()).floor() as u64
    }
    /// SR_P, packets/s: BCR_P·(1 + 1/P + ... + 1/P^N), the aggregate at a slot's start.
    pub fn sr_p(&self) -> f64 {
        layers_rate(self.bcr_p, self.p, self.waves)
    }
    /// MRR_P, packets/s (infinite when `max_rate_bps` is 0).
    pub fn mrr_p(&self) -> f64 {
        if self.max_rate_bps > 0.0 {
            self.max_rate_bps / (8.0 * self.packet_size as f64)
        } else {
            f64::INFINITY
        }
    }
}

/// BCR·((1/P)^(n+1) - 1)/((1/P) - 1): the rate at a slot's start of the base channel and the
/// n lowest waves (§3.2.2.5's ARR_P_max).
pub fn layers_rate(bcr: f64, p: f64, n: u32) -> f64 {
    let r = 1.0 / p;
    (r.powi(n as i32 + 1) - 1.0) / (r - 1.0) * bcr
}

/// §3.2.2.3: REQN = 1/(ARTT·sqrt(LOSSP)·(0.816 + 7.35·LOSSP·(1 + 32·LOSSP²))), packets/s.
pub fn reqn(artt_s: f64, lossp: f64) -> f64 {
    1.0 / (artt_s * lossp.sqrt() * (0.816 + 7.35 * lossp * (1.0 + 32.0 * lossp * lossp)))
}

/// The LOSSP at which [`reqn`] is `rate` for `artt_s` (bisection on log p over [1e-12, 1]);
/// 1 when even LOSSP = 1 gives more than `rate`.
pub fn lossp_for_rate(artt_s: f64, rate: f64) -> f64 {
    if !(rate > 0.0 && artt_s > 0.0) || reqn(artt_s, 1.0) >= rate {
        return 1.0;
    }
    let (mut lo, mut hi) = (1e-12f64.ln(), 0.0f64);
    if reqn(artt_s, lo.exp()) <= rate {
        return lo.exp();
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if reqn(artt_s, mid.exp()) > rate {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The loss filter of §3.2.2.1: W, X, Y, Z and LOSSP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossFilter {
    pub w: f64,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

impl LossFilter {
    /// Reset to LOSSP = a (§3.2.2.1: W = X = Y = 0, Z = 1/a).
    pub fn reset(a: f64) -> Self {
        LossFilter { w: 0.0, x: 0.0, y: 0.0, z: 1.0 / a }
    }
    /// A packet event, received or lost: W = W + 1.
    pub fn packet(&mut self) {
        self.w += 1.0;
    }
    /// The beginning of a loss event: X = X + W, W = 0, Y = Y + 1.
    pub fn loss_event(&mut self) {
        self.x += self.w;
        self.w = 0.0;
        self.y += 1.0;
    }
    /// The end of an epoch with G = Nu·EL/TSD: Z, X, Y updated; returns LOSSP.
    pub fn epoch(&mut self, g: f64, delta: f64) -> f64 {
        let k = 1.0 - delta;
        self.z = self.z * k.powf(g * self.y) + g * self.x / (g * self.y + 1.0) * (1.0 - k.powf(g * self.y + 1.0));
        self.x *= 1.0 - g;
        self.y *= 1.0 - g;
        self.lossp(delta)
    }
    /// LOSSP = 1/max{Z1, Z2, 1}.
    pub fn lossp(&self, delta: f64) -> f64 {
        let k = 1.0 - delta;
        let z1 = self.z * k.powf(self.y) + self.x / (self.y + 1.0) * (1.0 - k.powf(self.y + 1.0));
        let z2 =
            self.z * k.powf(self.y + 1.0) + (self.x + self.w + 1.0) / (self.y + 2.0) * (1.0 - k.powf(self.y + 2.0));
        1.0 / z1.max(z2).max(1.0)
    }
}

/// The ARTT filter of §3.2.2.2: ARTT, V and K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttFilter {
    pub artt: f64,
    pub v: f64,
    /// Wave-channel measurements so far.
    pub k: u32,
}

impl RttFilter {
    /// The base channel's measurement: ARTT = FirstTime - JoinTime, V = ARTT².
    pub fn base(first_minus_join_s: f64) -> Self {
        RttFilter { artt: first_minus_join_s, v: first_minus_join_s * first_minus_join_s, k: 0 }
    }
    /// A wave-channel MRTT: Omega = Alpha·ARTT²/V, Rho = Omega/(1-(1-Omega)^(K+1)),
    /// V = (1-Rho)·V + Rho·MRTT², ARTT = max{P·ARTT, (1-Rho)·ARTT + Rho·MRTT}.
    pub fn measure(&mut self, mrtt: f64, alpha: f64, p: f64) {
        self.k += 1;
        let omega = if self.v > 0.0 { (alpha * self.artt * self.artt / self.v).min(1.0) } else { alpha };
        let rho = omega / (1.0 - (1.0 - omega).powi(self.k as i32 + 1));
        self.v = (1.0 - rho) * self.v + rho * mrtt * mrtt;
        self.artt = (p * self.artt).max((1.0 - rho) * self.artt + rho * mrtt);
    }
}

/// The short format's fields (§5.1), in a packet's `ControlMsg::args` = [CTSI, CN, PSN].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcInfo {
    pub ctsi: u8,
    pub cn: u8,
    pub psn: u16,
}

impl CcInfo {
    pub fn encode(&self) -> Header {
        Header::Control(ControlMsg { kind: WEBRC_DATA_KIND, args: [self.ctsi as u64, self.cn as u64, self.psn as u64] })
    }
    /// The fields of a WEBRC data packet, or None (not one, or a field out of its width).
    pub fn decode(p: &Packet) -> Option<Self> {
        let Header::Control(ControlMsg { kind: WEBRC_DATA_KIND, args }) = p.header else { return None };
        Some(CcInfo {
            ctsi: u8::try_from(args[0]).ok()?,
            cn: u8::try_from(args[1]).ok()?,
            psn: u16::try_from(args[2]).ok()?,
        })
    }
}

#[cfg(test)]
mod tests;
