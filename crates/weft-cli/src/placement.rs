//! `weft run --device auto` (docs/costs.md, "Placement"): the entry is compiled for
//! each OpenCL device that has a committed profile (the first GPU and the first CPU
//! device), the cost model predicts each run's time on the inputs' sizes, kernels and
//! host-device transfers together, and the run goes to the faster. The choice and its
//! reason are said on stderr.

use std::time::Duration;

use anyhow::Context as _;
use weft_core::{FnId, Program};
use weft_cost::profile::{DeviceProfile, ListedDevice, default_profile_for};
use weft_hir::RootDatabase;
use weft_opencl::Compiled;
use weft_plan::{Input, Plan, Var};
use weft_values::{RandomSpec, Scalar, ScalarType, Value};

/// A device run could go to, with the profile that predicts it.
pub(crate) struct Candidate {
    pub(crate) device: ListedDevice,
    pub(crate) profile: &'static DeviceProfile,
    /// The profile was measured on this device (`--device-profile`), not committed.
    pub(crate) own: bool,
}

/// Where the inputs' sizes come from.
pub(crate) enum Sizes<'a> {
    Values(&'a [Value]),
    Specs(&'a [RandomSpec]),
}

/// The chosen device (`P:D`), its compiled entry, and what to say about the choice.
pub(crate) struct Placement {
    pub(crate) device: String,
    pub(crate) compiled: Compiled,
    pub(crate) why: String,
}

/// The first GPU and the first CPU device that have a profile: one of `measured` (the
/// user's `weft calibrate -o FILE`s, `--device-profile`) made on that very device, else
/// the committed one that fits it.
pub(crate) fn candidates(measured: &[&'static DeviceProfile]) -> anyhow::Result<Vec<Candidate>> {
    let out = crate::opencl::run_runner(
        &["devices".to_owned(), "--json".to_owned()],
        "",
        Duration::from_secs(60),
    )?;
    let mut candidates = Vec::new();
    for kind in ["gpu", "cpu"] {
        let Some(device) = weft_cost::profile::listed_device(&out.stdout, Some(kind)) else {
            continue;
        };
        let query = device.query();
        let own = measured
            .iter()
            .copied()
            .find(|p| p.matches(&query) == Some(weft_cost::profile::Match::Exact));
        if let Some(profile) = own.or_else(|| default_profile_for(&query)) {
            candidates.push(Candidate { device, profile, own: own.is_some() });
        }
    }
    Ok(candidates)
}

/// Compiles the entry for each candidate and picks the one predicted faster.
pub(crate) fn choose(
    db: &RootDatabase,
    program: &Program,
    entry: FnId,
    options: &weft_lower::Options,
    sizes: &Sizes<'_>,
    measured: &[&'static DeviceProfile],
) -> anyhow::Result<Result<Placement, String>> {
    let candidates = candidates(measured)?;
    if candidates.is_empty() {
        anyhow::bail!(
            "`--device auto` found no OpenCL device with a device profile (`weft calibrate` \
             measures one); name the device with `--device gpu`, `cpu` or `P:D`"
        );
    }
    let mut predicted = Vec::new();
    for candidate in candidates {
        let compiled =
            match crate::opencl::compile_for(db, program, entry, *options, candidate.profile) {
                Ok(compiled) => compiled,
                Err(message) => return Ok(Err(message)),
            };
        let bound = bind_sizes(&compiled.plan, sizes);
        let seconds = compiled
            .costs
            .predict(candidate.profile, &lookup(&bound))
            .map(|p| (p.total.seconds, p.kernels_s, p.total.transfer_s));
        predicted.push((candidate, compiled, seconds));
    }
    let describe =
        |c: &Candidate, s: &Result<(f64, f64, f64), weft_cost::model::PredictError>| match s {
            Ok((total, kernels, transfers)) => format!(
                "{} `{}` {} (kernels {}, transfers {}{})",
                c.device.kind.to_uppercase(),
                c.device.name,
                time(*total),
                time(*kernels),
                time(*transfers),
                if c.own { "; its own profile" } else { "" }
            ),
            Err(error) => format!("{} `{}` not predicted ({error})", c.device.kind, c.device.name),
        };
    let all: Vec<String> = predicted.iter().map(|(c, _, s)| describe(c, s)).collect();
    let totals: Vec<Option<f64>> =
        predicted.iter().map(|(_, _, s)| s.as_ref().ok().map(|p| p.0)).collect();
    let best = fastest(&totals).context("invariant: at least one candidate")?;
    let (candidate, compiled, _) = predicted.swap_remove(best);
    let why = if all.len() == 1 {
        format!("the only device with a profile: {}", all.join(""))
    } else {
        format!("predicted {}", all.join(" against "))
    };
    Ok(Ok(Placement {
        device: candidate.device.id.clone(),
        compiled,
        why: format!(
            "running on {} `{}` ({why})",
            candidate.device.kind.to_uppercase(),
            candidate.device.name
        ),
    }))
}

/// The index of the fastest predicted time; a device that cannot be predicted loses to
/// one that can, and among those the first listed (the GPU) wins.
fn fastest(totals: &[Option<f64>]) -> Option<usize> {
    let predicted = totals.iter().enumerate().filter_map(|(i, t)| t.map(|t| (i, t)));
    predicted
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
        .or((!totals.is_empty()).then_some(0))
}

/// The value `bound` gives a size variable (a [`bind_sizes`] list as the model's lookup).
pub(crate) fn lookup(bound: &[(Var, i64)]) -> impl Fn(Var) -> Option<i64> + '_ {
    move |var| bound.iter().find(|(v, _)| *v == var).map(|&(_, n)| n)
}

/// The plan's size variables bound from the inputs: array dimensions, and integer
/// scalars (trip counts) by value, or by spec when it allows one value.
pub(crate) fn bind_sizes(plan: &Plan, sizes: &Sizes<'_>) -> Vec<(Var, i64)> {
    let mut bound = Vec::new();
    match sizes {
        Sizes::Specs(specs) => {
            let lookup = crate::predict::sizes_of(&plan.inputs, specs);
            for input in &plan.inputs {
                let vars: Vec<Var> = match input {
                    Input::Array { dims, .. } => dims.clone(),
                    Input::Scalar { var, .. } => vec![*var],
                };
                bound.extend(vars.into_iter().filter_map(|v| lookup(v).map(|n| (v, n))));
            }
        }
        Sizes::Values(values) => {
            for (input, value) in plan.inputs.iter().zip(values.iter()) {
                match input {
                    Input::Array { dims, .. } => {
                        for (var, &dim) in dims.iter().zip(value.shape()) {
                            if let Ok(dim) = i64::try_from(dim) {
                                bound.push((*var, dim));
                            }
                        }
                    }
                    Input::Scalar { var, .. } => {
                        if let Some(scalar) = value.as_scalar().filter(|s| s.ty().is_integer())
                            && let Scalar::I64(v) = scalar.convert(ScalarType::I64)
                        {
                            bound.push((*var, v));
                        }
                    }
                }
            }
        }
    }
    bound
}

fn time(seconds: f64) -> String {
    if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fastest_predicted_device_wins() {
        assert_eq!(fastest(&[Some(2e-3), Some(1e-3)]), Some(1));
        assert_eq!(fastest(&[Some(1e-3), Some(2e-3)]), Some(0));
        // Unpredicted loses to predicted; with none predicted, the first (the GPU).
        assert_eq!(fastest(&[None, Some(5.0)]), Some(1));
        assert_eq!(fastest(&[None, None]), Some(0));
        assert_eq!(fastest(&[]), None);
    }

    #[test]
    fn sizes_come_from_values_and_single_valued_specs() {
        let plan = Plan {
            inputs: vec![
                Input::Scalar { var: Var(1), elem: weft_plan::Elem::I64 },
                Input::Array {
                    buf: Var(2),
                    elem: weft_plan::Elem::F32,
                    dims: vec![Var(3), Var(4)],
                },
            ],
            entry: "f".into(),
            source: String::new(),
            kernels: vec![],
            input_names: vec![],
            n_vars: 5,
            steps: vec![],
            outputs: vec![],
            errors: vec![],
        };
        let values = [Value::scalar(7i64), Value::scalar(1.5f32)];
        // A float where the plan wants an array binds no dimension.
        assert_eq!(bind_sizes(&plan, &Sizes::Values(&values)), [(Var(1), 7)]);
        let specs: Vec<RandomSpec> = ["i64 in 20..21", "[3][5]f32"]
            .iter()
            .map(|s| weft_values::parse_random_spec(s).unwrap())
            .collect();
        assert_eq!(
            bind_sizes(&plan, &Sizes::Specs(&specs)),
            [(Var(1), 20), (Var(3), 3), (Var(4), 5)]
        );
    }
}
