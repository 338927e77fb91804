//! The measuring sink as a registry role (simulator only): `add_sink` is made from it, as
//! every protocol's roles are. It takes no config table. In a scenario it is the `sink`
//! receiver of a `layered` session, at a fixed `level` or following a `schedule`.

use castlab_core::config::Value;

use castlab_core::records::Column;

use super::{LayeredSink, Record, SinkRecords};
use crate::registry::{
    agent_as, Args, BuildError, BuildResult, Default_, Host, Hosts, Key, KeyKind, Out, Protocol, Reader, ReceiverKind,
    Role, ScenarioKey, Target,
};
use crate::{flow_row, param};

fn record_mode(a: &Args<'_>) -> BuildResult<Record> {
    match a.str("record")? {
        "summary" => Ok(Record::Summary),
        "arrivals" => Ok(Record::Arrivals),
        r => Err(BuildError::bad("record", r, "must be \"summary\" or \"arrivals\"")),
    }
}

/// Windows in seconds as positive nanoseconds, without duplicates (order kept).
fn windows_ns(a: &Args<'_>) -> BuildResult<Vec<u64>> {
    use castlab_core::{ConfigValue, Duration};
    let windows = a.f64s("windows")?;
    let mut out: Vec<u64> = Vec::with_capacity(windows.len());
    for w in windows {
        let d = Duration::from_value("windows", &Value::Float(w))?;
        if d.is_zero() {
            return Err(BuildError::bad("windows", w, "every window must be positive"));
        }
        if !out.contains(&d.as_nanos()) {
            out.push(d.as_nanos());
        }
    }
    Ok(out)
}

/// One `(time_s, level)` entry of the schedule.
fn schedule_entry(v: &Value) -> BuildResult<(f64, i64)> {
    match v {
        Value::List(p) => match p.as_slice() {
            [Value::Float(t), Value::Int(l)] => Ok((*t, *l)),
            [Value::Int(t), Value::Int(l)] => Ok((*t as f64, *l)),
            _ => Err(BuildError::bad("schedule", v, "must be (time_s, level) pairs")),
        },
        _ => Err(BuildError::bad("schedule", v, "must be (time_s, level) pairs")),
    }
}

fn add_sink(host: &mut dyn Host, a: &Args<'_>) -> BuildResult<Out<'static>> {
    let record = record_mode(a)?;
    let windows_ns = windows_ns(a)?;
    let n = a.node(host, "node")?;
    let gs = a.list("groups")?.iter().map(|g| host.group("groups", g)).collect::<BuildResult<Vec<_>>>()?;
    let schedule = a.list("schedule")?.iter().map(schedule_entry).collect::<BuildResult<Vec<_>>>()?;
    let s = a.start(host, "start")?;
    let mut sched = Vec::with_capacity(schedule.len());
    for (t, lvl) in schedule {
        // checked as a start (the simulator refuses the past); the real network starts
        // its agents now, and a change in its past is made at once
        let at = host.time("schedule", t)?.max(host.start("schedule", t)?);
        if lvl < 0 || lvl as usize > gs.len() {
            return Err(BuildError::bad("schedule", lvl, "levels must be between 0 and the number of groups"));
        }
        sched.push((at, lvl as u32));
    }
    let port = a.port("port")?;
    let sink = LayeredSink::new(gs, sched).with_record(record).with_windows(&windows_ns);
    Ok(host.add_agent(n, port, s, Box::new(sink))?.0.into())
}

fn sink_of<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h LayeredSink> {
    agent_as::<LayeredSink>(host, "agent", v, "is not a sink").map(|x| x.1)
}

/// The sink's per-arrival rows, if it keeps them.
fn recorded<'h>(host: &'h dyn Host, v: &Value) -> BuildResult<&'h SinkRecords> {
    let k = sink_of(host, v)?;
    match k.record() {
        Record::Arrivals => Ok(&k.records),
        Record::Summary => Err(BuildError::bad(
            "record",
            "summary",
            "the sink keeps no per-arrival rows: create it with record=\"arrivals\"",
        )),
    }
}

fn sink_summary<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let k = sink_of(host, v)?;
    let s = &k.summary;
    let mut d = Out::dict();
    d.set("received", s.received);
    d.set("lost", s.lost);
    d.set("bytes", s.bytes);
    d.set("layer_received", s.layer_received.clone());
    d.set("layer_lost", s.layer_lost.clone());
    d.set("first_arrival_ns", s.first_arrival_ns);
    d.set("last_arrival_ns", s.last_arrival_ns);
    d.set(
        "record",
        match k.record() {
            Record::Summary => "summary",
            Record::Arrivals => "arrivals",
        },
    );
    let ww = k
        .windows_ns()
        .into_iter()
        .map(|w| (Key::F64(w as f64 / 1e9), Out::F64(k.worst_window_loss(w).unwrap_or(f64::NAN))))
        .collect();
    d.set("worst_window_loss", Out::Dict(ww));
    Ok(d)
}

fn sink_arrivals<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = recorded(host, v)?;
    let mut d = Out::dict();
    d.set("time_ns", Column::U64(&r.arr_time_ns));
    d.set("flow", Column::U32(&r.arr_flow));
    d.set("layer", Column::U8(&r.arr_layer));
    d.set("seq", Column::U64(&r.arr_seq));
    d.set("size", Column::U32(&r.arr_size));
    Ok(d)
}

fn sink_losses<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    let r = recorded(host, v)?;
    let mut d = Out::dict();
    d.set("time_ns", Column::U64(&r.loss_time_ns));
    d.set("flow", Column::U32(&r.loss_flow));
    d.set("layer", Column::U8(&r.loss_layer));
    d.set("count", Column::U32(&r.loss_count));
    Ok(d)
}

fn sink_worst_window_loss<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let w = a.positive_duration("window")?;
    let k = sink_of(host, v)?;
    if let Some(x) = k.worst_window_loss(w.as_nanos()) {
        return Ok(Out::F64(x));
    }
    if k.record() == Record::Summary {
        return Err(BuildError::bad(
            "window",
            a.f64("window")?,
            "is not one of the sink's windows, and the sink does not record arrivals",
        ));
    }
    let r = &k.records;
    let counts: Vec<u64> = r.loss_count.iter().map(|&c| u64::from(c)).collect();
    let (t, rec, lost) = castlab_core::metrics::arrival_process(&r.arr_time_ns, &r.loss_time_ns, &counts);
    Ok(Out::F64(castlab_core::metrics::worst_window_loss(&t, &rec, &lost, w.as_nanos())))
}

fn sink_level<'h>(host: &'h dyn Host, v: &Value, _: &Args<'_>) -> BuildResult<Out<'h>> {
    Ok(sink_of(host, v)?.level().into())
}

/// The scenario flow table's row of a sink: its counters, the online worst-case loss of
/// each window (NaN for a window it was not given), and the level its schedule ends at.
fn sink_flow_row<'h>(host: &'h dyn Host, v: &Value, a: &Args<'_>) -> BuildResult<Out<'h>> {
    let (_, k) = agent_as::<LayeredSink>(host, "agent", v, "is not a sink (add_sink returns one)")?;
    let mut worst = Vec::new();
    for w in a.f64s("windows")? {
        use castlab_core::{ConfigValue, Duration};
        let ns = Duration::from_value("windows", &Value::Float(w))?.as_nanos();
        worst.push(k.worst_window_loss(ns).unwrap_or(f64::NAN));
    }
    let s = &k.summary;
    let mut d = Out::dict();
    d.set("received", s.received);
    d.set("lost", s.lost);
    d.set("bytes", s.bytes);
    d.set("worst", worst);
    d.set("planned_level", k.planned_level());
    Ok(d)
}

pub static PROTOCOL: Protocol = Protocol {
    name: "sink",
    paper: "a measuring receiver: counters, worst windowed loss, arrivals",
    roles: &[Role {
        name: "add_sink",
        doc: "A measuring sink on `node`: unicast on `port`, and/or subscribed by level to `groups`\n\
(layer m on groups[m]) following `schedule`, a list of (time_s, level). `record`:\n\
\"summary\" (counters and the online worst-case loss for `windows`, in seconds) or\n\
\"arrivals\" (also every arrival and gap).\n\
`start`: seconds at which the sink starts (the schedule's times are absolute).",
        params: &[
            param!(node),
            param!(groups = []),
            param!(schedule = []),
            param!(port = None),
            param!(start = Float(0.0)),
            param!(record = Str("summary")),
            param!(windows = []),
        ],
        config: None,
        hosts: Hosts::SimAndNet,
        build: add_sink,
    }],
    readers: &[
        Reader::of_agent(
            "sink_summary",
            "A sink's counters, the same whatever it records: received, lost, bytes, per-layer\n\
`layer_received` / `layer_lost` (index = layer; numpy arrays, made when they are read, so that\n\
a run that reads only counters never imports numpy), `first_arrival_ns` / `last_arrival_ns`\n\
(None before any), `record`, and `worst_window_loss`, a dict from each configured window\n\
(seconds) to the online worst-case loss.\n\
`agent`: the sink's agent id.",
            Hosts::SimAndNet,
            sink_summary,
        ),
        Reader::of_agent(
            "sink_arrivals",
            "A sink's arrivals: time_ns, flow, layer, seq, size (numpy arrays; on the real network in\n\
driver time). `agent`: the sink's agent id (added with `record=\"arrivals\"`).",
            Hosts::SimAndNet,
            sink_arrivals,
        ),
        Reader::of_agent(
            "sink_losses",
            "A sink's detected losses: time_ns, flow, layer, count (numpy arrays; on the real network in\n\
driver time). `agent`: the sink's agent id (added with `record=\"arrivals\"`).",
            Hosts::SimAndNet,
            sink_losses,
        ),
        Reader {
            name: "sink_worst_window_loss",
            doc: "Worst-case loss rate of a sink over windows of `window` seconds (McCanne et al. §4.2): the\n\
online value for a configured window, else computed from the recorded arrivals.\n\
`agent`: the sink's agent id.",
            target: Target::Agent("agent"),
            params: &[param!(window)],
            hosts: Hosts::SimAndNet,
            read: sink_worst_window_loss,
        },
        Reader::of_agent(
            "sink_level",
            "A sink's current level. `agent`: the sink's agent id.",
            Hosts::SimAndNet,
            sink_level,
        ),
        flow_row!("sink_flow_row", "a sink", sink_flow_row, packet_size = None),
    ],
    receivers: &[ReceiverKind {
        protocol: "sink",
        sessions: &["layered"],
        keys: &[
            ScenarioKey { name: "level", kind: KeyKind::Level, default: Default_::None },
            ScenarioKey { name: "schedule", kind: KeyKind::Schedule, default: Default_::None },
        ],
        role: "add_sink",
        row: "sink_flow_row",
        windows_in_config: false,
        inherits_session_config: false,
    }],
    ..Protocol::EMPTY
};
