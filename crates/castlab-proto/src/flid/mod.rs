//! FLID-DL, fair layered increase/decrease with dynamic layering: Byers, Horn, Luby,
//! Mitzenmacher and Shaver, "FLID-DL: Congestion Control for Layered Multicast" (NGC 2000;
//! IEEE JSAC 20(8), 2002).
//!
//! **Sources.** The paper's full text could not be read here; what was read is its abstract
//! (receivers "add layers at sender-initiated synchronization points and leave layers when they
//! experience congestion"; dynamic layering "mitigates the negative impact of long IGMP leave
//! latencies and eliminates the need for probe intervals present in RLC") and RFC 3738 §1,
//! whose WEBRC keeps FLID-DL's dynamic layers: a static base channel and wave channels that
//! each start at a high rate and decrease, the lowest layer being the channel nearest the end
//! of its active period. The slot mechanics below follow that structure; the constants marked
//! "unverified" are the paper's as remembered, not checked against its text.
//!
//! * **Sender** ([`FlidSender`], `sender.rs`): cumulative layers with a multiplicative factor
//!   c: level L (layers 0..L-1) receives `R_L = B·c^(L-1)`, so layer 0 sends at B and layer
//!   ℓ ≥ 1 at `B·c^(ℓ-1)·(c-1)`. Time is cut into slots of length `slot`. Layer 0 stays on
//!   `groups[0]`; layers 1..N-1 are **dynamic**: `groups[1..]` rotate through them, one step
//!   down per slot (the group carrying layer ℓ in slot k carries ℓ-1 in slot k+1, so each
//!   group's rate decreases over time), and a group past layer 1 rests `quiescent_slots`
//!   slots with no traffic before it becomes the top layer again (its rest covers the IGMP
//!   leave latency). In every slot the sender draws one uniform u and signals the highest
//!   level m with `p_m ≥ u` (`p_L` decreasing in L, so every level up to m may increase).
//! * **Receiver** ([`FlidReceiver`], `receiver.rs`): never sends. Holding layers 0..L-1
//!   at the end of slot k, it holds 0..L-2 in slot k+1 without doing anything (its top group
//!   moved down, its lowest dynamic group went quiet): joining one group keeps level L,
//!   joining two raises it, joining none lowers it. So at each slot boundary it lowers its
//!   level by one if it lost a packet in the slot, raises it by one if the slot's increase
//!   signal covers its level and it lost nothing, else keeps it; the decrease needs no IGMP
//!   leave, so it acts within a slot whatever the leave latency.
//!
//! # Where the sources are loose (our readings)
//!
//! * **Increase probabilities.** Our reading of "fair layered increase": the expected rate
//!   gain per slot matches TCP's additive increase of one packet per RTT per RTT at
//!   `reference_rtt`: `p_L·(R_{L+1} - R_L) = 8·S·slot / RTT²`, so
//!   `p_L = min(1, 8·S·slot / (RTT²·B·c^(L-1)·(c-1)))`, falling geometrically with the level.
//! * **Signals are nested**: one draw per slot, so a receiver at a lower level may increase
//!   whenever one at a higher level may (receivers behind one bottleneck stay together).
//! * **Wire**: `Header::Control` with kind [`FLID_DATA_KIND`], `args[0]` = slot number since
//!   the sender's start, `args[1]` = the slot's signal m (0: no increase); `Packet::layer` is
//!   the layer index, `Packet::seq` the group's own sequence number (a gap is a loss). No new
//!   header variant in castlab-core.
//! * **Slot boundaries** are seen by the receiver as the first packet of a later slot (any
//!   group); it then decides on the slot that ended and joins and leaves at once. A packet
//!   missing on a group is a loss of the current slot (no reorder wait: castlab's links do
//!   not reorder a group's packets), except a gap spanning the boundary after a slot that
//!   already had a loss: it is counted but decides nothing, since that slot's decrease
//!   answered the same congestion and would otherwise be applied twice. Slots with no packet
//!   at all count as slots with loss. Level 1 (the base layer) is never left.
//! * **Groups**: the config's `layers` counts the session's groups (the scenario and
//!   `castlab net` make one per `layers`); the levels a receiver can reach are
//!   `layers - quiescent_slots`.

use castlab_core::config::check;
use castlab_core::{ConfigError, Duration, GroupId};

mod receiver;
pub mod registration;
mod sender;

pub use receiver::{FlidReceiver, FlidRecords};
pub use sender::FlidSender;

/// `ControlMsg::kind` of FLID-DL data packets ("FL").
pub const FLID_DATA_KIND: u16 = 0x464C;

/// Most groups a session may have (bounds the receiver's fixed per-group state).
pub const FLID_MAX_GROUPS: usize = 32;

/// FLID-DL constants. `Default` is the paper's simulation set-up where it is remembered
/// (unverified: the text could not be read), else our choice, said at each field.
#[derive(Clone, Debug, PartialEq)]
pub struct FlidConfig {
    /// B, the base layer's rate, b/s (our choice: 64 kb/s, a low first level).
    pub base_rate_bps: f64,
    /// c, the multiplicative factor between cumulative levels (paper's simulations: 1.3,
    /// unverified).
    pub factor: f64,
    /// Groups of the session: the base layer's and the dynamic ones (our choice: 20, so that
    /// with 2 quiescent slots 18 levels reach 64k·1.3^17 = 5.3 Mb/s).
    pub layers: u32,
    /// Slots a dynamic group rests between carrying layer 1 and the top layer again; must
    /// cover the IGMP leave latency (our choice: 2 slots = 1 s with the default slot).
    pub quiescent_slots: u32,
    /// Time-slot length (paper: 0.5 s, unverified).
    pub slot: Duration,
    /// Packet size, bytes (our choice: 512 B, as castlab's other layered schemes).
    pub packet_size: u32,
    /// The RTT at which the increase probabilities match TCP's additive increase (our
    /// reading; our choice: 100 ms).
    pub reference_rtt: Duration,
}

impl Default for FlidConfig {
    fn default() -> Self {
        FlidConfig {
            base_rate_bps: 64_000.0,
            factor: 1.3,
            layers: 20,
            quiescent_slots: 2,
            slot: Duration::from_millis(500),
            packet_size: 512,
            reference_rtt: Duration::from_millis(100),
        }
    }
}

castlab_core::config_fields!(FlidConfig {
    base_rate_bps,
    factor,
    layers,
    quiescent_slots,
    slot,
    packet_size,
    reference_rtt,
});

impl FlidConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check::positive("base_rate_bps", self.base_rate_bps)?;
        if !(self.factor > 1.0 && self.factor <= 4.0) {
            return Err(ConfigError::new("factor", self.factor, "must be in (1, 4]"));
        }
        check::int_in("layers", self.layers as u64, 3, FLID_MAX_GROUPS as u64)?;
        // At least one dynamic layer must be active: levels = layers - quiescent_slots ≥ 2.
        check::int_in("quiescent_slots", self.quiescent_slots as u64, 1, self.layers as u64 - 2)?;
        check::nonzero("slot", self.slot)?;
        check::int_in("packet_size", self.packet_size as u64, 1, 65_535)?;
        check::nonzero("reference_rtt", self.reference_rtt)?;
        // The thinnest layer's packet interval must not round to zero, and the base layer
        // must send at least one packet per slot (receivers see boundaries on it).
        check::packet_rate("base_rate_bps", self.level_rate_bps(self.levels()), self.packet_size)?;
        let base_interval = self.packet_size as f64 * 8.0 / self.base_rate_bps;
        if base_interval > self.slot.as_secs_f64() {
            return Err(ConfigError::new(
                "slot",
                self.slot.as_secs_f64(),
                "must be at least one base-layer packet interval (packet_size·8/base_rate_bps)",
            ));
        }
        Ok(())
    }

    /// N, the levels a receiver can reach: `layers - quiescent_slots`.
    pub fn levels(&self) -> u32 {
        self.layers - self.quiescent_slots
    }

    /// D, the dynamic groups in rotation: `layers - 1`.
    pub fn dynamic_groups(&self) -> u32 {
        self.layers - 1
    }

    /// Cumulative rate at level L (layers 0..L-1): `B·c^(L-1)`.
    pub fn level_rate_bps(&self, level: u32) -> f64 {
        self.base_rate_bps * self.factor.powi(level as i32 - 1)
    }

    /// Rate of layer ℓ alone: B for ℓ = 0, `B·c^(ℓ-1)·(c-1)` above.
    pub fn layer_rate_bps(&self, layer: u32) -> f64 {
        if layer == 0 {
            self.base_rate_bps
        } else {
            self.level_rate_bps(layer + 1) - self.level_rate_bps(layer)
        }
    }

    /// p_L, the probability that a slot's signal lets level L add a layer (our reading, see
    /// the module documentation); 0 at the top level.
    pub fn increase_probability(&self, level: u32) -> f64 {
        if level == 0 || level >= self.levels() {
            return 0.0;
        }
        let rtt = self.reference_rtt.as_secs_f64();
        let gain = 8.0 * self.packet_size as f64 * self.slot.as_secs_f64() / (rtt * rtt);
        (gain / (self.level_rate_bps(level + 1) - self.level_rate_bps(level))).min(1.0)
    }

    /// Index into the session's groups of the group carrying layer ℓ in slot k.
    pub fn group_of(&self, layer: u32, slot: u64) -> usize {
        if layer == 0 {
            return 0;
        }
        let d = self.dynamic_groups() as u64;
        // Age a = N-1-ℓ slots since the group was the top layer; the top layer of slot k is
        // on dynamic group k mod D.
        let age = (self.levels() - 1 - layer) as u64;
        1 + ((slot % d + d - age % d) % d) as usize
    }
}

/// One group per layer, each its own (the scenario and the drivers check it too).
fn check_groups(cfg: &FlidConfig, groups: &[GroupId]) -> Result<(), ConfigError> {
    if groups.len() != cfg.layers as usize {
        return Err(ConfigError::new("groups", groups.len(), "need exactly `layers` groups"));
    }
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].contains(g) {
            return Err(ConfigError::new("groups", g.0, "each layer needs its own group (duplicate)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
