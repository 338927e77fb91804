//! §4.1's loss measurement: per flow and layer, packets offered to a DropTail queue after the
//! filters, and those it dropped.

use super::*;

/// Per flow and layer, per time bin: data packets that passed an interface's filters and were
/// offered to its queue, and those the DropTail queue dropped (§4.1: "only the packets dropped
/// by drop-tail in spite of passing the filter").
#[derive(Clone, Debug)]
pub struct LossMeter {
    bin: Duration,
    layers: usize,
    slot_of_flow: Vec<u32>,
    pub flows: Vec<u32>,
    /// Per flow slot: flat `[bin * layers + layer]`.
    pub passed: Vec<Vec<u32>>,
    pub dropped: Vec<Vec<u32>>,
}

impl LossMeter {
    /// Layers at or above `layers` are counted in the last one.
    pub fn new(bin: Duration, layers: usize) -> Self {
        LossMeter {
            bin,
            layers: layers.max(1),
            slot_of_flow: Vec::new(),
            flows: Vec::new(),
            passed: Vec::new(),
            dropped: Vec::new(),
        }
    }
    pub fn bin(&self) -> Duration {
        self.bin
    }
    pub fn layers(&self) -> usize {
        self.layers
    }

    pub fn record(&mut self, now: Instant, flow: u32, layer: u8, dropped: bool) {
        let f = flow as usize;
        if f >= 1 << 20 {
            return; // flow ids this large are not sessions of ours
        }
        if self.slot_of_flow.len() <= f {
            self.slot_of_flow.resize(f + 1, NO_SLOT);
        }
        if self.slot_of_flow[f] == NO_SLOT {
            self.slot_of_flow[f] = self.flows.len() as u32;
            self.flows.push(flow);
            self.passed.push(Vec::new());
            self.dropped.push(Vec::new());
        }
        let s = self.slot_of_flow[f] as usize;
        let b = (now.as_nanos() / self.bin.as_nanos()) as usize;
        let need = (b + 1) * self.layers;
        if self.passed[s].len() < need {
            let n = need.max(self.passed[s].len() * 2).max(64 * self.layers);
            self.passed[s].resize(n, 0);
            self.dropped[s].resize(n, 0);
        }
        let i = b * self.layers + (layer as usize).min(self.layers - 1);
        self.passed[s][i] += 1;
        if dropped {
            self.dropped[s][i] += 1;
        }
    }
}
