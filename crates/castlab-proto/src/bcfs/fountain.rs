//! The digital fountain behind Rainbow (Yano & McCanne §III-A, after Byers et al. [21]).
//!
//! The source answers every transmission request (a BCF request, §III-B) with a *fresh*
//! encoding symbol as a BCF reply on the request's label and at its level (§III-C: "the source
//! replies by sending data with as high level as the TRQ"). A receiver is done once it can
//! decode. Two modes:
//!
//! - **symbolic** ([`FountainMode::Symbolic`]): symbols are numbered and carry no bytes; a
//!   receiver is done once it holds `block_symbols + overhead_symbols` distinct symbols (the
//!   decoder's reception overhead). Fast, for sweeps.
//! - **real** ([`FountainMode::Real`]): an actual file is encoded with RFC 6330 RaptorQ (the
//!   `raptorq` crate) as one source block; symbol `i` is source symbol `i` for `i < K` and
//!   repair symbols after that. Packets are fixed-size `Copy` values, so a symbol's bytes live in
//!   a side store, the [`SymbolStore`], shared by the source and its receivers in the
//!   simulator: the source writes symbol `i`'s bytes there once, when it first puts symbol `i`
//!   on a packet (the packet carries the symbol id in `seq` and in the BCF message), and they
//!   never change after. A receiver copies the bytes of the symbol named by each packet it
//!   receives into its own buffer at that moment, and decodes from that buffer only. So the
//!   bytes a receiver decodes are exactly those carried by the packets it received; a symbol it
//!   never received never reaches its decoder.
//! - **wire** ([`FountainMode::Wire`]): the real network. The datagram carries the symbol
//!   itself as the packet's application bytes ([`castlab_core::Agent::poll_payload`]), in
//!   RFC 6330 §3.2's form: the FEC Payload ID (source block number, 8 bits, always 0 here;
//!   encoding symbol id, 24 bits) and then the symbol. A receiver decodes only the bytes that
//!   came over the network; it knows the file's length and symbol size (the session's
//!   settings, RFC 6330 §3.3's transmission information, which castlab does not send) and,
//!   to report whether it decoded the very file, what the file should be.
//!
//! The store generates symbols in chunks (`CHUNK`): the source's per-packet work allocates
//! nothing except when the store grows by a chunk, amortised over `CHUNK` packets.

use std::sync::{Arc, Mutex, MutexGuard};

use castlab_core::{Addr, Agent, Instant, Packet, StartInfo};
use raptorq::{Decoder, EncodingPacket, ObjectTransmissionInformation, PayloadId, SourceBlockEncoder};

use crate::bcfs::BcfHost;

/// Repair symbols generated per growth of the store.
const CHUNK: u32 = 256;
/// RaptorQ's largest number of source symbols in one block (RFC 6330 §5.1.2, K'_max).
pub const MAX_BLOCK_SYMBOLS: u64 = 56_403;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FountainError {
    #[error("file: must not be empty")]
    EmptyFile,
    #[error("symbol_size: must be a positive multiple of 8 bytes (got {0})")]
    SymbolSize(u32),
    #[error("file: {symbols} symbols of {symbol_size} bytes exceed one RaptorQ block ({max} symbols)")]
    TooLarge { symbols: u64, symbol_size: u32, max: u64 },
}

/// The encoded file: RaptorQ encoder, the bytes of every symbol generated so far, their ESIs.
pub struct SymbolStore {
    config: ObjectTransmissionInformation,
    encoder: SourceBlockEncoder,
    k: u32,
    symbol_size: usize,
    bytes: Vec<u8>,
    esi: Vec<u32>,
    repairs: u32,
    original: Vec<u8>,
}

impl core::fmt::Debug for SymbolStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SymbolStore").field("k", &self.k).field("symbol_size", &self.symbol_size).finish()
    }
}

/// A store shared between a source and its receivers (in the simulator), or a process's own.
/// `Send`, so that the real-network driver can host the agents that hold one.
#[derive(Clone, Debug)]
pub struct SharedStore(Arc<Mutex<SymbolStore>>);

impl SharedStore {
    /// The store (no other thread holds it in the simulator: the lock never waits).
    pub fn borrow(&self) -> MutexGuard<'_, SymbolStore> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub fn borrow_mut(&self) -> MutexGuard<'_, SymbolStore> {
        self.borrow()
    }
}

/// The file a real-network Rainbow session delivers when no file is given: `bytes` bytes drawn
/// from `seed`'s random stream. Source and receivers make the same one from the same words.
pub fn seeded_file(bytes: usize, seed: u64) -> Vec<u8> {
    let mut r = castlab_core::Rng::seed_from_u64(seed);
    (0..bytes).map(|_| r.next_u64() as u8).collect()
}

/// The transmission information of a `len`-byte file in `symbol_size`-byte symbols, one
/// source block (RFC 6330 §3.3), and its K; or why such a file cannot be sent.
fn block_info(len: usize, symbol_size: u32) -> Result<(ObjectTransmissionInformation, u64), FountainError> {
    if len == 0 {
        return Err(FountainError::EmptyFile);
    }
    if symbol_size == 0 || symbol_size & 7 != 0 || symbol_size > u16::MAX as u32 {
        return Err(FountainError::SymbolSize(symbol_size));
    }
    let k = (len as u64).div_ceil(symbol_size as u64);
    if k > MAX_BLOCK_SYMBOLS {
        return Err(FountainError::TooLarge { symbols: k, symbol_size, max: MAX_BLOCK_SYMBOLS });
    }
    Ok((ObjectTransmissionInformation::new(len as u64, symbol_size as u16, 1, 1, 8), k))
}

impl SymbolStore {
    /// Encode `file` as one RaptorQ source block of `symbol_size`-byte symbols.
    pub fn encode(file: &[u8], symbol_size: u32) -> Result<SymbolStore, FountainError> {
        let (config, k) = block_info(file.len(), symbol_size)?;
        let mut padded = file.to_vec();
        padded.resize(k as usize * symbol_size as usize, 0);
        let encoder = SourceBlockEncoder::new(0, &config, &padded);
        let mut store = SymbolStore {
            config,
            encoder,
            k: k as u32,
            symbol_size: symbol_size as usize,
            bytes: Vec::with_capacity(padded.len() * 2),
            esi: Vec::with_capacity(2 * k as usize),
            repairs: 0,
            original: file.to_vec(),
        };
        for p in store.encoder.source_packets() {
            let (id, data) = p.split();
            store.esi.push(id.encoding_symbol_id());
            store.bytes.extend_from_slice(&data);
        }
        Ok(store)
    }

    pub fn shared(self) -> SharedStore {
        SharedStore(Arc::new(Mutex::new(self)))
    }

    /// Number of source symbols K.
    pub fn block_symbols(&self) -> u32 {
        self.k
    }

    pub fn symbol_size(&self) -> usize {
        self.symbol_size
    }

    /// Symbols generated so far.
    pub fn generated(&self) -> u32 {
        self.esi.len() as u32
    }

    pub fn original(&self) -> &[u8] {
        &self.original
    }

    pub fn config(&self) -> ObjectTransmissionInformation {
        self.config
    }

    /// Make sure symbol `id` exists (grows by whole chunks of repair symbols).
    pub fn ensure(&mut self, id: u32) {
        while id >= self.generated() {
            for p in self.encoder.repair_packets(self.repairs, CHUNK) {
                let (pid, data) = p.split();
                self.esi.push(pid.encoding_symbol_id());
                self.bytes.extend_from_slice(&data);
            }
            self.repairs += CHUNK;
        }
    }

    /// The bytes and ESI of symbol `id`, if generated.
    pub fn symbol(&self, id: u32) -> Option<(u32, &[u8])> {
        let i = id as usize;
        let esi = *self.esi.get(i)?;
        Some((esi, &self.bytes[i * self.symbol_size..(i + 1) * self.symbol_size]))
    }

    /// Symbol `id` as it travels on the wire (RFC 6330 §3.2: FEC Payload ID, then the symbol)
    /// into `out`; returns the bytes written, 0 if `id` is not generated or `out` too short.
    pub fn write_wire(&self, id: u32, out: &mut [u8]) -> usize {
        let Some((esi, data)) = self.symbol(id) else { return 0 };
        let n = FEC_PAYLOAD_ID_LEN + data.len();
        if out.len() < n || esi >= 1 << 24 {
            return 0;
        }
        out[0] = 0; // source block number: one block
        out[1..4].copy_from_slice(&esi.to_be_bytes()[1..]);
        out[FEC_PAYLOAD_ID_LEN..n].copy_from_slice(data);
        n
    }
}

/// RFC 6330 §3.2's FEC Payload ID: 8-bit source block number, 24-bit encoding symbol id.
pub const FEC_PAYLOAD_ID_LEN: usize = 4;

/// What a real-network receiver knows of the file before any symbol arrives: the session's
/// transmission information (length, symbol size) and, only to say whether it decoded the
/// very file, the file the session agreed on.
#[derive(Debug)]
pub struct WireFile {
    config: ObjectTransmissionInformation,
    k: u32,
    symbol_size: usize,
    expected: Vec<u8>,
}

impl WireFile {
    /// The same checks as [`SymbolStore::encode`], without encoding anything.
    pub fn new(expected: Vec<u8>, symbol_size: u32) -> Result<WireFile, FountainError> {
        let (config, k) = block_info(expected.len(), symbol_size)?;
        Ok(WireFile { config, k: k as u32, symbol_size: symbol_size as usize, expected })
    }
}

/// What a receiver holds toward decoding.
#[derive(Debug)]
pub enum FountainMode {
    /// Done once `needed` distinct symbols are held.
    Symbolic { needed: u32 },
    /// Done once the RaptorQ decoder succeeds on the symbols received.
    Real { store: SharedStore },
    /// Done once the RaptorQ decoder succeeds on the symbols whose bytes came with the packets.
    Wire { file: WireFile },
}

/// A receiver's side of the fountain: which symbols it holds and, in real mode, their bytes.
#[derive(Debug)]
pub struct FountainSink {
    mode: FountainMode,
    /// Bitset of symbol ids held (grows by doubling when a symbol id exceeds it).
    seen: Vec<u64>,
    distinct: u32,
    /// Real mode: (symbol id, ESI) of each symbol held, and its bytes, in arrival order.
    ids: Vec<(u32, u32)>,
    bytes: Vec<u8>,
    decoded: Option<Vec<u8>>,
    pub decode_attempts: u32,
    pub duplicates: u64,
    /// Wire mode: the bytes handed over with the packet whose uid this is ([`FountainSink::offer`]).
    offered: Option<u64>,
    offer: Vec<u8>,
    /// Wire mode: symbols that came without well-formed bytes (not held).
    pub without_bytes: u64,
}

impl FountainSink {
    pub fn new(mode: FountainMode) -> Self {
        let (cap, bytes_cap) = match &mode {
            FountainMode::Symbolic { needed } => (*needed as usize * 4, 0),
            FountainMode::Real { store } => {
                let s = store.borrow();
                let k = s.block_symbols() as usize + 16;
                (k * 4, k * s.symbol_size())
            }
            FountainMode::Wire { file } => {
                let k = file.k as usize + 16;
                (k * 4, k * file.symbol_size)
            }
        };
        let offer_cap = match &mode {
            FountainMode::Wire { file } => FEC_PAYLOAD_ID_LEN + file.symbol_size,
            _ => 0,
        };
        FountainSink {
            seen: vec![0; cap.div_ceil(64).max(1)],
            distinct: 0,
            ids: Vec::with_capacity(if bytes_cap > 0 { cap / 4 } else { 0 }),
            bytes: Vec::with_capacity(bytes_cap),
            decoded: None,
            decode_attempts: 0,
            duplicates: 0,
            offered: None,
            offer: Vec::with_capacity(offer_cap),
            without_bytes: 0,
            mode,
        }
    }

    /// Wire mode: the application bytes that came with the packet whose uid is `uid`, taken in
    /// by the [`FountainSink::add_packet`] call for that packet. Ignored in the other modes.
    pub fn offer(&mut self, uid: u64, bytes: &[u8]) {
        if let FountainMode::Wire { file } = &self.mode {
            self.offer.clear();
            if bytes.len() == FEC_PAYLOAD_ID_LEN + file.symbol_size {
                self.offer.extend_from_slice(bytes);
                self.offered = Some(uid);
            } else {
                self.offered = None;
            }
        }
    }

    /// Symbols needed before completion is possible (K plus overhead, or K in real mode).
    pub fn needed(&self) -> u32 {
        match &self.mode {
            FountainMode::Symbolic { needed } => *needed,
            FountainMode::Real { store } => store.borrow().block_symbols(),
            FountainMode::Wire { file } => file.k,
        }
    }

    pub fn distinct(&self) -> u32 {
        self.distinct
    }

    /// Take in the symbol a packet carries; returns whether it was new.
    pub fn add(&mut self, id: u32) -> bool {
        self.add_packet(id, None)
    }

    /// [`FountainSink::add`] for the packet with uid `uid`: in wire mode the symbol counts only
    /// with the bytes offered for that very packet (else `without_bytes` counts it).
    pub fn add_packet(&mut self, id: u32, uid: Option<u64>) -> bool {
        let mut wire_esi = None;
        if let FountainMode::Wire { .. } = &self.mode {
            let offered = self.offered.take();
            if uid.is_none() || offered != uid || self.offer[0] != 0 {
                self.without_bytes += 1;
                return false;
            }
            wire_esi = Some(u32::from_be_bytes([0, self.offer[1], self.offer[2], self.offer[3]]));
        }
        let (w, b) = ((id / 64) as usize, id % 64);
        if w >= self.seen.len() {
            let n = (w + 1).max(self.seen.len() * 2);
            self.seen.resize(n, 0);
        }
        if self.seen[w] & (1 << b) != 0 {
            self.duplicates += 1;
            return false;
        }
        self.seen[w] |= 1 << b;
        self.distinct += 1;
        match &self.mode {
            FountainMode::Real { store } => {
                // copy the bytes this packet carries, now (see the module documentation)
                if let Some((esi, data)) = store.borrow().symbol(id) {
                    self.ids.push((id, esi));
                    self.bytes.extend_from_slice(data);
                }
            }
            FountainMode::Wire { .. } => {
                self.ids.push((id, wire_esi.expect("checked above")));
                self.bytes.extend_from_slice(&self.offer[FEC_PAYLOAD_ID_LEN..]);
            }
            FountainMode::Symbolic { .. } => {}
        }
        true
    }

    /// Whether the receiver can now reconstruct the file. In real mode this runs the decoder
    /// (once K symbols are held, then again on each new symbol until it succeeds).
    pub fn try_complete(&mut self) -> bool {
        let (k, t, config) = match &self.mode {
            FountainMode::Symbolic { needed } => return self.distinct >= *needed,
            FountainMode::Real { store } => {
                let s = store.borrow();
                (s.block_symbols(), s.symbol_size(), s.config())
            }
            FountainMode::Wire { file } => (file.k, file.symbol_size, file.config),
        };
        if self.decoded.is_some() {
            return true;
        }
        if self.distinct < k {
            return false;
        }
        self.decode_attempts += 1;
        let mut dec = Decoder::new(config);
        for (i, &(_, esi)) in self.ids.iter().enumerate() {
            let pkt = EncodingPacket::new(PayloadId::new(0, esi), self.bytes[i * t..(i + 1) * t].to_vec());
            if let Some(out) = dec.decode(pkt) {
                self.decoded = Some(out);
                return true;
            }
        }
        false
    }

    /// The decoded file (real mode, once complete).
    pub fn decoded(&self) -> Option<&[u8]> {
        self.decoded.as_deref()
    }

    /// Whether the decoded bytes equal the source's file (real mode).
    pub fn matches_source(&self) -> Option<bool> {
        match (&self.mode, &self.decoded) {
            (FountainMode::Real { store }, Some(d)) => Some(d.as_slice() == store.borrow().original()),
            (FountainMode::Wire { file }, Some(d)) => Some(d.as_slice() == file.expected.as_slice()),
            _ => None,
        }
    }
}

/// The fountain source (§III-B "simple reply by a Digital Fountain source"): each request is
/// answered by one fresh symbol on the request's label, at the request's level. Stateless per
/// receiver.
#[derive(Debug)]
pub struct FountainSource {
    pub host: BcfHost,
    store: Option<SharedStore>,
    next_symbol: u32,
    pending: std::collections::VecDeque<Packet>,
    /// Replies (symbols) sent.
    pub sent: u64,
    pub requests: u64,
    /// Marked null requests from routers (§II-B: "the source is told" a request was lost); they
    /// are answered like any request.
    pub refreshes: u64,
    /// Requests at a level above 1 (receivers clearing stale state after a loss, §III-C).
    pub raised: u64,
    /// Address each reply to the sender of the request it answers (see
    /// [`FountainSource::replying_to_requesters`]).
    reply_to_requester: bool,
    /// Told to stop ([`Agent::handle_shutdown`]): no request is answered any more.
    stopped: bool,
}

impl FountainSource {
    /// `store`: `Some` for the real mode (symbol bytes in the shared store), `None` symbolic.
    pub fn new(flow: u32, packet_bytes: u32, store: Option<SharedStore>) -> Self {
        let mut host = BcfHost::new(flow, 40, packet_bytes);
        host.bind(0, 0);
        FountainSource {
            host,
            store,
            next_symbol: 0,
            pending: std::collections::VecDeque::with_capacity(8),
            sent: 0,
            requests: 0,
            refreshes: 0,
            raised: 0,
            reply_to_requester: false,
            stopped: false,
        }
    }

    /// On the real network the source's host runs no BCF router: its first-hop router holds
    /// the breadcrumbs the source's node would hold in the simulator. A reply addressed to the
    /// source itself would never leave its host; addressed to the request's sender, unicast
    /// routing carries it to that router, which takes every reply whatever its address and
    /// copies it onto the label's breadcrumbs (§II-B.2). Without a router (one receiver on
    /// loopback) it goes straight to the one receiver.
    pub fn replying_to_requesters(mut self) -> Self {
        self.reply_to_requester = true;
        self
    }

    pub fn addr(&self) -> Addr {
        self.host.addr()
    }

    pub fn store(&self) -> Option<&SharedStore> {
        self.store.as_ref()
    }
}

impl Agent for FountainSource {
    fn handle_start(&mut self, _now: Instant, info: StartInfo) {
        self.host.set_addr(info.addr);
    }

    fn handle_packet(&mut self, _now: Instant, p: &Packet) {
        if self.stopped {
            return;
        }
        let Some(m) = self.host.receive(p) else { return };
        if !m.is_request() {
            return;
        }
        self.requests += 1;
        self.refreshes += m.is_refresh() as u64;
        self.raised += (m.level > 1) as u64;
        let id = self.next_symbol;
        self.next_symbol += 1;
        if let Some(s) = &self.store {
            s.borrow_mut().ensure(id);
        }
        let mut r = self.host.reply(m.label, m.level, id as u64);
        r.seq = id as u64;
        if self.reply_to_requester {
            r.dst = castlab_core::Dest::Unicast(m.from);
        }
        self.sent += 1;
        self.pending.push_back(r);
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self) -> Option<Packet> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Told to stop: the fountain answers no more requests and drops replies not yet sent.
    /// Rainbow's source has no message that ends its session (§III: a receiver stops asking
    /// once it can decode, and a source that stops answering leaves the receivers' TRQs to
    /// time out), and it holds no group.
    fn handle_shutdown(&mut self, _now: Instant) {
        self.stopped = true;
        self.pending.clear();
    }

    /// The real network: a reply carries its symbol (module documentation, wire mode).
    fn poll_payload(&mut self, p: &Packet, out: &mut [u8]) -> usize {
        match (&self.store, p.header) {
            (Some(s), castlab_core::Header::Bcf(h)) if h.kind == castlab_core::BcfHeader::REPLY => {
                s.borrow().write_wire(h.msg as u32, out)
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use castlab_core::Rng;

    fn file(n: usize, seed: u64) -> Vec<u8> {
        let mut r = Rng::seed_from_u64(seed);
        (0..n).map(|_| r.next_u64() as u8).collect()
    }

    #[test]
    fn raptorq_round_trip_with_random_symbol_loss() {
        // 100 kB file, 448-byte symbols (K = ceil(100000 / 448) = 224); 40 % of the symbols put on the wire are lost
        let data = file(100_000, 1);
        let store = SymbolStore::encode(&data, 448).unwrap().shared();
        let k = store.borrow().block_symbols();
        assert_eq!(k, 224);
        let mut sink = FountainSink::new(FountainMode::Real { store: store.clone() });
        let mut rng = Rng::seed_from_u64(2);
        let mut id = 0u32;
        let mut lost_source = 0;
        while !sink.try_complete() {
            store.borrow_mut().ensure(id);
            if rng.bernoulli(0.4) {
                lost_source += (id < k) as u32;
            } else {
                sink.add(id);
            }
            id += 1;
            assert!(id < 10 * k, "never decoded");
        }
        assert!(lost_source > 50, "the loss really removed source symbols ({lost_source})");
        assert_eq!(sink.decoded().unwrap(), data.as_slice());
        assert_eq!(sink.matches_source(), Some(true));
        // RaptorQ needs barely more than K symbols (RFC 6330: K + 2 fail with p < 1e-6)
        assert!(sink.distinct() <= k + 3, "{} > K + 3", sink.distinct());
    }

    #[test]
    fn decoding_uses_the_received_bytes() {
        // a receiver whose copy of one symbol is corrupted does not reproduce the file
        let data = file(20_000, 3);
        let store = SymbolStore::encode(&data, 512).unwrap().shared();
        let mut sink = FountainSink::new(FountainMode::Real { store: store.clone() });
        // K read first: a guard in the loop's head would live through the loop, and `add`
        // takes the store's lock
        let k = store.borrow().block_symbols();
        for id in 0..k {
            sink.add(id);
        }
        sink.bytes[700] ^= 0xff; // the symbol copied at arrival, not the store, is decoded
        assert!(sink.try_complete());
        assert_eq!(sink.matches_source(), Some(false));
    }

    #[test]
    fn a_wire_receiver_decodes_only_the_bytes_that_came_with_the_packets() {
        // the real network: the source writes each symbol onto its packet (RFC 6330 §3.2's FEC
        // Payload ID, then the symbol); the receiver has no encoder, only the session's length
        // and symbol size, and 30 % of the packets are lost
        let data = seeded_file(30_000, 9);
        assert_eq!(data, seeded_file(30_000, 9), "the same words make the same file");
        assert_ne!(data, seeded_file(30_000, 10));
        let src = SymbolStore::encode(&data, 448).unwrap().shared();
        let k = src.borrow().block_symbols();
        let mut sink = FountainSink::new(FountainMode::Wire { file: WireFile::new(data.clone(), 448).unwrap() });
        assert_eq!(sink.needed(), k);
        let mut rng = Rng::seed_from_u64(4);
        let mut wire = [0u8; 600];
        let mut id = 0u32;
        while !sink.try_complete() {
            src.borrow_mut().ensure(id);
            let n = src.borrow().write_wire(id, &mut wire);
            assert_eq!(n, 4 + 448);
            if !rng.bernoulli(0.3) {
                let uid = 1000 + id as u64;
                sink.offer(uid, &wire[..n]);
                assert!(sink.add_packet(id, Some(uid)));
            }
            id += 1;
            assert!(id < 3 * k, "never decoded");
        }
        assert!(id > k + k / 5, "repair symbols were needed ({id} sent, K = {k})");
        assert_eq!(sink.decoded().unwrap(), data.as_slice());
        assert_eq!(sink.matches_source(), Some(true));
        assert_eq!(sink.without_bytes, 0);
    }

    #[test]
    fn a_wire_symbol_without_its_own_bytes_is_not_held() {
        let data = seeded_file(4_000, 1);
        let src = SymbolStore::encode(&data, 64).unwrap().shared();
        let mut sink = FountainSink::new(FountainMode::Wire { file: WireFile::new(data, 64).unwrap() });
        let mut wire = [0u8; 100];
        src.borrow_mut().ensure(3);
        let n = src.borrow().write_wire(3, &mut wire);
        // no bytes at all; bytes offered for another packet; a bytes' length that is not the
        // session's symbol size; a source block number other than 0
        assert!(!sink.add_packet(3, Some(7)));
        sink.offer(8, &wire[..n]);
        assert!(!sink.add_packet(3, Some(7)));
        sink.offer(7, &wire[..n - 1]);
        assert!(!sink.add_packet(3, Some(7)));
        let mut bad = wire;
        bad[0] = 1;
        sink.offer(7, &bad[..n]);
        assert!(!sink.add_packet(3, Some(7)));
        assert_eq!((sink.without_bytes, sink.distinct()), (4, 0));
        // an offer is taken once: the packet's bytes count for that packet only
        sink.offer(7, &wire[..n]);
        assert!(sink.add_packet(3, Some(7)));
        assert!(!sink.add_packet(4, Some(7)));
        assert_eq!((sink.without_bytes, sink.distinct()), (5, 1));
    }

    #[test]
    fn a_wire_receiver_that_got_corrupted_bytes_does_not_match_the_file() {
        let data = seeded_file(6_400, 2);
        let src = SymbolStore::encode(&data, 64).unwrap().shared();
        let k = src.borrow().block_symbols();
        let mut sink = FountainSink::new(FountainMode::Wire { file: WireFile::new(data, 64).unwrap() });
        let mut wire = [0u8; 100];
        for id in 0..k {
            let n = src.borrow().write_wire(id, &mut wire);
            if id == 5 {
                wire[20] ^= 0xff;
            }
            sink.offer(id as u64, &wire[..n]);
            sink.add_packet(id, Some(id as u64));
        }
        assert!(sink.try_complete());
        assert_eq!(sink.matches_source(), Some(false));
    }

    #[test]
    fn symbolic_mode_counts_distinct_symbols() {
        let mut s = FountainSink::new(FountainMode::Symbolic { needed: 3 });
        assert!(s.add(5) && !s.add(5) && s.add(100_000));
        assert!(!s.try_complete());
        s.add(0);
        assert!(s.try_complete());
        assert_eq!(s.duplicates, 1);
    }

    #[test]
    fn told_to_stop_the_fountain_answers_no_more_requests() {
        use castlab_core::{NodeId, Packet};
        let src = Addr::new(NodeId(0), 1);
        let rx = Addr::new(NodeId(4), 1000);
        let mut d = crate::testing::Driver::start(FountainSource::new(1, 512, None), Instant::ZERO, src, 1);
        let trq = |label: u32| {
            let mut p: Packet = BcfHost::new(1, 40, 0).request(src, label, 1, None);
            p.src = rx;
            p
        };
        d.packet(Instant::from_nanos(1_000), &trq(1));
        d.packet(Instant::from_nanos(2_000), &trq(2));
        assert_eq!((d.sent.len(), d.agent.sent, d.agent.requests), (2, 2, 2));
        d.shutdown(Instant::from_nanos(3_000));
        d.packet(Instant::from_nanos(4_000), &trq(3));
        d.advance_to(Instant::from_nanos(60_000_000_000));
        assert_eq!((d.sent.len(), d.agent.sent, d.agent.requests), (2, 2, 2));
        assert_eq!(d.agent.poll_timeout(), None);
        assert!(d.events.is_empty(), "it holds no group: {:?}", d.events);
    }

    #[test]
    fn bad_files_are_errors() {
        assert_eq!(SymbolStore::encode(&[], 512).unwrap_err(), FountainError::EmptyFile);
        assert_eq!(WireFile::new(Vec::new(), 512).unwrap_err(), FountainError::EmptyFile);
        assert_eq!(WireFile::new(vec![1], 500).unwrap_err(), FountainError::SymbolSize(500));
        assert_eq!(SymbolStore::encode(&[1], 500).unwrap_err(), FountainError::SymbolSize(500));
        assert!(matches!(SymbolStore::encode(&vec![0; 60_000 * 8], 8), Err(FountainError::TooLarge { .. })));
    }
}
