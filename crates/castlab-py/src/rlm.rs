//! Python bindings for the RLM receiver (issue 4).
