//! Costs (seed 002, `../shared/reference/002-cost-semantics.md`): device profiles measured
//! by `weft calibrate`, static symbolic costs and predicted times, regions and worlds,
//! and the cost-semantics profiler's cost graph.

pub mod dot;
pub mod graph;
pub mod measured;
pub mod model;
pub mod profile;
pub mod profiler;
pub mod schedule;
pub mod space;
