//! Unit tests of the configuration: located errors, suggestions, bounded work. Each analyses
//! crates in memory through the core pipeline ([`crate::test_support`]) and compares its rendering
//! exactly or with an inline insta snapshot.

mod config;
mod limits;
mod suggestions;
