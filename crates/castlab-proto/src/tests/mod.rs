//! Tests across the protocols: invariants every agent keeps (packets conserved, time
//! monotone) and property tests of their inputs.

mod invariants;
mod properties;
