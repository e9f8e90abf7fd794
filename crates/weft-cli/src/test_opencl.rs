//! `weft test --backend opencl`: each entry is compiled once and its cases run in one
//! `weft-runner batch` process. Expected outputs are compared with the test-block
//! tolerances; `random input` cases are compared with the reference interpreter on
//! the same inputs (differential testing); `error:` cases must fail with a message
//! that matches.

use std::time::Duration;

use weft_core::Program;
use weft_hir::RootDatabase;
use weft_syntax::test_block::{Expected, TestCase, TestInput};
use weft_values::Value;

/// Seconds one entry's batch may take.
const BATCH_TIMEOUT: u64 = 300;

pub(crate) fn run_cases(
    db: &RootDatabase,
    program: &Program,
    cases: &[(String, TestCase)],
    device: Option<&str>,
    target: weft_aspace::Target,
) -> anyhow::Result<Vec<Result<(), String>>> {
    let mut results: Vec<Option<Result<(), String>>> = vec![None; cases.len()];
    let mut names: Vec<&str> = cases.iter().map(|(n, _)| n.as_str()).collect();
    names.dedup();
    for name in names {
        let indices: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].0 == name).collect();
        let entry = match crate::run::choose_entry(program, Some(name)) {
            Ok(e) => e,
            Err(m) => {
                for &i in &indices {
                    results[i] = Some(Err(m.clone()));
                }
                continue;
            }
        };
        let options = weft_lower::Options { target, ..crate::environment::lower_options() };
        let compiled = match crate::opencl::compile(db, program, entry, options) {
            Ok(c) => c,
            Err(m) => {
                for &i in &indices {
                    results[i] = Some(Err(format!("cannot compile for OpenCL: {m}")));
                }
                continue;
            }
        };
        let mut inputs: Vec<Vec<Value>> = Vec::new();
        let mut texts = Vec::new();
        for &i in &indices {
            let values = match &cases[i].1.input {
                TestInput::Values(text) => {
                    weft_values::parse_values(&text.text).unwrap_or_default()
                }
                TestInput::Random(text) => weft_values::parse_random_specs(&text.text)
                    .ok()
                    .and_then(|specs| weft_values::generate_inputs(&specs, crate::test::SEED).ok())
                    .unwrap_or_default(),
            };
            texts.push(weft_values::print_values(&values));
            inputs.push(values);
        }
        let plan = crate::opencl::write_plan(&compiled.plan)?;
        let mut args = vec!["batch".to_owned(), "--plan".to_owned(), plan.display().to_string()];
        if let Some(d) = device {
            args.extend(["--device".to_owned(), d.to_owned()]);
        }
        let request = serde_json::json!({ "cases": texts }).to_string();
        let out = crate::opencl::run_runner(&args, &request, Duration::from_secs(BATCH_TIMEOUT))?;
        let lines: Vec<&str> = out.stdout.lines().collect();
        for (k, &i) in indices.iter().enumerate() {
            let result = match lines.get(k) {
                None if out.timed_out => {
                    Err(format!("the OpenCL run took longer than {BATCH_TIMEOUT} s"))
                }
                None => Err(format!("the OpenCL runner gave no result: {}", out.stderr.trim())),
                Some(line) => judge(program, entry, &cases[i].1, &inputs[k], line),
            };
            results[i] = Some(result);
        }
    }
    Ok(results.into_iter().map(|r| r.unwrap_or_else(|| Err("not run".to_owned()))).collect())
}

fn judge(
    program: &Program,
    entry: weft_core::FnId,
    case: &TestCase,
    inputs: &[Value],
    line: &str,
) -> Result<(), String> {
    let json: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("bad runner output: {e}"))?;
    let got =
        match (json.get("ok").and_then(|v| v.as_str()), json.get("error").and_then(|v| v.as_str()))
        {
            (Some(text), _) => Ok(weft_values::parse_values(text)
                .map_err(|e| format!("runner printed bad values: {e}"))?),
            (None, Some(message)) => Err(message.to_owned()),
            _ => return Err(format!("bad runner output: {line}")),
        };
    match (&case.expected, got) {
        (Expected::Output(text), Ok(got)) => {
            let want =
                weft_values::parse_values(&text.text).map_err(|e| format!("bad output: {e}"))?;
            weft_values::compare_all(&got, &want).map_err(|m| m.to_string())
        }
        (Expected::Runs, Ok(got)) => match weft_core::run_entry(program, entry, inputs.to_vec()) {
            Ok(want) => weft_values::compare_all(&got, &want)
                .map_err(|m| format!("OpenCL differs from the interpreter: {m}")),
            Err(e) => Err(format!("the interpreter failed ({}) but OpenCL ran", e.message)),
        },
        (Expected::Output(_) | Expected::Runs, Err(message)) => {
            Err(format!("run-time error: {message}"))
        }
        (Expected::Error(pattern), Ok(got)) => Err(format!(
            "expected an error matching `{}`, got {}",
            pattern.text.trim(),
            weft_values::print_values(&got).trim_end().replace('\n', " ")
        )),
        (Expected::Error(pattern), Err(message)) => {
            let regex = regex::Regex::new(pattern.text.trim())
                .map_err(|e| format!("bad error regex: {e}"))?;
            if regex.is_match(&message) {
                Ok(())
            } else {
                Err(format!("expected an error matching `{}`, got: {message}", pattern.text.trim()))
            }
        }
    }
}
