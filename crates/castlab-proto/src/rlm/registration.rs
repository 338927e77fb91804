//! RLM in the protocol registry ([`crate::registry`]): its config, its receiver, its
//! records and status, and the scenario's `rlm` receivers on a layered session.

use castlab_core::metrics;
use castlab_core::Value;

use super::{Cause, Outcome, Record, RlmConfig, RlmReceiver, RlmState};
use crate::param;
use crate::registry::{
    agent_as, percent, Args, BuildError, BuildResult, ConfigTable, Default_, Host, Hosts, KeyKind, NetGroups,
    NetOutput, NetRole, Out, Protocol, Reader, ReceiverKind, Role, ScenarioKey, Target,
};

fn state_name(s: RlmState) -> &'static str {
    match s {
        RlmState::Steady => "S",
        RlmState::Hysteresis => "H",
        RlmState::Measurement => "M",
        RlmState::Drop => "D",
    }
}

fn receiver<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h RlmReceiver> {
    agent_as::<RlmReceiver>(host, "agent", v, "is not an RLM receiver").map(|x| x.1)
}

fn add_receiver(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let n = a.node(host, "node")?;
    let gs = a.layer_groups(host, "data_groups")?;
    let ctl = a.group(host, "control_group")?;
    let s = a.start(host, "start")?;
    let rx = RlmReceiver::try_new(a.config::<RlmConfig>()?, gs, ctl)?;
    Ok(host.add_agent(n, None, s, Box::new(rx))?.0.into())
}

fn records<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let mut d = Out::table(&r.records);
    // the codes' names, indexed by code: names["trans_cause"][code] and so on
    let mut names = Out::dict();
    names.set("trans_from", Out::names(RlmState::NAMES));
    names.set("trans_to", Out::names(RlmState::NAMES));
    names.set("trans_cause", Out::names(Cause::NAMES));
    names.set("exp_outcome", Out::names(Outcome::NAMES));
    d.set("names", names);
    Ok(d)
}

fn status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let (td, sd) = r.detection_estimate();
    let mut d = Out::dict();
    d.set("level", r.level());
    d.set("layers", r.layers());
    d.set("state", state_name(r.state()));
    d.set("receivers_estimate", r.receivers_estimate());
    d.set("detection_mean", td.as_secs_f64());
    d.set("detection_dev", sd.as_secs_f64());
    d.set("detection_window", r.detection_window().as_secs_f64());
    d.set("t_max_effective", r.t_max_effective().as_secs_f64());
    d.set("loss_rate", r.loss_rate());
    let means: Vec<f64> = (1..=r.layers()).map(|k| r.join_timer_mean(k).as_secs_f64()).collect();
    d.set("join_timer_means", means);
    Ok(d)
}

fn config<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(Out::config(receiver(host, v)?.config()))
}

/// The `castlab net` status line.
fn net_status<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    let (got, lost) = (r.records.received, r.records.lost());
    Ok(Out::Str(format!(
        "level={} state={} rate={{rx}} received={got} lost={lost} loss={} rejected={{rejected}}",
        r.level(),
        state_name(r.state()),
        percent(lost, got)
    )))
}

/// The online value for a configured window, else computed from the recorded arrivals.
fn worst(r: &RlmReceiver, w: castlab_core::Duration, raw: f64) -> BuildResult<f64> {
    if let Some(x) = r.worst_window_loss(w.as_nanos()) {
        return Ok(x);
    }
    if r.config().record != Record::Arrivals {
        return Err(BuildError::bad(
            "window",
            raw,
            "is not one of the receiver's `windows` and it keeps no arrivals: create it with windows=[...] or record=\"arrivals\"",
        ));
    }
    let rec = &r.records;
    let (t, received, lost) = metrics::arrival_process(&rec.arr_time_ns, &rec.loss_time_ns, &rec.loss_count);
    Ok(metrics::worst_window_loss(&t, &received, &lost, w.as_nanos()))
}

fn worst_window_loss<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = receiver(host, v)?;
    Ok(worst(r, a.positive_duration("window")?, a.f64("window")?)?.into())
}

/// The scenario's flow-table row: received, lost, bytes (`packet_size` each), the final
/// level (None before the start) and the worst-window loss per window of `windows`.
fn row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    use castlab_core::ConfigValue;
    let r = receiver(host, v)?;
    let rec = &r.records;
    let mut d = Out::dict();
    d.set("received", rec.received);
    d.set("lost", rec.lost());
    d.set("bytes", rec.received * a.int("packet_size")? as u64);
    d.set("level", rec.level.last().copied());
    let mut ws = Vec::new();
    for w in a.f64s("windows")? {
        let dur = castlab_core::Duration::from_value("windows", &Value::Float(w))?;
        ws.push(Out::from(worst(r, dur, w)?));
    }
    d.set("worst", Out::List(ws));
    Ok(d)
}

const RECEIVER_DOC: &str = "An RLM receiver on `node` (§3): layer m on `data_groups[m]`, join announcements and \
session messages on `control_group`, starting at `start` seconds. Keyword arguments override fields of the \
protocol's configuration (`config_defaults(\"rlm\")`: the paper's §4 values). Returns the agent id. \
`config`: the keyword overrides.";

pub static PROTOCOL: Protocol = Protocol {
    name: "rlm",
    paper: "McCanne, Jacobson and Vetterli, Receiver-driven Layered Multicast (SIGCOMM 1996)",
    configs: &[ConfigTable::of::<RlmConfig>("rlm")],
    roles: &[Role {
        name: "add_rlm_receiver",
        doc: RECEIVER_DOC,
        params: &[param!(node), param!(data_groups), param!(control_group), param!(start = Float(0.0))],
        config: Some("rlm"),
        hosts: Hosts::SimAndNet,
        build: add_receiver,
    }],
    readers: &[
        Reader::of_agent(
            "rlm_records",
            "A receiver's records as numpy arrays (times in ns): level changes (`level_time_ns`, \
`level`), own join-experiments (`exp_*`; outcome 0 running, 1 success, 2 failed; `exp_end_ns` is 2^64-1 while \
running), state transitions (`trans_*`; states 0 S, 1 H, 2 M, 3 D; causes 0 loss, 1 loss rate, 2 detection \
timer), losses (`loss_*`, one row per sequence gap), data arrivals (`arr_time_ns`, `arr_layer`), suppressed join-timers \
(`supp_*`), shared-learning backoffs (`shared_*`), heard announcements (`heard_*`), the counts `received`, \
`lost`, `control_sent`, `ignored`, and `names`: each code's names, indexed by code. \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            records,
        ),
        Reader::of_agent(
            "rlm_status",
            "A receiver's current protocol state: `level`, `state` (\"S\", \"H\", \"M\" or \"D\"), \
`receivers_estimate`, `detection_mean` and `detection_dev` (s), `detection_window` (s), `t_max_effective` (s), \
`loss_rate`, `join_timer_means` (s, index k-1 for level k). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            status,
        ),
        Reader::of_agent(
            "rlm_config",
            "The configuration a receiver runs with (durations in seconds). \
`agent`: the receiver's agent id.",
            Hosts::Sim,
            config,
        ),
        Reader {
            name: "rlm_worst_window_loss",
            doc: "Worst-case loss rate of an RLM receiver over sliding windows of `window` seconds \
(§4.1/§4.3): the maximum over all window positions of lost / (lost + received). For a window in the \
receiver's `windows` it is the value computed online while it ran; else it is computed by \
`castlab_core::metrics` from the recorded arrivals, which needs `record=\"arrivals\"`. Both give the same \
number to the last bit. \
`agent`: the receiver's agent id.",
            target: Target::Agent("agent"),
            params: &[param!(window)],
            hosts: Hosts::Sim,
            read: worst_window_loss,
        },
        Reader::of_agent(
            "rlm_net_status",
            "The status line of `castlab net rlm-receiver` ({rx} and {rejected} for the driver). \
`agent`: the receiver's agent id.",
            Hosts::SimAndNet,
            net_status,
        ),
        Reader {
            name: "rlm_flow_row",
            doc: "The scenario flow table's row of an RLM receiver: received, lost, bytes, level, worst \
(one per window of `windows`, seconds); `packet_size` is the source's. \
`agent`: the receiver's agent id.",
            target: Target::Agent("agent"),
            params: &[param!(packet_size), param!(windows)],
            hosts: Hosts::Sim,
            read: row,
        },
    ],
    receivers: &[ReceiverKind {
        protocol: "rlm",
        sessions: &["layered"],
        keys: &[ScenarioKey { name: "config", kind: KeyKind::Config, default: Default_::None }],
        role: "add_rlm_receiver",
        row: "rlm_flow_row",
        windows_in_config: true,
        inherits_session_config: false,
    }],
    net_roles: &[NetRole {
        cli: "rlm-receiver",
        help: "RLM receiver (McCanne et al. §3)",
        role: "add_rlm_receiver",
        source: false,
        groups: NetGroups::Layers { control: true },
        flags: &[],
        // the testbed's analysis reads every arrival: record them unless told
        defaults: &[("record", Default_::Str("arrivals"))],
        status: "rlm_net_status",
        outputs: &[
            NetOutput::Levels,
            NetOutput::Prefixed { reader: "rlm_records", name: "rlm", tables: &[] },
            NetOutput::Json { reader: "rlm_status", file: "rlm_status.json" },
        ],
    }],
    ..Protocol::EMPTY
};
