use expect_test::expect;

use super::*;
use crate::graph::{DeviceBox, Edge, Graph, Resource};

/// Builds a host graph as `weft profile` does: a chain from `start`, each step one edge.
struct Chain {
    g: Graph,
    tail: u32,
}

impl Chain {
    fn new() -> Chain {
        let mut g = Graph::new();
        let tail = g.node("start");
        Chain { g, tail }
    }

    fn edge(&mut self, kind: EdgeKind, work: u64, span: u64, label: &str) -> &mut Chain {
        let v = self.g.node(label);
        let resource = match kind {
            EdgeKind::DeviceBox { .. } => Resource::Gpu,
            EdgeKind::Transfer { .. } => Resource::Bus,
            _ => Resource::Cpu,
        };
        self.g.add_edge(Edge {
            from: self.tail,
            to: v,
            kind,
            work,
            span,
            duration: span,
            resource,
        });
        self.tail = v;
        self
    }

    fn upload(&mut self, name: &str, bytes: u64) -> &mut Chain {
        let label = format!("upload input `{name}` ({bytes} B)");
        self.edge(EdgeKind::Transfer { to_device: true, bytes }, bytes / 16, bytes / 16, &label)
    }

    fn read_back(&mut self, name: &str, bytes: u64) -> &mut Chain {
        let label = format!("read back {name} ({bytes} B)");
        self.edge(EdgeKind::Transfer { to_device: false, bytes }, bytes / 16, bytes / 16, &label)
    }

    fn glue(&mut self) -> &mut Chain {
        self.edge(EdgeKind::Seq, 0, 0, "launch")
    }

    fn host(&mut self, d: u64) -> &mut Chain {
        self.edge(EdgeKind::Op, d, d, "")
    }

    fn kernels(&mut self, names: &[&str], work: u64, time: u64) -> &mut Chain {
        let index = self.g.boxes.len() as u32;
        self.g.boxes.push(DeviceBox {
            kernels: names.iter().map(|n| (*n).to_owned()).collect(),
            graph: Graph::new(),
            work,
            span: time,
            time,
        });
        self.edge(EdgeKind::DeviceBox { index }, work, time, &names.join("\n"))
    }
}

/// Each box of a summary: the labels of its nodes, in order.
fn boxes(dot: &str) -> Vec<String> {
    dot.lines()
        .filter_map(|l| l.trim().split_once(" [label=\"").map(|(_, rest)| rest))
        .map(|rest| rest.split("\",fillcolor").next().unwrap_or("").replace("\\n", " / "))
        .collect()
}

/// kmeans' step, as the profiler builds it: four uploads, three device boxes between
/// glue and host steps, two read-backs. Once 17 nodes scaled to a third (unreadable).
#[test]
fn a_summary_has_one_box_per_step_that_matters() {
    let mut c = Chain::new();
    c.upload("xs", 24).upload("ys", 24).upload("cx", 12).upload("cy", 12).glue();
    c.kernels(&["kmeans_step_map_0"], 241, 41).glue();
    c.kernels(&["kmeans_step_map_1", "kmeans_step_group_2", "kmeans_step_map_4"], 248, 49);
    c.host(4).glue();
    c.kernels(&["kmeans_step_map_5"], 18, 8).host(1);
    c.read_back("result #0", 12).read_back("result #1", 12).glue();
    let dot = to_summary_dot(&c.g, "examples/kmeans.weft `kmeans_step`");
    expect![[r#"
        digraph cost {
          label="examples/kmeans.weft `kmeans_step`\nspan S = 105, work W = 514 (darker boxes: more of S)\nkernels named without `kmeans_step_`; graph.dot has every step";
          labelloc=t; rankdir=TB; nodesep=0.3; ranksep=0.25; size="10,7"; fontname="Helvetica"; fontsize=13;
          node [shape=box,style="rounded,filled",fontname="Helvetica",fontsize=12]; edge [arrowsize=0.7];
          s0 [label="upload `xs`, `ys`, `cx`, `cy` (72 B)\nspan 2 (2% of S)",fillcolor="0.000 0.060 1.000"];
          s5 [label="kernel map_0\nspan 41 (39% of S), work 241",fillcolor="0.000 0.265 1.000"];
          s7 [label="kernels map_1, group_2, map_4\n(and 1 host step)\nspan 53 (50% of S), work 252",fillcolor="0.000 0.328 1.000"];
          s10 [label="kernel map_5\n(and 1 host step)\nspan 9 (9% of S), work 19",fillcolor="0.000 0.097 1.000"];
          s12 [label="read back result #0, result #1 (24 B)\nspan 0 (0% of S)",fillcolor="0.000 0.050 1.000"];
          s0 -> s5;
          s5 -> s7;
          s7 -> s10;
          s10 -> s12;
        }
    "#]]
    .assert_eq(&dot);
}

/// A loop of 100 iterations of a kernel and a host step stays one box: the host's
/// bookkeeping between launches joins the launch before it, and repeated launches of one
/// kernel are one box (`×100`).
#[test]
fn a_long_loop_is_summarised_into_one_box() {
    let mut c = Chain::new();
    c.upload("xs", 4096).glue();
    for _ in 0..100 {
        c.kernels(&["blur_steps_map_0"], 300, 20).host(1).glue();
    }
    c.kernels(&["blur_steps_reduce_partials_1", "blur_steps_reduce_total_2"], 500, 60);
    c.read_back("result #0", 4096);
    let dot = to_summary_dot(&c.g, "stencil");
    // 256 for each transfer, 100 × 21 for the loop, 60 for the reduction.
    assert!(dot.contains("span S = 2672, work W = 31112"), "{dot}");
    expect![[r#"
        [
            "upload `xs` (4.0 KiB) / span 256 (10% of S)",
            "kernel blur_steps_map_0 ×100 / (and 100 host steps) / span 2100 (79% of S), work 30100",
            "kernels blur_steps_reduce_partials_1, blur_steps_reduce_total_2 / span 60 (2% of S), work 500",
            "read back result #0 (4.0 KiB) / span 256 (10% of S)",
        ]
    "#]]
    .assert_debug_eq(&boxes(&dot));
}

/// Steps of different kinds beyond [`SUMMARY_MAX_NODES`]: the smallest neighbours merge.
#[test]
fn a_summary_has_at_most_eight_boxes() {
    let mut c = Chain::new();
    for i in 0..30u64 {
        let name = format!("k_{i}");
        c.kernels(&[name.as_str()], 10 + i, 10 + i).upload(&format!("x{i}"), 16 * (i + 1));
    }
    let shown = boxes(&to_summary_dot(&c.g, "many"));
    assert_eq!(shown.len(), SUMMARY_MAX_NODES, "{shown:#?}");
    // A merged box names its kernels.
    assert!(
        shown.iter().all(|b| b.contains("kernel k_") || b.contains("kernels k_")),
        "{shown:#?}"
    );
    expect!["16 steps: / kernels k_0, k_1 and 6 more, 8 transfers / span 144 (12% of S)"]
        .assert_eq(&shown[0]);
}

/// Parallel branches of one kind between the same steps are one box.
#[test]
fn parallel_branches_are_one_box() {
    let mut g = Graph::new();
    let fork = g.node("");
    let join = g.node("");
    for _ in 0..64 {
        let v = g.node("");
        g.add_edge(Edge::plain(fork, v, EdgeKind::Summary { count: 16 }, 7));
        g.add_edge(Edge::plain(v, join, EdgeKind::Join, 1));
    }
    let dot = to_summary_dot(&g, "host map");
    let shown = boxes(&dot);
    assert_eq!(shown, ["64 in parallel: host: 2 steps / span 8 (100% of S), work 512"], "{dot}");
}
