//! `weft bench --predict`: the static cost model's predicted time of each kernel
//! (`weft_cost::model`, docs/costs.md "Predictions and validation") next to the time
//! measured, with the relative error and their geometric mean.

use std::time::Duration;

use anyhow::{Context as _, bail};
use weft_cost::model::EntryCost;
use weft_cost::profile::{DeviceProfile, default_profile_for};
use weft_plan::{Input, Var};
use weft_values::{RandomSpec, Scalar, ScalarType};

/// The profile to predict with: `--profile FILE`, else the committed profile of the
/// device the runs use (`--device`, `WEFT_DEVICE`, else the runner's default device).
pub(crate) fn profile_for(
    file: Option<&str>,
    device: Option<&str>,
) -> anyhow::Result<&'static DeviceProfile> {
    if let Some(path) = file {
        let profile = DeviceProfile::load(std::path::Path::new(path))?;
        // One profile per run of the command: leaked so that compile options can hold it.
        return Ok(Box::leak(Box::new(profile)));
    }
    let out = crate::opencl::run_runner(
        &["devices".to_owned(), "--json".to_owned()],
        "",
        Duration::from_secs(60),
    )?;
    let spec = device.map(str::to_owned).or_else(crate::environment::device);
    let Some(listed) = weft_cost::profile::listed_device(&out.stdout, spec.as_deref()) else {
        if serde_json::from_str::<serde_json::Value>(out.stdout.trim()).is_err() {
            bail!("`weft-runner devices --json` gave no list: {}", out.stderr);
        }
        bail!("no OpenCL device matches `{}`", spec.unwrap_or_else(|| "the default".to_owned()));
    };
    let (name, vendor) = (&listed.name, &listed.vendor);
    let query = listed.query();
    default_profile_for(&query).with_context(|| {
        format!(
            "no committed device profile matches `{name}` ({vendor}); measure one with \
             `weft calibrate -o FILE` and pass `--profile FILE`"
        )
    })
}

/// A committed profile by its name (`nvidia-h200`), else the profile in the file `asked`.
pub(crate) fn profile_named_or_file(asked: &str) -> anyhow::Result<&'static DeviceProfile> {
    if let Some(profile) = weft_cost::profile::builtin_profile_named(asked) {
        return Ok(profile);
    }
    if !std::path::Path::new(asked).exists() {
        bail!(
            "`{asked}` is neither a committed device profile (`nvidia-h200`, `nvidia-h100`, \
             `pocl-cpu`) nor a file"
        );
    }
    profile_for(Some(asked), None)
}

/// The sizes of a benchmark's inputs, by host variable: each array input's dimensions,
/// and each integer scalar whose spec allows one value (`i64 in 20..21`: a trip count).
pub(crate) fn sizes_of(
    inputs: &[Input],
    specs: &[RandomSpec],
) -> impl Fn(Var) -> Option<i64> + use<> {
    let mut bound: Vec<(Var, i64)> = Vec::new();
    for (input, spec) in inputs.iter().zip(specs) {
        match input {
            Input::Array { dims, .. } => {
                for (var, &dim) in dims.iter().zip(&spec.ty.shape) {
                    if let Ok(dim) = i64::try_from(dim) {
                        bound.push((*var, dim));
                    }
                }
            }
            Input::Scalar { var, .. } => {
                if let Some(value) = spec.range.and_then(|r| single_integer(r.lo, r.hi)) {
                    bound.push((*var, value));
                }
            }
        }
    }
    move |var| bound.iter().find(|(v, _)| *v == var).map(|&(_, n)| n)
}

/// The one integer of `lo..hi`, when there is exactly one.
fn single_integer(lo: Scalar, hi: Scalar) -> Option<i64> {
    let int = |s: Scalar| match s.convert(ScalarType::I64) {
        Scalar::I64(v) if s.ty().is_integer() => Some(v),
        _ => None,
    };
    let (lo, hi) = (int(lo)?, int(hi)?);
    (hi.checked_sub(lo)? == 1).then_some(lo)
}

/// One entry's predictions: per kernel name (all its launches together), the kernels'
/// total, and the total with transfers; or why there is none.
#[derive(Debug, Clone)]
pub(crate) struct Predicted {
    pub(crate) kernels: Vec<(String, f64)>,
    pub(crate) kernels_s: f64,
    pub(crate) with_transfers_s: f64,
    pub(crate) bound: &'static str,
    /// A `while` loop is counted once: at least this.
    pub(crate) lower_bound: bool,
}

pub(crate) fn predict(
    costs: &EntryCost,
    profile: &DeviceProfile,
    sizes: &dyn Fn(Var) -> Option<i64>,
) -> Result<Predicted, String> {
    let p = costs.predict(profile, sizes).map_err(|e| e.to_string())?;
    let mut kernels: Vec<(String, f64)> = Vec::new();
    for (idx, prediction) in &p.launches {
        let name = &costs.launches[*idx].name;
        match kernels.iter_mut().find(|(n, _)| n == name) {
            Some(k) => k.1 += prediction.seconds,
            None => kernels.push((name.clone(), prediction.seconds)),
        }
    }
    Ok(Predicted {
        kernels,
        kernels_s: p.kernels_s,
        with_transfers_s: p.total.seconds,
        bound: p.total.bound,
        lower_bound: p.total.lower_bound,
    })
}

/// `(predicted - measured) / measured`.
pub(crate) fn relative_error(predicted_s: f64, measured_ns: u64) -> Option<f64> {
    (measured_ns > 0).then(|| (predicted_s * 1e9 - measured_ns as f64) / measured_ns as f64)
}

/// The geometric mean of the absolute values (each at least 1e-6, so that an exact
/// prediction does not make the mean 0).
pub(crate) fn geomean_abs(errors: &[f64]) -> Option<f64> {
    if errors.is_empty() {
        return None;
    }
    let logs: f64 = errors.iter().map(|e| e.abs().max(1e-6).ln()).sum();
    Some((logs / errors.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometric_mean_of_absolute_errors() {
        let g = geomean_abs(&[0.1, -0.4]).unwrap();
        assert!((g - 0.2).abs() < 1e-12);
        assert_eq!(geomean_abs(&[]), None);
        assert_eq!(relative_error(2e-6, 1000), Some(1.0));
    }
}
