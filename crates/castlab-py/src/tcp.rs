//! Python bindings for the TCP agents (issue 3).
