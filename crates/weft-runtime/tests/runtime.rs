//! The library on the machine's OpenCL device (POCL on CI): hand-written plans run
//! through `Runtime::run_plan` and `Runtime::bench_plan`.

mod plans;

use expect_test::{Expect, expect};
use weft_plan::Plan;
use weft_runtime::{BenchOptions, RunError, RunOptions, Runtime};

/// A runtime on the default device.
fn runtime() -> Runtime {
    plans::set_pocl_cache_dir();
    match Runtime::new(None) {
        Ok(runtime) => runtime,
        Err(error) => panic!("no OpenCL device for the tests: {error}"),
    }
}

fn run(runtime: &mut Runtime, plan: &Plan, inputs: &str) -> String {
    let inputs = weft_values::parse_values(inputs).expect("test inputs parse");
    match runtime.run_plan(plan, inputs, &RunOptions::default()) {
        Ok(result) => weft_values::print_values(&result.outputs),
        Err(error) => format!("error (exit {}): {error}\n", error.exit_code()),
    }
}

fn check(plan: &Plan, inputs: &str, expect: Expect) {
    expect.assert_eq(&run(&mut runtime(), plan, inputs));
}

#[test]
fn maps_over_f32_i64_and_bool_buffers() {
    check(
        &plans::maps(),
        "[1f32, 2f32, 3f32, 4f32, 5f32] [3i64, -4i64] [true, false, false]",
        expect![[r#"
            [3.0f32, 5.0f32, 7.0f32, 9.0f32, 11.0f32]
            [9i64, 16i64]
            [false, true, true]
        "#]],
    );
}

#[test]
fn zero_length_inputs_skip_their_launches() {
    check(
        &plans::maps(),
        "empty([0]f32) empty([0]i64) [true]",
        expect![[r#"
            empty([0]f32)
            empty([0]i64)
            [false]
        "#]],
    );
}

#[test]
fn outputs_read_through_transposed_and_reversed_layouts() {
    check(
        &plans::views(),
        "[[1i64, 2i64, 3i64], [4i64, 5i64, 6i64]]",
        expect![[r#"
            [[1i64, 4i64], [2i64, 5i64], [3i64, 6i64]]
            [[4i64, 5i64, 6i64], [1i64, 2i64, 3i64]]
            2i64
            6i64
        "#]],
    );
    check(
        &plans::views(),
        "empty([0][3]i64)",
        expect![[r#"
            error (exit 2): internal compiler error: invalid host plan: output v0: the output layout {offset: 1; strides: []; shape: []} reaches elements 1..=1 of a buffer of 0 elements
        "#]],
    );
}

#[test]
fn a_for_loop_rebinds_buffers_with_alias() {
    // 3 + 2 = 5, doubled while below 100: 5, 10, 20, 40, 80, 160.
    check(
        &plans::iterate(),
        "[3i64, 0i64, -2i64] 2i64",
        expect![[r#"
            [160i64, 64i64, 0i64]
        "#]],
    );
    check(
        &plans::iterate(),
        "empty([0]i64) 4i64",
        expect![[r#"
            empty([0]i64)
        "#]],
    );
}

#[test]
fn a_kernel_error_is_reported_with_its_position() {
    let plan = plans::gather();
    let mut runtime = runtime();
    expect![[r#"
        [30.0f32, 10.0f32, 20.0f32]
    "#]]
    .assert_eq(&run(&mut runtime, &plan, "[10f32, 20f32, 30f32] [2i64, 0i64, 1i64]"));
    expect![[r#"
        error (exit 1): gather.weft:2:20: index 7 out of bounds for array of size 3
    "#]]
    .assert_eq(&run(&mut runtime, &plan, "[10f32, 20f32, 30f32] [2i64, 7i64, 1i64]"));
    // The error buffer is cleared between runs, and the program was built once.
    expect![[r#"
        [20.0f32]
    "#]]
    .assert_eq(&run(&mut runtime, &plan, "[10f32, 20f32, 30f32] [1i64]"));
    assert_eq!(runtime.n_builds(), 1);
}

#[test]
fn a_failing_check_step_is_a_run_time_error() {
    check(
        &plans::gather(),
        "[10f32] [0i64, 0i64, 0i64]",
        expect![[r#"
            error (exit 1): gather.weft:2:5: size error: 3 indices for an array of 1 elements
        "#]],
    );
}

#[test]
fn wrong_input_shapes_and_types_are_refused() {
    let mut plan = plans::gather();
    plan.inputs[1] = weft_plan::Input::Array {
        buf: weft_plan::Var(2),
        elem: weft_plan::Elem::I64,
        dims: vec![weft_plan::Var(1)],
    };
    check(
        &plan,
        "[1f32, 2f32] [0i64, 1i64, 1i64]",
        expect![[r#"
            error (exit 1): wrong input shapes: dimension 0 of input #1 (shape [3]) is 3, but it must equal dimension 0 of input #0 (shape [2]), which is 2
        "#]],
    );
    check(
        &plans::gather(),
        "[1f32, 2f32] [0i32]",
        expect![[r#"
            error (exit 1): wrong input type: input #1 of entry `gather` must be a value of type []i64, but it is of type [1]i32
        "#]],
    );
    check(
        &plans::gather(),
        "[1f32, 2f32]",
        expect![[r#"
            error (exit 1): entry `gather` takes 2 inputs, but 1 was given
        "#]],
    );
}

#[test]
fn host_division_by_zero_and_out_of_memory_are_clear_errors() {
    let plan = plans::sizes();
    let mut runtime = runtime();
    expect![[r#"
        3i64
    "#]]
    .assert_eq(&run(&mut runtime, &plan, "3i64"));
    expect![[r#"
        error (exit 1): size division by zero
    "#]]
    .assert_eq(&run(&mut runtime, &plan, "0i64"));
    let message = run(&mut runtime, &plan, "35184372088832i64");
    assert!(
        message.starts_with(
            "error (exit 2): out of device memory: cannot allocate 256.0 TiB (281474976710656 \
             bytes) for a buffer of 35184372088832 f64 elements (the device's largest \
             allocation is "
        ),
        "{message}"
    );
}

#[test]
fn a_build_failure_carries_the_log_and_the_source_line() {
    let error = runtime()
        .run_plan(
            &plans::broken(),
            vec![weft_values::Value::vector(vec![1f32])],
            &RunOptions::default(),
        )
        .unwrap_err();
    let RunError::Build { log, excerpt, .. } = &error else { panic!("not a build error: {error}") };
    assert!(log.contains("undeclared_thing"), "{log}");
    expect![[r#"
          3 | __kernel void broken(__global long* weft_err, __global float* xs) {
          4 |   long i = get_global_id(0);
        > 5 |   xs[i] = undeclared_thing;
          6 | }
    "#]]
    .assert_eq(excerpt.as_deref().unwrap_or("no excerpt"));
    assert_eq!(error.exit_code(), 2);
    assert!(error.to_string().starts_with("cannot build the OpenCL program for `"), "{error}");
}

#[test]
fn timing_records_every_launch() {
    let inputs = weft_values::parse_values("[1i64, 2i64] 3i64").unwrap();
    let result =
        runtime().run_plan(&plans::iterate(), inputs, &RunOptions { timing: true }).unwrap();
    let names: Vec<&str> = result.kernel_times.iter().map(|t| t.kernel.as_str()).collect();
    // Three increments, then 4 → 8 → … → 128: five doublings.
    assert_eq!(
        names,
        [
            "add_one",
            "add_one",
            "add_one",
            "double_all",
            "double_all",
            "double_all",
            "double_all",
            "double_all"
        ]
    );
    assert!(result.wall.as_nanos() > 0);
}

#[test]
fn bench_mode_reports_per_kernel_statistics_on_fresh_inputs() {
    let inputs = weft_values::parse_values("[1i64, 2i64] 3i64").unwrap();
    let result = runtime()
        .bench_plan(&plans::iterate(), inputs, &BenchOptions { warmup: 1, reps: 3 })
        .unwrap();
    let kernels: Vec<(&str, usize)> =
        result.kernels.iter().map(|k| (k.kernel.as_str(), k.launches)).collect();
    // The same launch counts in every repetition: the inputs were fresh each time.
    assert_eq!(kernels, [("add_one", 3), ("double_all", 5)]);
    assert_eq!(result.reps, 3);
    let stats = result.total_kernel_ns;
    assert!(stats.min <= stats.median && stats.median <= stats.max, "{stats:?}");
}
