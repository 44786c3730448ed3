//! Helpers shared by the codec's integration tests.

#![allow(dead_code)]

#[allow(unused_imports)]
pub use doca_testkit::Rng;
