//! Greedy schedules of a cost graph on P processors (digest 002, §3.6 with the
//! pitfall-8 correction): an event-driven list scheduler instead of the paper's
//! adjacent-step `step_w`.
//!
//! Edges are the tasks. A node is reached when all its incoming edges have finished (a
//! source at time 0); then its outgoing edges are ready. A ready edge waits for its
//! [`Resource`]: one of P processors (`Cpu`), the device (`Gpu`, one kernel at a time),
//! the bus (`Bus`, one transfer at a time); `Latency` edges and zero-duration edges need
//! none. Whenever a resource is free, the ready edge of highest priority starts
//! (greedy): depth-first priority is the 1DF order (the order a sequential depth-first
//! execution reaches the edges: left branch of a fork first), breadth-first priority is
//! the time the edge became ready. With unit edges on the CPU, Brent/Graham's bound
//! holds: `max(W/P, S) <= T_P <= W/P + S`.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use crate::graph::{Graph, NodeId, Resource};

/// Which ready edge a free processor takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// 1DF order (Spoonhower et al.; the paper's example uses it).
    #[default]
    DepthFirst,
    /// First ready, first served.
    BreadthFirst,
}

/// The result of a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub processors: usize,
    /// T_P: when the last edge finishes.
    pub makespan: u64,
    /// When each node is reached.
    pub node_time: Vec<u64>,
    /// When each edge starts.
    pub edge_start: Vec<u64>,
    /// The 1DF number of each node (ties in the space replay are broken by it).
    pub df_order: Vec<u32>,
    /// Number of distinct times at which some node is reached (the schedule's steps).
    pub steps: usize,
}

/// The sequential depth-first execution order of the nodes.
pub fn df_numbers(g: &Graph) -> Vec<u32> {
    let mut deg = g.in_degrees();
    let mut stack: Vec<NodeId> =
        (0..g.nodes.len() as NodeId).filter(|&v| deg[v as usize] == 0).rev().collect();
    let mut num = vec![u32::MAX; g.nodes.len()];
    let mut next = 0;
    while let Some(v) = stack.pop() {
        num[v as usize] = next;
        next += 1;
        for &e in g.out[v as usize].iter().rev() {
            let to = g.edges[e as usize].to as usize;
            deg[to] -= 1;
            if deg[to] == 0 {
                stack.push(to as NodeId);
            }
        }
    }
    num
}

fn slot(r: Resource) -> usize {
    match r {
        Resource::Cpu => 0,
        Resource::Gpu => 1,
        Resource::Bus => 2,
        Resource::Latency => 3,
    }
}

/// Simulates a greedy schedule of `g` on `processors` host processors.
pub fn greedy(g: &Graph, processors: usize, policy: Policy) -> Schedule {
    let processors = processors.max(1);
    let df = df_numbers(g);
    // Priority of each edge: its position among its source's edges, after the source.
    let mut pos_in_source = vec![0u32; g.edges.len()];
    for list in &g.out {
        for (i, &e) in list.iter().enumerate() {
            pos_in_source[e as usize] = i as u32;
        }
    }
    let mut free = [processors, 1, 1, usize::MAX];
    let mut remaining = g.in_degrees();
    let mut node_time = vec![0u64; g.nodes.len()];
    let mut edge_start = vec![0u64; g.edges.len()];
    let mut ready: BTreeSet<(u64, u32, u32, u32)> = BTreeSet::new();
    let mut seq: u32 = 0;
    let mut running: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut reached_times = BTreeSet::new();

    let make_ready =
        |v: NodeId, t: u64, ready: &mut BTreeSet<(u64, u32, u32, u32)>, seq: &mut u32| {
            for &e in &g.out[v as usize] {
                let key = match policy {
                    Policy::DepthFirst => {
                        let to = g.edges[e as usize].to as usize;
                        (0, df[to], pos_in_source[e as usize], e)
                    }
                    Policy::BreadthFirst => {
                        *seq += 1;
                        (t, *seq, 0, e)
                    }
                };
                ready.insert(key);
            }
        };
    for v in 0..g.nodes.len() as NodeId {
        if remaining[v as usize] == 0 {
            reached_times.insert(0);
            make_ready(v, 0, &mut ready, &mut seq);
        }
    }
    let mut now = 0u64;
    let mut makespan = 0u64;
    loop {
        // Start every ready edge that can start now, in priority order.
        let mut blocked = Vec::new();
        while let Some(key) = ready.pop_first() {
            let e = key.3 as usize;
            let edge = &g.edges[e];
            let r = slot(edge.resource);
            if edge.duration == 0 || edge.resource == Resource::Latency {
                edge_start[e] = now;
                if edge.duration == 0 {
                    // Finishes at once: its target may become ready now.
                    let to = edge.to as usize;
                    node_time[to] = node_time[to].max(now);
                    remaining[to] -= 1;
                    if remaining[to] == 0 {
                        reached_times.insert(now);
                        make_ready(edge.to, now, &mut ready, &mut seq);
                    }
                } else {
                    running.push(Reverse((now + edge.duration, e as u32)));
                }
            } else if free[r] > 0 {
                free[r] -= 1;
                edge_start[e] = now;
                running.push(Reverse((now + edge.duration, e as u32)));
            } else {
                blocked.push(key);
            }
        }
        ready.extend(blocked);
        // Advance to the next finishing time.
        let Some(Reverse((t, _))) = running.peek().copied() else { break };
        now = t;
        makespan = makespan.max(t);
        while let Some(&Reverse((t2, e))) = running.peek() {
            if t2 != now {
                break;
            }
            running.pop();
            let edge = &g.edges[e as usize];
            if edge.resource != Resource::Latency {
                free[slot(edge.resource)] += 1;
            }
            let to = edge.to as usize;
            node_time[to] = node_time[to].max(now);
            remaining[to] -= 1;
            if remaining[to] == 0 {
                reached_times.insert(now);
                make_ready(edge.to, now, &mut ready, &mut seq);
            }
        }
    }
    Schedule {
        processors,
        makespan,
        node_time,
        edge_start,
        df_order: df,
        steps: reached_times.len(),
    }
}
