//! Tests: worked examples as snapshots, property tests of the unifier and of whole programs.

mod unify;
