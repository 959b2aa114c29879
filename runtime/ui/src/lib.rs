//! Nothing: the crate holds the attributes' compile-time tests (`tests/ui.rs`).
