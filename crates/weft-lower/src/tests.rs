//! Focused tests of the strategies and passes of the lowering, each asserting its
//! property on the structured output (the host plan's launches and allocations, the
//! kernels' commands). `proven.rs` and `regions.rs` test their passes on commands
//! directly. Whole-program snapshots of the printed kernels and plans, for reading,
//! live in weft-opencl; runs on POCL in the CLI's tests.

use weft_hir::RootDatabase;
use weft_plan::{Arg, Expr, Step};

use crate::{Cmd, KernelImp, Lowered, Options, ParLevel, Part, Sharing};

/// The entry of `src` through the middle end, as `weft` compiles it for an unknown GPU
/// (no device profile; each version's threshold at its default).
fn lowered(src: &str) -> Lowered {
    lowered_with(src, Options::default())
}

fn lowered_with(src: &str, options: Options) -> Lowered {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
    let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
    let gpu = weft_opt::pipeline_inlined(&program, weft_opt::Target::Gpu);
    let mem = weft_mem::annotate_gpu(&gpu, weft_mem::Target::Gpu);
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let threshold = |t: weft_opt::ThresholdId| gpu.thresholds[t].default;
    crate::lower_gpu_entry(&gpu, &mem, &threshold, gpu.entries[0], &position, options)
        .expect("lowers")
}

/// A host expression with each host variable written as its name (`v3` as `m`).
fn host_text(lowered: &Lowered, expr: &Expr) -> String {
    let text = weft_plan::print_expr(expr);
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut prev_is_word = false;
    while let Some(c) = chars.next() {
        if c == 'v' && !prev_is_word && chars.peek().is_some_and(char::is_ascii_digit) {
            let mut digits = String::new();
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                digits.push(d);
            }
            let var: usize = digits.parse().expect("a variable number");
            match lowered.var_names.get(var).filter(|n| !n.is_empty()) {
                Some(name) => out.push_str(name),
                None => out.push_str(&format!("v{digits}")),
            }
            prev_is_word = true;
        } else {
            out.push(c);
            prev_is_word = c.is_ascii_alphanumeric() || c == '_';
        }
    }
    out
}

/// A launch of the plan: its kernel and its NDRange, printed as host expressions.
#[derive(Debug)]
struct Launch<'a> {
    kernel: &'a KernelImp,
    global: Vec<String>,
    local: Option<Vec<String>>,
    /// The element counts of its `__local` buffers.
    local_buffers: Vec<String>,
}

/// Every step of `steps`, nested ones included, in order.
fn all_steps(steps: &[Step]) -> Vec<&Step> {
    let mut out = Vec::new();
    for step in steps {
        out.push(step);
        match step {
            Step::If { then_steps: a, else_steps: b, .. }
            | Step::While { cond_steps: a, body: b, .. } => {
                out.extend(all_steps(a));
                out.extend(all_steps(b));
            }
            Step::For { body, .. } => out.extend(all_steps(body)),
            Step::Let { .. }
            | Step::Check { .. }
            | Step::Alloc { .. }
            | Step::Launch { .. }
            | Step::Alias { .. }
            | Step::Read { .. } => {}
        }
    }
    out
}

/// Every launch of `steps`, in order, through branches and loops.
fn launches<'a>(lowered: &'a Lowered, steps: &[Step]) -> Vec<Launch<'a>> {
    let print = |es: &[Expr]| es.iter().map(|e| host_text(lowered, e)).collect();
    all_steps(steps)
        .into_iter()
        .filter_map(|step| match step {
            Step::Launch { kernel, global, local, args } => Some(Launch {
                kernel: &lowered.kernels[*kernel as usize],
                global: print(global),
                local: local.as_deref().map(print),
                local_buffers: args
                    .iter()
                    .filter_map(|arg| match arg {
                        Arg::Local { len, .. } => Some(host_text(lowered, len)),
                        Arg::Buffer(_) | Arg::Scalar { .. } => None,
                    })
                    .collect(),
            }),
            _ => None,
        })
        .collect()
}

fn launches_of(lowered: &Lowered) -> Vec<Launch<'_>> {
    launches(lowered, &lowered.steps)
}

/// The length of every allocation of `steps`, through branches and loops.
fn allocs(lowered: &Lowered, steps: &[Step]) -> Vec<String> {
    all_steps(steps)
        .into_iter()
        .filter_map(|step| match step {
            Step::Alloc { len, .. } => Some(host_text(lowered, len)),
            _ => None,
        })
        .collect()
}

/// The conditions of the plan's `if` steps.
fn host_conditions(lowered: &Lowered) -> Vec<String> {
    all_steps(&lowered.steps)
        .into_iter()
        .filter_map(|step| match step {
            Step::If { cond, .. } => Some(host_text(lowered, cond)),
            _ => None,
        })
        .collect()
}

/// Every command of `body`, nested ones included, in order.
fn commands(body: &[Cmd]) -> Vec<&Cmd> {
    let mut out = Vec::new();
    for cmd in body {
        out.push(cmd);
        for part in cmd.parts() {
            if let Part::Body(inner) = part {
                out.extend(commands(inner));
            }
        }
    }
    out
}

/// The levels of a kernel's parallel loops, outermost first.
fn par_levels(kernel: &KernelImp) -> Vec<ParLevel> {
    commands(&kernel.body)
        .into_iter()
        .filter_map(|cmd| match cmd {
            Cmd::ParFor { level, .. } => Some(*level),
            _ => None,
        })
        .collect()
}

/// How many bounds, division or size checks a kernel makes.
fn n_checks(kernel: &KernelImp) -> usize {
    commands(&kernel.body).into_iter().filter(|cmd| matches!(cmd, Cmd::Fail { .. })).count()
}

fn n_barriers(kernel: &KernelImp) -> usize {
    commands(&kernel.body).into_iter().filter(|cmd| matches!(cmd, Cmd::Barrier)).count()
}

#[test]
fn a_transposed_array_is_copied_through_padded_32_by_32_tiles_in_local_memory() {
    let l = lowered_gpu("entry t (a: [n][m]f32) : [m][n]f32 = transpose a", false);
    let launches = launches(&l, &l.steps);
    let [launch] = launches.as_slice() else { panic!("one launch: {launches:#?}") };
    assert_eq!(launch.local.as_deref(), Some(&["32".to_owned(), "8".to_owned()][..]));
    // One 32x32 tile per work-group, padded to 33 columns against bank conflicts.
    assert_eq!(launch.local_buffers, ["1056"]);
    // Work-items of a group: 32 along the result's rows, 8 striding over 32 columns;
    // the NDRange is the tiles' work-items (`items`, computed on the host).
    assert_eq!(launch.global, ["items", "items"]);
}

#[test]
fn rows_are_reduced_by_versions_picked_per_run_by_thresholds() {
    let l = lowered("entry r (a: [n][m]f32) : [n]f32 = map (\\row -> reduce (+) 0 row) a");
    let launches = launches(&l, &l.steps);
    let levels: Vec<Vec<ParLevel>> = launches.iter().map(|l| par_levels(l.kernel)).collect();
    // Many rows: a work-item per row (short rows staged through local memory first);
    // fewer: a work-group per row; fewer still: a segmented reduction, its segments
    // split into chunks (incremental flattening, docs/middle.md), whose partial
    // results a work-group per row folds when there are many, else a work-item.
    assert_eq!(
        levels,
        [
            vec![],
            vec![ParLevel::GridCovered(0)],
            vec![ParLevel::Group],
            vec![ParLevel::GridCovered(0)],
            vec![ParLevel::Group],
            vec![ParLevel::GridCovered(0)]
        ]
    );
    assert_eq!(launches[0].local_buffers, ["(256 * (m + 1))"]);
    assert_eq!(launches[2].local_buffers, ["256"]);
    assert_eq!(launches[4].local_buffers, ["256"]);
    let conditions = host_conditions(&l);
    assert_eq!(conditions[..3], ["(n >= 32768)", "(m <= 32)", "(n >= 128)"]);
    assert!(conditions[3].ends_with(">= I64(64))"), "many chunks: {conditions:?}");
    // Rows of a constant length: the staging's condition is a constant.
    let short = lowered("entry r (a: [n][8]f32) : [n]f32 = map (\\row -> reduce (+) 0 row) a");
    assert!(!host_conditions(&short).iter().any(|c| c.contains("m <= 32")));
}

#[test]
fn a_reduction_is_two_stages_the_second_in_one_work_group() {
    let l = lowered("entry s (xs: [n]f32) : f32 = reduce (+) 0 xs");
    let launches = launches_of(&l);
    let [partials, total] = launches.as_slice() else { panic!("two launches: {launches:#?}") };
    assert_eq!(partials.global, ["(groups * 256)"]);
    assert_eq!(total.global, ["256"]);
    assert_eq!(total.local.as_deref(), Some(&["256".to_owned()][..]));
    // Each combines its work-items' values in a tree in local memory.
    for launch in [partials, total] {
        assert_eq!(launch.local_buffers, ["256"]);
        assert!(n_barriers(launch.kernel) > 0);
    }
}

#[test]
fn a_scan_is_three_stages_or_one_pass_with_look_back_on_an_nvidia_gpu() {
    let src = "entry f (xs: [n]f32) : [n]f32 = scan (+) 0 xs";
    let names =
        |l: &Lowered| launches_of(l).iter().map(|l| l.kernel.name.clone()).collect::<Vec<_>>();
    let staged = lowered(src);
    assert_eq!(names(&staged), ["f_scan_chunk_totals_0", "f_scan_prefixes_1", "f_scan_tiles_2"]);
    let profile = weft_cost::profile::builtin_profile_named("nvidia-h100");
    let one_pass = lowered_with(src, Options { profile, ..Options::default() });
    assert_eq!(launches_of(&one_pass).len(), 2, "{:?}", names(&one_pass));
}

#[test]
fn a_per_work_item_array_of_a_size_known_at_launch_is_one_global_buffer() {
    let l = lowered(
        "entry f (xss: [n][m]f32) (k: i64) : [n][m]f32 =
  map (\\row -> loop acc = row for i < k do map (\\x -> x * 0.5f32) acc) xss",
    );
    // No private array in any version: `m` elements for each of the launch's `n`
    // work-items (one per row), allocated by the host.
    for launch in launches_of(&l) {
        let private = commands(&launch.kernel.body)
            .into_iter()
            .filter(|cmd| matches!(cmd, Cmd::Array { sharing: Sharing::WorkItem, .. }))
            .count();
        assert_eq!(private, 0, "{}", launch.kernel.name);
    }
    let allocs = allocs(&l, &l.steps);
    assert!(allocs.iter().all(|a| a == "(n * m)" || a == "(m * n)"), "{allocs:?}");
}

#[test]
fn a_scalar_computed_on_the_device_is_a_kernel_of_one_work_item() {
    let l = lowered("entry s (xs: [n]f32) (i: i64) : f32 = xs[i] * 2");
    let launches = launches_of(&l);
    assert!(!launches.is_empty());
    for launch in &launches {
        assert_eq!(launch.global, ["1"]);
        assert_eq!(launch.local, None);
        assert!(par_levels(launch.kernel).is_empty());
    }
    // The index is checked by the host, which reads the element: nothing proves it.
    assert_eq!(n_checks(launches[0].kernel), 0);
    assert!(all_steps(&l.steps).iter().any(|s| matches!(s, Step::Check { .. })));
}

#[test]
fn an_update_of_an_input_copies_it_then_writes_with_one_work_item() {
    let l = lowered("entry u (m: [r][c]i32) (i: i64) (j: i64) : [r][c]i32 = m with [i, j] = 0");
    let launches = launches_of(&l);
    let [copy, update] = launches.as_slice() else { panic!("two launches: {launches:#?}") };
    // The copy is coalesced: a work-item per element, in memory order.
    assert_eq!(copy.global, ["elements"]);
    assert_eq!(par_levels(copy.kernel), [ParLevel::GridCovered(0)]);
    assert_eq!(update.global, ["1"]);
    // Both indices are checked, by the host before the launch.
    let checks = all_steps(&l.steps).iter().filter(|s| matches!(s, Step::Check { .. })).count();
    assert_eq!(checks, 2);
}

#[test]
fn a_loop_of_updates_writes_in_place_without_a_copy() {
    let l = lowered(
        "entry f (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do acc with [i] = i * 2",
    );
    let body = l
        .steps
        .iter()
        .find_map(|step| match step {
            Step::For { body, .. } => Some(body.as_slice()),
            _ => None,
        })
        .expect("a host loop");
    let launches = launches(&l, body);
    let [update] = launches.as_slice() else { panic!("one launch per iteration: {launches:#?}") };
    assert_eq!(update.global, ["1"]);
    assert!(allocs(&l, body).is_empty(), "no copy inside the loop");
    // One array: the `replicate`'s, dead once the loop starts, is the loop's (no copy
    // at entry either).
    assert_eq!(allocs(&l, &l.steps), ["n"], "one array for the loop");
}

#[test]
fn a_bounds_check_the_parallel_loop_proves_is_dropped() {
    let kernel_checks = |src: &str| {
        let l = lowered(src);
        launches_of(&l).iter().map(|l| n_checks(l.kernel)).sum::<usize>()
    };
    assert_eq!(kernel_checks("entry g (xs: [n]f32) : [n]f32 = map (\\i -> xs[i] * 2) (iota n)"), 0);
    // A computed index stays checked: at each of a run's four points and in the last
    // run's loop.
    assert_eq!(
        kernel_checks("entry g (xs: [n]f32) : [n]f32 = map (\\i -> xs[(i + 1) % n]) (iota n)"),
        5
    );
}

#[test]
fn a_def_called_with_local_and_global_arrays_is_inlined_at_each_address_space() {
    // The middle end inlines every call, so no function is cloned per address space:
    // each inlined copy reads its own array where it is (docs/architecture.md).
    let l = lowered(
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry rows (a: [n][m]f32) (v: [m]f32) : [n]f32 =
  map@group (\\row -> let t = to_local row in dot t v + dot row v) a",
    );
    assert!(l.functions.is_empty());
    assert!(l.spaces.instances.is_empty());
    // The levels as written; `to_local` is a local buffer of the row's length.
    let launches = launches_of(&l);
    assert_eq!(par_levels(launches[0].kernel), [ParLevel::Group]);
    // The row in local memory, and the two reductions' trees.
    assert_eq!(launches[0].local_buffers, ["m", "256", "256"]);
}

#[test]
fn a_histogram_with_an_atomic_operator_is_one_work_item_per_value() {
    let atomics = |kernel: &KernelImp| {
        commands(&kernel.body)
            .into_iter()
            .filter_map(|cmd| match cmd {
                Cmd::Atomic { op, .. } => Some(*op),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let l = lowered(
        "entry h (d: [m]f32) (is: [n]i64) (vs: [n]f32) : [m]f32 = reduce_by_index d (+) 0 is vs",
    );
    let launches = launches_of(&l);
    // A copy of the destination, then one work-item per value: with few bins, each
    // work-group adds into its sub-histogram in local memory (float additions too),
    // then into the bins; with many, every value into the bins.
    let [copy, local, global] = launches.as_slice() else {
        panic!("three launches: {launches:#?}")
    };
    assert!(atomics(copy.kernel).is_empty());
    assert_eq!(local.local_buffers, ["m"]);
    assert_eq!(atomics(local.kernel), [crate::AtomicOp::Add, crate::AtomicOp::Add]);
    assert_eq!(global.global, ["n"]);
    assert_eq!(atomics(global.kernel), [crate::AtomicOp::Add]);
    // No atomic `min` on floats: one work-item per bin folds every value.
    let l = lowered(
        "entry h (is: [n]i64) (vs: [n]f32) : [8]f32 =
  reduce_by_index (replicate 8 f32.inf) f32.min f32.inf is vs",
    );
    let launches = launches_of(&l);
    let bins = launches.last().expect("a launch");
    assert!(atomics(bins.kernel).is_empty());
    assert_eq!(bins.global, ["8"]);
}

/// The loops of a kernel that come from the source (`for` loops with a source line),
/// each with the `for` loops and the stores of its body (nested ones included).
fn source_loops(kernel: &KernelImp) -> Vec<(usize, usize)> {
    commands(&kernel.body)
        .into_iter()
        .filter_map(|cmd| match cmd {
            Cmd::For { body, comment: Some(_), .. } => {
                let inner = commands(body);
                let loops = inner.iter().filter(|c| matches!(c, Cmd::For { .. })).count();
                let stores = inner.iter().filter(|c| matches!(c, Cmd::Store { .. })).count();
                Some((loops, stores))
            }
            _ => None,
        })
        .collect()
}

/// The kernels (of every launch, versions included) that run a source loop.
fn loop_kernels(l: &Lowered) -> Vec<&KernelImp> {
    let kernels: Vec<&KernelImp> = launches_of(l)
        .into_iter()
        .map(|launch| launch.kernel)
        .filter(|kernel| !source_loops(kernel).is_empty())
        .collect();
    if std::env::var_os("WEFT_TEST_PRINT").is_some() {
        for k in &kernels {
            eprintln!("{}: {:?} copies {}", k.name, source_loops(k), copy_loops(k));
        }
    }
    kernels
}

/// The number of `for` loops of a kernel outside its source loops (copies).
fn copy_loops(kernel: &KernelImp) -> usize {
    commands(&kernel.body)
        .into_iter()
        .filter(|cmd| matches!(cmd, Cmd::For { comment: None, .. }))
        .count()
}

#[test]
fn a_with_on_a_loop_array_in_a_kernel_is_one_store_in_place() {
    // Issue 13's reproducer: one copy of the row into the work-item's array at loop
    // entry, one store per `with`, no copy in the loop.
    let src = "entry f (xss: [m][n]f32) : [m][n]f32 =
  map (\\xs -> loop a = xs for i < n do a with [i] = 1) xss";
    let l = lowered(src);
    let kernels = loop_kernels(&l);
    assert!(!kernels.is_empty());
    for map in kernels {
        // One store per step and no copy (the staged-rows kernel has two source loops:
        // the loop and the row's copy into local memory, which is a loop too).
        assert!(source_loops(map).iter().all(|&l| l == (0, 1)), "one store, no copy, per step");
    }
    // A loop whose array starts as an array computed in the kernel: that array is
    // computed into the loop's storage, nothing is copied.
    let src = "entry f (xss: [m][n]f32) : [m][n]f32 =
  map (\\xs -> loop a = map (\\x -> x * 2) xs for i < n do a with [i] = a[i] + 1) xss";
    let l = lowered(src);
    let kernels = loop_kernels(&l);
    assert!(!kernels.is_empty());
    for kernel in kernels {
        let loops = source_loops(kernel);
        assert!(loops.iter().all(|&l| l == (0, 1)), "{}: {loops:?}", kernel.name);
    }
}

#[test]
fn a_with_whose_old_array_is_read_afterwards_copies_in_the_kernel() {
    // `a` is read after the update (`map2 (+) a b`): the update makes a new array, and
    // the step's result is written back into the loop's array.
    let src = "entry f (xss: [m][n]f32) : [m][n]f32 =
  map (\\xs ->
         loop a = xs for i < n do
           let b = a with [i] = 1
           in map2 (+) a b)
      xss";
    {
        let l = lowered(src);
        let kernels = loop_kernels(&l);
        assert!(!kernels.is_empty());
        for kernel in kernels {
            let loops = source_loops(kernel);
            // The source loop's body copies the new value into the loop's array.
            let (copies, _) = loops[0];
            assert!(copies >= 1, "the new value is copied into the loop's array: {loops:?}");
        }
    }
}

/// The lengths of the allocations and the global sizes of the launches in the body
/// of the plan's first host `for` loop.
fn host_loop_body(l: &Lowered) -> (Vec<String>, Vec<Vec<String>>) {
    let body = all_steps(&l.steps)
        .into_iter()
        .find_map(|step| match step {
            Step::For { body, .. } => Some(body.as_slice()),
            _ => None,
        })
        .expect("a host loop");
    let globals = launches(l, body).into_iter().map(|launch| launch.global).collect();
    (allocs(l, body), globals)
}

/// Whether a host expression names the size `m` (not a host variable like `items`).
fn names_size_m(expr: &str) -> bool {
    expr.split(|c: char| !c.is_alphanumeric() && c != '_').any(|word| word == "m")
}

#[test]
fn a_scatter_of_values_read_from_its_loop_array_computes_them_first_and_writes_in_place() {
    // Issue 13's reproducer: the values read `xs`; they are computed into a buffer
    // of their own (2 elements), then the scatter writes into `xs`: no `m`-element
    // copy per step.
    let src = "entry f (n: i64) (xs: [m]i32) : [m]i32 =
  loop xs = xs for i < n do
    let vs = map (\\j -> xs[j] + 1) (iota 2)
    in scatter xs (map (\\j -> j + 2) (iota 2)) vs";
    {
        let l = lowered(src);
        let (allocs, globals) = host_loop_body(&l);
        // The values' buffer, and no kernel over `m` elements.
        assert!(!allocs.is_empty() && allocs.iter().all(|a| a == "2"), "{allocs:?}");
        assert!(!globals.iter().flatten().any(|g| names_size_m(g)), "{globals:?}");
    }
    // Values that do not read `xs` are left as they were (weft-core does not ask for
    // them first); the scatter is in place too.
    let src = "entry f (n: i64) (xs: [m]i32) (ys: [2]i32) : [m]i32 =
  loop xs = xs for i < n do scatter xs (map (\\j -> j + 2) (iota 2)) (map (+ 1) ys)";
    {
        let l = lowered(src);
        let (allocs, globals) = host_loop_body(&l);
        assert!(!allocs.iter().any(|a| a.contains('m')), "{allocs:?}");
        assert!(!globals.iter().flatten().any(|g| names_size_m(g)), "{globals:?}");
    }
}

#[test]
fn a_scatter_of_a_view_of_its_loop_array_copies_the_array() {
    // The values are `xs` reversed, read while the scatter writes: a copy of `xs`.
    let src = "entry f (n: i64) (xs: [m]i32) : [m]i32 =
  loop xs = xs for _i < n do scatter xs (iota m) (reverse xs)";
    {
        let l = lowered(src);
        let (allocs, _) = host_loop_body(&l);
        assert_eq!(allocs, ["m"], "a copy of the array per step");
    }
}

#[test]
fn a_loop_over_a_pair_of_arrays_in_a_map_compiles_through_the_middle_end() {
    // Issue 13: the middle end spread the loop's pair of rows over all rows (an array
    // of pairs of arrays, which this back end rejects); it now keeps the map whole.
    let src = "entry f (xss: [m][n]f32) : [m][n]f32 =
  map (\\xs -> let (a, b) = loop (a, b) = (xs, xs) for i < n do (a, b) in map2 (+) a b) xss";
    let l = lowered(src);
    assert!(!loop_kernels(&l).is_empty());
    // One version only: no work-group or flattened version spreads the pair (the one
    // condition left chooses whether short rows are staged through local memory).
    assert_eq!(host_conditions(&l), ["(n <= 32)"]);
}

/// Parboil's `sgemm` (`alpha * A * B^T + beta * C`): the middle end's fully flattened
/// version is a reduction over `(i, j, l)` and an epilogue. Its element reads become
/// row reads and the reduction is forced, so the code generator sees (and tiles) the
/// nest of maps over the operands' rows; before, the epilogue's kernel recomputed each
/// dot product per element, untiled (275 ms on the H100 at 4096^3).
#[test]
fn a_matrix_product_with_an_epilogue_is_tiled_through_the_middle_end() {
    let l = lowered(
        "entry s (alpha: f32) (beta: f32) (a: [n][k]f32) (bt: [m][k]f32) (c: [n][m]f32) : [n][m]f32 =
  map2 (\\arow crow -> map2 (\\brow cij -> alpha * reduce (+) 0 (map2 (*) arow brow) + beta * cij) bt crow) a c",
    );
    let names: Vec<&str> = l.kernels.iter().map(|k| k.name.as_str()).collect();
    assert!(names.iter().any(|n| n.contains("product")), "{names:?}");
}

// ---- the code generator from the GPU IR (`gpu/`) ----

/// `src`'s first entry through the middle end (every call inlined) and its memory,
/// compiled by `lower_gpu_entry` for a GPU (the committed H200 profile) or a CPU (POCL's).
fn lowered_gpu(src: &str, cpu: bool) -> Lowered {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
    let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
    let kind = if cpu { "cpu" } else { "gpu" };
    let profile = weft_cost::profile::builtin_profiles()
        .iter()
        .find(|p| p.device.kind == kind && (cpu || p.device.name.contains("H200")))
        .expect("a committed profile");
    let (target, mem_target) = if cpu {
        (weft_opt::Target::Cpu, weft_mem::Target::Cpu)
    } else {
        (weft_opt::Target::Gpu, weft_mem::Target::Gpu)
    };
    let gpu = weft_opt::pipeline_inlined(&program, target);
    let mem = weft_mem::annotate_gpu(&gpu, mem_target);
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let options = Options { profile: Some(profile), ..Options::default() };
    let threshold = |t: weft_opt::ThresholdId| gpu.thresholds[t].default;
    crate::lower_gpu_entry(&gpu, &mem, &threshold, gpu.entries[0], &position, options)
        .expect("lowers")
}

fn local_atomics(kernel: &KernelImp) -> usize {
    commands(&kernel.body).into_iter().filter(|c| matches!(c, Cmd::Atomic { .. })).count()
}

#[test]
fn gpu_a_reduction_is_two_stages_of_work_group_trees_reading_runs_of_four() {
    let l = lowered_gpu("entry s (xs: [n]f32) : f32 = reduce (+) 0 xs", false);
    let ls = launches_of(&l);
    assert_eq!(ls.len(), 2, "{ls:?}");
    assert_eq!(ls[1].global, ["256"], "the second stage is one group");
    for launch in &ls {
        assert_eq!(launch.local_buffers, ["256"], "a tree in local memory: {launch:?}");
        assert!(n_barriers(launch.kernel) >= 8, "log2(256) levels of the tree");
    }
    // Four neighbouring elements per iteration in the first stage, one vector load.
    let vectors = vector_loads(ls[0].kernel);
    assert_eq!(vectors.len(), 1, "{}", crate::print_kernel_imp(ls[0].kernel));
    assert!(vectors[0].starts_with("4 lanes of "), "{vectors:?}");
}

#[test]
fn gpu_a_reduction_on_a_cpu_folds_contiguous_shares_into_eight_accumulators() {
    // A core streams its work-item's share in order; eight independent accumulators
    // (one vector register) instead of one chain of dependent additions. At least 256
    // elements per work-item: a group per 65536 elements, at most 1024 groups.
    let l = lowered_gpu("entry s (xs: [n]f32) : f32 = reduce (+) 0 xs", true);
    let ls = launches_of(&l);
    assert_eq!(ls.len(), 2, "{ls:?}");
    assert!(
        host_text(
            &l,
            &l.steps
                .iter()
                .find_map(|s| match s {
                    Step::Let { value, .. } => Some(value.clone()),
                    _ => None,
                })
                .expect("the group count")
        )
        .contains("65536")
    );
    let runs: Vec<Vec<&Cmd>> = commands(&ls[0].kernel.body)
        .into_iter()
        .filter_map(|c| match c {
            Cmd::For { body, comment: Some(_), .. } => Some(body.iter().collect()),
            _ => None,
        })
        .collect();
    let [run] = runs.as_slice() else { panic!("one loop over the share: {runs:?}") };
    let loads = run
        .iter()
        .filter(|c| matches!(c, Cmd::Decl { init: Some(crate::CExpr::Load(..)), .. }))
        .count();
    assert_eq!(loads, 8, "{}", crate::print_kernel_imp(ls[0].kernel));
    // No bounds check: every index is inside the share.
    assert_eq!(n_checks(ls[0].kernel), 0);
    // A non-commutative operator keeps contiguous shares folded in order, one chain.
    let ordered = lowered_gpu(
        "entry f (xs: [n]f32) : f32 = reduce (\\a b -> if a != 0 then a else b) 0 xs",
        true,
    );
    assert!(!crate::print_kernel_imp(launches_of(&ordered)[0].kernel).contains("runs_"));
}

#[test]
fn gpu_a_copy_on_a_cpu_is_a_loop_over_runs_of_64_elements_per_work_item() {
    // A reversal copies element by element; on a CPU each work-item loops over 64 of
    // them (a loop the compiler vectorises), on a GPU one work-item per element.
    let src = "entry f (xs: [n]f32) : [n]f32 = reverse xs";
    let cpu = lowered_gpu(src, true);
    let launches = launches_of(&cpu);
    let [copy] = launches.as_slice() else { panic!("one copy: {launches:?}") };
    assert_eq!(copy.global, ["((n + 63) / 64)"]);
    let loops = commands(&copy.kernel.body)
        .into_iter()
        .filter(|c| matches!(c, Cmd::For { comment: Some(_), .. }))
        .count();
    assert_eq!(loops, 1, "{}", crate::print_kernel_imp(copy.kernel));
    let gpu = lowered_gpu(src, false);
    assert_eq!(launches_of(&gpu)[0].global, ["n"]);
}

#[test]
fn gpu_a_light_map_on_a_cpu_is_a_loop_over_runs_of_64_points_per_work_item() {
    // `a * x + y` per point: a work-item per run of 64 points on a CPU (a loop the
    // compiler vectorises); a point that runs a loop has work enough, a work-item each.
    let light = lowered_gpu(
        "entry f (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (\\x y -> a * x + y) xs ys",
        true,
    );
    assert_eq!(launches_of(&light)[0].global, ["items"]);
    assert!(
        host_text(
            &light,
            &light
                .steps
                .iter()
                .find_map(|s| match s {
                    Step::Let { value, .. } => Some(value.clone()),
                    _ => None,
                })
                .expect("the run count")
        )
        .contains("64")
    );
    let heavy = lowered_gpu(
        "entry f (xs: [n]f32) (k: i64) : [n]f32 = map (\\x -> loop a = x for i < k do a * 0.5f32) xs",
        true,
    );
    assert_eq!(launches_of(&heavy)[0].global, ["n"]);
    // On a GPU a work-item per run of four points (below).
    let gpu = lowered_gpu(
        "entry f (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (\\x y -> a * x + y) xs ys",
        false,
    );
    assert!(launches_of(&gpu)[0].kernel.doc.contains("run of 4 points"));
}

#[test]
fn gpu_a_failed_check_in_a_kernel_with_barriers_goes_on_at_a_clamped_index() {
    // The work-item cannot return (the group's barriers wait for it): after recording
    // the error it reads at the index clamped into the row, not outside the buffer
    // (POCL's runner crashed on `row[1000000000]`, with no message).
    let l = lowered(
        "entry g (xss: [n][m]f32) (is: [k]i64) : [n]f32 =
  map@group (\\row -> reduce@group (+) 0 (map@thread (\\j -> row[j]) is)) xss",
    );
    let text = crate::print_kernel_imp(launches_of(&l)[0].kernel);
    assert!(n_barriers(launches_of(&l)[0].kernel) > 0);
    assert!(text.contains("max(min(j_"), "{text}");
    assert!(!commands(&launches_of(&l)[0].kernel.body).iter().any(|c| matches!(c, Cmd::Exit)));
}

#[test]
fn gpu_a_reductions_runs_of_four_need_no_bounds_checks_and_a_gather_keeps_its() {
    // `4q + lane < 4 (n / 4) <= n`: the reads of a reduction's own array are in range
    // by construction (checks there kept POCL from vectorising the loop); a gather's
    // index comes from data and stays checked.
    let fails = |src: &str| {
        let l = lowered_gpu(src, true);
        let ls = launches_of(&l);
        commands(&ls[0].kernel.body).into_iter().filter(|c| matches!(c, Cmd::Fail { .. })).count()
    };
    assert_eq!(fails("entry s (xs: [n]f32) : f32 = reduce (+) 0 xs"), 0);
    assert!(
        fails("entry g (xs: [n]f32) (is: [m]i64) : f32 = reduce (+) 0 (map (\\i -> xs[i]) is)") > 0
    );
}

#[test]
fn gpu_a_matrix_product_is_one_kernel_of_tiles_in_local_memory() {
    let l = lowered_gpu(
        "entry mm (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =
  map (\\r -> map (\\c -> reduce (+) 0 (map2 (*) r c)) (transpose b)) a",
        false,
    );
    let products: Vec<_> =
        launches_of(&l).into_iter().filter(|x| x.kernel.name.contains("product")).collect();
    assert_eq!(products.len(), 1, "{:?}", launches_of(&l));
    let p = &products[0];
    assert_eq!(p.local, Some(vec!["16".to_owned(), "16".to_owned()]));
    assert_eq!(p.local_buffers, ["1024", "1024"], "8 columns of 128 rows of each operand");
    // No launch computes the product element by element besides it.
    assert!(!launches_of(&l).iter().any(|x| x.kernel.name.contains("segred")));
}

#[test]
fn gpu_a_histogram_of_few_bins_counts_in_local_memory_first() {
    let l = lowered_gpu(
        "entry h (bins: [m]i32) (is: [n]i64) : [m]i32 =
  reduce_by_index bins (+) 0 is (replicate n 1i32)",
        false,
    );
    // Chosen per run: few bins in the work-group's local memory, else in global memory.
    assert!(host_conditions(&l).iter().any(|c| c.contains("<= 4096")), "{:?}", host_conditions(&l));
    let hists: Vec<_> = launches_of(&l)
        .into_iter()
        .filter(|x| x.kernel.name.contains("hist_") && !x.kernel.name.contains("dest"))
        .collect();
    assert_eq!(hists.len(), 2, "{hists:?}");
    assert!(hists.iter().any(|h| h.local_buffers == ["m"] && local_atomics(h.kernel) == 2));
    assert!(hists.iter().any(|h| h.local_buffers.is_empty() && local_atomics(h.kernel) == 1));
}

#[test]
fn gpu_a_rows_array_is_written_where_it_goes_with_no_copy() {
    // The outer-parallel version's row is built in its row of the result: one loop per
    // row writes it, none copies it.
    let l = lowered_gpu(
        "entry norm (xss: [n][m]f32) : [n][m]f32 =
  map (\\xs -> let s = reduce (+) 0 xs in map (\\x -> x / s) xs) xss",
        true,
    );
    let outer = &l.kernels[0];
    let loops = commands(&outer.body).into_iter().filter(|c| matches!(c, Cmd::For { .. })).count();
    assert_eq!(loops, 2, "a sum and a division per row:\n{}", crate::print_kernel_imp(outer));
}

#[test]
fn gpu_a_two_dimensional_map_loops_over_rows_on_a_cpu_and_spreads_them_on_a_gpu() {
    let src = "entry add (a: [n][m]f32) (b: [n][m]f32) : [n][m]f32 = map2 (map2 (+)) a b";
    // The fully flattened version (a two-dimensional SegMap) of each.
    let cpu = lowered_gpu(src, true);
    let k = cpu.kernels.iter().find(|k| k.doc.contains("innermost")).expect("a 2-D map kernel");
    assert_eq!(par_levels(k), [ParLevel::GridCovered(0)], "{}", crate::print_kernel_imp(k));
    assert!(commands(&k.body).iter().any(|c| matches!(c, Cmd::For { .. })));
    let gpu = lowered_gpu(src, false);
    let k = gpu.kernels.iter().find(|k| k.doc.contains("(2-D NDRange)")).expect("a 2-D map");
    assert_eq!(par_levels(k), [ParLevel::GridCovered(1), ParLevel::GridCovered(0)]);
}

#[test]
fn gpu_an_array_whose_size_each_work_item_computes_takes_the_largest_first() {
    let l = lowered_gpu(
        "entry f (ns: [k]i64) : [k]i64 =
  map (\\n -> let a = scan (+) 0 (iota n) in a[n - 1] + reduce i64.max 0 a) ns",
        false,
    );
    let names: Vec<&str> = l.kernels.iter().map(|k| k.name.as_str()).collect();
    let largest =
        names.iter().position(|n| n.contains("largest_")).unwrap_or_else(|| panic!("{names:?}"));
    // The maximum is read to the host, and the expanded block allocated from it.
    let steps = all_steps(&l.steps);
    let read = steps.iter().position(|s| matches!(s, Step::Read { .. })).expect("a read");
    let alloc = steps
        .iter()
        .rposition(
            |s| matches!(s, Step::Alloc { len, .. } if host_text(&l, len).contains("largest")),
        )
        .expect("an allocation from the largest size");
    assert!(largest < l.kernels.len() && read < alloc, "{steps:?}");
}

#[test]
fn gpu_a_scan_on_a_gpu_scans_tiles_in_local_memory() {
    // 64-bit elements: three stages over chunks in tiles of the group's work-items.
    let l = lowered_gpu("entry s (xs: [n]i64) : [n]i64 = scan (+) 0 xs", false);
    let ls = launches_of(&l);
    assert_eq!(ls.len(), 3, "{ls:?}");
    assert!(ls[0].kernel.name.contains("scan_chunk_totals"));
    assert!(ls[2].kernel.name.contains("scan_tiles"));
    assert_eq!(ls[2].local_buffers, ["256"]);
    // 32-bit elements on an NVIDIA GPU: one pass with decoupled look-back (after the
    // status words are cleared), each element read and written once.
    let l = lowered_gpu("entry s (xs: [n]f32) : [n]f32 = scan (+) 0 xs", false);
    let ls = launches_of(&l);
    assert_eq!(ls.len(), 2, "{ls:?}");
    assert!(ls[1].kernel.doc.contains("looks back"), "{}", ls[1].kernel.doc);
    let exchanges = commands(&ls[1].kernel.body)
        .into_iter()
        .filter(|c| matches!(c, Cmd::Atomic { op: crate::AtomicOp::Exchange, .. }))
        .count();
    assert_eq!(exchanges, 3, "a total or prefix published, then the inclusive prefix");
}

#[test]
fn gpu_an_unsupported_construct_is_an_error_at_its_position() {
    let mut db = RootDatabase::default();
    // Each thread of a group sums an array of its own size: not supported yet.
    let src = "entry f (xss: [n][m]i64) : [n][m]i64 =
  map@group (\\xs -> map@thread (\\x -> reduce (+) 0 (scan (+) 0 (iota x))) xs) xss";
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("no errors");
    let program = weft_core::lower_file(&db, checked).expect("elaborates");
    let gpu = weft_opt::pipeline_inlined(&program, weft_opt::Target::Gpu);
    let mem = weft_mem::annotate_gpu(&gpu, weft_mem::Target::Gpu);
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let threshold = |t: weft_opt::ThresholdId| gpu.thresholds[t].default;
    let result = crate::lower_gpu_entry(
        &gpu,
        &mem,
        &threshold,
        gpu.entries[0],
        &position,
        Options::default(),
    );
    let error = result.expect_err("a thread's array of a size it computes");
    assert!(error.unsupported, "{error:?}");
    assert!(error.origin.is_some(), "{error:?}");
}

#[test]
fn gpu_a_kernel_loop_exchanging_its_arrays_reads_every_old_element_before_writing() {
    // `(a, b) -> (b, a)`: copying `b` into `a`'s memory and then `a` into `b`'s would
    // leave both equal to the old `b`. The exchange loads both elements of an index,
    // then stores both.
    let l = lowered_gpu(
        "entry swap (xss: [n][m]f32) (k: i64) : [n][m]f32 =
  map (\\xs ->
    let (a, b) = loop (a, b) = (xs, map (\\x -> x * 2) xs) for i < k do (b, a)
    in map2 (+) a (map (\\x -> x * 3) b)) xss",
        false,
    );
    let exchanges: Vec<Vec<&Cmd>> = launches_of(&l)
        .iter()
        .flat_map(|launch| commands(&launch.kernel.body))
        .filter_map(|cmd| match cmd {
            Cmd::For { body, .. } => Some(body.iter().collect::<Vec<_>>()),
            _ => None,
        })
        .filter(|body| body.iter().filter(|c| matches!(c, Cmd::Store { .. })).count() == 2)
        .collect();
    // One per version of the map that runs the loop in a work-item.
    assert!(!exchanges.is_empty(), "an element-wise exchange");
    for body in exchanges {
        let first_store = body.iter().position(|c| matches!(c, Cmd::Store { .. })).unwrap();
        let loads_before = body[..first_store]
            .iter()
            .filter(|c| matches!(c, Cmd::Decl { init: Some(crate::CExpr::Load(..)), .. }))
            .count();
        assert_eq!(loads_before, 2, "{body:?}");
    }
}

#[test]
fn gpu_column_sums_read_the_matrix_once_with_no_copy_and_no_per_work_item_array() {
    // `reduce (map2 (+))` over rows: partial sums of chunks of rows for every column,
    // then the column of partials reduced. The chunk's row offsets are the loop's
    // index (no `iota` made per work-item), and the partials are stored once where the
    // first kernel writes them (their `to_global` is that memory, not a copy).
    let l = lowered_gpu(
        "entry column_sums (xss: [n][m]f32) : [m]f32 =
  reduce (map2 (+)) (replicate m 0f32) xss",
        false,
    );
    for k in &l.kernels {
        assert!(!k.doc.contains("one work-item ("), "{}", k.doc);
        let arrays =
            commands(&k.body).into_iter().filter(|cmd| matches!(cmd, Cmd::Array { .. })).count();
        assert!(!k.name.contains("map_0") || arrays == 0, "{}", crate::print_kernel_imp(k));
    }
    let allocs = allocs(&l, &l.steps);
    let partials = allocs.iter().filter(|a| **a == allocs[0]).count();
    assert_eq!(partials, 1, "one buffer of partials (the first allocation): {allocs:?}");
}

fn vector_loads(kernel: &KernelImp) -> Vec<String> {
    commands(&kernel.body)
        .into_iter()
        .filter_map(|c| match c {
            Cmd::VectorLoad { lanes, load, aligned, .. } => Some(format!(
                "{} lanes of {load}{}",
                lanes.len(),
                if *aligned { ", aligned" } else { "" }
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn gpu_a_reductions_runs_of_four_read_each_contiguous_array_as_one_vector() {
    // Dot product: both arrays are read at `4q + lane`, offset 0 and stride 1, so each
    // run is one aligned vector load per array and no scalar load is left.
    let l = lowered_gpu(
        "entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)",
        false,
    );
    let first = launches_of(&l)[0].kernel;
    let text = crate::print_kernel_imp(first);
    let vectors = vector_loads(first);
    assert_eq!(vectors.len(), 2, "{text}");
    assert!(vectors.iter().all(|v| v.starts_with("4 lanes of ") && v.ends_with(", aligned")));
    let in_runs = commands(&first.body)
        .into_iter()
        .find_map(|c| match c {
            Cmd::ParFor { body, .. } => Some(body),
            _ => None,
        })
        .expect("the runs' loop");
    let scalar_loads = commands(in_runs)
        .into_iter()
        .filter(|c| matches!(c, Cmd::Decl { init: Some(crate::CExpr::Load(..)), .. }))
        .count();
    assert_eq!(scalar_loads, 0, "{text}");
    // Reversed, the elements of a run are at `n - 1 - (4q + lane)`: not a vector.
    let l = lowered_gpu("entry s (xs: [n]f32) : f32 = reduce (+) 0 (reverse xs)", false);
    assert_eq!(vector_loads(launches_of(&l)[0].kernel), Vec::<String>::new());
    // Double precision stays scalar (a vector of four is 32 bytes).
    let l = lowered_gpu("entry s (xs: [n]f64) : f64 = reduce (+) 0 xs", false);
    assert_eq!(vector_loads(launches_of(&l)[0].kernel), Vec::<String>::new());
}

#[test]
fn gpu_a_light_map_is_a_work_item_per_run_of_four_reading_vectors() {
    // saxpy: a work-item per four neighbouring points, each input read as one vector;
    // the last, shorter run point by point.
    let l = lowered_gpu(
        "entry saxpy (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (\\x y -> a * x + y) xs ys",
        false,
    );
    let ls = launches_of(&l);
    assert_eq!(ls.len(), 1);
    let k = ls[0].kernel;
    assert!(k.doc.contains("one work-item per run of 4 points"), "{}", k.doc);
    let vectors = vector_loads(k);
    assert_eq!(vectors.len(), 2, "{}", crate::print_kernel_imp(k));
    let stores = commands(&k.body).into_iter().filter(|c| matches!(c, Cmd::Store { .. })).count();
    assert_eq!(stores, 5, "four in a whole run, one for a point of the last `n % 4`");
    // A body that makes an array keeps a work-item per point (it is written once).
    let l = lowered_gpu(
        "entry f (xs: [n]f32) : [n]f32 = map (\\x -> let t = [x, x + 1] in t[0] * t[1]) xs",
        false,
    );
    assert!(!launches_of(&l)[0].kernel.doc.contains("run of"));
}
