//! The `local-memory-limit` performance warning.

// Diagnostic: local-memory-limit
//
// Shown where a kernel's local arrays need more memory per work-group, at the sizes
// the prediction used, than the device profile has: its launch would fail. The message
// lists each array's bytes.
pub(crate) const CODE: &str = "local-memory-limit";

/// The warning's message, if `total` bytes (the arrays' `parts`) exceed `limit`.
pub(crate) fn message(
    kernel: &str,
    total: u64,
    limit: u64,
    parts: &[String],
    sizes: &str,
    device: &str,
) -> Option<String> {
    (total > limit).then(|| {
        format!(
            "kernel `{kernel}` needs {total} bytes of local memory per work-group ({}) {sizes}, \
             more than the {limit} bytes of `{device}`: its launch would fail",
            parts.join(", ")
        )
    })
}
