//! Python bindings for BCFS, the digital fountain, Rainbow and PGM over BCFS (issue 7): Yano
//! and McCanne, *The Breadcrumb Forwarding Service and the Digital Fountain Rainbow* (UCB/CSD
//! 99-1068), §II-§III.
//!
//! Keyword arguments override the `Config` defaults of castlab-proto (`BcfConfig`,
//! `RainbowConfig`, `PgmConfig`: `config_defaults("bcf")`, `("rainbow")`, `("bcf_pgm")`), where
//! each choice the paper leaves open is documented. Times in seconds.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use castlab_core::{Addr, AgentId, NodeId};
use castlab_proto::bcfs::{BcfConfig, BcfRouter};
use castlab_proto::bcfs_pgm::{PgmConfig, PgmReceiver, PgmSource};
use castlab_proto::fountain::{FountainMode, FountainSource, SymbolStore};
use castlab_proto::rainbow::{RainbowConfig, RainbowReceiver};

use crate::config::{apply, build, cfg_err};
use crate::records;
use crate::{arr_u64, bad, counters, err, positive_u32, u32_field, Simulator};

impl Simulator {
    fn fountain(&self, a: i64) -> PyResult<(AgentId, &FountainSource)> {
        let id = self.agent_id("source", a)?;
        let s = self.inner.agent::<FountainSource>(id).ok_or_else(|| bad("source", a, "is not a fountain source"))?;
        Ok((id, s))
    }
    fn rainbow(&self, a: i64) -> PyResult<&RainbowReceiver> {
        let id = self.agent_id("agent", a)?;
        self.inner.agent::<RainbowReceiver>(id).ok_or_else(|| bad("agent", a, "is not a Rainbow receiver"))
    }
    fn pgm_source(&self, a: i64) -> PyResult<&PgmSource> {
        let id = self.agent_id("source", a)?;
        self.inner.agent::<PgmSource>(id).ok_or_else(|| bad("source", a, "is not a PGM source"))
    }
    fn bcf_router(&self, node: &str) -> PyResult<&BcfRouter> {
        let n = self.node("node", node)?;
        self.inner.extension::<BcfRouter>(n).ok_or_else(|| bad("node", node, "has no BCF router"))
    }
    fn flow_or(&self, flow: Option<i64>) -> PyResult<u32> {
        match flow {
            Some(f) => u32_field("flow", f),
            None => Ok(self.inner.agent_count() as u32 + 1),
        }
    }
}

#[pymethods]
impl Simulator {
    /// Attach a BCF router (§II-B) to each node in `nodes` (every node when None): breadcrumb
    /// state per (source, label), bounded by `max_entries` with LRU reclamation; a suppressed
    /// request whose entry is older than `refresh_interval` goes up as a marked null request;
    /// links not refreshed within `link_lifetime` age out. Every node on a BCF path (hosts
    /// included) needs one. Returns the number attached.
    /// Keyword arguments override `config_defaults("bcf")`. Every node is checked before
    /// any router is attached: a bad list attaches nothing.
    /// `config`: the keyword overrides (`config_defaults("bcf_router")`).
    #[pyo3(signature = (nodes=None, **config))]
    fn add_bcf_routers(&mut self, nodes: Option<Vec<String>>, config: Option<&Bound<'_, PyDict>>) -> PyResult<usize> {
        let cfg: BcfConfig = build(config)?;
        let ids: Vec<NodeId> = match nodes {
            None => (0..self.inner.node_count() as u32).map(NodeId).collect(),
            Some(v) => v.iter().map(|n| self.node("nodes", n)).collect::<PyResult<_>>()?,
        };
        for (i, &n) in ids.iter().enumerate() {
            if ids[..i].contains(&n) {
                return Err(bad("nodes", self.inner.node_name(n), "is listed twice"));
            }
            if self.inner.has_extension(n) {
                return Err(bad("nodes", self.inner.node_name(n), "already has a router extension"));
            }
        }
        for &n in &ids {
            self.inner.attach_extension(n, Box::new(BcfRouter::new(cfg.clone()))).map_err(err)?;
        }
        Ok(ids.len())
    }

    /// Counters of the BCF router on `node`.
    fn bcf_router_stats<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyDict>> {
        let r = self.bcf_router(node)?;
        let s = r.table.stats;
        counters(
            py,
            &[
                ("requests", s.requests),
                ("requests_forwarded", s.requests_forwarded),
                ("requests_suppressed", s.requests_suppressed),
                ("refreshes_sent", s.refreshes_sent),
                ("levels_raised", s.levels_raised),
                ("entries_created", s.entries_created),
                ("replies", s.replies),
                ("reply_copies", s.reply_copies),
                ("replies_without_state", s.replies_without_state),
                ("links_torn_down", s.links_torn_down),
                ("links_aged", s.links_aged),
                ("entries_evicted", s.entries_evicted),
                ("peak_entries", s.peak_entries),
                ("entries", r.table.len() as u64),
                ("local_deliveries", r.local_deliveries),
            ],
        )
    }

    /// Reply copies the BCF router on `node` sent down each channel, indexed by channel id.
    fn bcf_replies_per_channel<'py>(&self, py: Python<'py>, node: &str) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(arr_u64(py, &self.bcf_router(node)?.replies_per_channel))
    }

    /// A digital-fountain source on `node` (§III-A, §III-B): each BCF request is answered by a
    /// fresh symbol at the request's level. Symbolic mode when `file` is None; with `file`
    /// (bytes) the real mode: RFC 6330 RaptorQ, one source block of `symbol_size`-byte symbols.
    /// Returns the agent id.
    /// `port`, `flow`: its port and flow id (None: the next free ones); `packet_bytes`: the size of
    /// a symbolic packet; `start`: seconds at which it answers.
    #[pyo3(signature = (node, port=None, packet_bytes=512, flow=None, file=None, symbol_size=448, start=0.0))]
    #[allow(clippy::too_many_arguments)]
    fn add_fountain_source(
        &mut self,
        node: &str,
        port: Option<i64>,
        packet_bytes: i64,
        flow: Option<i64>,
        file: Option<Vec<u8>>,
        symbol_size: i64,
        start: f64,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let size = positive_u32("packet_bytes", packet_bytes)?;
        let port = self.port(port)?;
        let flow = self.flow_or(flow)?;
        let at = self.inner.check_start("start", start).map_err(err)?;
        let store = match file {
            None => None,
            Some(f) => {
                let t = u32_field("symbol_size", symbol_size)?;
                let s =
                    SymbolStore::encode(&f, t).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
                Some(s.shared())
            }
        };
        let src = FountainSource::new(flow, size, store);
        self.inner.add_agent(n, port, at, Box::new(src)).map(|a| a.0).map_err(err)
    }

    /// Counters of a fountain source; `block_symbols` is K in the real mode (None symbolic).
    fn fountain_stats<'py>(&self, py: Python<'py>, source: i64) -> PyResult<Bound<'py, PyDict>> {
        let (_, s) = self.fountain(source)?;
        let d = counters(
            py,
            &[("sent", s.sent), ("requests", s.requests), ("refreshes", s.refreshes), ("raised", s.raised)],
        )?;
        d.set_item("block_symbols", s.store().map(|st| st.borrow().block_symbols()))?;
        d.set_item("symbol_size", s.store().map(|st| st.borrow().symbol_size()))?;
        Ok(d)
    }

    /// A Rainbow receiver on `node` (§III-C) fetching from the fountain agent `source`. It is
    /// done after `needed_packets` distinct symbols (symbolic source) or once its RaptorQ
    /// decoder succeeds (real source; `needed_packets` is then ignored). Returns the agent id.
    /// Keyword arguments override `config_defaults("rainbow")`.
    /// `start` seconds; `port`, `flow`: its port and flow id (None: the next free ones); `config`:
    /// the keyword overrides.
    #[pyo3(signature = (node, source, start=0.0, needed_packets=2000, port=None, flow=None, **config))]
    #[allow(clippy::too_many_arguments)]
    fn add_rainbow_receiver(
        &mut self,
        node: &str,
        source: i64,
        start: f64,
        needed_packets: i64,
        port: Option<i64>,
        flow: Option<i64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let (sid, src) = self.fountain(source)?;
        let src_addr = self.inner.agent_addr(sid).expect("agent exists");
        let mode = match src.store() {
            Some(st) => FountainMode::Real { store: st.clone() },
            None => FountainMode::Symbolic { needed: positive_u32("needed_packets", needed_packets)? },
        };
        let cfg: RainbowConfig = build(config)?;
        let port = self.port(port)?;
        let flow = self.flow_or(flow)?;
        let at = self.inner.check_start("start", start).map_err(err)?;
        let r = RainbowReceiver::new(cfg, Addr::new(src_addr.node, src_addr.port), flow, mode);
        self.inner.add_agent(n, port, at, Box::new(r)).map(|a| a.0).map_err(err)
    }

    /// A Rainbow receiver's records: every symbol received until completion (time ns, symbol
    /// id), the window after each change, and counters (`done_s`, `start_s` in seconds).
    /// `agent`: the receiver's agent id.
    fn rainbow_records<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let r = self.rainbow(agent)?;
        let rec = &r.rec;
        let d = records::table(py, rec)?;
        for (k, v) in [
            ("received", rec.rx_symbol.len() as u64),
            ("distinct", r.sink.distinct() as u64),
            ("needed", r.sink.needed() as u64),
            ("duplicates", r.sink.duplicates),
            ("decode_attempts", r.sink.decode_attempts as u64),
            ("window", r.window() as u64),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("done", r.done())?;
        d.set_item("start_s", rec.started_at.map(|t| t.as_secs_f64()))?;
        d.set_item("done_s", rec.done_at.map(|t| t.as_secs_f64()))?;
        d.set_item("srtt_s", r.srtt().map(|t| t.as_secs_f64()))?;
        d.set_item("matches_source", r.sink.matches_source())?;
        Ok(d)
    }

    /// The file a real-mode Rainbow receiver decoded (None before it is done, or symbolic).
    /// `agent`: the receiver's agent id.
    fn rainbow_decoded<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Option<Bound<'py, PyBytes>>> {
        Ok(self.rainbow(agent)?.sink.decoded().map(|b| PyBytes::new(py, b)))
    }

    /// A PGM-like source over BCFS (§II-B.3): `count` original packets multicast to `group` at
    /// `rate_bps`; NAKs (BCF requests) answered with repairs (BCF replies). Returns the agent id.
    /// Keyword arguments override `config_defaults("bcf_pgm")`.
    /// `node`: where the source runs; `start` seconds; `port`, `flow`: its port and flow id (None:
    /// the next free ones); `config`: the keyword overrides.
    #[pyo3(signature = (node, group, count, rate_bps, start=0.0, port=None, flow=None, **config))]
    #[allow(clippy::too_many_arguments)]
    fn add_bcf_pgm_source(
        &mut self,
        node: &str,
        group: i64,
        count: i64,
        rate_bps: f64,
        start: f64,
        port: Option<i64>,
        flow: Option<i64>,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let g = self.group("group", group)?;
        if self.inner.group_source(g) != Some(n) {
            return Err(bad("group", group, "is not rooted at node"));
        }
        if !(rate_bps.is_finite() && rate_bps > 0.0) {
            return Err(bad("rate_bps", rate_bps, "must be a finite rate > 0"));
        }
        let base = PgmConfig { count: positive_u32("count", count)?, ..PgmConfig::default() };
        let cfg = apply(base, config)?;
        castlab_core::config::check::packet_rate("rate_bps", rate_bps, cfg.packet_bytes).map_err(cfg_err)?;
        let port = self.port(port)?;
        let flow = self.flow_or(flow)?;
        let at = self.inner.check_start("start", start).map_err(err)?;
        self.inner.add_agent(n, port, at, Box::new(PgmSource::new(cfg, g, rate_bps, flow))).map(|a| a.0).map_err(err)
    }

    /// A PGM-like receiver over BCFS on `node`: joins `group`, NAKs gaps of the PGM agent
    /// `source`'s stream. Returns the agent id.
    /// Keyword arguments override the source's `PgmConfig` (e.g. `nak_timeout`, `idle_timeout`).
    /// `start`: seconds at which it joins; `config`: the keyword overrides.
    #[pyo3(signature = (node, source, start=0.0, **config))]
    fn add_bcf_pgm_receiver(
        &mut self,
        node: &str,
        source: i64,
        start: f64,
        config: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u32> {
        let n = self.node("node", node)?;
        let sid = self.agent_id("source", source)?;
        let src = self.pgm_source(source)?;
        let cfg = apply(src.cfg.clone(), config)?;
        let group = src.group();
        let addr = self.inner.agent_addr(sid).expect("agent exists");
        let flow = src.host.flow;
        let at = self.inner.check_start("start", start).map_err(err)?;
        let r = PgmReceiver::new(cfg, addr, group, flow);
        self.inner.add_agent(n, None, at, Box::new(r)).map(|a| a.0).map_err(err)
    }

    /// Counters of a PGM source or receiver.
    /// `agent`: the source's or receiver's agent id.
    fn bcf_pgm_stats<'py>(&self, py: Python<'py>, agent: i64) -> PyResult<Bound<'py, PyDict>> {
        let id = self.agent_id("agent", agent)?;
        if let Some(s) = self.inner.agent::<PgmSource>(id) {
            return counters(
                py,
                &[("data_sent", s.data_sent), ("naks_seen", s.naks_seen), ("repairs_sent", s.repairs_sent)],
            );
        }
        let r = self.inner.agent::<PgmReceiver>(id).ok_or_else(|| bad("agent", agent, "is not a PGM agent"))?;
        let d = counters(
            py,
            &[
                ("data_received", r.rec.data_received),
                ("naks_sent", r.rec.naks_sent),
                ("repairs_received", r.rec.repairs_received),
                ("repairs_unrequested", r.rec.repairs_unrequested),
                ("duplicates", r.rec.duplicates),
            ],
        )?;
        d.set_item("complete", r.complete())?;
        d.set_item("done_s", r.rec.done_at.map(|t| t.as_secs_f64()))?;
        Ok(d)
    }
}
