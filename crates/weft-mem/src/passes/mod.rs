//! Passes over the memory IR, in pipeline order (see [`crate::pipeline`]).

pub mod expand;
