//! Unit tests of the search: which findings a root gets, and where. Each analyses crates in memory
//! through the core pipeline ([`crate::test_support`]) and compares its rendering exactly or with
//! an inline insta snapshot.

mod chains;
mod findings;
mod limits;
