//! How far the model's predictions were from measurements, per committed profile: the
//! numbers the editor shows beside a predicted time ("±x% measured").
//!
//! Each entry is one `weft bench --predict` run over `bench/programs/` on the device the
//! profile was measured on (docs/costs.md, "Predictions and validation"): the geometric
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
const MEASURED: &[(&str, MeasuredError)] = &[
    (
        "NVIDIA H100 80GB HBM3",
        MeasuredError {
            geomean: 0.087,
            kernel_geomean: 0.161,
            entries: 9,
            kernels: 13,
            date: "2026-11-24",
            source: "bench/results/h100-2026-11-24-final/bench.jsonl (and comparison.md): \
                     weft bench --predict --json --unsafe --device gpu --warmup 3 --reps 20 \
                     bench/programs/ by bench/run_gpu.sh (NVIDIA driver 580.159.04)",
        },
    ),
    (
        "pthread-haswell-AMD EPYC",
        MeasuredError {
            geomean: 0.563,
            kernel_geomean: 0.558,
            entries: 9,
            kernels: 13,
            date: "2026-11-24",
            source: "bench/results/pocl-predict-2026-11-24/predict.txt: weft bench --predict \
                 --device cpu --reps 3 --warmup 1 bench/programs/ (POCL 3.1, 2 shared cores)",
        },
    ),
];

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
