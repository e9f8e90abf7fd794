//! Weft's core IR (ARCHITECTURE.md, "core"): elaboration of checked HIR into an
//! A-normal-form, monomorphic, first-order IR with symbolic sizes, its printer and
//! validator, and the reference interpreter that defines what programs mean.
//!
//! Pipeline: [`CheckedFile`] (no error diagnostics) → [`lower_file`] → [`Program`]
//! → [`validate`] → [`run_entry`]. Errors are values: [`ElabError`] for constructs
//! elaboration does not support, [`RuntimeError`] for run-time failures, rendered
//! with a source position by [`render_error`].

#![warn(clippy::wildcard_enum_match_arm)]

mod interp;
mod ir;
mod lower;
mod operators;
mod pretty;
mod render;
#[cfg(test)]
mod tests;
mod updates;
mod validate;
mod walk;

pub use crate::interp::{
    NoRecorder, ParKind, Recorder, RuntimeError, Val, n_inputs, run_entry, run_entry_recorded,
};
pub use crate::ir::{
    Atom, BinOp, Block, BlockId, CoreSize, Exp, ExpId, FnId, Function, IndexItem, Lambda, LoopForm,
    Origin, Program, Space, Stmt, Type, UnOp, Var, VarId, VarKind,
};
pub use crate::lower::{
    BlockedEntry, CheckedEntries, CheckedFile, ElabError, ElabFunction, ElabSignature, FnKey,
    callees_first, elab_function, elab_signature, lower_entries, lower_entry, lower_file,
};
pub use crate::operators::{
    CommutativeOp, componentwise_operators, is_commutative, operator_of, scalar_operator,
};
pub use crate::pretty::{
    Annotate, BlockLayout, ExpNames, Plain, VarNames, binop_name, flat_exp_text, pretty_annotated,
    pretty_program, size_text, type_text,
};
pub use crate::render::{origin_position, render_error};
pub use crate::updates::{
    UpdatePlan, UpdateReuse, loop_updates_in_place, update_plan, update_reuse, updated_array,
};
pub use crate::validate::{InvariantError, validate};
pub use crate::walk::{ExpKind, Made, type_vars};
