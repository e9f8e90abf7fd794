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
/// (`bench/results/` says what was measured) applied: `WEFT_GROUP_SIZE` (a power of
/// two from 32 to 1024) and `WEFT_REDUCE_GROUPS`. A value out of its range is ignored.
pub(crate) fn lower_options() -> weft_lower::Options {
    lower_options_from(&|name| std::env::var(name).ok())
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
        work_group: knob("WEFT_GROUP_SIZE", defaults.work_group, |g| {
            (32..=1024).contains(&g) && g.is_power_of_two()
        }),
        reduce_groups: knob("WEFT_REDUCE_GROUPS", defaults.reduce_groups, |g| g >= 1),
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
        assert_eq!(unset.work_group, weft_lower::Options::default().work_group);
        let tuned =
            lower_options_from(&set(&[("WEFT_GROUP_SIZE", "128"), ("WEFT_REDUCE_GROUPS", "0")]));
        assert_eq!(tuned.work_group, 128);
        // Out of range: the default.
        assert_eq!(tuned.reduce_groups, weft_lower::Options::default().reduce_groups);
        let odd = lower_options_from(&set(&[("WEFT_GROUP_SIZE", "100")]));
        assert_eq!(odd.work_group, weft_lower::Options::default().work_group);
    }
}
