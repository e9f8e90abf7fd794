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
    let show = |weight: u64| g.units.show(weight);
    match e.kind {
        EdgeKind::Transfer { to_device, bytes } => format!(
            "[label={},color=darkgreen,penwidth=2]",
            quote(&format!(
                "{} {bytes} B: {}",
                if to_device { "H2D" } else { "D2H" },
                show(e.work)
            ))
        ),
        EdgeKind::Summary { count } => format!(
            "[label={},style=bold,color=blue]",
            quote(&format!("x{count} W={} S={}", show(e.work), show(e.span)))
        ),
        EdgeKind::Combine => {
            format!("[label={},style=dotted]", quote(&format!("combine {}", show(e.span))))
        }
        EdgeKind::DeviceBox { index } => {
            let b = &g.boxes[index as usize];
            format!(
                "[label={},color=red,penwidth=2]",
                quote(&format!("time(D)={} W={}", show(b.time), show(e.work)))
            )
        }
        EdgeKind::Op | EdgeKind::Seq | EdgeKind::Fork | EdgeKind::Join => {
            format!("[label={}]", quote(&edge_weight(g.units, e)))
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
                g.units.show(b.time)
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

/// The most nodes a summary has: few enough that Graphviz draws it at full size in a
/// window (eight boxes of up to four lines stacked at 12 pt).
pub const SUMMARY_MAX_NODES: usize = 8;

/// The graph summarised for reading at a glance, in a window, at full size: one box per
/// step that matters, each saying what it is, its part of the span S (the critical path)
/// and its work, filled darker the larger that part. Steps are the host graph's edges:
/// a device box is its kernels (consecutive launches of the same kernels merged, `×N`),
/// transfers in one direction in a row are one box (the inputs or results they move),
/// chains of host steps are one box, edges of no weight (composition glue) are left out,
/// and parallel branches of one kind between the same steps are one box. While more than
/// [`SUMMARY_MAX_NODES`] boxes remain, the two consecutive boxes with the smallest span
/// are merged. Edges carry no labels. [`to_dot`] has every node.
pub fn to_summary_dot(g: &Graph, title: &str) -> String {
    let summary = Summary::of(g, title);
    let mut s = String::new();
    let _ = writeln!(s, "digraph cost {{");
    let names = if summary.prefix.is_empty() {
        String::new()
    } else {
        format!("kernels named without `{}`; ", summary.prefix)
    };
    let _ = writeln!(
        s,
        "  label={};",
        quote(&format!(
            "{title}\nspan S = {}, work W = {} (darker boxes: more of S)\n{names}graph.dot has every step",
            g.units.show(summary.span),
            g.units.show(summary.work)
        ))
    );
    let _ = writeln!(
        s,
        "  labelloc=t; rankdir=TB; nodesep=0.3; ranksep=0.25; size=\"10,7\"; fontname=\"Helvetica\"; fontsize=13;"
    );
    let _ = writeln!(
        s,
        "  node [shape=box,style=\"rounded,filled\",fontname=\"Helvetica\",fontsize=12]; edge [arrowsize=0.7];"
    );
    for (i, item) in summary.items.iter().enumerate().filter(|(_, it)| it.alive) {
        let share = if summary.span == 0 { 0.0 } else { item.span as f64 / summary.span as f64 };
        let mut label = item.kind.describe(&summary.prefix);
        label.push_str(&format!("\nspan {} ({:.0}% of S)", g.units.show(item.span), share * 100.0));
        if item.work != item.span {
            label.push_str(&format!(", work {}", g.units.show(item.work)));
        }
        // White for none of S, salmon for all of it.
        let _ = writeln!(
            s,
            "  s{i} [label={},fillcolor=\"0.000 {:.3} 1.000\"];",
            quote(&label),
            0.05 + 0.55 * share.clamp(0.0, 1.0)
        );
    }
    for (i, item) in summary.items.iter().enumerate().filter(|(_, it)| it.alive) {
        for &j in &item.succs {
            let _ = writeln!(s, "  s{i} -> s{j};");
        }
    }
    s.push_str("}\n");
    s
}

/// What a box of a summary stands for.
#[derive(Debug, Clone, PartialEq)]
enum StepKind {
    /// `launches` launches of a device box running these kernels, and the host's
    /// steps between them (a loop's bookkeeping).
    Kernels { names: Vec<String>, launches: u64, host_steps: u64 },
    /// Transfers in one direction: what they move and how many bytes.
    Transfers { to_device: bool, names: Vec<String>, bytes: u64 },
    /// Steps on the host.
    Host { steps: u64 },
    /// Parallel branches of one kind.
    Parallel { branches: u64, of: Box<StepKind> },
    /// Consecutive steps of several kinds, merged to keep the summary small.
    Mixed { parts: Vec<StepKind> },
    /// The same steps several times in a row (a loop's iterations).
    Repeat { times: u64, of: Box<StepKind> },
}

impl StepKind {
    /// What it is, in a box's first lines; kernel names without `prefix` (the entry's
    /// name, which the title gives).
    fn describe(&self, prefix: &str) -> String {
        let short = |name: &str| name.strip_prefix(prefix).unwrap_or(name).to_owned();
        match self {
            StepKind::Kernels { names, launches, host_steps } => {
                let names: Vec<String> = names.iter().map(|n| short(n)).collect();
                let times = if *launches > 1 { format!(" ×{launches}") } else { String::new() };
                let mut out = match names.as_slice() {
                    [] => format!("device box{times}"),
                    [one] => format!("kernel {one}{times}"),
                    [a, b] => format!("kernels {a}, {b}{times}"),
                    [a, b, c] => format!("kernels {a}, {b}, {c}{times}"),
                    [a, b, rest @ ..] => {
                        format!("kernels {a}, {b} and {} more{times}", rest.len())
                    }
                };
                if *host_steps > 0 {
                    let s = if *host_steps == 1 { "" } else { "s" };
                    out.push_str(&format!("\n(and {host_steps} host step{s})"));
                }
                out
            }
            StepKind::Transfers { to_device, names, bytes } => {
                let what = if *to_device { "upload" } else { "read back" };
                let shown: Vec<&str> = names.iter().take(4).map(String::as_str).collect();
                let more = if names.len() > 4 { ", …" } else { "" };
                format!("{what} {}{more} ({})", shown.join(", "), human_bytes(*bytes))
            }
            StepKind::Host { steps } => {
                format!("host: {steps} step{}", if *steps == 1 { "" } else { "s" })
            }
            StepKind::Parallel { branches, of } => {
                let inner = of.describe(prefix);
                let first = inner.lines().next().unwrap_or("");
                format!("{branches} in parallel: {first}")
            }
            StepKind::Mixed { parts } => {
                let mut kernels: Vec<String> = Vec::new();
                let (mut transfers, mut host) = (0, 0);
                for part in parts {
                    match part {
                        StepKind::Kernels { names, .. } => {
                            kernels.extend(names.iter().map(|n| short(n)));
                        }
                        StepKind::Transfers { .. } => transfers += 1,
                        StepKind::Host { .. }
                        | StepKind::Parallel { .. }
                        | StepKind::Mixed { .. }
                        | StepKind::Repeat { .. } => host += 1,
                    }
                }
                kernels.dedup();
                let mut what = Vec::new();
                match kernels.as_slice() {
                    [] => {}
                    [one] => what.push(format!("kernel {one}")),
                    [a, b] => what.push(format!("kernels {a}, {b}")),
                    [a, b, rest @ ..] => {
                        what.push(format!("kernels {a}, {b} and {} more", rest.len()))
                    }
                }
                if transfers > 0 {
                    what.push(format!(
                        "{transfers} transfer{}",
                        if transfers == 1 { "" } else { "s" }
                    ));
                }
                if host > 0 {
                    what.push(format!("{host} host step{}", if host == 1 { "" } else { "s" }));
                }
                format!("{} steps:\n{}", parts.len(), what.join(", "))
            }
            StepKind::Repeat { times, of } => format!("×{times}, each:\n{}", of.describe(prefix)),
        }
    }

    /// Its parts, when merged with others.
    fn parts(self) -> Vec<StepKind> {
        match self {
            StepKind::Mixed { parts } => parts,
            other => vec![other],
        }
    }

    /// The kind of `self` then `next` when they merge without losing what they are.
    fn then(&self, next: &StepKind) -> Option<StepKind> {
        match (self, next) {
            (StepKind::Host { steps: a }, StepKind::Host { steps: b }) => {
                Some(StepKind::Host { steps: a + b })
            }
            (
                StepKind::Transfers { to_device: d, names: a, bytes: x },
                StepKind::Transfers { to_device: e, names: b, bytes: y },
            ) if d == e => {
                let mut names = a.clone();
                names.extend(b.iter().filter(|n| !a.contains(n)).cloned());
                Some(StepKind::Transfers { to_device: *d, names, bytes: x + y })
            }
            (
                StepKind::Kernels { names: a, launches: x, host_steps: h },
                StepKind::Kernels { names: b, launches: y, host_steps: k },
            ) if a == b => {
                Some(StepKind::Kernels { names: a.clone(), launches: x + y, host_steps: h + k })
            }
            (StepKind::Repeat { times: n, of: a }, StepKind::Repeat { times: m, of: b })
                if a == b =>
            {
                Some(StepKind::Repeat { times: n + m, of: a.clone() })
            }
            (StepKind::Repeat { times, of }, other) | (other, StepKind::Repeat { times, of })
                if **of == *other =>
            {
                Some(StepKind::Repeat { times: times + 1, of: of.clone() })
            }
            (StepKind::Mixed { .. } | StepKind::Parallel { .. }, _) if self == next => {
                Some(StepKind::Repeat { times: 2, of: Box::new(self.clone()) })
            }
            _ => None,
        }
    }
}

/// `1.5 KiB`.
fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
    }
}

/// A box of a summary: its steps' kind, work and span, and the boxes around it.
#[derive(Debug, Clone)]
struct Step {
    kind: StepKind,
    work: u64,
    span: u64,
    preds: Vec<usize>,
    succs: Vec<usize>,
    alive: bool,
}

/// The host graph's edges as steps, summarised ([`to_summary_dot`]).
struct Summary {
    items: Vec<Step>,
    work: u64,
    span: u64,
    /// What every kernel's name starts with (`kmeans_step_`), left out of the boxes.
    prefix: String,
}

impl Summary {
    fn of(g: &Graph, title: &str) -> Summary {
        let mut items: Vec<Step> = g
            .edges
            .iter()
            .map(|e| Step {
                kind: step_kind(g, e),
                work: e.work,
                span: e.span,
                preds: Vec::new(),
                succs: Vec::new(),
                alive: true,
            })
            .collect();
        // Edge i precedes the edges leaving its target.
        for (i, e) in g.edges.iter().enumerate() {
            for &next in g.out.get(e.to as usize).map_or(&[][..], Vec::as_slice) {
                items[i].succs.push(next as usize);
                items[next as usize].preds.push(i);
            }
        }
        let work = items.iter().map(|it| it.work).sum();
        let mut summary = Summary { items, work, span: 0, prefix: kernel_prefix(g, title) };
        summary.span = summary.longest_path();
        summary.drop_glue();
        while summary.merge_chains() || summary.merge_parallel(false) || summary.absorb_host_steps()
        {
        }
        while summary.merge_repeats() {}
        while summary.alive() > SUMMARY_MAX_NODES {
            if !(summary.merge_smallest_pair() || summary.merge_parallel(true)) {
                break;
            }
        }
        summary
    }

    fn alive(&self) -> usize {
        self.items.iter().filter(|it| it.alive).count()
    }

    /// The longest path by span (S), over the steps in the order the graph built them
    /// (an edge's target is built after its source, so each edge comes after its
    /// predecessors).
    fn longest_path(&self) -> u64 {
        let n = self.items.len();
        let mut order: Vec<usize> = Vec::with_capacity(n);
        let mut indegree: Vec<usize> = self.items.iter().map(|it| it.preds.len()).collect();
        let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        while let Some(i) = ready.pop() {
            order.push(i);
            for &j in &self.items[i].succs {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.push(j);
                }
            }
        }
        let mut finish = vec![0u64; n];
        for &i in &order {
            let start = self.items[i].preds.iter().map(|&p| finish[p]).max().unwrap_or(0);
            finish[i] = start.saturating_add(self.items[i].span);
        }
        finish.into_iter().max().unwrap_or(0)
    }

    /// Removes steps of no weight on the host, linking their neighbours directly.
    fn drop_glue(&mut self) {
        for i in 0..self.items.len() {
            let it = &self.items[i];
            if !(it.alive
                && it.work == 0
                && it.span == 0
                && matches!(it.kind, StepKind::Host { .. }))
            {
                continue;
            }
            let (preds, succs) = (it.preds.clone(), it.succs.clone());
            self.items[i].alive = false;
            for &p in &preds {
                self.items[p].succs.retain(|&x| x != i);
            }
            for &q in &succs {
                self.items[q].preds.retain(|&x| x != i);
            }
            for &p in &preds {
                for &q in &succs {
                    if !self.items[p].succs.contains(&q) {
                        self.items[p].succs.push(q);
                        self.items[q].preds.push(p);
                    }
                }
            }
        }
    }

    /// Merges `b` into `a` (a chain `a -> b`), with `kind`.
    fn merge_chain(&mut self, a: usize, b: usize, kind: StepKind) {
        let (work, span, succs) =
            (self.items[b].work, self.items[b].span, self.items[b].succs.clone());
        self.items[b].alive = false;
        for &q in &succs {
            for p in self.items[q].preds.iter_mut() {
                if *p == b {
                    *p = a;
                }
            }
        }
        let it = &mut self.items[a];
        it.kind = kind;
        it.work = it.work.saturating_add(work);
        it.span = it.span.saturating_add(span);
        it.succs = succs;
    }

    /// The chains `a -> b` (`a` has one successor, `b` one predecessor).
    fn chains(&self) -> Vec<(usize, usize)> {
        (0..self.items.len())
            .filter(|&a| self.items[a].alive)
            .filter_map(|a| match self.items[a].succs.as_slice() {
                [b] if self.items[*b].preds.len() == 1 && *b != a => Some((a, *b)),
                _ => None,
            })
            .collect()
    }

    /// Merges one chain of steps of one kind; whether it did.
    fn merge_chains(&mut self) -> bool {
        for (a, b) in self.chains() {
            if let Some(kind) = self.items[a].kind.then(&self.items[b].kind) {
                self.merge_chain(a, b, kind);
                return true;
            }
        }
        false
    }

    /// Merges one host step into the kernel step before it (or after it, at the start)
    /// when it takes no longer: the bookkeeping of a loop of launches, which then merge
    /// into one box (`×N`); whether it did.
    fn absorb_host_steps(&mut self) -> bool {
        for (a, b) in self.chains() {
            let (first, second) = (&self.items[a], &self.items[b]);
            let kind =
                match (&first.kind, &second.kind) {
                    (
                        StepKind::Kernels { names, launches, host_steps },
                        StepKind::Host { steps },
                    ) if second.span <= first.span => StepKind::Kernels {
                        names: names.clone(),
                        launches: *launches,
                        host_steps: host_steps + steps,
                    },
                    (
                        StepKind::Host { steps },
                        StepKind::Kernels { names, launches, host_steps },
                    ) if first.span <= second.span && first.preds.is_empty() => StepKind::Kernels {
                        names: names.clone(),
                        launches: *launches,
                        host_steps: host_steps + steps,
                    },
                    _ => continue,
                };
            self.merge_chain(a, b, kind);
            return true;
        }
        false
    }

    /// The maximal chains of steps (each step the only successor of the one before and
    /// the only predecessor of the one after), in order, of two steps or more.
    fn segments(&self) -> Vec<Vec<usize>> {
        let chains = self.chains();
        let next = |a: usize| chains.iter().find(|(x, _)| *x == a).map(|(_, b)| *b);
        let mut out = Vec::new();
        for &(a, _) in &chains {
            // A segment starts where no chain ends.
            if chains.iter().any(|(_, b)| *b == a) {
                continue;
            }
            let mut segment = vec![a];
            let mut at = a;
            while let Some(b) = next(at) {
                if segment.contains(&b) {
                    break;
                }
                segment.push(b);
                at = b;
            }
            out.push(segment);
        }
        out
    }

    /// Merges the longest run of a block of steps repeated in a row (a loop's iterations)
    /// into one box (`×N, each: ...`); whether it did.
    fn merge_repeats(&mut self) -> bool {
        for segment in self.segments() {
            let n = segment.len();
            let kind = |i: usize| &self.items[segment[i]].kind;
            // (start, period, repetitions), the one covering the most steps.
            let mut best: Option<(usize, usize, usize)> = None;
            for period in 1..=n / 2 {
                for start in 0..=n - 2 * period {
                    let mut times = 1;
                    while start + (times + 1) * period <= n
                        && (0..period).all(|k| kind(start + k) == kind(start + times * period + k))
                    {
                        times += 1;
                    }
                    let covered = times * period;
                    if times >= 2 && best.is_none_or(|(_, p, t)| covered > p * t) {
                        best = Some((start, period, times));
                    }
                }
            }
            let Some((start, period, times)) = best else { continue };
            let once: Vec<StepKind> = (0..period).map(|k| kind(start + k).clone()).collect();
            let of = match once.as_slice() {
                [one] => one.clone(),
                _ => {
                    StepKind::Mixed { parts: once.into_iter().flat_map(StepKind::parts).collect() }
                }
            };
            let merged = StepKind::Repeat { times: times as u64, of: Box::new(of) };
            let first = segment[start];
            for &b in &segment[start + 1..start + times * period] {
                self.merge_chain(first, b, merged.clone());
            }
            return true;
        }
        false
    }

    /// Merges the consecutive pair with the smallest span, whatever their kinds (a pair
    /// that merges without losing what it is first: a loop's iterations).
    fn merge_smallest_pair(&mut self) -> bool {
        let chains = self.chains();
        let keeping: Vec<(usize, usize)> = chains
            .iter()
            .copied()
            .filter(|&(a, b)| self.items[a].kind.then(&self.items[b].kind).is_some())
            .collect();
        let candidates = if keeping.is_empty() { chains } else { keeping };
        let best = candidates
            .into_iter()
            .min_by_key(|&(a, b)| self.items[a].span.saturating_add(self.items[b].span));
        let Some((a, b)) = best else { return false };
        let kind = match self.items[a].kind.then(&self.items[b].kind) {
            Some(kind) => kind,
            None => {
                let mut parts = self.items[a].kind.clone().parts();
                parts.extend(self.items[b].kind.clone().parts());
                StepKind::Mixed { parts }
            }
        };
        self.merge_chain(a, b, kind);
        true
    }

    /// Merges steps between the same steps (the same predecessors and successors) into
    /// one box: of one kind only, unless `any`; whether it did.
    fn merge_parallel(&mut self, any: bool) -> bool {
        let n = self.items.len();
        for a in (0..n).filter(|&a| self.items[a].alive) {
            let mut group: Vec<usize> = (0..n)
                .filter(|&b| b != a && self.items[b].alive)
                .filter(|&b| same_set(&self.items[a].preds, &self.items[b].preds))
                .filter(|&b| same_set(&self.items[a].succs, &self.items[b].succs))
                .filter(|&b| any || same_class(&self.items[a].kind, &self.items[b].kind))
                .collect();
            if group.is_empty() {
                continue;
            }
            group.insert(0, a);
            let branches = group.len() as u64;
            let of = match &self.items[a].kind {
                StepKind::Parallel { of, .. } => (**of).clone(),
                other => other.clone(),
            };
            let (mut work, mut span) = (0u64, 0u64);
            for &b in &group {
                work = work.saturating_add(self.items[b].work);
                span = span.max(self.items[b].span);
            }
            for &b in &group[1..] {
                self.items[b].alive = false;
                for p in self.items[b].preds.clone() {
                    self.items[p].succs.retain(|&x| x != b);
                }
                for q in self.items[b].succs.clone() {
                    self.items[q].preds.retain(|&x| x != b);
                }
            }
            let it = &mut self.items[a];
            it.kind = StepKind::Parallel { branches, of: Box::new(of) };
            it.work = work;
            it.span = span;
            return true;
        }
        false
    }
}

/// The entry's name and `_` (`kmeans_step_`) when the title names the entry in backticks
/// and every kernel's name starts with it and goes on after it (kernels are named
/// `ENTRY_ROLE_N`), else nothing.
fn kernel_prefix(g: &Graph, title: &str) -> String {
    let Some(entry) = title.split('`').nth(1).filter(|e| !e.is_empty()) else {
        return String::new();
    };
    let prefix = format!("{entry}_");
    let mut names = g.boxes.iter().flat_map(|b| &b.kernels).peekable();
    let fits =
        names.peek().is_some() && names.all(|n| n.starts_with(&prefix) && n.len() > prefix.len());
    if fits { prefix } else { String::new() }
}

fn same_set(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

fn same_class(a: &StepKind, b: &StepKind) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// What an edge of the host graph is, for a summary.
fn step_kind(g: &Graph, e: &crate::graph::Edge) -> StepKind {
    match e.kind {
        EdgeKind::DeviceBox { index } => StepKind::Kernels {
            names: g.boxes.get(index as usize).map(|b| b.kernels.clone()).unwrap_or_default(),
            launches: 1,
            host_steps: 0,
        },
        EdgeKind::Transfer { to_device, bytes } => {
            // The target's label: `upload input `xs` (24 B)`, `read back result #0 (12 B)`.
            let label = g.nodes.get(e.to as usize).map_or("", |n| n.label.as_str());
            let name = label
                .strip_prefix("upload ")
                .or_else(|| label.strip_prefix("read back "))
                .and_then(|rest| rest.rsplit_once(" (").map(|(name, _)| name))
                .unwrap_or("");
            let name = match name.strip_prefix("input ") {
                Some(input) => input.to_owned(),
                None if name.starts_with("result") => name.to_owned(),
                // A value the host reads to decide (a size, a condition).
                None => "a value".to_owned(),
            };
            StepKind::Transfers { to_device, names: vec![name], bytes }
        }
        EdgeKind::Summary { .. }
        | EdgeKind::Op
        | EdgeKind::Seq
        | EdgeKind::Fork
        | EdgeKind::Join
        | EdgeKind::Combine => StepKind::Host { steps: 1 },
    }
}

#[cfg(test)]
#[path = "dot_tests.rs"]
mod tests;
