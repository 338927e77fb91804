//! RLM receivers (issue 4). Work in progress.
