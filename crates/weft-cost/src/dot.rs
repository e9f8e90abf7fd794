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

/// The graph summarised for reading at a glance: the host graph with its chains of
/// plain steps (each node one edge in, one edge out) merged into one edge (`N steps`,
/// their work and span added), each device box one edge naming its kernels and time
/// (its inner graph left out), and a size that Graphviz scales the drawing down to
/// (9 by 6 inches), so that it fits a window. [`to_dot`] has every node.
pub fn to_summary_dot(g: &Graph, title: &str) -> String {
    let n = g.nodes.len();
    let mut indegree = vec![0usize; n];
    for e in &g.edges {
        if let Some(d) = indegree.get_mut(e.to as usize) {
            *d += 1;
        }
    }
    let plain = |e: &crate::graph::Edge| {
        matches!(e.kind, EdgeKind::Op | EdgeKind::Seq | EdgeKind::Fork | EdgeKind::Join)
    };
    let out_edges = |v: usize| g.out.get(v).map_or(&[][..], Vec::as_slice);
    // A node stays when it is not the inside of a chain of plain edges.
    let kept = |v: usize| {
        let outs = out_edges(v);
        indegree[v] != 1
            || outs.len() != 1
            || outs.iter().any(|&id| !plain(&g.edges[id as usize]))
            || g.edges.iter().any(|e| e.to as usize == v && !plain(e))
    };
    let kept: Vec<bool> = (0..n).map(kept).collect();
    let mut s = String::new();
    let steps: usize = g.edges.len() + g.boxes.iter().map(|b| b.graph.edges.len()).sum::<usize>();
    let _ = writeln!(s, "digraph cost {{");
    let _ = writeln!(
        s,
        "  label={};",
        quote(&format!(
            "{title}\nsummary: {steps} steps, {} device box{}; graph.dot has every node",
            g.boxes.len(),
            if g.boxes.len() == 1 { "" } else { "es" }
        ))
    );
    let _ = writeln!(s, "  labelloc=t; rankdir=TB; size=\"9,6\";");
    let _ = writeln!(s, "  node [shape=box,fontsize=10]; edge [fontsize=9];");
    for (v, node) in g.nodes.iter().enumerate() {
        if kept[v] {
            let _ = writeln!(s, "  h{v} {};", node_attrs(&node.label));
        }
    }
    for (u, _) in kept.iter().enumerate().filter(|(_, k)| **k) {
        for &id in out_edges(u) {
            let first = &g.edges[id as usize];
            if let EdgeKind::DeviceBox { index } = first.kind {
                let b = &g.boxes[index as usize];
                let mut kernels: Vec<String> = b.kernels.iter().take(3).cloned().collect();
                if b.kernels.len() > 3 {
                    kernels.push(format!("and {} more", b.kernels.len() - 3));
                }
                let label = format!(
                    "{} kernel{}: {}\ntime(D)={} W={}",
                    b.kernels.len(),
                    if b.kernels.len() == 1 { "" } else { "s" },
                    kernels.join(", "),
                    b.time,
                    b.work
                );
                let _ = writeln!(
                    s,
                    "  h{u} -> h{} [label={},color=red,penwidth=2];",
                    first.to,
                    quote(&label)
                );
                continue;
            }
            if !plain(first) {
                let _ = writeln!(s, "  h{u} -> h{} {};", first.to, edge_attrs(g, first));
                continue;
            }
            // Follow the chain to the next node kept; `n` bounds it on a malformed graph.
            let (mut work, mut span, mut count, mut to) = (first.work, first.span, 1u64, first.to);
            while !kept[to as usize] && count <= n as u64 {
                let next = &g.edges[out_edges(to as usize)[0] as usize];
                work = work.saturating_add(next.work);
                span = span.saturating_add(next.span);
                count += 1;
                to = next.to;
            }
            let weight = if work == span { work.to_string() } else { format!("{work}/{span}") };
            let label = if count == 1 { weight } else { format!("{count} steps: {weight}") };
            let _ = writeln!(s, "  h{u} -> h{to} [label={}];", quote(&label));
        }
    }
    s.push_str("}\n");
    s
}
