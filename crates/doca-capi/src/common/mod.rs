//! The base every C face stands on: the boundary (types, error translation, the panic
//! boundary, argument checks), handle kinds, logging, argument parsing, and the
//! generators that make C functions from the libraries' task tables. Nothing here
//! imports a face.

pub mod argp;
mod boundary;
pub mod handles;
pub mod log;
pub mod tasks;

pub use boundary::*;
