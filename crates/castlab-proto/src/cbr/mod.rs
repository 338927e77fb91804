//! Constant-bit-rate and layered sources.
//!
//! The packet law follows McCanne, Jacobson and Vetterli, *Receiver-driven Layered
//! Multicast*, §4: `T_0 = 0, T_k = T_{k-1} + Δ + N_k`, with Δ the fixed interval that meets
//! the stream's bit rate and `N_k` i.i.d. uniform on `[-Δ/2, Δ/2]` (the "coding-delay"
//! jitter). A layered source is one such stream per cumulative layer, each on its own group
//! (§4: six layers at 32·2^m kb/s, m = 0..5, 1 KB packets). A unicast CBR source is a single
//! stream to an address. Jitter can be switched off for exact-rate traffic.

use castlab_core::{Agent, ConfigError, Dest, Duration, Instant, Packet, Rng, StartInfo};

/// One constant-rate stream of a source.
#[derive(Clone, Debug)]
pub struct CbrStream {
    pub dst: Dest,
    pub rate_bps: f64,
    /// Layer number stamped into each packet (0 for a plain CBR stream).
    pub layer: u8,
    delta: Duration,
    next_at: Instant,
    next_seq: u64,
}

impl CbrStream {
    pub fn new(dst: Dest, rate_bps: f64, layer: u8) -> Self {
        CbrStream { dst, rate_bps, layer, delta: Duration::ZERO, next_at: Instant::MAX, next_seq: 0 }
    }
    /// Packets sent so far on this stream.
    pub fn sent(&self) -> u64 {
        self.next_seq
    }
}

/// A source of one or more CBR streams with a common packet size, start and stop time.
#[derive(Debug)]
pub struct CbrSource {
    streams: Vec<CbrStream>,
    packet_size: u32,
    flow: u32,
    start: Instant,
    stop: Instant,
    jitter: bool,
    rng: Option<Rng>,
    /// Packets due but not yet pulled by `poll_transmit` (indices into `streams`).
    due: Vec<usize>,
}

impl CbrSource {
    /// A source of the given streams. `start`/`stop` bound the emission times; `jitter` turns
    /// on the §4 noise term. Every rate must be positive and leave at least 1 ns between two
    /// packets; the error names `rates_bps`.
    pub fn try_new(
        streams: Vec<CbrStream>,
        packet_size: u32,
        flow: u32,
        start: Instant,
        stop: Instant,
        jitter: bool,
    ) -> Result<Self, ConfigError> {
        if packet_size == 0 {
            return Err(ConfigError::new("packet_size", 0, "must be positive"));
        }
        for st in &streams {
            castlab_core::config::check::packet_rate("rates_bps", st.rate_bps, packet_size)?;
        }
        let n = streams.len();
        let mut s =
            CbrSource { streams, packet_size, flow, start, stop, jitter, rng: None, due: Vec::with_capacity(n) };
        for st in &mut s.streams {
            let bits = packet_size as f64 * 8.0;
            st.delta = Duration::from_secs_f64(bits / st.rate_bps);
        }
        Ok(s)
    }

    /// A layered source: stream m goes to `groups[m]` at `rates_bps[m]`, stamped layer m.
    pub fn try_layered(
        groups: &[castlab_core::GroupId],
        rates_bps: &[f64],
        packet_size: u32,
        flow: u32,
        start: Instant,
        stop: Instant,
        jitter: bool,
    ) -> Result<Self, ConfigError> {
        let streams = groups
            .iter()
            .zip(rates_bps)
            .enumerate()
            .map(|(m, (g, r))| CbrStream::new(Dest::Group(*g), *r, m as u8))
            .collect();
        CbrSource::try_new(streams, packet_size, flow, start, stop, jitter)
    }

    pub fn streams(&self) -> &[CbrStream] {
        &self.streams
    }

    /// Total packets sent over all streams.
    pub fn sent(&self) -> u64 {
        self.streams.iter().map(|s| s.sent()).sum()
    }

    /// The next emission time after `t` for a stream with interval `delta`: `t + Δ + N`.
    fn advance(&mut self, i: usize, t: Instant) -> Instant {
        let delta = self.streams[i].delta;
        if !self.jitter {
            return t + delta;
        }
        let rng = self.rng.as_mut().expect("started");
        let d = delta.as_nanos() as f64;
        // N uniform on [-Δ/2, Δ/2]: so T_k - T_{k-1} is uniform on [Δ/2, 3Δ/2].
        let step = d + rng.uniform_range(-d / 2.0, d / 2.0);
        t + Duration::from_nanos(step.round() as u64)
    }
}

impl Agent for CbrSource {
    fn handle_start(&mut self, now: Instant, info: StartInfo) {
        self.rng = Some(info.rng);
        let t0 = now.max(self.start);
        for st in &mut self.streams {
            // §4: T_0 is the start time; the first packet goes out then.
            st.next_at = t0;
        }
    }

    fn handle_packet(&mut self, _now: Instant, _packet: &Packet) {}

    fn handle_timeout(&mut self, now: Instant) {
        for i in 0..self.streams.len() {
            while self.streams[i].next_at <= now {
                let t = self.streams[i].next_at;
                if t >= self.stop {
                    self.streams[i].next_at = Instant::MAX;
                    break;
                }
                self.due.push(i);
                let nt = self.advance(i, t);
                self.streams[i].next_at = nt;
            }
        }
        // Emit in stream order within one instant; deterministic.
        self.due.reverse();
    }

    fn poll_transmit(&mut self) -> Option<Packet> {
        let i = self.due.pop()?;
        let st = &mut self.streams[i];
        let mut p = Packet::data(st.dst, self.packet_size);
        p.flow = self.flow;
        p.layer = st.layer;
        p.seq = st.next_seq;
        st.next_seq += 1;
        Some(p)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.streams.iter().map(|s| s.next_at).filter(|t| *t != Instant::MAX).min()
    }

    /// Told to stop: a CBR stream has no end-of-stream message; it sends nothing more (a
    /// packet due but not yet pulled is dropped) and its timers are disarmed. It holds no
    /// group to leave.
    fn handle_shutdown(&mut self, now: Instant) {
        self.stop = self.stop.min(now);
        self.due.clear();
        for st in &mut self.streams {
            st.next_at = Instant::MAX;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Driver;
    use castlab_core::{Addr, GroupId, NodeId};

    /// `src` driven by the shared harness up to `until` (what it sent is in `sent`).
    fn run_source(src: CbrSource, until: Instant) -> Driver<CbrSource> {
        let mut d = Driver::start(src, Instant::ZERO, Addr::new(NodeId(0), 1), 9);
        d.advance_to(until);
        d
    }

    #[test]
    fn exact_rate_without_jitter() {
        // 1000-byte packets at 800 kb/s: one every 10 ms, from t = 1 s to 2 s exclusive.
        let dst = Dest::Unicast(Addr::new(NodeId(1), 5));
        let s = CbrSource::try_new(
            vec![CbrStream::new(dst, 800_000.0, 0)],
            1000,
            7,
            Instant::from_secs_f64(1.0),
            Instant::from_secs_f64(2.0),
            false,
        )
        .expect("valid source");
        let d = run_source(s, Instant::from_secs_f64(5.0));
        let out = &d.sent;
        assert_eq!(out.len(), 100);
        for (k, (t, p)) in out.iter().enumerate() {
            assert_eq!(t.as_nanos(), 1_000_000_000 + k as u64 * 10_000_000);
            assert_eq!(p.seq, k as u64);
            assert_eq!(p.flow, 7);
        }
        assert_eq!(d.agent.poll_timeout(), None);
    }

    #[test]
    fn jitter_law_of_mccanne_section_4() {
        // Inter-departure gaps are Δ + N with N uniform on [-Δ/2, Δ/2]: support [Δ/2, 3Δ/2],
        // mean Δ, variance Δ²/12.
        let dst = Dest::Group(GroupId(0));
        let s = CbrSource::try_new(vec![CbrStream::new(dst, 256_000.0, 0)], 1000, 0, Instant::ZERO, Instant::MAX, true)
            .expect("valid source");
        let d = run_source(s, Instant::from_secs_f64(2000.0));
        let out = &d.sent;
        let delta = 8000.0 / 256_000.0;
        let gaps: Vec<f64> = out.windows(2).map(|w| (w[1].0 - w[0].0).as_secs_f64()).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
        assert!(n > 60_000.0);
        assert!((mean / delta - 1.0).abs() < 0.005, "mean {mean} vs {delta}");
        assert!((var / (delta * delta / 12.0) - 1.0).abs() < 0.03, "var {var}");
        let (lo, hi) = gaps.iter().fold((f64::MAX, 0.0f64), |(a, b), g| (a.min(*g), b.max(*g)));
        assert!(lo >= delta / 2.0 - 1e-9 && hi <= 1.5 * delta + 1e-9, "{lo} {hi}");
    }

    #[test]
    fn told_to_stop_the_source_sends_nothing_more() {
        // 1000-byte packets at 80 kb/s: one every 100 ms from 0, for ever
        let s = CbrSource::try_new(
            vec![CbrStream::new(Dest::Group(GroupId(3)), 80_000.0, 0)],
            1000,
            1,
            Instant::ZERO,
            Instant::MAX,
            false,
        )
        .expect("valid source");
        let mut d = run_source(s, Instant::from_nanos(950_000_000));
        assert_eq!(d.sent.len(), 10);
        assert!(d.agent.poll_timeout().is_some());
        d.shutdown(Instant::from_nanos(960_000_000));
        assert_eq!(d.agent.poll_timeout(), None);
        d.advance_to(Instant::from_secs_f64(60.0));
        assert_eq!(d.sent.len(), 10);
        assert_eq!(d.agent.sent(), 10);
    }

    #[test]
    fn layered_rates_per_layer() {
        let groups: Vec<GroupId> = (0..6).map(GroupId).collect();
        let rates: Vec<f64> = (0..6).map(|m| 32_000.0 * 2f64.powi(m)).collect();
        let s =
            CbrSource::try_layered(&groups, &rates, 1000, 1, Instant::ZERO, Instant::MAX, true).expect("valid source");
        let d = run_source(s, Instant::from_secs_f64(100.0));
        let out = &d.sent;
        for m in 0..6u8 {
            let bits = out.iter().filter(|(_, p)| p.layer == m).count() as f64 * 8000.0;
            let rate = bits / 100.0;
            assert!((rate / rates[m as usize] - 1.0).abs() < 0.03, "layer {m}: {rate}");
            assert!(out.iter().filter(|(_, p)| p.layer == m).all(|(_, p)| p.dst == Dest::Group(groups[m as usize])));
        }
    }
}

pub mod registration;
