//! Cost graphs (digest 002, §3.2): weighted DAGs with one source and one sink, built by
//! series-parallel combinators, with device boxes, transfer edges, summarised
//! parallel blocks and region events.
//!
//! Weights live on edges, as in the paper. Every edge has three numbers:
//! - `work`: what it adds to the work W (§3.8);
//! - `span`: what it adds to a path's length for the span S;
//! - `duration`: how long it holds its [`Resource`] in a schedule (§3.6).
//!
//! For a plain edge the three are equal. A device box edge has the kernel's inner work
//! as `work` and its time on the device as `span` and `duration` (§3.8: "a dvb edge
//! counts work(D) for W and time(D) for S"). A summary edge (a block of parallel
//! iterations collapsed into one edge) has the block's total work as `work` and
//! `duration` (one processor runs the block's iterations one after another, like a
//! chunk of a parallel loop) and the exact span of the uncollapsed block as `span`. A
//! latency edge takes no processor and adds no work (a reduction's combining depth).
//!
//! Reconstructed combinators (§3.2, Fig. 4 is lost): `seq(a, d, b)` adds the edge
//! `(sink a, src b, d)`; `par(a, b)` adds a fresh fork and join with four unit edges;
//! `par_tree` nests binary `par`s over a balanced split (`n - 1` forks and joins,
//! `4(n - 1)` unit edges); `par_nary` is the device's single n-ary fork/join. The empty
//! graph `0` of `Var` is a fresh node (the digest's decision), so `0 (+)d g` keeps `d`.

use std::fmt::Write as _;

/// A node of a [`Graph`].
pub type NodeId = u32;

/// The two worlds (§2.2): the host CPU and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum World {
    Host,
    Device,
}

impl World {
    pub fn name(self) -> &'static str {
        match self {
            World::Host => "host",
            World::Device => "device",
        }
    }
}

/// What an edge occupies while a schedule runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// One of the P host processors.
    Cpu,
    /// The device (one kernel at a time, as one OpenCL in-order queue runs them).
    Gpu,
    /// The host-device bus (one transfer at a time).
    Bus,
    /// Nothing: a pure delay.
    Latency,
}

/// What an edge stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// A memory or arithmetic step of the program (PRAM unit costs).
    Op,
    /// Composition glue of `seq` (usually weight 0 or 1).
    Seq,
    Fork,
    Join,
    /// `count` parallel iterations collapsed into one edge.
    Summary {
        count: u64,
    },
    /// A device box: `boxes[index]` of the host graph.
    DeviceBox {
        index: u32,
    },
    /// A copy of `bytes` bytes between the worlds.
    Transfer {
        to_device: bool,
        bytes: u64,
    },
    /// The combining depth of a reduction or scan.
    Combine,
}

/// A weighted edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub kind: EdgeKind,
    pub work: u64,
    pub span: u64,
    pub duration: u64,
    pub resource: Resource,
}

impl Edge {
    /// A plain edge of weight `d` on a host processor.
    pub fn plain(from: NodeId, to: NodeId, kind: EdgeKind, d: u64) -> Edge {
        Edge { from, to, kind, work: d, span: d, duration: d, resource: Resource::Cpu }
    }
}

/// A region allocation or free at a node (§3.7: region events are explicit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionEvent {
    pub region: u32,
    pub alloc: bool,
}

/// A region: one array's memory in one world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub name: String,
    pub world: World,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    pub label: String,
    pub events: Vec<RegionEvent>,
}

/// A device box (§3.5): the kernels it launches, its inner graph and its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceBox {
    pub kernels: Vec<String>,
    pub graph: Graph,
    /// work(D): the total of the inner graph.
    pub work: u64,
    /// The inner graph's span.
    pub span: u64,
    /// time(D) = max(span, ceil(work / H)) plus the launch cost per kernel.
    pub time: u64,
}

/// A sub-graph handle: its source and sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sub {
    pub src: NodeId,
    pub sink: NodeId,
}

/// What a graph's weights count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Units {
    /// Digest 002's PRAM unit costs: one per scalar operation, read or view.
    #[default]
    Abstract,
    /// Picoseconds: device boxes and transfers from a calibrated device profile
    /// (`weft calibrate`), host steps at a rate per unit of work.
    Picoseconds,
}

impl Units {
    /// A weight as read: a count of units, or a time (`1.250 ms`).
    pub fn show(self, weight: u64) -> String {
        match self {
            Units::Abstract => weight.to_string(),
            Units::Picoseconds => seconds_text(weight as f64 * 1e-12),
        }
    }

    /// What a time axis counts.
    pub fn axis(self) -> &'static str {
        match self {
            Units::Abstract => "cost units",
            Units::Picoseconds => "seconds",
        }
    }
}

/// A time in seconds at a readable scale: `2.500 s`, `1.250 ms`, `12.5 µs`, `840 ns`.
pub fn seconds_text(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.1} µs", seconds * 1e6)
    } else {
        format!("{:.0} ns", seconds * 1e9)
    }
}

/// A cost graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    /// What the weights count (a device box's inner graph is always in units).
    pub units: Units,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Outgoing edge ids per node, in insertion order (left before right).
    pub out: Vec<Vec<u32>>,
    pub boxes: Vec<DeviceBox>,
    pub regions: Vec<Region>,
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    /// A fresh node.
    pub fn node(&mut self, label: impl Into<String>) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node { label: label.into(), events: Vec::new() });
        self.out.push(Vec::new());
        id
    }

    /// `[v]`: a one-node graph.
    pub fn single(&mut self, label: impl Into<String>) -> Sub {
        let v = self.node(label);
        Sub { src: v, sink: v }
    }

    pub fn add_edge(&mut self, edge: Edge) -> u32 {
        let id = self.edges.len() as u32;
        self.out[edge.from as usize].push(id);
        self.edges.push(edge);
        id
    }

    /// `a (+)d b`.
    pub fn seq(&mut self, a: Sub, d: u64, b: Sub) -> Sub {
        self.add_edge(Edge::plain(a.sink, b.src, EdgeKind::Seq, d));
        Sub { src: a.src, sink: b.sink }
    }

    /// `[u1] (+)d [u2]`: a single edge of weight `d` between fresh nodes.
    pub fn edge_graph(&mut self, d: u64, label: impl Into<String>) -> Sub {
        let a = self.node("");
        let b = self.node(label);
        self.add_edge(Edge::plain(a, b, EdgeKind::Op, d));
        Sub { src: a, sink: b }
    }

    /// `a (+)d [v]`: extends `a` by one edge to a fresh node.
    pub fn step(&mut self, a: Sub, kind: EdgeKind, d: u64, label: impl Into<String>) -> Sub {
        let v = self.node(label);
        self.add_edge(Edge::plain(a.sink, v, kind, d));
        Sub { src: a.src, sink: v }
    }

    /// `a (x) b` with edge weights `d` (fork-left, fork-right, left-join, right-join).
    pub fn par_weighted(&mut self, a: Sub, b: Sub, d: [u64; 4]) -> Sub {
        let f = self.node("");
        let j = self.node("");
        self.add_edge(Edge::plain(f, a.src, EdgeKind::Fork, d[0]));
        self.add_edge(Edge::plain(f, b.src, EdgeKind::Fork, d[1]));
        self.add_edge(Edge::plain(a.sink, j, EdgeKind::Join, d[2]));
        self.add_edge(Edge::plain(b.sink, j, EdgeKind::Join, d[3]));
        Sub { src: f, sink: j }
    }

    /// `a (x) b`: binary fork/join with unit edges.
    pub fn par(&mut self, a: Sub, b: Sub) -> Sub {
        self.par_weighted(a, b, [1; 4])
    }

    /// `(x)_i g_i` on the host: binary `par`s over a balanced split (the left half has
    /// `ceil(n/2)` elements). The empty product is a fresh node.
    pub fn par_tree(&mut self, subs: &[Sub]) -> Sub {
        match subs {
            [] => self.single(""),
            [one] => *one,
            _ => {
                let (left, right) = subs.split_at(subs.len().div_ceil(2));
                let l = self.par_tree(left);
                let r = self.par_tree(right);
                self.par(l, r)
            }
        }
    }

    /// `(x)_i g_i` on the device: one n-ary fork and join, edges of weight `d`.
    pub fn par_nary(&mut self, subs: &[Sub], d: u64) -> Sub {
        let f = self.node("");
        let j = self.node("");
        for s in subs {
            self.add_edge(Edge::plain(f, s.src, EdgeKind::Fork, d));
        }
        for s in subs {
            self.add_edge(Edge::plain(s.sink, j, EdgeKind::Join, d));
        }
        if subs.is_empty() {
            self.add_edge(Edge::plain(f, j, EdgeKind::Seq, 0));
        }
        Sub { src: f, sink: j }
    }

    /// A new region and its allocation at `node`.
    pub fn alloc(
        &mut self,
        node: NodeId,
        name: impl Into<String>,
        world: World,
        bytes: u64,
    ) -> u32 {
        let region = self.regions.len() as u32;
        self.regions.push(Region { name: name.into(), world, bytes });
        self.nodes[node as usize].events.push(RegionEvent { region, alloc: true });
        region
    }

    /// Frees `region` at `node`.
    pub fn free(&mut self, node: NodeId, region: u32) {
        self.nodes[node as usize].events.push(RegionEvent { region, alloc: false });
    }

    /// W: the sum of the edges' work.
    pub fn work(&self) -> u64 {
        self.edges.iter().map(|e| e.work).sum()
    }

    /// The work of the edges that `pick` selects.
    pub fn work_where(&self, pick: impl Fn(&Edge) -> bool) -> u64 {
        self.edges.iter().filter(|e| pick(e)).map(|e| e.work).sum()
    }

    /// Incoming edge counts.
    pub fn in_degrees(&self) -> Vec<u32> {
        let mut deg = vec![0u32; self.nodes.len()];
        for e in &self.edges {
            deg[e.to as usize] += 1;
        }
        deg
    }

    /// The nodes in a topological order (Kahn's algorithm, lowest id first).
    pub fn topo_order(&self) -> Vec<NodeId> {
        let mut deg = self.in_degrees();
        let mut ready: Vec<NodeId> =
            (0..self.nodes.len() as NodeId).filter(|&v| deg[v as usize] == 0).rev().collect();
        let mut order = Vec::with_capacity(self.nodes.len());
        while let Some(v) = ready.pop() {
            order.push(v);
            for &e in self.out[v as usize].iter().rev() {
                let to = self.edges[e as usize].to;
                deg[to as usize] -= 1;
                if deg[to as usize] == 0 {
                    ready.push(to);
                }
            }
        }
        order
    }

    /// S: the longest path, summing the edges' `span`.
    pub fn span(&self) -> u64 {
        let mut dist = vec![0u64; self.nodes.len()];
        let mut best = 0;
        for v in self.topo_order() {
            let d = dist[v as usize];
            best = best.max(d);
            for &e in &self.out[v as usize] {
                let edge = &self.edges[e as usize];
                let to = edge.to as usize;
                dist[to] = dist[to].max(d + edge.span);
            }
        }
        best
    }

    /// One line per node with its out-edges, for tests.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for (v, node) in self.nodes.iter().enumerate() {
            let _ = write!(out, "n{v}");
            if !node.label.is_empty() {
                let _ = write!(out, " {:?}", node.label);
            }
            for ev in &node.events {
                let r = &self.regions[ev.region as usize];
                let what = if ev.alloc { "alloc" } else { "free" };
                let _ = write!(out, " [{what} {} {}B@{}]", r.name, r.bytes, r.world.name());
            }
            let edges: Vec<String> = self.out[v]
                .iter()
                .map(|&e| {
                    let e = &self.edges[e as usize];
                    format!("-{}-> n{}", edge_weight(self.units, e), e.to)
                })
                .collect();
            if !edges.is_empty() {
                let _ = write!(out, " {}", edges.join(" "));
            }
            out.push('\n');
        }
        out
    }
}

/// An edge's weight as printed: `d`, or `w/s` when work and span differ.
pub fn edge_weight(units: Units, e: &Edge) -> String {
    if e.work == e.span {
        units.show(e.work)
    } else {
        format!("{}/{}", units.show(e.work), units.show(e.span))
    }
}

/// `ceil(log2 n)` (0 for n <= 1).
pub fn ceil_log2(n: u64) -> u64 {
    if n <= 1 { 0 } else { u64::from(64 - (n - 1).leading_zeros()) }
}
