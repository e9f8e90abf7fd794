//! The cost graph as Graphviz DOT: host nodes, each device box as a cluster holding its
//! inner graph (entered from the launch node, left to the box's end node), edges
//! labelled with their weight (`work/span` where they differ).

use std::fmt::Write as _;

use crate::graph::{EdgeKind, Graph, edge_weight};

fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

fn node_attrs(label: &str) -> String {
    if label.is_empty() {
        "[shape=point,width=0.08]".to_owned()
    } else {
        format!("[label={}]", quote(label))
    }
}

fn edge_attrs(g: &Graph, e: &crate::graph::Edge) -> String {
    match e.kind {
        EdgeKind::Transfer { to_device, bytes } => format!(
            "[label={},color=darkgreen,penwidth=2]",
            quote(&format!("{} {bytes} B: {}", if to_device { "H2D" } else { "D2H" }, e.work))
        ),
        EdgeKind::Summary { count } => format!(
            "[label={},style=bold,color=blue]",
            quote(&format!("x{count} W={} S={}", e.work, e.span))
        ),
        EdgeKind::Combine => {
            format!("[label={},style=dotted]", quote(&format!("combine {}", e.span)))
        }
        EdgeKind::DeviceBox { index } => {
            let b = &g.boxes[index as usize];
            format!(
                "[label={},color=red,penwidth=2]",
                quote(&format!("time(D)={} W={}", b.time, b.work))
            )
        }
        EdgeKind::Op | EdgeKind::Seq | EdgeKind::Fork | EdgeKind::Join => {
            format!("[label={}]", quote(&edge_weight(e)))
        }
    }
}

/// The graph in DOT.
pub fn to_dot(g: &Graph, title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph cost {{");
    let _ = writeln!(s, "  label={};", quote(title));
    let _ = writeln!(s, "  labelloc=t; rankdir=TB; compound=true;");
    let _ = writeln!(s, "  node [shape=box,fontsize=10]; edge [fontsize=9];");
    for (v, node) in g.nodes.iter().enumerate() {
        let _ = writeln!(s, "  h{v} {};", node_attrs(&node.label));
    }
    for e in &g.edges {
        let _ = writeln!(s, "  h{} -> h{} {};", e.from, e.to, edge_attrs(g, e));
    }
    for (k, b) in g.boxes.iter().enumerate() {
        let _ = writeln!(s, "  subgraph cluster_box{k} {{");
        let _ = writeln!(
            s,
            "    label={}; style=filled; fillcolor=\"#fff0f0\"; color=red;",
            quote(&format!(
                "device box {k}: {}\nW_D={} S_D={} time={}",
                b.kernels.join(", "),
                b.work,
                b.span,
                b.time
            ))
        );
        for (v, node) in b.graph.nodes.iter().enumerate() {
            let _ = writeln!(s, "    b{k}_{v} {};", node_attrs(&node.label));
        }
        for e in &b.graph.edges {
            let _ =
                writeln!(s, "    b{k}_{} -> b{k}_{} {};", e.from, e.to, edge_attrs(&b.graph, e));
        }
        let _ = writeln!(s, "  }}");
        // Connect the cluster to the host edge's endpoints.
        if let Some(e) = g.edges.iter().find(|e| e.kind == EdgeKind::DeviceBox { index: k as u32 })
        {
            let inner_sinks: Vec<usize> =
                (0..b.graph.nodes.len()).filter(|&v| b.graph.out[v].is_empty()).collect();
            let _ =
                writeln!(s, "  h{} -> b{k}_0 [style=dashed,color=red,label=\"launch\"];", e.from);
            for v in inner_sinks {
                let _ = writeln!(s, "  b{k}_{v} -> h{} [style=dashed,color=red];", e.to);
            }
        }
    }
    s.push_str("}\n");
    s
}
