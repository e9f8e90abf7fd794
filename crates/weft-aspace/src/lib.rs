//! Address-space inference (seed 000, `../shared/reference/000-address-spaces.md`).

mod diagnostic;
mod infer;
mod inference;
pub mod minias;
mod pretty;
mod program;
mod row;
mod space;
mod specialise;
mod trace;

#[cfg(test)]
mod tests;

pub use diagnostic::AspaceDiagnostic;
pub use infer::Scheme;
pub use inference::{Inference, infer, infer_with};
pub use pretty::print;
pub use program::{
    Decl, Fact, Func, FuncId, FuncKind, Options, Program, Ptr, PtrId, Reason, Site, Target,
};
pub use row::{Cause, Evidence, Row, RowError, RowStore, RowVar, Side, evidence};
pub use space::{Space, SpaceSet};
pub use specialise::{Instance, InstanceId, Resolved};
