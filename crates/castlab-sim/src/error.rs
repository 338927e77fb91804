//! Scenario and run errors. Every variant names the offending field, so the Python layer can
//! turn it into a `ValueError` that tells the user what to fix.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    #[error("{field}: no node named {name:?}")]
    MissingNode { field: &'static str, name: String },
    #[error("{field}: no node with id {id}")]
    MissingNodeId { field: &'static str, id: u32 },
    #[error("{field}: a node named {name:?} already exists")]
    DuplicateNode { field: &'static str, name: String },
    #[error("{field}: {reason} (got {value})")]
    InvalidValue { field: &'static str, value: String, reason: &'static str },
    #[error("{field}: unknown group {id}")]
    UnknownGroup { field: &'static str, id: u32 },
    #[error("{field}: no channel with id {id}")]
    UnknownChannel { field: &'static str, id: u32 },
    #[error("{field}: no agent with id {id}")]
    UnknownAgent { field: &'static str, id: u32 },
    #[error("{field}: {value} s is in the past (the simulation is at {now} s)")]
    InPast { field: &'static str, value: f64, now: f64 },
    #[error("{field}: port {port} on node {node} is already bound")]
    PortInUse { field: &'static str, node: String, port: u16 },
    #[error("{field}: node {node} already has a router extension")]
    ExtensionPresent { field: &'static str, node: String },
    #[error("{field}: the topology cannot change once the run has started")]
    Frozen { field: &'static str },
}

impl SimError {
    /// The field the error is about.
    pub fn field(&self) -> &'static str {
        match self {
            SimError::MissingNode { field, .. }
            | SimError::MissingNodeId { field, .. }
            | SimError::DuplicateNode { field, .. }
            | SimError::InvalidValue { field, .. }
            | SimError::UnknownGroup { field, .. }
            | SimError::UnknownChannel { field, .. }
            | SimError::UnknownAgent { field, .. }
            | SimError::InPast { field, .. }
            | SimError::PortInUse { field, .. }
            | SimError::ExtensionPresent { field, .. }
            | SimError::Frozen { field } => field,
        }
    }

    pub(crate) fn invalid(field: &'static str, value: impl ToString, reason: &'static str) -> Self {
        SimError::InvalidValue { field, value: value.to_string(), reason }
    }
}

pub type Result<T> = std::result::Result<T, SimError>;
