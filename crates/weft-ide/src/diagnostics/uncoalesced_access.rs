//! The `uncoalesced-access` performance warning.

use weft_cost::model::Machine;

use crate::costs::StridedAccess;

// Diagnostic: uncoalesced-access
//
// Shown where a kernel reads or writes global memory at an element stride of 2 or more
// between neighbouring work-items (each work-item's access lands in its own memory
// transaction), with the stride, what it is at the sizes the prediction used, and the
// device profile's measured slowdown at that stride. Each array once per kernel.
pub(crate) const CODE: &str = "uncoalesced-access";

/// The warning's message for a global access, if its stride is uncoalesced.
pub(crate) fn message(access: &StridedAccess<'_>, machine: &Machine) -> Option<String> {
    let StridedAccess { stride, verb, what, kernel, shown, at, device } = access;
    if *stride < 2 {
        return None;
    }
    let slowdown = machine.global_slowdown(i64::try_from(*stride).unwrap_or(i64::MAX));
    Some(format!(
        "uncoalesced global {verb} of {what} in kernel `{kernel}`: neighbouring work-items \
         access elements `{shown}` apart{at}; `{device}` is {slowdown:.1}× slower than \
         coalesced at that stride"
    ))
}
