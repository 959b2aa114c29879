//! Unit tests of the call graph: dispatch, constant arguments, std types, formatting, drops,
//! locals, demand-driven walking. Each analyses crates in memory through the core pipeline
//! ([`crate::test_support`]) and compares its rendering exactly or with an inline insta snapshot.

mod demand;
mod dispatch;
mod drops;
mod formatting;
mod limits;
mod std_types;
mod unread;
mod values;
