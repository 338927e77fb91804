//! TCP's registry role: `add_tcp_flow`, one call that adds a sink and its sender, every
//! variant of [`CcAlgorithm::ALL`] chosen by name. The sender's readers (`tcp_trace`,
//! `tcp_stats`) are bound in castlab-py.
//!
//! The sink is added first and the sender right after it, so a sender with agent id `a` has
//! its sink at `a - 1` (the readers check it). Everything is validated before either agent is
//! added: an error naming the field leaves the host untouched.

use castlab_core::config::Value;

use super::{CcAlgorithm, TcpSender, TcpSink, Transfer};
use crate::param;
use crate::registry::{Args, BuildError, BuildResult, Host, Hosts, Out, Raw, Role};

fn add_tcp_flow(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let ns = a.node(host, "src")?;
    let nd = a.node(host, "dst")?;
    if ns == nd {
        // a flow to its own node never leaves it
        return Err(BuildError::bad("dst", Raw(a.get("dst")), "must be another node than src"));
    }
    let variant = a.str("variant")?;
    let Some(algo) = CcAlgorithm::from_name(variant) else {
        let names: Vec<String> = CcAlgorithm::ALL.iter().map(|(n, _)| format!("{n:?}")).collect();
        return Err(BuildError::bad(
            "variant",
            format!("{variant:?}"),
            &format!("must be one of {}", names.join(", ")),
        ));
    };
    let s = a.start(host, "start")?;
    let e = a.stop(host, "stop", s)?;
    let transfer = match a.get("transfer_bytes") {
        Value::None => Transfer::Bulk,
        _ => {
            let n = a.u64("transfer_bytes")?;
            if n == 0 {
                return Err(BuildError::bad("transfer_bytes", n, "must be positive (None for a bulk transfer)"));
            }
            Transfer::Bytes(n)
        }
    };
    let mut cfg = a.config_over(algo.default_config())?;
    cfg.transfer = transfer;
    // RFC 2018 SACK is negotiated by both ends: the variant turns it on at sender and sink
    cfg.sack = algo.uses_sack();
    cfg.start = s;
    cfg.stop = e;
    let port = a.port("port")?;
    // The sink is added first, so the sender's id is the next one after it.
    let sender_id = host.agent_count() as u64 + 1;
    let flow = match a.get("flow") {
        Value::None => u32::try_from(sender_id).map_err(|_| BuildError::bad("flow", sender_id, "too many agents"))?,
        _ => a.u32("flow")?,
    };
    // The sink listens from now on (the sender may start later); a port already in use is the
    // only failure left, and it happens before anything is added.
    let now = host.now();
    let sink = host.add_agent(nd, port, now, Box::new(TcpSink::new(cfg.clone())))?;
    let addr = host.agent_addr(sink).ok_or_else(|| BuildError::Host("the TCP sink has no address".into()))?;
    let tx = TcpSender::new(addr, flow, cfg.clone(), algo.build(&cfg));
    // the controller is a `dyn CongestionControl` (not `Send`): a simulator agent
    let id = host.add_local_agent(ns, None, s, Box::new(tx))?;
    debug_assert_eq!(id.0, sink.0 + 1);
    Ok(id.0.into())
}

pub(super) static ROLES: &[Role] = &[Role {
    name: "add_tcp_flow",
    doc: "A one-way TCP transfer from node `src` to node `dst` (ns-2 `Agent/TCP` + `TCPSink`\n\
style): adds the sink on `dst` (bound to `port`, or the next free port) and the sender on\n\
`src`; returns the sender's agent id. Sizes in bytes, times in seconds.\n\
Keyword arguments override fields of the TCP configuration (`config_defaults(\"tcp\")`).\n\
`variant` (one of `TCP_VARIANTS`): \"newreno\", \"reno\" or \"sack\" (RFC 2018 SACK at both\n\
ends with RFC 6675 loss recovery, as ns-2's Agent/TCP/Sack1 with TCPSink/Sack1), from\n\
`config_defaults(\"tcp\")`; \"cubic\" (RFC 9438 with Linux's HyStart) or \"bbr\" (BBR v1 as\n\
Linux's tcp_bbr.c, paced), from Linux's settings (MSS 1448, 52 header bytes, initial\n\
window 10, receive window 3 MiB, RTO 200 ms..120 s, delayed ACKs after 40 ms, SACK);\n\
from `start` to `stop` seconds (None: the end of the run);\n\
`transfer_bytes`: the transfer's size (None: unbounded); `flow`: the flow id (None: the next\n\
free one); `config`: the keyword overrides, fields of `config_defaults(\"tcp\")` (`timestamps`:\n\
RTT samples from the timestamp echo, retransmissions included, RFC 7323 §4.1; False for strict\n\
Karn's rule, as ns-2's; `limited_transmit`: RFC 3042, on by default as in ns-2, False for 1990s\n\
Reno).",
    params: &[
        param!(src),
        param!(dst),
        param!(variant = Str("newreno")),
        param!(start = Float(0.0)),
        param!(stop = None),
        param!(transfer_bytes = None),
        param!(port = None),
        param!(flow = None),
    ],
    config: Some("tcp"),
    hosts: Hosts::Sim,
    build: add_tcp_flow,
}];
