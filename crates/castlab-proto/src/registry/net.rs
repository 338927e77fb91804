//! What `castlab net` knows of a protocol: its roles on the real network ([`NetRole`]), their
//! groups, flags, status line and the files they write.

use super::Default_;

/// How a `castlab net` role lays out its groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetGroups {
    /// Groups 0..layers-1 (`--layers`), and with `control` an any-source group `layers`.
    Layers { control: bool },
    /// Group 0.
    One,
    /// `layers` of the config table (the role's `--config layers=N` or its default).
    ConfigLayers(&'static str),
}

/// A flag of a `castlab net` role beyond the session's.
#[derive(Clone, Copy, Debug)]
pub struct NetFlag {
    pub name: &'static str,
    /// The integer default, or the choices (the first is the default).
    pub kind: FlagKind,
    pub help: &'static str,
    /// The value goes into the config overrides (else it is the role's argument).
    pub config: bool,
}

impl NetFlag {
    /// `--flow`: the session's data flow id (1 by default).
    pub const FLOW: NetFlag =
        NetFlag { name: "flow", kind: FlagKind::Int(1), help: "the session's data flow id", config: false };
    /// `--wire pgm`: RFC 3208 PGM on the wire (castlab-net's `pgm_wire`), so that third-party
    /// PGM receivers and sources take part; `castlab` keeps castlab's envelope. The driver
    /// reads it, not the agent (the role's configuration gets the PGM wire's settings: see
    /// `castlab.net`).
    pub const WIRE: NetFlag = NetFlag {
        name: "wire",
        kind: FlagKind::Choice(&["castlab", "pgm"]),
        help: "the wire format: castlab's envelope, or PGM (RFC 3208 over UDP) for third-party PGM peers",
        config: false,
    };
}

#[derive(Clone, Copy, Debug)]
pub enum FlagKind {
    Int(i64),
    Choice(&'static [&'static str]),
    /// A comma-separated list of numbers (`--rates_bps 100e3,200e3`), this by default.
    Floats(&'static [f64]),
}

/// What a `castlab net` role writes into `--out` after its run.
#[derive(Clone, Copy, Debug)]
pub enum NetOutput {
    /// The driver's level timeline, as `levels`.
    Levels,
    /// The driver's rate timeline, as `rates`.
    Rates,
    /// A reader's answer as JSON in `file`.
    Json { reader: &'static str, file: &'static str },
    /// A reader's records split into tables `<name>_<table>` (by column prefix, or as listed)
    /// and its scalars in `<name>_counts.json`.
    Prefixed { reader: &'static str, name: &'static str, tables: &'static [(&'static str, &'static [&'static str])] },
    /// Columns of a reader's answer as the table `file` (`time_ns` first, named by the part
    /// after the first `_`... as written here), the rest as JSON in `rest`.
    Columns {
        reader: &'static str,
        file: &'static str,
        columns: &'static [(&'static str, &'static str)],
        rest: &'static str,
    },
}

/// A role of `castlab net`: one process hosting one registered role on the real network.
pub struct NetRole {
    /// The command (`castlab net <cli>`).
    pub cli: &'static str,
    pub help: &'static str,
    pub role: &'static str,
    /// It runs on the source host (node 0).
    pub source: bool,
    pub groups: NetGroups,
    pub flags: &'static [NetFlag],
    /// Config overrides the role applies unless the command line sets them.
    pub defaults: &'static [(&'static str, Default_)],
    /// A reader giving the status line, with `{rx}`, `{sent}` (bit/s measured by the driver)
    /// and `{rejected}` left for the driver to fill.
    pub status: &'static str,
    pub outputs: &'static [NetOutput],
}

/// A loss rate as a percentage with two decimals, as the status lines print it ("nan%" when
/// nothing arrived or was lost: no rate, not a rate of 0).
pub fn percent(lost: u64, received: u64) -> String {
    if lost + received == 0 {
        return "nan%".into();
    }
    format!("{:.2}%", 100.0 * lost as f64 / (lost + received) as f64)
}
