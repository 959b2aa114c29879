//! Unit tests of parsing: module files, `#[cfg]`, lazy bodies, items in inner blocks, broken
//! files. Each analyses crates in memory through the core pipeline ([`crate::test_support`]) and
//! compares its rendering exactly or with an inline insta snapshot.

mod cfg;
mod lazy;
mod limits;
mod modules;
mod scopes;
