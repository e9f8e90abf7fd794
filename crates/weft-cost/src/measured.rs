//! How far the model's predictions were from measurements, per committed profile: the
//! numbers the editor shows beside a predicted time ("±x% measured").
//!
//! Each entry is one `weft bench --predict` run over `bench/apps/` and
//! `bench/programs/` at their three sizes on the device the profile was measured on (docs/costs.md, "Predictions and validation"): the geometric
//! mean of the absolute relative errors `|predicted - measured| / measured` of the
//! entries' kernel times and of the kernels' times, as its last line prints them. A
//! profile without an entry has no measured error, and the editor says so; nothing here
//! is estimated. The raw output of each run is in `bench/results/`.

use crate::profile::DeviceProfile;

/// One validation run of the model on a profile's device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredError {
    /// Geometric mean of the absolute relative errors of the entries' kernel times
    /// (0.25 is 25%).
    pub geomean: f64,
    /// The same over every kernel.
    pub kernel_geomean: f64,
    /// Entries and kernels measured.
    pub entries: u32,
    pub kernels: u32,
    /// When the run was made (UTC date).
    pub date: &'static str,
    /// Where the run's output is (a path in the repository) and how it was made.
    pub source: &'static str,
    /// The kernels' error per class of kernel ([`kernel_class`]), for the classes with
    /// at least [`MIN_CLASS_KERNELS`] kernels in the run.
    pub classes: &'static [ClassError],
}

/// The measured error of one class of kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassError {
    /// `map`, `group`, `reduce_partials`, ... ([`kernel_class`]).
    pub class: &'static str,
    /// Geometric mean of the absolute relative errors of its kernels.
    pub geomean: f64,
    pub kernels: u32,
}

/// The fewest kernels a class needs in a validation run to get its own error.
pub const MIN_CLASS_KERNELS: u32 = 6;

/// A kernel's class: its name without the entry's name before it and the index after
/// it (`map` for `saxpy_map_0` of entry `saxpy`), the strategy's role the code
/// generator names it by.
pub fn kernel_class<'a>(kernel: &'a str, entry: &str) -> &'a str {
    let base = match kernel.rsplit_once('_') {
        Some((base, index)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
            base
        }
        _ => kernel,
    };
    base.strip_prefix(entry).and_then(|rest| rest.strip_prefix('_')).unwrap_or(base)
}

impl MeasuredError {
    /// The error of kernels of `class`: the class's own when the run measured enough of
    /// them, else every kernel's; and how many kernels it is over.
    pub fn for_class(&self, class: &str) -> (f64, u32, Option<&'static str>) {
        match self.classes.iter().find(|c| c.class == class) {
            Some(c) => (c.geomean, c.kernels, Some(c.class)),
            None => (self.kernel_geomean, self.kernels, None),
        }
    }
}

/// `(device name of the profile, error)`: the profile's `device.name`, as in
/// `crates/weft-cost/profiles/*.json`.
///
/// Only runs of the current model (`weft-cost v2`) count: the H100's and POCL's runs of
/// 2026-11-24 measured v1 and were taken out with it.
const MEASURED: &[(&str, MeasuredError)] = &[(
    "NVIDIA H200",
    MeasuredError {
        geomean: 0.178,
        kernel_geomean: 0.140,
        entries: 78,
        kernels: 260,
        date: "2026-11-29",
        source: "bench/results/h200-2026-11-29-session15/validate5/predict.jsonl (stats.txt): \
                 bench/predict_gpu.sh, weft bench --predict --profile (calibrated in the same \
                 run) --json --unsafe --device gpu --all-sizes over bench/apps/ and \
                 bench/programs/ (NVIDIA driver 580.159.04)",
        classes: &[
            ClassError { class: "scalar", geomean: 0.125, kernels: 78 },
            ClassError { class: "map", geomean: 0.170, kernels: 64 },
            ClassError { class: "group", geomean: 0.111, kernels: 45 },
            ClassError { class: "reduce_partials", geomean: 0.080, kernels: 12 },
            ClassError { class: "reduce_total", geomean: 0.138, kernels: 12 },
            ClassError { class: "replicate", geomean: 0.207, kernels: 9 },
            ClassError { class: "hist", geomean: 0.399, kernels: 9 },
            ClassError { class: "product", geomean: 0.253, kernels: 6 },
            ClassError { class: "result_copy", geomean: 0.079, kernels: 6 },
        ],
    },
)];

/// The model's measured error on `profile`'s device, if a validation run was committed.
pub fn measured_error(profile: &DeviceProfile) -> Option<MeasuredError> {
    let name = profile.device.name.trim();
    MEASURED.iter().find(|(device, _)| device.eq_ignore_ascii_case(name)).map(|&(_, e)| e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::builtin_profiles;

    #[test]
    fn every_entry_names_a_committed_profile() {
        for (device, error) in MEASURED {
            assert!(
                builtin_profiles().iter().any(|p| p.device.name.eq_ignore_ascii_case(device)),
                "no committed profile for `{device}`"
            );
            assert!(error.geomean.is_finite() && error.geomean >= 0.0);
            assert!(error.kernel_geomean.is_finite() && error.kernel_geomean >= 0.0);
            for class in error.classes {
                assert!(class.kernels >= MIN_CLASS_KERNELS && class.kernels <= error.kernels);
            }
        }
    }

    #[test]
    fn classes_are_names_without_entry_and_index() {
        assert_eq!(kernel_class("saxpy_map_0", "saxpy"), "map");
        assert_eq!(kernel_class("dot_product_reduce_partials_2", "dot_product"), "reduce_partials");
        assert_eq!(kernel_class("f_scan_status_12", "f"), "scan_status");
        // Another entry's kernel, or a name without an index, keeps what it has.
        assert_eq!(kernel_class("g_map_0", "f"), "g_map");
        assert_eq!(kernel_class("f_map", "f"), "map");
        let h200 = MEASURED[0].1;
        assert_eq!(h200.for_class("map"), (0.170, 64, Some("map")));
        assert_eq!(h200.for_class("scan"), (h200.kernel_geomean, h200.kernels, None));
    }
}
