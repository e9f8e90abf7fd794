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
}

/// `(device name of the profile, error)`: the profile's `device.name`, as in
/// `crates/weft-cost/profiles/*.json`.
///
/// Only runs of the current model (`weft-cost v2`) count: the H100's and POCL's runs of
/// 2026-11-24 measured v1 and were taken out with it.
const MEASURED: &[(&str, MeasuredError)] = &[(
    "NVIDIA H200",
    MeasuredError {
        geomean: 0.155,
        kernel_geomean: 0.134,
        entries: 78,
        kernels: 260,
        date: "2026-11-29",
        source: "bench/results/h200-2026-11-29-session15/validate3/predict.jsonl (stats.txt): \
                 bench/predict_gpu.sh, weft bench --predict --profile (calibrated in the same \
                 run) --json --unsafe --device gpu --all-sizes over bench/apps/ and \
                 bench/programs/ (NVIDIA driver 580.159.04)",
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
        }
    }
}
