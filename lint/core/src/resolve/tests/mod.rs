//! Unit tests of resolution: names, types, macros, derives, models, library flags, configured
//! roots, what a crate can reach. Each analyses crates in memory through the core pipeline
//! ([`crate::test_support`]) and compares its rendering exactly or with an inline insta snapshot.

mod annotations;
mod assoc;
mod derives;
mod external;
mod flags;
mod limits;
mod macros;
mod models;
mod reach;
mod resolution;
mod roots;
mod std_paths;
mod types;
mod versions;
