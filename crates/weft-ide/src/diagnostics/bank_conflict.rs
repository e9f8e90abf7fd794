//! The `bank-conflict` performance warning.

use weft_cost::model::Machine;

use crate::costs::StridedAccess;

/// Local memory's banks (the profiles' devices all have 32).
const BANKS: u64 = 32;

// Diagnostic: bank-conflict
//
// Shown where a kernel reads or writes local memory at a stride that shares a factor
// with the 32 banks, so that work-items of a warp wait on the same bank: the degree of
// the conflict, the stride, and the device profile's measured time against the
// conflict-free access. Each array once per kernel.
pub(crate) const CODE: &str = "bank-conflict";

/// The warning's message for a local access, if its stride conflicts.
pub(crate) fn message(access: &StridedAccess<'_>, machine: &Machine) -> Option<String> {
    let StridedAccess { stride, verb, what, kernel, shown, at, device } = access;
    let degree = gcd(*stride, BANKS);
    if degree < 2 {
        return None;
    }
    let slowdown = machine.local_slowdown(i64::try_from(*stride).unwrap_or(i64::MAX));
    Some(format!(
        "local-memory bank conflicts of degree {degree} on {BANKS} banks: {verb} of {what} in \
         kernel `{kernel}` at a stride of `{shown}` elements{at}; `{device}` measured \
         {slowdown:.1}× the conflict-free time"
    ))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
