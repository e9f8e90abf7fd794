//! The profiler on Weft programs: graphs, work and span, summarised blocks against full
//! graphs, placement in device boxes with transfers, space per world.

use expect_test::expect;
use weft_core::{CheckedFile, Exp, Program, lower_file};
use weft_cost::graph::World;
use weft_cost::profiler::{CostParams, KernelInfo, Profile, profile};
use weft_hir::RootDatabase;
use weft_plan::{Elem, Expr, Input, Output, Plan, Var};
use weft_values::Value;

fn program(src: &str) -> Program {
    let mut db = RootDatabase::default();
    let file = db.set_file("test.weft", src);
    let checked = CheckedFile::new(&db, file).expect("the test program has no errors");
    lower_file(&db, checked).expect("elaboration succeeds")
}

fn inputs(text: &str) -> Vec<Value> {
    weft_values::parse_values(text).expect("valid inputs")
}

fn host_profile(src: &str, input: Vec<Value>, params: &CostParams) -> Profile {
    let p = program(src);
    let entry = p.entries[0];
    profile(&p, entry, input, None, params).expect("runs")
}

const DOT: &str = "entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)";

#[test]
fn dot_product_on_the_host() {
    let params = CostParams { processors: 2, ..CostParams::default() };
    let prof =
        host_profile(DOT, inputs("[1f32, 2f32, 3f32, 4f32] [1f32, 1f32, 1f32, 1f32]"), &params);
    assert_eq!(weft_values::print_values(&prof.results), "10.0f32\n");
    // map: 4 leaves of one multiplication, 4(n-1) = 12 fork/join edges, its statement
    // edge; reduce: 4 applications, 12 edges, combining depth 2 (latency, no work),
    // its statement edge.
    assert_eq!(prof.work, (4 + 12 + 1) + (4 + 12 + 1));
    assert_eq!(prof.span, (1 + 4 + 1) + (1 + 4 + 2 + 1));
    expect![[r#"
        n0 "start" [alloc input `xs` 16B@host] [alloc input `ys` 16B@host] -0-> n13
        n1 -1-> n2
        n2 -1-> n10
        n3 -1-> n4
        n4 -1-> n10
        n5 -1-> n6
        n6 -1-> n12
        n7 -1-> n8
        n8 -1-> n12
        n9 -1-> n1 -1-> n3
        n10 -1-> n14
        n11 -1-> n5 -1-> n7
        n12 -1-> n14
        n13 -1-> n9 -1-> n11
        n14 -1-> n15
        n15 "t6 = map" [alloc `t6` 16B@host] -0-> n28
        n16 -1-> n17
        n17 -1-> n25
        n18 -1-> n19
        n19 -1-> n25
        n20 -1-> n21
        n21 -1-> n27
        n22 -1-> n23
        n23 -1-> n27
        n24 -1-> n16 -1-> n18
        n25 -1-> n29
        n26 -1-> n20 -1-> n22
        n27 -1-> n29
        n28 -1-> n24 -1-> n26
        n29 -0/2-> n30
        n30 "combine" -1-> n31
        n31 "t10 = reduce" [free `t6` 16B@host] -0-> n32
        n32 "end" [free input `xs` 16B@host] [free input `ys` 16B@host]
    "#]]
    .assert_eq(&prof.graph.describe());
}

#[test]
fn summarised_blocks_keep_work_and_span_exact() {
    let cases = [
        ("entry f (xs: [n]f32) : [n]f32 = map (\\x -> x * 2f32 + 1f32) xs", "[1000]f32"),
        (
            "entry f (xss: [n][m]f32) : [n]f32 = map (\\row -> reduce (+) 0 (map (\\x -> x * x) row)) xss",
            "[100][37]f32",
        ),
        ("entry f (xs: [n]i64) : i64 = reduce (+) 0 (scan (+) 0 xs)", "[777]i64"),
        ("entry f (n: i64) : [n]i64 = reverse (iota n)", "i64 in 1000..1001"),
    ];
    for (src, spec) in cases {
        let specs = vec![weft_values::parse_random_spec(spec).expect("spec")];
        let values = weft_values::generate_inputs(&specs, 7).expect("inputs fit");
        let full =
            CostParams { collapse: 1_000_000, node_budget: usize::MAX, ..CostParams::default() };
        let summarised = CostParams { collapse: 64, ..CostParams::default() };
        let a = host_profile(src, values.clone(), &full);
        let b = host_profile(src, values, &summarised);
        assert_eq!((a.work, a.span), (b.work, b.span), "{src}");
        assert!(b.graph.nodes.len() < a.graph.nodes.len() / 4, "{src}");
        assert_eq!(a.collapsed, 0);
        assert!(b.collapsed > 0);
    }
}

#[test]
fn a_million_elements_profile_quickly() {
    let src =
        "entry saxpy (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (\\x y -> a * x + y) xs ys";
    let specs: Vec<_> = ["f32", "[1000000]f32", "[1000000]f32"]
        .iter()
        .map(|s| weft_values::parse_random_spec(s).expect("spec"))
        .collect();
    let values = weft_values::generate_inputs(&specs, 1).expect("inputs fit");
    let start = std::time::Instant::now();
    let prof = host_profile(src, values, &CostParams { processors: 8, ..CostParams::default() });
    // Per element: two arithmetic edges; fork/join 4(n-1); the map's statement edge.
    let n = 1_000_000u64;
    assert_eq!(prof.work, 2 * n + 4 * (n - 1) + 1);
    assert_eq!(prof.span, 2 + 2 * 20 + 1);
    assert!(prof.graph.nodes.len() < 400);
    assert!(start.elapsed().as_secs() < 60);
    // Host: both inputs, then the result too.
    assert_eq!(prof.space.host.bytes, 3 * 4 * n);
}

/// A plan for one map kernel computing the entry's (only) map, with array inputs and
/// one array output.
fn map_placement(p: &Program, n_inputs: usize) -> (Plan, Vec<KernelInfo>) {
    let f = &p.functions[p.entries[0]];
    let origins = f
        .exps
        .iter()
        .filter(|(_, e)| matches!(e, Exp::Map { .. }))
        .filter_map(|(id, _)| f.origins.get(id).cloned())
        .collect();
    let inputs = (0..n_inputs)
        .map(|i| Input::Array { buf: Var(i as u32 + 1), elem: Elem::F32, dims: vec![Var(0)] })
        .collect();
    let plan = Plan {
        entry: f.name.to_string(),
        source: String::new(),
        kernels: Vec::new(),
        inputs,
        input_names: Vec::new(),
        n_vars: 8,
        steps: Vec::new(),
        outputs: vec![Output::Array {
            buf: Var(7),
            elem: Elem::F32,
            offset: Expr::I64(0),
            strides: vec![Expr::I64(1)],
            shape: vec![Expr::var(Var(0))],
        }],
        errors: Vec::new(),
    };
    (plan, vec![KernelInfo { name: "f_map_0".to_owned(), origins }])
}

#[test]
fn kernels_become_device_boxes_with_transfers() {
    let src = "entry f (xs: [n]f32) (ys: [n]f32) : [n]f32 =\n  let zs = map2 (\\x y -> x * y) xs ys\n  in map (\\z -> z + 1f32) zs";
    let p = program(src);
    let (plan, kernels) = map_placement(&p, 2);
    let params = CostParams { processors: 4, bytes_per_unit: 4, ..CostParams::default() };
    let values = inputs("[1f32, 2f32, 3f32] [4f32, 5f32, 6f32]");
    let prof = profile(&p, p.entries[0], values, Some((&plan, &kernels)), &params).expect("runs");
    assert_eq!(weft_values::print_values(&prof.results), "[5.0f32, 11.0f32, 19.0f32]\n");
    // Both maps are computed by the (one) kernel: one box, one launch.
    assert_eq!(prof.graph.boxes.len(), 1);
    assert_eq!(prof.kernel_launches, 1);
    assert_eq!(prof.transfers_to_device, (2, 24));
    assert_eq!(prof.transfers_to_host, (1, 12));
    let b = &prof.graph.boxes[0];
    // Inner: 3 + 3 leaves of one edge, two statement edges; n-ary fork/joins are free.
    assert_eq!((b.work, b.span, b.time), (8, 4, 4));
    // Transfers: 3 + 3 + 3 units (12 bytes at 4 bytes per unit).
    assert_eq!(prof.transfer_work, 9);
    assert_eq!(prof.work, 8 + 9);
    assert_eq!(prof.schedule.makespan, 3 + 3 + 4 + 3);
    assert_eq!(prof.space.device.bytes, 24 + 12 + 12);
    assert_eq!(prof.space.host.bytes, 24 + 12);
    let device: Vec<String> = prof
        .graph
        .regions
        .iter()
        .filter(|r| r.world == World::Device)
        .map(|r| format!("{} {}", r.name, r.bytes))
        .collect();
    expect![[r#"["input `xs` 12", "input `ys` 12", "`zs` 12", "`t9` 12"]"#]]
        .assert_eq(&format!("{device:?}"));
    let dot = weft_cost::dot::to_dot(&prof.graph, "test");
    assert!(dot.contains("subgraph cluster_box0"));
    assert!(dot.contains("H2D 12 B: 3"));
    // The summary: the box one edge naming its kernel, chains of steps merged, the
    // transfers kept; fewer lines than the whole graph.
    let summary = weft_cost::dot::to_summary_dot(&prof.graph, "test");
    expect![[r#"
        digraph cost {
          label="test\nspan S = 13, work W = 17 (darker boxes: more of S)\ngraph.dot has every step";
          labelloc=t; rankdir=TB; nodesep=0.3; ranksep=0.25; size="10,7"; fontname="Helvetica"; fontsize=13;
          node [shape=box,style="rounded,filled",fontname="Helvetica",fontsize=12]; edge [arrowsize=0.7];
          s0 [label="upload `xs`, `ys` (24 B)\nspan 6 (46% of S)",fillcolor="0.000 0.304 1.000"];
          s3 [label="kernel f_map_0\nspan 4 (31% of S), work 8",fillcolor="0.000 0.219 1.000"];
          s4 [label="read back result #0 (12 B)\nspan 3 (23% of S)",fillcolor="0.000 0.177 1.000"];
          s0 -> s3;
          s3 -> s4;
        }
    "#]]
    .assert_eq(&summary);
    assert!(summary.lines().count() < dot.lines().count());
}

#[test]
fn unknown_inputs_are_errors_not_panics() {
    let p = program(DOT);
    let err = profile(&p, p.entries[0], inputs("[1f32]"), None, &CostParams::default())
        .expect_err("one input is missing");
    expect!["entry `dot` takes 2 inputs, but 1 was given"].assert_eq(&err.message);
}
