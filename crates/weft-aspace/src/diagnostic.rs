//! User diagnostics of address-space inference.
//!
//! Codes (kebab-case, one per kind of mistake):
//! - `aspace-mismatch`: a pointer flows into a slot whose row is closed without its label
//!   (`global int *x = l;`, or a `global` parameter given a `constant` pointer, digest E2).
//! - `aspace-store-to-constant`: a store through a pointer that may point to constant memory.
//! - `aspace-bound`: a [`crate::Fact::Bound`] is violated; the message starts with its text.
//! - `aspace-impossible-cast`: a `dynamic_cast` to a space the pointer can never be in.
//! - `aspace-duplicate-label`: a label would occur twice in a row (digest 2.5). Flows unify whole
//!   rows, so programs built from [`crate::Fact`]s cannot reach it; it is kept for completeness.
//! - `aspace-two-spaces`: OpenCL 1.2 and a pointer (or a call's shared parameter row) that may
//!   point into two spaces after specialisation (digest 3.10, E3, E6, E9).
//! - `aspace-constant-in-generic`: OpenCL 2.0 and such a pointer whose spaces include `constant`,
//!   which the generic space excludes.
//! - `aspace-private-kernel-param`: a kernel pointer parameter that is (or defaults to) private.
//! - `aspace-recursion`: a call cycle; the calls on it are ignored.
//! - `aspace-malformed-program`: a fact or signature with an out-of-range id or a wrong argument
//!   count (a bug in the client that built the program); the fact is ignored.

use crate::program::{FuncId, PtrId, Reason};

/// One user diagnostic. `chain` starts at the allocation or parameter that introduced the
/// offending label (for two-space errors: each label's chain in turn), goes through every flow
/// and call the label took, and ends with the use that rejects it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AspaceDiagnostic {
    pub code: &'static str,
    pub message: String,
    pub func: FuncId,
    pub ptr: Option<PtrId>,
    pub chain: Vec<Reason>,
}
