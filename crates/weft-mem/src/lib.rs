//! Weft's memory layer (ARCHITECTURE.md pipeline step "mem"; seed 004, Munksgaard, Oancea and
//! Henriksen, *Compiling a functional array language with non-semantic memory information*).
//!
//! In the memory IR every array binding lives in a memory block and carries an [`Lmad`]
//! (linear memory access descriptor) that maps its multi-dimensional index to an element
//! offset in the block. Layout changes (slices, transposes, reversals, replication and most
//! reshapes) are computed on LMADs at compile time and never copy; only an operation whose
//! result is not one LMAD (an `Option` returning `None` here) forces the caller to
//! materialise a copy.
//!
//! This crate currently holds the LMAD algebra only ([`lmad`]). Memory annotation, memory
//! expansion and the validity check will join it as their own modules.
//!
//! Architecture invariant: no salsa, no IO; LMAD components are [`weft_size::Size`]s, so
//! equality of layouts is equality of normal forms.

pub mod lmad;

pub use crate::lmad::{DimSlice, Lmad, LmadDim, LmadDisplay};
