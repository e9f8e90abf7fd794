//! Address-space inference (seed 000, `../shared/reference/000-address-spaces.md`).

mod program;
mod row;
mod space;

#[cfg(test)]
mod tests;

pub use program::{Decl, Fact, Func, FuncId, FuncKind, Options, Program, Ptr, PtrId, Reason, Site, Target};
pub use row::{Cause, Evidence, Row, RowError, RowStore, RowVar, Side, evidence};
pub use space::{Space, SpaceSet};
