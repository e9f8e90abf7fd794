//! The environment variables `weft` reads, each in one place. Library crates take
//! options and never read the environment (so their tests do not depend on the shell);
//! the `weft` binary reads it here and passes what it found down (docs/cli.md,
//! "Environment").

use std::path::PathBuf;

/// `WEFT_RUNNER`: the `weft-runner` executable (else the one beside `weft`, else on
/// PATH: `weft_process::runner_path`).
pub(crate) fn runner() -> Option<PathBuf> {
    std::env::var_os("WEFT_RUNNER").filter(|path| !path.is_empty()).map(PathBuf::from)
}

/// `WEFT_DEVICE`: the OpenCL device when `--device` names none (`gpu`, `cpu` or
/// `PLATFORM:DEVICE`). The runner reads it too, for itself.
pub(crate) fn device() -> Option<String> {
    std::env::var("WEFT_DEVICE").ok().filter(|spec| !spec.trim().is_empty())
}

/// `WEFT_PROFILE=FILE`: the device profile that steers the compiler's choices instead
/// of the committed profile of the device (to test on POCL the code a GPU gets).
pub(crate) fn steering_profile() -> Option<String> {
    std::env::var("WEFT_PROFILE").ok().filter(|path| !path.trim().is_empty())
}

/// The compiler's options, with the tuning knobs of benchmarking experiments
/// (`bench/results/` says what was measured) applied: `WEFT_COARSEN`,
/// `WEFT_GROUP_SIZE` (a power of two from 32 to 1024), `WEFT_REDUCE_GROUPS`, `WEFT_MATMUL_STAGE`, `WEFT_MATMUL_VARIANT`, and
/// `WEFT_STRATEGY=preferred` (tiled kernels at every size). A value out of its range
/// is ignored.
pub(crate) fn lower_options() -> weft_lower::Options {
    lower_options_from(&|name| std::env::var(name).ok())
}

/// Whether `WEFT_COARSEN` sets the coarsening (else the device's default applies: none
/// on a CPU, `weft_lower::Options`'s on a GPU).
pub(crate) fn coarsening_set() -> bool {
    knob_value(&|name| std::env::var(name).ok(), "WEFT_COARSEN", valid_coarsening).is_some()
}

fn valid_coarsening(c: u32) -> bool {
    c >= 1
}

/// A knob's value, when set and in its range.
fn knob_value(
    var: &dyn Fn(&str) -> Option<String>,
    name: &str,
    ok: fn(u32) -> bool,
) -> Option<u32> {
    var(name).and_then(|v| v.trim().parse().ok()).filter(|&v| ok(v))
}

fn lower_options_from(var: &dyn Fn(&str) -> Option<String>) -> weft_lower::Options {
    let defaults = weft_lower::Options::default();
    let knob = |name: &str, default: u32, ok: fn(u32) -> bool| {
        knob_value(var, name, ok).unwrap_or(default)
    };
    weft_lower::Options {
        coarsen: knob("WEFT_COARSEN", defaults.coarsen, valid_coarsening),
        work_group: knob("WEFT_GROUP_SIZE", defaults.work_group, |g| {
            (32..=1024).contains(&g) && g.is_power_of_two()
        }),
        reduce_groups: knob("WEFT_REDUCE_GROUPS", defaults.reduce_groups, |g| g >= 1),
        matmul_stage: knob("WEFT_MATMUL_STAGE", defaults.matmul_stage, |k| {
            matches!(k, 2 | 4 | 8 | 16 | 32)
        }),
        matmul_variant: knob("WEFT_MATMUL_VARIANT", defaults.matmul_variant, |v| v < 8),
        steer_tiling: var("WEFT_STRATEGY").is_none_or(|v| v != "preferred"),
        ..defaults
    }
}

#[cfg(test)]
mod tests {
    use super::lower_options_from;

    #[test]
    fn knobs_in_range_override_the_defaults_and_others_are_ignored() {
        let set = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        };
        let unset = lower_options_from(&set(&[]));
        assert_eq!(unset.coarsen, weft_lower::Options::default().coarsen);
        assert!(unset.steer_tiling);
        let tuned = lower_options_from(&set(&[
            ("WEFT_COARSEN", "8"),
            ("WEFT_MATMUL_STAGE", "16"),
            ("WEFT_MATMUL_VARIANT", "9"),
            ("WEFT_STRATEGY", "preferred"),
        ]));
        assert_eq!(tuned.coarsen, 8);
        assert_eq!(tuned.matmul_stage, 16);
        assert_eq!(tuned.matmul_variant, weft_lower::Options::default().matmul_variant);
        assert!(!tuned.steer_tiling);
    }
}
